#include "ringside/trainer/communicator.h"

// C bindings only: Open MPI's mpi.h would otherwise pull in the deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ringside/trainer/hang_report.h"

namespace ringside::trainer {

namespace {

// `file` (a __FILE__) as a path in the source tree: a compile through ccache names the file
// relative to the build folder ("../../trainer/src/communicator.cpp", docs/development.md), which
// says nothing to the reader of an error; the leading "../" go. An absolute path is kept.
std::string sourcePath(const char* file) {
  std::string_view path(file);
  while (path.starts_with("../")) path.remove_prefix(3);
  return std::string(path);
}

std::string localHostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

int envInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

// A rank's answer on the watchdog's communicator: RankActivity::Snapshot in fixed-size fields.
struct WireReport {
  int64_t phase = 0;
  int64_t step = 0;
  int64_t bucket = -1;
  int64_t waitKind = -1;  // index in kWaitKinds, -1: not waiting
  uint64_t waitingCollective = 0;
  uint64_t workDone = 0;
  double phaseSeconds = 0.0;
  double waitingSeconds = 0.0;
};

WireReport toWire(const RankActivity::Snapshot& a) {
  return WireReport{
      a.phase,    a.step,         a.bucket,        waitKindIndex(a.waitingIn), a.waitingCollective,
      a.workDone, a.phaseSeconds, a.waitingSeconds};
}

RankActivity::Snapshot fromWire(const WireReport& w) {
  RankActivity::Snapshot a;
  a.phase = v1::RankPhase_IsValid(static_cast<int>(w.phase)) ? static_cast<v1::RankPhase>(w.phase)
                                                             : v1::RANK_PHASE_UNSPECIFIED;
  a.step = w.step;
  a.bucket = static_cast<int>(w.bucket);
  a.waitingIn = w.waitKind >= 0 && w.waitKind < static_cast<int64_t>(std::size(kWaitKinds))
                    ? kWaitKinds[w.waitKind]
                    : nullptr;
  a.waitingCollective = w.waitingCollective;
  a.workDone = w.workDone;
  a.phaseSeconds = w.phaseSeconds;
  a.waitingSeconds = w.waitingSeconds;
  return a;
}

// The collective watchdog (Communicator::watchCollectives): a thread on its own duplicate of
// MPI_COMM_WORLD that answers the other ranks' "what are you doing?" and, when this rank's
// training thread has waited in one collective past the timeout, asks the others, reports, and
// aborts the run.
class CollectiveWatchdog {
 public:
  static constexpr int kQueryTag = 1;
  static constexpr int kAnswerTag = 2;

  CollectiveWatchdog(MPI_Comm comm, int rank, std::vector<std::string> hosts,
                     const RankActivity& activity, int timeoutSeconds, bool canAsk)
      : comm_(comm),
        rank_(rank),
        hosts_(std::move(hosts)),
        activity_(activity),
        timeoutSeconds_(timeoutSeconds),
        canAsk_(canAsk),
        thread_([this] { loop(); }) {}

  // Returns within about 100 ms (the loop's period).
  ~CollectiveWatchdog() {
    stop_.store(true);
    thread_.join();
  }

 private:
  void loop() {
    while (!stop_.load()) {
      if (canAsk_) answerQueries();
      const RankActivity::Snapshot now = activity_.snapshot();
      if (now.waitingIn != nullptr && now.waitingSeconds > timeoutSeconds_) timedOut(now);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Answers every query waiting: the training thread may be blocked, this thread is not.
  void answerQueries() {
    for (;;) {
      int flag = 0;
      MPI_Status status;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, comm_, &flag, &status) != MPI_SUCCESS || !flag) {
        return;
      }
      int query = 0;
      if (MPI_Recv(&query, 1, MPI_INT, status.MPI_SOURCE, kQueryTag, comm_, MPI_STATUS_IGNORE) !=
          MPI_SUCCESS) {
        return;
      }
      WireReport answer = toWire(activity_.snapshot());
      // A few dozen bytes: sent eagerly, so this returns at once.
      MPI_Send(&answer, sizeof answer, MPI_BYTE, status.MPI_SOURCE, kAnswerTag, comm_);
    }
  }

  [[noreturn]] void timedOut(const RankActivity::Snapshot& self) {
    const int world = static_cast<int>(hosts_.size());
    std::vector<std::optional<RankReport>> peers(world);
    if (canAsk_) {
      std::vector<WireReport> answers(world);
      std::vector<MPI_Request> sends(world, MPI_REQUEST_NULL), receives(world, MPI_REQUEST_NULL);
      std::vector<int> arrived(world, 0);
      int query = 1;
      for (int r = 0; r < world; ++r) {
        if (r == rank_) continue;
        MPI_Isend(&query, 1, MPI_INT, r, kQueryTag, comm_, &sends[r]);
        MPI_Irecv(&answers[r], sizeof(WireReport), MPI_BYTE, r, kAnswerTag, comm_, &receives[r]);
      }
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration<double>(kCollectiveAnswerWaitSeconds);
      int pending = world - 1;
      while (pending > 0 && std::chrono::steady_clock::now() < deadline) {
        answerQueries();  // the other waiting ranks ask this one at the same time
        for (int r = 0; r < world; ++r) {
          if (r == rank_ || arrived[r]) continue;
          int flag = 0;
          if (MPI_Test(&receives[r], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
            arrived[r] = 1;
            --pending;
            peers[r] = RankReport{r, hosts_[r], fromWire(answers[r])};
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    const std::string message =
        describeCollectiveTimeout(RankReport{rank_, hosts_[rank_], self}, peers, hosts_,
                                  timeoutSeconds_, canAsk_ ? kCollectiveAnswerWaitSeconds : 0.0);
    std::fprintf(stderr, "ringside-trainer: error on rank %d (%s): %s%s\n", rank_,
                 hosts_[rank_].c_str(), message.c_str(),
                 canAsk_ ? "" : " (this MPI library cannot ask the other ranks what they do)");
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }

  const MPI_Comm comm_;
  const int rank_;
  const std::vector<std::string> hosts_;
  const RankActivity& activity_;
  const int timeoutSeconds_;
  const bool canAsk_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(bool threadMultiple) : threadMultiple_(threadMultiple) {
    hostname_ = localHostname();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &worldSize_);
    localRank_ = envInt("OMPI_COMM_WORLD_LOCAL_RANK", envInt("MPI_LOCALRANKID", 0));
    localSize_ = std::max(1, envInt("OMPI_COMM_WORLD_LOCAL_SIZE", envInt("MPI_LOCALNRANKS", 1)));
  }

  int rank() const override { return rank_; }
  int worldSize() const override { return worldSize_; }
  int localRank() const override { return localRank_; }
  int localSize() const override { return localSize_; }

  ~MpiCommunicator() override { stopWatchdog(); }

  Status watchCollectives(RankActivity* activity, int timeoutSeconds) override {
    activity_ = activity;
    if (activity == nullptr || timeoutSeconds <= 0 || worldSize_ == 1 || watchdog_) {
      return Status::ok();
    }
    RINGSIDE_RETURN_IF_ERROR(
        check(MPI_Comm_dup(MPI_COMM_WORLD, &watchComm_), "MPI_Comm_dup", __FILE__, __LINE__));
    // Every rank's host name, for the message about a rank that does not answer.
    constexpr int kHostBytes = 64;
    char own[kHostBytes] = {};
    std::strncpy(own, hostname_.c_str(), kHostBytes - 1);
    std::vector<char> all(size_t(worldSize_) * kHostBytes);
    RINGSIDE_RETURN_IF_ERROR(check(
        MPI_Allgather(own, kHostBytes, MPI_CHAR, all.data(), kHostBytes, MPI_CHAR, watchComm_),
        "MPI_Allgather(host names)", __FILE__, __LINE__));
    std::vector<std::string> hosts(worldSize_);
    for (int r = 0; r < worldSize_; ++r) {
      hosts[r].assign(&all[size_t(r) * kHostBytes],
                      strnlen(&all[size_t(r) * kHostBytes], kHostBytes));
    }
    watchdog_ = std::make_unique<CollectiveWatchdog>(watchComm_, rank_, std::move(hosts), *activity,
                                                     timeoutSeconds, threadMultiple_);
    return Status::ok();
  }

  Status allreduceSum(double* data, size_t count) override {
    const Waiting waiting(this, kWaitAllreduce);
    return check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_DOUBLE, MPI_SUM,
                               MPI_COMM_WORLD),
                 "MPI_Allreduce(MPI_SUM, double)", __FILE__, __LINE__);
  }

  Status allreduceSum(float* data, size_t count) override {
    const Waiting waiting(this, kWaitAllreduce);
    return check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD),
                 "MPI_Allreduce(MPI_SUM, float)", __FILE__, __LINE__);
  }

  Status allreduceMax(int64_t* data, size_t count) override {
    const Waiting waiting(this, kWaitAllreduce);
    return check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_INT64_T, MPI_MAX,
                               MPI_COMM_WORLD),
                 "MPI_Allreduce(MPI_MAX, int64)", __FILE__, __LINE__);
  }

  Status broadcast(void* data, size_t bytes, int root) override {
    const Waiting waiting(this, kWaitBroadcast);
    return check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD),
                 "MPI_Bcast", __FILE__, __LINE__);
  }

  Status gather(const double* send, size_t count, double* recv, int root) override {
    const Waiting waiting(this, kWaitGather);
    return check(MPI_Gather(send, static_cast<int>(count), MPI_DOUBLE, recv,
                            static_cast<int>(count), MPI_DOUBLE, root, MPI_COMM_WORLD),
                 "MPI_Gather", __FILE__, __LINE__);
  }

  Status startAllreduceSum(float* data, size_t count, CommRequest* request) override {
    MPI_Request mpiRequest;
    RINGSIDE_RETURN_IF_ERROR(check(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count),
                                                  MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &mpiRequest),
                                   "MPI_Iallreduce", __FILE__, __LINE__));
    *request = ++lastRequest_;
    requests_[*request] =
        Pending{mpiRequest, activity_ != nullptr ? activity_->beginCollective() : 0};
    return Status::ok();
  }

  Status testRequest(CommRequest request, bool* done) override {
    auto it = requests_.find(request);
    if (it == requests_.end()) {
      *done = true;
      return Status::ok();
    }
    int flag = 0;
    RINGSIDE_RETURN_IF_ERROR(check(MPI_Test(&it->second.request, &flag, MPI_STATUS_IGNORE),
                                   "MPI_Test", __FILE__, __LINE__));
    *done = flag != 0;
    if (*done) requests_.erase(it);
    return Status::ok();
  }

  Status waitRequest(CommRequest request) override {
    auto it = requests_.find(request);
    if (it == requests_.end()) return Status::ok();
    const ScopedWait waiting(activity_, kWaitAllreduce, it->second.collective);
    Status status =
        check(MPI_Wait(&it->second.request, MPI_STATUS_IGNORE), "MPI_Wait", __FILE__, __LINE__);
    requests_.erase(it);
    return status;
  }

  [[noreturn]] void abortAll(int exitCode) override {
    MPI_Abort(MPI_COMM_WORLD, exitCode);
    std::_Exit(exitCode);
  }

  void finalize() override {
    stopWatchdog();
    MPI_Finalize();
  }

 private:
  // A blocking collective: numbered, and marked as a wait for its duration.
  class Waiting {
   public:
    Waiting(MpiCommunicator* comm, const char* what)
        : wait_(comm->activity_, what,
                comm->activity_ != nullptr ? comm->activity_->beginCollective() : 0) {}

   private:
    ScopedWait wait_;
  };
  struct Pending {
    MPI_Request request;
    uint64_t collective;  // RankActivity::beginCollective's number; 0 without an activity
  };

  void stopWatchdog() {
    if (!watchdog_) return;
    watchdog_.reset();
    MPI_Comm_free(&watchComm_);
  }

  // The check with context that docs/design.md decision 9 asks for: host, rank, call, file, line.
  Status check(int code, const char* call, const char* file, int line) const {
    if (code == MPI_SUCCESS) return Status::ok();
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(code, text, &length);
    return Status::internal(hostname_ + " rank " + std::to_string(rank_) + ": " + call +
                            " failed: " + text + " (" + sourcePath(file) + ":" +
                            std::to_string(line) + ")");
  }

  int rank_ = 0;
  int worldSize_ = 1;
  int localRank_ = 0;
  int localSize_ = 1;
  CommRequest lastRequest_ = 0;
  std::unordered_map<CommRequest, Pending> requests_;
  const bool threadMultiple_;
  RankActivity* activity_ = nullptr;
  MPI_Comm watchComm_ = MPI_COMM_NULL;
  std::unique_ptr<CollectiveWatchdog> watchdog_;
};

class SelfCommunicator final : public Communicator {
 public:
  SelfCommunicator() { hostname_ = localHostname(); }
  int rank() const override { return 0; }
  int worldSize() const override { return 1; }
  int localRank() const override { return 0; }
  int localSize() const override { return 1; }
  Status allreduceSum(double*, size_t) override { return Status::ok(); }
  Status allreduceMax(int64_t*, size_t) override { return Status::ok(); }
  Status allreduceSum(float*, size_t) override { return Status::ok(); }
  Status broadcast(void*, size_t, int) override { return Status::ok(); }
  Status gather(const double* send, size_t count, double* recv, int) override {
    if (recv != nullptr && recv != send) std::memcpy(recv, send, count * sizeof(double));
    return Status::ok();
  }
  Status startAllreduceSum(float*, size_t, CommRequest* request) override {
    *request = 0;
    return Status::ok();
  }
  Status testRequest(CommRequest, bool* done) override {
    *done = true;
    return Status::ok();
  }
  Status waitRequest(CommRequest) override { return Status::ok(); }
  Status watchCollectives(RankActivity*, int) override { return Status::ok(); }
  [[noreturn]] void abortAll(int exitCode) override { std::_Exit(exitCode); }
  void finalize() override {}
};

}  // namespace

bool launchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_RANK") != nullptr;
}

Result<std::unique_ptr<Communicator>> makeMpiCommunicator(int* argc, char*** argv) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    return Status::internal(localHostname() +
                            ": MPI_Init_thread failed: is Open MPI installed "
                            "(apt-get install openmpi-bin) and the job started with mpirun?");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::unique_ptr<Communicator>(
      std::make_unique<MpiCommunicator>(provided >= MPI_THREAD_MULTIPLE));
}

std::unique_ptr<Communicator> makeSelfCommunicator() {
  return std::make_unique<SelfCommunicator>();
}

}  // namespace ringside::trainer
