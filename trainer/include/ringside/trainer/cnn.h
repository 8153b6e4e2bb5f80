// The CNN of model.h on the CPU, in float32: convolutions, ReLU and max-pooling (forward and
// backward) are oneDNN primitives (docs/design.md decision 10: no convolution loops of our own);
// the two Linear layers are BLAS GEMMs (mlp.h's linearForward/linearBackward); dropout uses the
// mask rule of model.h.
//
// Between layers activations stay in the memory format oneDNN's primitives pick (blocked
// nChw16c on AVX-512 machines); only the network's input (NCHW), the flatten before the first
// Linear (NCHW, PyTorch's view order) and the parameters and gradients (the flat layout of
// model.h: weights [out, in, 3, 3]) are plain, reordered where a primitive wants another format.
//
// Not thread-safe: one object per thread. oneDNN's own threads: OpenMP (set omp_set_num_threads,
// cpu_backend.cpp does from --threads). Errors inside oneDNN (dnnl::error) are programming or
// out-of-memory errors and propagate as exceptions to the process edge.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ringside/trainer/mlp.h"
#include "ringside/trainer/model.h"

namespace ringside::trainer {

// Samples per forward pass when the CNN evaluates on the CPU: bounds its activations
// (CnnWorkspace::planFloats, about 0.23 MB per sample for the default CNN) whatever --eval-batch
// is.
inline constexpr int kCnnEvalChunk = 256;

// The engine and stream every layer of one workspace runs on (the CPU, in order), and the
// scratch memory the convolution primitives share: they run one at a time, so one buffer of the
// largest scratchpad any of them asks for serves all (oneDNN's scratchpad_mode::user).
struct DnnlRuntime {
  DnnlRuntime() : engine(dnnl::engine::kind::cpu, 0), stream(engine) {}
  dnnl::engine engine;
  dnnl::stream stream;

  // A 64-byte aligned buffer of at least `bytes`, valid until a call that asks for more.
  // Errors: std::bad_alloc.
  void* scratchpad(size_t bytes);
  // Bytes held: the largest request so far, rounded up to a multiple of 64.
  size_t scratchpadBytes() const { return scratchpadBytes_; }
  // `bytes` rounded up to a multiple of 64, as scratchpad() allocates it.
  static size_t roundedScratchpadBytes(size_t bytes) { return (bytes + 63) / 64 * 64; }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> scratchpad_;
  size_t scratchpadBytes_ = 0;
};

// Channel counts (input and output) must both be multiples of this for ConvAlgorithm::kAuto to
// choose Winograd: the width of oneDNN's AVX-512 Winograd kernel (16 floats). Below it the
// kernel pads the channels: for the CNN's first layer (1 input channel) that is 16 x 36
// multiplications per 4x4 output tile against direct convolution's 144 (docs/trainer.md,
// "Convolution algorithm").
inline constexpr int kWinogradChannelMultiple = 16;

// The oneDNN primitive descriptors of one conv layer: forward, and for training backward
// weights and (with an input gradient) backward data, all of one algorithm.
struct ConvPrimitiveDescs {
  bool winograd = false;  // Winograd F(4x4, 3x3); else direct
  dnnl::convolution_forward::primitive_desc forward;
  dnnl::convolution_backward_weights::primitive_desc weights;  // empty without training
  dnnl::convolution_backward_data::primitive_desc data;        // empty without an input gradient
  // The largest scratchpad of the three, bytes (Winograd's tile transforms; about 9 MB for the
  // default CNN's second layer, independent of the batch).
  size_t scratchpadBytes() const;
  // "winograd (<oneDNN implementation>)" or "direct (<oneDNN implementation>)", e.g.
  // "winograd (jit_wino_4x3:avx512_core)".
  std::string describe() const;
};

// Chooses and describes the primitives of a conv 3x3 layer (see ConvLayer) for `algorithm`:
// with kAuto, Winograd when both channel counts are multiples of kWinogradChannelMultiple and
// oneDNN has a Winograd kernel for this CPU (AVX-512), else direct. The choice depends on the
// shape and the CPU only, so every rank of a run on the same CPU model chooses alike.
// Errors: dnnl::error from oneDNN (out of memory, or a shape it cannot convolve).
ConvPrimitiveDescs planConvPrimitives(const dnnl::engine& engine, int batch, int inChannels,
                                      int outChannels, int height, int width, bool relu,
                                      bool training, bool inputGradient, ConvAlgorithm algorithm);

// A plain NCHW float32 memory descriptor [batch, channels, height, width].
dnnl::memory::desc nchwDesc(int batch, int channels, int height, int width);

// Copies `memory` (any format) into out[batch, channels, height, width] (plain NCHW).
void readNchw(DnnlRuntime& runtime, const dnnl::memory& memory, float* out);

// conv 3x3, stride 1, padding 1, with bias, optionally followed by a fused ReLU (a post-op), over
// [batch, inChannels, height, width] -> [batch, outChannels, height, width].
// Weights w[outChannels, inChannels, 3, 3] and bias b[outChannels] are plain float arrays.
class ConvLayer {
 public:
  // `training`: forward_training and the backward primitives; else forward_inference only.
  // `inputGradient`: plans backwardData() (the first layer needs none).
  // `algorithm`: see planConvPrimitives.
  ConvLayer(DnnlRuntime& runtime, int batch, int inChannels, int outChannels, int height, int width,
            bool relu, bool training, bool inputGradient,
            ConvAlgorithm algorithm = ConvAlgorithm::kDirect);

  // dst = [ReLU](conv(src, w) + b); src in any format (reordered when the primitive wants
  // another). Returns the layer-owned output in dstDesc()'s format, valid until the next call.
  const dnnl::memory& forward(const dnnl::memory& src, const float* w, const float* b);
  const dnnl::memory::desc& dstDesc() const { return dstDesc_; }

  // Backward of the last forward(training): from diffDst (d loss / d dst, any format) writes
  // dw[outChannels, inChannels, 3, 3] and db[outChannels] (overwritten, not accumulated), and
  // keeps d loss / d (conv output before ReLU) for backwardData().
  void backwardWeights(const dnnl::memory& diffDst, float* dw, float* db);
  // After backwardWeights(): returns d loss / d src (layer-owned, valid until the next call).
  const dnnl::memory& backwardData(const float* w);

  // Floating-point operations of one forward pass as direct convolution computes it (2 * MACs;
  // bias and ReLU not counted). Winograd does fewer multiplications for the same result; the
  // trainer's GFLOP/s count these (model FLOPs), whichever algorithm runs.
  uint64_t forwardFlops() const { return flops_; }
  bool winograd() const { return winograd_; }
  // ConvPrimitiveDescs::describe() of the chosen primitives.
  const std::string& implementation() const { return implementation_; }

 private:
  DnnlRuntime& runtime_;
  bool relu_;
  bool winograd_ = false;
  std::string implementation_;
  uint64_t flops_ = 0;
  dnnl::memory::desc plainWeightsDesc_;
  dnnl::memory::desc dstDesc_;
  dnnl::convolution_forward::primitive_desc forwardPd_;
  dnnl::convolution_forward forward_;
  dnnl::convolution_backward_weights::primitive_desc weightsPd_;
  dnnl::convolution_backward_weights backwardWeights_;
  dnnl::convolution_backward_data::primitive_desc dataPd_;
  dnnl::convolution_backward_data backwardData_;
  dnnl::eltwise_backward reluBackward_;
  dnnl::memory src_;          // forward's src in the primitive's format (scratch when reordered)
  dnnl::memory srcUsed_;      // the src the last forward read (kept for backwardWeights)
  dnnl::memory weights_;      // weights in the forward primitive's format (when not plain)
  dnnl::memory dataWeights_;  // weights in backward-data's format (when not plain)
  dnnl::memory dst_;
  dnnl::memory diffDst_;      // diffDst reordered into dst's format (when needed)
  dnnl::memory diffPre_;      // d loss / d (pre-ReLU output), in dst's format
  dnnl::memory diffPreUsed_;  // the pre-ReLU gradient backwardData() reads
  dnnl::memory diffWeights_;  // in backward-weights' format (when not plain)
  dnnl::memory diffPreForW_;  // diffPre_ in backward-weights' diff_dst format (when different)
  dnnl::memory srcForW_;      // srcUsed_ in backward-weights' src format (when different)
  dnnl::memory diffPreForD_;  // diffPre_ in backward-data's diff_dst format (when different)
  dnnl::memory diffSrc_;
};

// Max-pooling 2x2, stride 2, no padding (nn.MaxPool2d(2): odd rows and columns are dropped) over
// src [batch, channels, height, width] in the format of `srcDesc`.
class MaxPoolLayer {
 public:
  MaxPoolLayer(DnnlRuntime& runtime, const dnnl::memory::desc& srcDesc, bool training);
  // Returns the layer-owned output [batch, channels, height / 2, width / 2] (dstDesc() format).
  const dnnl::memory& forward(const dnnl::memory& src);
  const dnnl::memory::desc& dstDesc() const { return dstDesc_; }
  // Backward of the last forward(training): the gradient routed to each window's maximum
  // (oneDNN keeps its position in a workspace). Returns d loss / d src in srcDesc's format.
  const dnnl::memory& backward(const dnnl::memory& diffDst);

 private:
  DnnlRuntime& runtime_;
  dnnl::memory::desc srcDesc_;
  dnnl::memory::desc dstDesc_;
  dnnl::pooling_forward::primitive_desc forwardPd_;
  dnnl::pooling_forward forward_;
  dnnl::pooling_backward backward_;
  dnnl::memory src_;  // scratch when the given src is in another format
  dnnl::memory dst_;
  dnnl::memory workspace_;
  dnnl::memory diffDst_;  // scratch when diffDst is in another format
  dnnl::memory diffSrc_;
};

// Activations and gradients of the CNN for one forward/backward pass, with the primitives of
// each batch size cached (planned on first use of a (batch, training) pair; at most
// kMaxCachedPlans kept, the oldest dropped first). The interface mirrors MlpWorkspace<float>.
class CnnWorkspace {
 public:
  static constexpr size_t kMaxCachedPlans = 4;

  // `dropoutSeed`: the run seed (dropout masks: model.h). `layout` must outlive this object.
  // `algorithm`: how the conv layers compute (planConvPrimitives).
  CnnWorkspace(const CnnLayout& layout, uint64_t dropoutSeed,
               ConvAlgorithm algorithm = ConvAlgorithm::kAuto);
  ~CnnWorkspace();

  // Forward over x[batch, C * H * W] (NCHW per sample); returns the mean cross-entropy against
  // labels[batch] and adds the correct predictions to *correct when not null. With `position`
  // (training) dropout is applied with the masks of that position and the activations are kept
  // for backward(); without it (evaluation) dropout is the identity and backward() must not
  // follow. When stopCheck returns true between layers the pass ends: stopped() is then true and
  // the result is NaN.
  float forward(const float* params, const float* x, const int32_t* labels, int batch,
                const BatchPosition* position, int64_t* correct, const StopCheck& stopCheck = {});

  // Backward of the last training forward(): grads[numParams] receives d(mean loss)/d(params);
  // onLayerReady(l) is called once parameter layer l's weight and bias gradients are complete
  // (layers of ModelLayout::parameterLayers: conv stages first, then the two Linear layers; called
  // from the last to the first). When stopCheck returns true between layers the pass ends and
  // stopped() is true. `progress` (may be empty) is called between the primitives after the
  // first onLayerReady: the cpu backend drives its in-flight all-reduces there, since MPI's
  // non-blocking collectives advance only inside MPI calls.
  void backward(const float* params, float* grads,
                const std::function<void(int layer)>& onLayerReady = {},
                const StopCheck& stopCheck = {}, const std::function<void()>& progress = {});

  bool stopped() const { return stopped_; }
  // Bytes of the convolutions' shared scratchpad held now (the largest any plan used so far).
  size_t scratchpadBytesHeld() const { return runtime_.scratchpadBytes(); }

  // Floats one cached plan holds for `batch` samples (activations, gradients, dropout mask,
  // pooling workspaces counted as floats), training or evaluation. memory_plan.cpp counts these.
  static uint64_t planFloats(const CnnLayout& layout, int batch, bool training);
  // Bytes of the convolutions' shared scratchpad (DnnlRuntime::scratchpad) for a plan of `batch`
  // samples: the largest any conv primitive of it asks for, rounded up to a multiple of 64 as
  // DnnlRuntime allocates it. One buffer serves every plan of a
  // workspace, so a workspace holds the maximum over its plans. memory_plan.cpp counts it.
  static uint64_t scratchpadBytes(const CnnLayout& layout, int batch, bool training,
                                  ConvAlgorithm algorithm);
  // How each conv stage computes at `batch` (ConvLayer::implementation), e.g.
  // {"direct (jit:avx512_core)", "winograd (jit_wino_4x3:avx512_core)"}: for the backend's
  // description and tests.
  static std::vector<std::string> convImplementations(const CnnLayout& layout, int batch,
                                                      ConvAlgorithm algorithm);

 private:
  struct Plan;
  Plan& planFor(int batch, bool training);
  bool pause(uint64_t flops, const StopCheck& stopCheck);

  const CnnLayout& layout_;
  uint64_t dropoutSeed_;
  ConvAlgorithm algorithm_;
  DnnlRuntime runtime_;
  std::vector<std::unique_ptr<Plan>> plans_;  // oldest first
  Plan* last_ = nullptr;                      // the plan of the last training forward()
  bool stopped_ = false;
  uint64_t flopsSinceCheck_ = 0;
};

}  // namespace ringside::trainer
