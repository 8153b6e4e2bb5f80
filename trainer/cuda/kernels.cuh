// The nccl backend's element-wise and reduction kernels. GEMMs go through cuBLAS
// (device_mlp.cu); everything else a training step needs is here. Each launcher enqueues on
// `stream` and returns the launch's cudaGetLastError() (cudaSuccess when there is nothing to do);
// errors in the kernel itself surface at the next synchronising call. All buffers are device
// memory, row-major, float32 unless stated. Thread-safe (no host state).
//
// The math mirrors the CPU reference exactly in formula and order of operations (mlp.cpp,
// optimizer.cpp); results differ only by rounding (nvcc contracts a*b+c into FMAs, and the
// reductions add in a different order).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ringside::trainer::gpu {

// Sums over the rows of one forward pass; written by launchLossReduction.
struct LossSums {
  double lossSum = 0.0;         // sum of per-row cross-entropy, nats
  long long correct = 0;        // rows whose arg-max equals the label
  long long invalidLabels = 0;  // rows whose label lies outside [0, classes); counted, not used
};

// y[batch, out] = y + bias[out] on every row, then ReLU (max(y, 0)) in place when `relu`
// (linearForward's bias and reluForward in mlp.cpp).
cudaError_t launchBiasActivation(float* y, const float* bias, int batch, int out, bool relu,
                                 cudaStream_t stream);

// In place: dy[i] = y[i] > 0 ? dy[i] : 0 for count elements; y is the ReLU output (reluBackward).
cudaError_t launchReluBackward(const float* y, float* dy, size_t count, cudaStream_t stream);

// db[out] = column sums of dy[batch, out], each summed in a fixed order (deterministic).
cudaError_t launchBiasGradient(const float* dy, int batch, int out, float* db, cudaStream_t stream);

// Per-row softmax cross-entropy of logits[batch, classes] against labels[batch]
// (softmaxCrossEntropy in mlp.cpp, log-sum-exp with the row maximum): rowLoss[batch] (nats),
// rowCorrect[batch] (1 when the first arg-max equals the label, 0 when not, -1 for a label outside
// [0, classes), whose loss is then 0). When dlogits[batch, classes] is not null it receives
// (softmax - onehot) / batch, the gradient of the mean loss.
cudaError_t launchSoftmaxCrossEntropy(const float* logits, const int32_t* labels, int batch,
                                      int classes, float* dlogits, double* rowLoss, int* rowCorrect,
                                      cudaStream_t stream);

// *sums = the sums of rowLoss[batch] and rowCorrect[batch] as launchSoftmaxCrossEntropy wrote
// them. One block, fixed summation order (deterministic).
cudaError_t launchLossReduction(const double* rowLoss, const int* rowCorrect, int batch,
                                LossSums* sums, cudaStream_t stream);

// Inverted dropout over x[batch, features] (the CNN's flattened conv features): mask[i] =
// dropoutScale(probability, seed, step, firstSample + row, column) (model.h, the CPU's function,
// so both backends draw the same masks) and y[i] = x[i] * mask[i]. probability in [0, 1).
cudaError_t launchDropoutForward(const float* x, float* y, float* mask, int batch, int features,
                                 float probability, uint64_t seed, int64_t step,
                                 int64_t firstSample, cudaStream_t stream);

// In place: dy[i] *= mask[i] for count elements (dropout's backward).
cudaError_t launchMultiply(float* dy, const float* mask, size_t count, cudaStream_t stream);

// One SGD step (optimizerStep's SGD branch), on the all-reduced gradient sums scaled by
// gradScale = 1 / worldSize (DDP's averaging, done here rather than in a separate pass):
//   g = grad * gradScale + weightDecay * p; buf = firstStep ? g : momentum * buf + g;
//   g = nesterov ? g + momentum * buf : buf; p -= lr * g.
struct SgdUpdate {
  float lr = 0.0f;
  float weightDecay = 0.0f;
  float momentum = 0.0f;
  float gradScale = 1.0f;
  bool nesterov = false;
  bool firstStep = false;  // OptimizerState::stepCount == 0: the buffer starts as g
};
// momentumBuffer[count] may be null (momentum == 0: no buffer, g is used as is).
cudaError_t launchSgdUpdate(const SgdUpdate& update, float* params, const float* grads,
                            float* momentumBuffer, size_t count, cudaStream_t stream);

// One AdamW step (optimizerStep's AdamW branch) with the bias corrections computed on the host
// in double exactly as optimizer.cpp does (stepSize = lr / (1 - beta1^t), sqrtCorrection2 =
// sqrt(1 - beta2^t)), g = grad * gradScale:
//   p *= 1 - lr * wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g g;
//   p -= stepSize * m / (sqrt(v) / sqrtCorrection2 + eps).
struct AdamWUpdate {
  float lr = 0.0f;
  float weightDecay = 0.0f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float stepSize = 0.0f;
  float sqrtCorrection2 = 1.0f;
  float gradScale = 1.0f;
};
// expAvg and expAvgSq are OptimizerState::buffers[0] and [1], [count] each.
cudaError_t launchAdamWUpdate(const AdamWUpdate& update, float* params, const float* grads,
                              float* expAvg, float* expAvgSq, size_t count, cudaStream_t stream);

}  // namespace ringside::trainer::gpu
