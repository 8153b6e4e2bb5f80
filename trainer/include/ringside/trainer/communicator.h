// Communicator: the collective operations the trainer needs between its ranks, behind one
// interface with two implementations: MPI (the process was started by mpirun) and a single
// process (world size 1, no MPI at all).
//
// Collectives must be called by every rank in the same order (MPI's rule). Not thread-safe: use
// a communicator from the thread that created it. Every failure returns a Status naming the host,
// rank, call, file and line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ringside/common/status.h"
#include "ringside/trainer/rank_activity.h"

namespace ringside::trainer {

// A handle for a non-blocking all-reduce. Opaque; 0 means "none".
using CommRequest = uint64_t;

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int worldSize() const = 0;
  // Rank among the processes on this node (OMPI_COMM_WORLD_LOCAL_RANK); picks the GPU.
  virtual int localRank() const = 0;
  // Ranks of this run on this node, this one included (OMPI_COMM_WORLD_LOCAL_SIZE; 1 when the
  // launcher does not say): they share its memory.
  virtual int localSize() const = 0;
  const std::string& hostname() const { return hostname_; }

  // In-place sums / maxima over all ranks (blocking).
  virtual Status allreduceSum(double* data, size_t count) = 0;
  virtual Status allreduceMax(int64_t* data, size_t count) = 0;
  // In-place float sum over all ranks (blocking): for a gradient bucket with no compute left to
  // overlap, where MPI's tuned blocking algorithms beat the non-blocking ones.
  virtual Status allreduceSum(float* data, size_t count) = 0;
  // Copies `bytes` bytes from rank `root`'s buffer into every other rank's (blocking).
  virtual Status broadcast(void* data, size_t bytes, int root) = 0;
  // Gathers `count` doubles from every rank into recv[worldSize, count] on rank `root` (recv may
  // be null on other ranks).
  virtual Status gather(const double* send, size_t count, double* recv, int root) = 0;

  // Starts an in-place sum all-reduce of data[count]; *request receives the handle.
  virtual Status startAllreduceSum(float* data, size_t count, CommRequest* request) = 0;
  // Drives progress; sets *done when the all-reduce has completed (the handle is then spent).
  virtual Status testRequest(CommRequest request, bool* done) = 0;
  // Blocks until the all-reduce has completed (the handle is then spent).
  virtual Status waitRequest(CommRequest request) = 0;

  // From now on, marks in `activity` (which must outlive the communicator; null: none) every
  // collective this rank starts and every wait in one (RankActivity::beginWait), and, with
  // timeoutSeconds > 0 and more than one rank, starts the collective watchdog: a thread that,
  // once one collective has waited longer than timeoutSeconds, asks every other rank what it is
  // doing (waiting up to kCollectiveAnswerWaitSeconds for answers), prints
  // describeCollectiveTimeout's message (hang_report.h) on stderr prefixed
  // "ringside-trainer: error on rank R (host): ", and ends every rank of the run (MPI_Abort with
  // exit status 1). Collective: every rank calls it once, at the same point, before training.
  // Asking the others needs MPI_THREAD_MULTIPLE; an MPI library without it still gets the timeout,
  // with a message that names no other rank. Errors: Internal from MPI.
  virtual Status watchCollectives(RankActivity* activity, int timeoutSeconds) = 0;

  // Ends every rank of the run at once with `exitCode` (MPI_Abort); never returns.
  [[noreturn]] virtual void abortAll(int exitCode) = 0;
  // Orderly shutdown (stops the watchdog, MPI_Finalize). Called once, before exit.
  virtual void finalize() = 0;

 protected:
  std::string hostname_;
};

// How long a rank whose collective timed out waits for the other ranks' answers: seconds.
inline constexpr double kCollectiveAnswerWaitSeconds = 10.0;

// True when this process was started by mpirun (Open MPI's or PMIx's rank variables are set).
bool launchedByMpirun();

// The MPI communicator over MPI_COMM_WORLD; calls MPI_Init_thread (asking for
// MPI_THREAD_MULTIPLE, which the collective watchdog needs; the training thread alone calls every
// other MPI function) and sets
// MPI_ERRORS_RETURN so failures come back as Status. Errors: Internal when MPI cannot start.
Result<std::unique_ptr<Communicator>> makeMpiCommunicator(int* argc, char*** argv);

// World size 1: every collective is a copy or nothing.
std::unique_ptr<Communicator> makeSelfCommunicator();

}  // namespace ringside::trainer
