#include "kernels.cuh"

#include "ringside/trainer/model.h"

#include <algorithm>
#include <climits>

namespace ringside::trainer::gpu {

namespace {

constexpr int kThreads = 256;         // block size of the element-wise kernels
constexpr size_t kMaxBlocks = 65536;  // grid-stride loops cover the rest
constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kRowsPerBlock = kThreads / kWarpSize;  // softmax: one warp per row
constexpr int kBiasColumns = 32;                     // bias gradient: columns per block (x)
constexpr int kBiasRowLanes = 8;                     // bias gradient: row lanes per block (y)

unsigned blocksFor(size_t count) {
  return static_cast<unsigned>(std::min((count + kThreads - 1) / kThreads, kMaxBlocks));
}

__device__ size_t firstIndex() { return size_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ size_t gridStride() { return size_t(blockDim.x) * gridDim.x; }

__global__ void biasActivationKernel(float* y, const float* bias, size_t total, int out,
                                     bool relu) {
  for (size_t i = firstIndex(); i < total; i += gridStride()) {
    const float value = y[i] + bias[i % out];
    y[i] = relu ? (value > 0.0f ? value : 0.0f) : value;
  }
}

__global__ void dropoutForwardKernel(const float* x, float* y, float* mask, size_t total,
                                     int features, float probability, uint64_t seed, int64_t step,
                                     int64_t firstSample) {
  for (size_t i = firstIndex(); i < total; i += gridStride()) {
    const int64_t row = static_cast<int64_t>(i / features);
    const int64_t column = static_cast<int64_t>(i % features);
    const float scale = dropoutScale(probability, seed, step, firstSample + row, column);
    mask[i] = scale;
    y[i] = x[i] * scale;
  }
}

__global__ void multiplyKernel(float* dy, const float* mask, size_t count) {
  for (size_t i = firstIndex(); i < count; i += gridStride()) dy[i] *= mask[i];
}

__global__ void reluBackwardKernel(const float* y, float* dy, size_t count) {
  for (size_t i = firstIndex(); i < count; i += gridStride()) {
    dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
  }
}

// Block (kBiasColumns, kBiasRowLanes): x walks adjacent columns (coalesced loads), y strides over
// the rows; the row lanes' partial sums are then added in lane order.
__global__ void biasGradientKernel(const float* dy, int batch, int out, float* db) {
  __shared__ float partial[kBiasRowLanes][kBiasColumns + 1];
  const int column = blockIdx.x * kBiasColumns + threadIdx.x;
  float sum = 0.0f;
  if (column < out) {
    for (int row = threadIdx.y; row < batch; row += kBiasRowLanes) {
      sum += dy[size_t(row) * out + column];
    }
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && column < out) {
    for (int lane = 1; lane < kBiasRowLanes; ++lane) sum += partial[lane][threadIdx.x];
    db[column] = sum;
  }
}

// One warp per row. The arg-max is the first index of the maximum, as the CPU's strict '>' scan
// finds it: each lane keeps the first maximum of its columns, and ties between lanes go to the
// lower index.
__global__ void softmaxCrossEntropyKernel(const float* logits, const int32_t* labels, int batch,
                                          int classes, float invBatch, float* dlogits,
                                          double* rowLoss, int* rowCorrect) {
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  // Uniform per warp, so the whole warp leaves and the full-mask shuffles below stay valid.
  if (row >= batch) return;
  const float* x = logits + size_t(row) * classes;

  float best = -INFINITY;
  int bestIndex = INT_MAX;  // INT_MAX: this lane has no column
  for (int j = lane; j < classes; j += kWarpSize) {
    if (bestIndex == INT_MAX || x[j] > best) {
      best = x[j];
      bestIndex = j;
    }
  }
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const float otherBest = __shfl_xor_sync(kFullMask, best, offset);
    const int otherIndex = __shfl_xor_sync(kFullMask, bestIndex, offset);
    const bool takeOther = otherIndex != INT_MAX && (bestIndex == INT_MAX || otherBest > best ||
                                                     (otherBest == best && otherIndex < bestIndex));
    if (takeOther) {
      best = otherBest;
      bestIndex = otherIndex;
    }
  }
  const float maxLogit = x[bestIndex];

  float sumExp = 0.0f;
  for (int j = lane; j < classes; j += kWarpSize) sumExp += expf(x[j] - maxLogit);
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    sumExp += __shfl_xor_sync(kFullMask, sumExp, offset);
  }
  const float logSumExp = maxLogit + logf(sumExp);

  const int label = labels[row];
  const bool validLabel = label >= 0 && label < classes;
  if (lane == 0) {
    rowLoss[row] = validLabel ? static_cast<double>(logSumExp - x[label]) : 0.0;
    rowCorrect[row] = validLabel ? (bestIndex == label ? 1 : 0) : -1;
  }
  if (dlogits != nullptr) {
    float* grad = dlogits + size_t(row) * classes;
    for (int j = lane; j < classes; j += kWarpSize) {
      grad[j] = (expf(x[j] - logSumExp) - (j == label ? 1.0f : 0.0f)) * invBatch;
    }
  }
}

__global__ void lossReductionKernel(const double* rowLoss, const int* rowCorrect, int batch,
                                    LossSums* sums) {
  __shared__ double loss[kThreads];
  __shared__ long long correct[kThreads];
  __shared__ long long invalid[kThreads];
  const int t = threadIdx.x;
  double lossSum = 0.0;
  long long hits = 0;
  long long bad = 0;
  for (int i = t; i < batch; i += kThreads) {
    lossSum += rowLoss[i];
    const int flag = rowCorrect[i];
    if (flag < 0) {
      ++bad;
    } else {
      hits += flag;
    }
  }
  loss[t] = lossSum;
  correct[t] = hits;
  invalid[t] = bad;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (t < half) {
      loss[t] += loss[t + half];
      correct[t] += correct[t + half];
      invalid[t] += invalid[t + half];
    }
    __syncthreads();
  }
  if (t == 0) {
    sums->lossSum = loss[0];
    sums->correct = correct[0];
    sums->invalidLabels = invalid[0];
  }
}

__global__ void sgdUpdateKernel(SgdUpdate update, float* params, const float* grads,
                                float* momentumBuffer, size_t count) {
  for (size_t i = firstIndex(); i < count; i += gridStride()) {
    float g = grads[i] * update.gradScale + update.weightDecay * params[i];
    if (momentumBuffer != nullptr) {
      const float buf = update.firstStep ? g : update.momentum * momentumBuffer[i] + g;
      momentumBuffer[i] = buf;
      g = update.nesterov ? g + update.momentum * buf : buf;
    }
    params[i] -= update.lr * g;
  }
}

__global__ void adamWUpdateKernel(AdamWUpdate update, float* params, const float* grads,
                                  float* expAvg, float* expAvgSq, size_t count) {
  for (size_t i = firstIndex(); i < count; i += gridStride()) {
    const float g = grads[i] * update.gradScale;
    float p = params[i] * (1.0f - update.lr * update.weightDecay);
    const float m = update.beta1 * expAvg[i] + (1.0f - update.beta1) * g;
    const float v = update.beta2 * expAvgSq[i] + (1.0f - update.beta2) * g * g;
    p -= update.stepSize * m / (sqrtf(v) / update.sqrtCorrection2 + update.epsilon);
    expAvg[i] = m;
    expAvgSq[i] = v;
    params[i] = p;
  }
}

}  // namespace

cudaError_t launchBiasActivation(float* y, const float* bias, int batch, int out, bool relu,
                                 cudaStream_t stream) {
  const size_t total = size_t(batch) * out;
  if (total == 0) return cudaSuccess;
  biasActivationKernel<<<blocksFor(total), kThreads, 0, stream>>>(y, bias, total, out, relu);
  return cudaGetLastError();
}

cudaError_t launchReluBackward(const float* y, float* dy, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  reluBackwardKernel<<<blocksFor(count), kThreads, 0, stream>>>(y, dy, count);
  return cudaGetLastError();
}

cudaError_t launchDropoutForward(const float* x, float* y, float* mask, int batch, int features,
                                 float probability, uint64_t seed, int64_t step,
                                 int64_t firstSample, cudaStream_t stream) {
  const size_t total = size_t(batch) * features;
  if (total == 0) return cudaSuccess;
  dropoutForwardKernel<<<blocksFor(total), kThreads, 0, stream>>>(
      x, y, mask, total, features, probability, seed, step, firstSample);
  return cudaGetLastError();
}

cudaError_t launchMultiply(float* dy, const float* mask, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  multiplyKernel<<<blocksFor(count), kThreads, 0, stream>>>(dy, mask, count);
  return cudaGetLastError();
}

cudaError_t launchBiasGradient(const float* dy, int batch, int out, float* db,
                               cudaStream_t stream) {
  if (out <= 0) return cudaSuccess;
  if (batch <= 0) return cudaMemsetAsync(db, 0, size_t(out) * sizeof(float), stream);
  const dim3 block(kBiasColumns, kBiasRowLanes);
  const dim3 grid(static_cast<unsigned>((out + kBiasColumns - 1) / kBiasColumns));
  biasGradientKernel<<<grid, block, 0, stream>>>(dy, batch, out, db);
  return cudaGetLastError();
}

cudaError_t launchSoftmaxCrossEntropy(const float* logits, const int32_t* labels, int batch,
                                      int classes, float* dlogits, double* rowLoss, int* rowCorrect,
                                      cudaStream_t stream) {
  if (batch <= 0 || classes <= 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>((batch + kRowsPerBlock - 1) / kRowsPerBlock);
  const float invBatch = 1.0f / static_cast<float>(batch);
  softmaxCrossEntropyKernel<<<blocks, kThreads, 0, stream>>>(
      logits, labels, batch, classes, invBatch, dlogits, rowLoss, rowCorrect);
  return cudaGetLastError();
}

cudaError_t launchLossReduction(const double* rowLoss, const int* rowCorrect, int batch,
                                LossSums* sums, cudaStream_t stream) {
  lossReductionKernel<<<1, kThreads, 0, stream>>>(rowLoss, rowCorrect, batch < 0 ? 0 : batch, sums);
  return cudaGetLastError();
}

cudaError_t launchSgdUpdate(const SgdUpdate& update, float* params, const float* grads,
                            float* momentumBuffer, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  sgdUpdateKernel<<<blocksFor(count), kThreads, 0, stream>>>(update, params, grads, momentumBuffer,
                                                             count);
  return cudaGetLastError();
}

cudaError_t launchAdamWUpdate(const AdamWUpdate& update, float* params, const float* grads,
                              float* expAvg, float* expAvgSq, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  adamWUpdateKernel<<<blocksFor(count), kThreads, 0, stream>>>(update, params, grads, expAvg,
                                                               expAvgSq, count);
  return cudaGetLastError();
}

}  // namespace ringside::trainer::gpu
