#include "ringside/trainer/cnn.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <unordered_map>

namespace ringside::trainer {

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;
using Tag = memory::format_tag;
using Type = memory::data_type;

const memory::dims kStride = {1, 1};
const memory::dims kPadding = {kConvKernel / 2, kConvKernel / 2};
const memory::dims kPoolStride = {kPoolWindow, kPoolWindow};
const memory::dims kPoolKernel = {kPoolWindow, kPoolWindow};
const memory::dims kNoPadding = {0, 0};

// `from` itself when it already has the layout `want`, else its reorder into `scratch`
// (allocated on first use, reused after).
memory inFormat(DnnlRuntime& runtime, const memory& from, const memory::desc& want,
                memory& scratch) {
  if (from.get_desc() == want) return from;
  if (!scratch || scratch.get_desc() != want) scratch = memory(want, runtime.engine);
  memory source = from;
  dnnl::reorder(source, scratch).execute(runtime.stream, source, scratch);
  return scratch;
}

memory wrap(DnnlRuntime& runtime, const memory::desc& desc, const float* data) {
  return memory(desc, runtime.engine, const_cast<float*>(data));
}

}  // namespace

memory::desc nchwDesc(int batch, int channels, int height, int width) {
  return memory::desc({batch, channels, height, width}, Type::f32, Tag::nchw);
}

void readNchw(DnnlRuntime& runtime, const memory& from, float* out) {
  const memory::dims dims = from.get_desc().dims();
  memory plain(memory::desc(dims, Type::f32, Tag::nchw), runtime.engine, out);
  memory source = from;
  dnnl::reorder(source, plain).execute(runtime.stream, source, plain);
  runtime.stream.wait();
}

// ---- ConvLayer

namespace {

// The primitive descriptors of one conv layer with algorithm `alg` (scratchpads in user mode).
// Throws dnnl::error (status unimplemented when this CPU has no kernel for `alg`).
ConvPrimitiveDescs makeConvDescs(const dnnl::engine& engine, int batch, int inChannels,
                                 int outChannels, int height, int width, bool relu, bool training,
                                 bool inputGradient, algorithm alg) {
  const memory::dims srcDims = {batch, inChannels, height, width};
  const memory::dims weightDims = {outChannels, inChannels, kConvKernel, kConvKernel};
  const memory::dims dstDims = {batch, outChannels, height, width};
  const memory::desc srcAny(srcDims, Type::f32, Tag::any);
  const memory::desc weightsAny(weightDims, Type::f32, Tag::any);
  const memory::desc bias({outChannels}, Type::f32, Tag::x);
  const memory::desc dstAny(dstDims, Type::f32, Tag::any);

  dnnl::primitive_attr forwardAttributes;
  forwardAttributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
    forwardAttributes.set_post_ops(ops);
  }
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);

  ConvPrimitiveDescs descs;
  descs.winograd = alg == algorithm::convolution_winograd;
  descs.forward = dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(
          training ? prop_kind::forward_training : prop_kind::forward_inference, alg, srcAny,
          weightsAny, bias, dstAny, kStride, kPadding, kPadding),
      forwardAttributes, engine);
  if (!training) return descs;
  descs.weights = dnnl::convolution_backward_weights::primitive_desc(
      dnnl::convolution_backward_weights::desc(alg, srcAny, weightsAny, bias, dstAny, kStride,
                                               kPadding, kPadding),
      attributes, engine, descs.forward);
  if (inputGradient) {
    descs.data = dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(alg, srcAny, weightsAny, dstAny, kStride, kPadding,
                                              kPadding),
        attributes, engine, descs.forward);
  }
  return descs;
}

// Memory for a primitive's scratchpad in the runtime's shared buffer, or an empty memory when the
// primitive needs none.
memory scratchpadFor(DnnlRuntime& runtime, const memory::desc& desc) {
  const size_t bytes = desc.get_size();
  if (bytes == 0) return memory();
  return memory(desc, runtime.engine, runtime.scratchpad(bytes));
}

// Adds the scratchpad argument when the primitive has one.
void addScratchpad(std::unordered_map<int, memory>& args, const memory& scratchpad) {
  if (scratchpad) args.emplace(DNNL_ARG_SCRATCHPAD, scratchpad);
}

}  // namespace

void* DnnlRuntime::scratchpad(size_t bytes) {
  if (bytes > scratchpadBytes_) {
    // 64-byte aligned (a cache line, and AVX-512's vector), rounded up as aligned_alloc wants.
    const size_t rounded = roundedScratchpadBytes(bytes);
    void* fresh = std::aligned_alloc(64, rounded);
    if (fresh == nullptr) throw std::bad_alloc();
    scratchpad_.reset(fresh);
    scratchpadBytes_ = rounded;
  }
  return scratchpad_.get();
}

ConvPrimitiveDescs planConvPrimitives(const dnnl::engine& engine, int batch, int inChannels,
                                      int outChannels, int height, int width, bool relu,
                                      bool training, bool inputGradient, ConvAlgorithm algorithm) {
  if (algorithm == ConvAlgorithm::kAuto && inChannels % kWinogradChannelMultiple == 0 &&
      outChannels % kWinogradChannelMultiple == 0) {
    try {
      return makeConvDescs(engine, batch, inChannels, outChannels, height, width, relu, training,
                           inputGradient, algorithm::convolution_winograd);
    } catch (const dnnl::error& e) {
      // No Winograd kernel on this CPU (oneDNN 2.6 has f32 Winograd for AVX-512 only): direct.
      if (e.status != dnnl_unimplemented) throw;
    }
  }
  return makeConvDescs(engine, batch, inChannels, outChannels, height, width, relu, training,
                       inputGradient, algorithm::convolution_direct);
}

std::string ConvPrimitiveDescs::describe() const {
  return std::string(winograd ? "winograd" : "direct") + " (" + forward.impl_info_str() + ")";
}

size_t ConvPrimitiveDescs::scratchpadBytes() const {
  size_t bytes = forward.scratchpad_desc().get_size();
  if (weights) bytes = std::max(bytes, weights.scratchpad_desc().get_size());
  if (data) bytes = std::max(bytes, data.scratchpad_desc().get_size());
  return bytes;
}

ConvLayer::ConvLayer(DnnlRuntime& runtime, int batch, int inChannels, int outChannels, int height,
                     int width, bool relu, bool training, bool inputGradient,
                     ConvAlgorithm algorithm)
    : runtime_(runtime), relu_(relu) {
  const memory::dims weightDims = {outChannels, inChannels, kConvKernel, kConvKernel};
  plainWeightsDesc_ = memory::desc(weightDims, Type::f32, Tag::oihw);
  const dnnl::engine& engine = runtime.engine;

  const ConvPrimitiveDescs descs =
      planConvPrimitives(engine, batch, inChannels, outChannels, height, width, relu, training,
                         inputGradient, algorithm);
  winograd_ = descs.winograd;
  implementation_ = descs.describe();
  forwardPd_ = descs.forward;
  forward_ = dnnl::convolution_forward(forwardPd_);
  dstDesc_ = forwardPd_.dst_desc();
  dst_ = memory(dstDesc_, engine);
  flops_ = 2ull * uint64_t(batch) * outChannels * height * width * inChannels * kConvKernel *
           kConvKernel;
  if (!training) return;

  weightsPd_ = descs.weights;
  backwardWeights_ = dnnl::convolution_backward_weights(weightsPd_);
  if (relu) {
    const auto hint = dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(prop_kind::forward_training,
                                    algorithm::eltwise_relu_use_dst_for_bwd, dstDesc_, 0.0f, 0.0f),
        engine);
    reluBackward_ = dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(
        dnnl::eltwise_backward::desc(algorithm::eltwise_relu_use_dst_for_bwd, dstDesc_, dstDesc_,
                                     0.0f, 0.0f),
        engine, hint));
    diffPre_ = memory(dstDesc_, engine);
  }
  if (inputGradient) {
    dataPd_ = descs.data;
    backwardData_ = dnnl::convolution_backward_data(dataPd_);
    diffSrc_ = memory(dataPd_.diff_src_desc(), engine);
  }
}

const memory& ConvLayer::forward(const memory& src, const float* w, const float* b) {
  srcUsed_ = inFormat(runtime_, src, forwardPd_.src_desc(), src_);
  const memory weights =
      inFormat(runtime_, wrap(runtime_, plainWeightsDesc_, w), forwardPd_.weights_desc(), weights_);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, srcUsed_},
      {DNNL_ARG_WEIGHTS, weights},
      {DNNL_ARG_BIAS, wrap(runtime_, forwardPd_.bias_desc(), b)},
      {DNNL_ARG_DST, dst_}};
  addScratchpad(args, scratchpadFor(runtime_, forwardPd_.scratchpad_desc()));
  forward_.execute(runtime_.stream, args);
  runtime_.stream.wait();
  return dst_;
}

void ConvLayer::backwardWeights(const memory& diffDst, float* dw, float* db) {
  memory diffPre = inFormat(runtime_, diffDst, dstDesc_, diffDst_);
  if (relu_) {
    reluBackward_.execute(
        runtime_.stream,
        {{DNNL_ARG_DST, dst_}, {DNNL_ARG_DIFF_DST, diffPre}, {DNNL_ARG_DIFF_SRC, diffPre_}});
    diffPre = diffPre_;
  }
  diffPreUsed_ = diffPre;
  const memory src = inFormat(runtime_, srcUsed_, weightsPd_.src_desc(), srcForW_);
  const memory diff = inFormat(runtime_, diffPre, weightsPd_.diff_dst_desc(), diffPreForW_);
  memory plainDw = wrap(runtime_, plainWeightsDesc_, dw);
  const bool direct = weightsPd_.diff_weights_desc() == plainWeightsDesc_;
  if (!direct && (!diffWeights_ || diffWeights_.get_desc() != weightsPd_.diff_weights_desc())) {
    diffWeights_ = memory(weightsPd_.diff_weights_desc(), runtime_.engine);
  }
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, src},
      {DNNL_ARG_DIFF_DST, diff},
      {DNNL_ARG_DIFF_WEIGHTS, direct ? plainDw : diffWeights_},
      {DNNL_ARG_DIFF_BIAS, wrap(runtime_, weightsPd_.diff_bias_desc(), db)}};
  addScratchpad(args, scratchpadFor(runtime_, weightsPd_.scratchpad_desc()));
  backwardWeights_.execute(runtime_.stream, args);
  if (!direct) dnnl::reorder(diffWeights_, plainDw).execute(runtime_.stream, diffWeights_, plainDw);
  runtime_.stream.wait();
}

const memory& ConvLayer::backwardData(const float* w) {
  const memory weights = inFormat(runtime_, wrap(runtime_, plainWeightsDesc_, w),
                                  dataPd_.weights_desc(), dataWeights_);
  const memory diff = inFormat(runtime_, diffPreUsed_, dataPd_.diff_dst_desc(), diffPreForD_);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_DIFF_DST, diff}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DIFF_SRC, diffSrc_}};
  addScratchpad(args, scratchpadFor(runtime_, dataPd_.scratchpad_desc()));
  backwardData_.execute(runtime_.stream, args);
  runtime_.stream.wait();
  return diffSrc_;
}

// ---- MaxPoolLayer

MaxPoolLayer::MaxPoolLayer(DnnlRuntime& runtime, const memory::desc& srcDesc, bool training)
    : runtime_(runtime), srcDesc_(srcDesc) {
  const memory::dims src = srcDesc.dims();
  const memory::dims dstDims = {src[0], src[1], src[2] / kPoolWindow, src[3] / kPoolWindow};
  const memory::desc dstAny(dstDims, Type::f32, Tag::any);
  forwardPd_ = dnnl::pooling_forward::primitive_desc(
      dnnl::pooling_forward::desc(
          training ? prop_kind::forward_training : prop_kind::forward_inference,
          algorithm::pooling_max, srcDesc, dstAny, kPoolStride, kPoolKernel, kNoPadding,
          kNoPadding),
      runtime.engine);
  forward_ = dnnl::pooling_forward(forwardPd_);
  dstDesc_ = forwardPd_.dst_desc();
  dst_ = memory(dstDesc_, runtime.engine);
  if (!training) return;
  workspace_ = memory(forwardPd_.workspace_desc(), runtime.engine);
  const auto backwardPd = dnnl::pooling_backward::primitive_desc(
      dnnl::pooling_backward::desc(algorithm::pooling_max, srcDesc, dstDesc_, kPoolStride,
                                   kPoolKernel, kNoPadding, kNoPadding),
      runtime.engine, forwardPd_);
  backward_ = dnnl::pooling_backward(backwardPd);
  diffSrc_ = memory(backwardPd.diff_src_desc(), runtime.engine);
}

const memory& MaxPoolLayer::forward(const memory& src) {
  const memory input = inFormat(runtime_, src, forwardPd_.src_desc(), src_);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, input}, {DNNL_ARG_DST, dst_}};
  if (workspace_) args.emplace(DNNL_ARG_WORKSPACE, workspace_);
  forward_.execute(runtime_.stream, args);
  runtime_.stream.wait();
  return dst_;
}

const memory& MaxPoolLayer::backward(const memory& diffDst) {
  const memory diff = inFormat(runtime_, diffDst, dstDesc_, diffDst_);
  backward_.execute(
      runtime_.stream,
      {{DNNL_ARG_DIFF_DST, diff}, {DNNL_ARG_DIFF_SRC, diffSrc_}, {DNNL_ARG_WORKSPACE, workspace_}});
  runtime_.stream.wait();
  return diffSrc_;
}

// ---- CnnWorkspace

struct CnnWorkspace::Plan {
  int batch = 0;
  bool training = false;
  memory input;  // [batch, C, H, W] NCHW: a copy of x, so backward need not be given it again
  std::vector<std::unique_ptr<ConvLayer>> convs;
  std::vector<std::unique_ptr<MaxPoolLayer>> pools;
  memory flat;      // [batch, C, h, w] NCHW: the last pooling output, flattened (scratch)
  memory flatDiff;  // over dFlat
  const float* fcInput = nullptr;  // what the first Linear read: flat, or dropped
  std::vector<float> mask;         // [batch, flat]: dropout multipliers (training)
  std::vector<float> dropped;      // [batch, flat]: flat * mask (training)
  std::vector<float> dFlat;        // [batch, flat] (training)
  std::vector<float> hidden;       // [batch, hidden]: after ReLU
  std::vector<float> logits;       // [batch, classes]
  std::vector<float> dLogits;      // [batch, classes] (training)
  std::vector<float> dHidden;      // [batch, hidden] (training)
};

CnnWorkspace::CnnWorkspace(const CnnLayout& layout, uint64_t dropoutSeed, ConvAlgorithm algorithm)
    : layout_(layout), dropoutSeed_(dropoutSeed), algorithm_(algorithm) {}

CnnWorkspace::~CnnWorkspace() = default;

uint64_t CnnWorkspace::planFloats(const CnnLayout& layout, int batch, bool training) {
  const CnnShape& shape = layout.shape();
  uint64_t perSample = uint64_t(shape.channels) * shape.height * shape.width;  // input
  for (const ConvStageShape& s : layout.stages()) {
    const uint64_t in = uint64_t(s.inChannels) * s.height * s.width;
    const uint64_t out = uint64_t(s.outChannels) * s.height * s.width;
    const uint64_t pooled = uint64_t(s.outChannels) * s.pooledHeight() * s.pooledWidth();
    perSample += in + out + pooled;  // src reorder scratch, conv output, pool output
    if (training) {
      // pool workspace and diff_dst scratch, pool diff_src, ReLU diff, conv diff_dst scratches
      // (forward format, backward-weights and backward-data formats), conv diff_src, src scratch
      // for backward weights.
      perSample += 2 * pooled + out + 4 * out + 2 * in;
    }
  }
  const uint64_t flat = layout.flatFeatures();
  perSample += flat + shape.hidden + shape.numClasses;
  if (training) perSample += 3 * flat + shape.hidden + shape.numClasses;
  return perSample * uint64_t(std::max(batch, 0));
}

namespace {

// The primitive descriptors every conv stage of a plan of `batch` samples would get, as
// planFor() builds them (the first stage computes no input gradient).
std::vector<ConvPrimitiveDescs> planStages(const CnnLayout& layout, int batch, bool training,
                                           ConvAlgorithm algorithm) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  std::vector<ConvPrimitiveDescs> stages;
  for (size_t s = 0; s < layout.stages().size(); ++s) {
    const ConvStageShape& stage = layout.stages()[s];
    stages.push_back(planConvPrimitives(engine, batch, stage.inChannels, stage.outChannels,
                                        stage.height, stage.width, /*relu=*/true, training,
                                        /*inputGradient=*/training && s > 0, algorithm));
  }
  return stages;
}

}  // namespace

uint64_t CnnWorkspace::scratchpadBytes(const CnnLayout& layout, int batch, bool training,
                                       ConvAlgorithm algorithm) {
  uint64_t bytes = 0;
  for (const ConvPrimitiveDescs& descs : planStages(layout, batch, training, algorithm)) {
    bytes = std::max<uint64_t>(bytes, descs.scratchpadBytes());
  }
  return DnnlRuntime::roundedScratchpadBytes(bytes);
}

std::vector<std::string> CnnWorkspace::convImplementations(const CnnLayout& layout, int batch,
                                                           ConvAlgorithm algorithm) {
  std::vector<std::string> names;
  for (const ConvPrimitiveDescs& descs : planStages(layout, batch, /*training=*/true, algorithm)) {
    names.push_back(descs.describe());
  }
  return names;
}

CnnWorkspace::Plan& CnnWorkspace::planFor(int batch, bool training) {
  for (auto& plan : plans_) {
    if (plan->batch == batch && plan->training == training) return *plan;
  }
  if (plans_.size() >= kMaxCachedPlans) {
    auto oldest = plans_.begin();
    if (oldest->get() == last_) ++oldest;
    plans_.erase(oldest);
  }
  auto plan = std::make_unique<Plan>();
  plan->batch = batch;
  plan->training = training;
  const CnnShape& shape = layout_.shape();
  plan->input = memory(nchwDesc(batch, shape.channels, shape.height, shape.width), runtime_.engine);
  memory::desc src = plan->input.get_desc();
  for (size_t s = 0; s < layout_.stages().size(); ++s) {
    const ConvStageShape& stage = layout_.stages()[s];
    plan->convs.push_back(std::make_unique<ConvLayer>(runtime_, batch, stage.inChannels,
                                                      stage.outChannels, stage.height, stage.width,
                                                      /*relu=*/true, training,
                                                      /*inputGradient=*/s > 0, algorithm_));
    plan->pools.push_back(
        std::make_unique<MaxPoolLayer>(runtime_, plan->convs.back()->dstDesc(), training));
    src = plan->pools.back()->dstDesc();
  }
  const ConvStageShape& last = layout_.stages().back();
  const memory::desc flatDesc =
      nchwDesc(batch, last.outChannels, last.pooledHeight(), last.pooledWidth());
  plan->flat = memory(flatDesc, runtime_.engine);
  const size_t flat = size_t(batch) * layout_.flatFeatures();
  plan->hidden.resize(size_t(batch) * shape.hidden);
  plan->logits.resize(size_t(batch) * shape.numClasses);
  if (training) {
    plan->mask.resize(flat);
    plan->dropped.resize(flat);
    plan->dFlat.resize(flat);
    plan->flatDiff = memory(flatDesc, runtime_.engine, plan->dFlat.data());
    plan->dLogits.resize(plan->logits.size());
    plan->dHidden.resize(plan->hidden.size());
  }
  plans_.push_back(std::move(plan));
  return *plans_.back();
}

bool CnnWorkspace::pause(uint64_t flops, const StopCheck& stopCheck) {
  flopsSinceCheck_ += flops;
  if (!stopCheck || flopsSinceCheck_ < kStopCheckFlops) return false;
  flopsSinceCheck_ = 0;
  stopped_ = stopCheck();
  return stopped_;
}

float CnnWorkspace::forward(const float* params, const float* x, const int32_t* labels, int batch,
                            const BatchPosition* position, int64_t* correct,
                            const StopCheck& stopCheck) {
  stopped_ = false;
  flopsSinceCheck_ = 0;
  const bool training = position != nullptr;
  Plan& plan = planFor(batch, training);
  if (training) last_ = &plan;
  const CnnShape& shape = layout_.shape();
  std::memcpy(plan.input.get_data_handle(), x,
              size_t(batch) * shape.channels * shape.height * shape.width * sizeof(float));
  memory current = plan.input;
  for (size_t s = 0; s < plan.convs.size(); ++s) {
    const ConvStageShape& stage = layout_.stages()[s];
    current =
        plan.convs[s]->forward(current, params + stage.weightOffset, params + stage.biasOffset);
    current = plan.pools[s]->forward(current);
    if (pause(plan.convs[s]->forwardFlops(), stopCheck)) {
      return std::numeric_limits<float>::quiet_NaN();
    }
  }
  const memory flatMemory = inFormat(runtime_, current, plan.flat.get_desc(), plan.flat);
  runtime_.stream.wait();
  const float* flat = static_cast<const float*>(flatMemory.get_data_handle());
  const int features = layout_.flatFeatures();
  plan.fcInput = flat;
  if (training && shape.dropout > 0.0) {
    fillDropoutMask(static_cast<float>(shape.dropout), dropoutSeed_, *position, batch, features,
                    plan.mask.data());
    for (size_t i = 0; i < plan.dropped.size(); ++i) plan.dropped[i] = flat[i] * plan.mask[i];
    plan.fcInput = plan.dropped.data();
  }
  const LinearLayerShape& fc1 = layout_.linears()[0];
  const LinearLayerShape& fc2 = layout_.linears()[1];
  linearForward(plan.fcInput, params + fc1.weightOffset, params + fc1.biasOffset, batch, fc1.in,
                fc1.out, plan.hidden.data());
  reluForward(plan.hidden.data(), plan.hidden.size());
  linearForward(plan.hidden.data(), params + fc2.weightOffset, params + fc2.biasOffset, batch,
                fc2.in, fc2.out, plan.logits.data());
  return softmaxCrossEntropy(plan.logits.data(), labels, batch, fc2.out,
                             training ? plan.dLogits.data() : nullptr, correct);
}

void CnnWorkspace::backward(const float* params, float* grads,
                            const std::function<void(int layer)>& onLayerReady,
                            const StopCheck& stopCheck, const std::function<void()>& progress) {
  stopped_ = false;
  flopsSinceCheck_ = 0;
  Plan& plan = *last_;
  const int batch = plan.batch;
  const int stages = static_cast<int>(layout_.stages().size());
  const LinearLayerShape& fc1 = layout_.linears()[0];
  const LinearLayerShape& fc2 = layout_.linears()[1];
  auto ready = [&](int layer) {
    if (onLayerReady) onLayerReady(layer);
  };
  auto drive = [&] {
    if (progress) progress();
  };

  linearBackward(plan.hidden.data(), params + fc2.weightOffset, plan.dLogits.data(), batch, fc2.in,
                 fc2.out, grads + fc2.weightOffset, grads + fc2.biasOffset, plan.dHidden.data());
  ready(stages + 1);
  reluBackward(plan.hidden.data(), plan.dHidden.data(), plan.dHidden.size());
  linearBackward(plan.fcInput, params + fc1.weightOffset, plan.dHidden.data(), batch, fc1.in,
                 fc1.out, grads + fc1.weightOffset, grads + fc1.biasOffset, plan.dFlat.data());
  ready(stages);
  if (pause(4ull * batch * (uint64_t(fc1.in) * fc1.out + uint64_t(fc2.in) * fc2.out), stopCheck)) {
    return;
  }
  if (layout_.shape().dropout > 0.0) {
    for (size_t i = 0; i < plan.dFlat.size(); ++i) plan.dFlat[i] *= plan.mask[i];
  }
  memory current = plan.flatDiff;
  for (int s = stages - 1; s >= 0; --s) {
    const ConvStageShape& stage = layout_.stages()[s];
    current = plan.pools[s]->backward(current);
    drive();
    plan.convs[s]->backwardWeights(current, grads + stage.weightOffset, grads + stage.biasOffset);
    ready(s);
    if (s == 0) break;  // the input needs no gradient
    current = plan.convs[s]->backwardData(params + stage.weightOffset);
    drive();
    if (pause(2 * plan.convs[s]->forwardFlops(), stopCheck)) return;
  }
}

}  // namespace ringside::trainer
