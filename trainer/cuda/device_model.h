// DeviceModel: one model replica's forward and backward passes on the GPU, behind one interface
// for the nccl backend: DeviceMlp (cuBLAS, device_mlp.h) and DeviceCnn (cuDNN and cuBLAS,
// device_cnn.h). It owns the activations and scratch of a pass for up to maxBatch samples; the
// parameter and gradient buffers ([numParams], the flat layout of model.h) belong to the caller.
//
// Every method except allocate() only enqueues work on the model's stream; the caller
// synchronises. Not thread-safe: one object per backend, used from one thread with its device
// current.
#pragma once

#include <cstdint>
#include <functional>

#include "kernels.cuh"
#include "ringside/common/status.h"
#include "ringside/trainer/model.h"

namespace ringside::trainer::gpu {

class DeviceModel {
 public:
  virtual ~DeviceModel() = default;

  // Allocates the device and pinned buffers. Errors: Internal (naming the bytes asked for) when
  // memory runs out, or when a library (cuDNN) cannot be set up.
  virtual Status allocate() = 0;

  // Enqueues the copy of x[batch, inputDim] and labels[batch] from (pageable) host memory.
  // Errors: InvalidArgument when batch is outside [1, maxBatch].
  virtual Status upload(const float* x, const int32_t* labels, int batch) = 0;

  // Enqueues the forward pass over the uploaded batch with parameters params[numParams]
  // (device), the loss, and the copy of the LossSums to the host (hostLossSums() once the stream
  // has passed it). With `position` (training) the loss gradient is kept for backward() and the
  // CNN's dropout uses the masks of that position (model.h); null: evaluation.
  virtual Status forward(const float* params, const BatchPosition* position) = 0;

  // Enqueues the backward pass of the last training forward(): grads[numParams] (device)
  // receives d(mean loss)/d(params). onLayerReady(l) is called on the host right after the work
  // that completes parameter layer l's gradients is enqueued, from the last layer to the first
  // (DDP's autograd hook point); an error it returns stops the pass and is returned.
  virtual Status backward(const float* params, float* grads,
                          const std::function<Status(int layer)>& onLayerReady) = 0;

  // The LossSums of the last forward(), valid once the stream has passed that forward's copy.
  virtual const LossSums& hostLossSums() const = 0;
  virtual int maxBatch() const = 0;
};

}  // namespace ringside::trainer::gpu
