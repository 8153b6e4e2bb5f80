// The arithmetic of the trainer's communication metrics (docs/metrics.md, "Communication"): one
// gradient bucket's all-reduce duration, its algorithm and bus bandwidth as nccl-tests defines
// them (NVIDIA/nccl-tests, doc/PERFORMANCE.md), the step's totals over its buckets, and the
// figure the global record carries for a bucket from every rank's.
//
// Pure functions of their arguments: thread-safe, no errors (a figure that cannot be computed is
// std::nullopt, never 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ringside::trainer {

// One gradient bucket's all-reduce in one step of one rank. Times are ms after the step's start
// on this rank's clock (the host's steady clock on the mpi backend, the GPU's event timeline on
// the nccl backend).
struct BucketTiming {
  uint64_t bytes = 0;       // gradient bytes of the bucket (elements × 4)
  double startMs = 0.0;     // the all-reduce started (mpi: MPI_Iallreduce/MPI_Allreduce called)
  double completeMs = 0.0;  // its completion was observed (mpi: the MPI_Test/MPI_Wait that saw it)
};

// The bucket's own all-reduce duration, ms: completeMs - startMs (0 if the clock went backwards).
double bucketDurationMs(const BucketTiming& timing);

// Algorithm bandwidth of one collective on `bytes` bytes that took `ms` milliseconds:
// algbw = bytes / time (nccl-tests doc/PERFORMANCE.md, "Algorithm bandwidth"), in GB/s (1e9 B/s).
// nullopt when ms is not a positive finite number or bytes is 0.
std::optional<double> algbwGBps(double bytes, double ms);

// The all-reduce's bus-bandwidth factor 2(n-1)/n for n ranks (nccl-tests doc/PERFORMANCE.md,
// "AllReduce"): each rank sends and receives 2(n-1)/n of the buffer in a ring; 0 for n <= 1.
double allreduceBusFactor(int worldSize);

// busbw = algbw × 2(n-1)/n, GB/s (1e9 B/s). nullopt when algbw is, or for worldSize < 2
// (nothing crosses a bus).
std::optional<double> allreduceBusbwGBps(double bytes, double ms, int worldSize);

// A step's communication over its buckets: bytes summed, and allreduceMs the sum of the buckets'
// own durations (bucketDurationMs). Two buckets in flight at once are each counted for their whole
// duration, so on the mpi backend (where non-blocking all-reduces can overlap each other) the sum
// can exceed the wall-clock span; idle time between buckets is never counted.
struct CommTotals {
  uint64_t bytes = 0;
  double allreduceMs = 0.0;
};
CommTotals sumBuckets(std::span<const BucketTiming> buckets);

// The bucket figure of a global record from every rank's: for each of `count` columns, the
// minimum over `ranks` rows of rows[rank * stride + offset + column]. A collective completes
// only after its last rank joined, so each rank's duration is at least the collective's own time
// (from the last rank's start to the first completion) plus the time that rank waited for the
// others; the smallest over ranks is the tightest such upper bound. rows.size() must be at least
// ranks × stride and offset + count <= stride (else the result is empty).
std::vector<double> minOverRanks(std::span<const double> rows, int ranks, size_t stride,
                                 size_t offset, size_t count);

}  // namespace ringside::trainer
