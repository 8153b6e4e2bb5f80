#include "ringside/trainer/communicator.h"

// C bindings only: Open MPI's mpi.h would otherwise pull in the deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace ringside::trainer {

namespace {

std::string localHostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

int envInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
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

  Status allreduceSum(double* data, size_t count) override {
    return check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_DOUBLE, MPI_SUM,
                               MPI_COMM_WORLD),
                 "MPI_Allreduce(MPI_SUM, double)", __FILE__, __LINE__);
  }

  Status allreduceSum(float* data, size_t count) override {
    return check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD),
                 "MPI_Allreduce(MPI_SUM, float)", __FILE__, __LINE__);
  }

  Status allreduceMax(int64_t* data, size_t count) override {
    return check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_INT64_T, MPI_MAX,
                               MPI_COMM_WORLD),
                 "MPI_Allreduce(MPI_MAX, int64)", __FILE__, __LINE__);
  }

  Status broadcast(void* data, size_t bytes, int root) override {
    return check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD),
                 "MPI_Bcast", __FILE__, __LINE__);
  }

  Status gather(const double* send, size_t count, double* recv, int root) override {
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
    requests_[*request] = mpiRequest;
    return Status::ok();
  }

  Status testRequest(CommRequest request, bool* done) override {
    auto it = requests_.find(request);
    if (it == requests_.end()) {
      *done = true;
      return Status::ok();
    }
    int flag = 0;
    RINGSIDE_RETURN_IF_ERROR(
        check(MPI_Test(&it->second, &flag, MPI_STATUS_IGNORE), "MPI_Test", __FILE__, __LINE__));
    *done = flag != 0;
    if (*done) requests_.erase(it);
    return Status::ok();
  }

  Status waitRequest(CommRequest request) override {
    auto it = requests_.find(request);
    if (it == requests_.end()) return Status::ok();
    Status status = check(MPI_Wait(&it->second, MPI_STATUS_IGNORE), "MPI_Wait", __FILE__, __LINE__);
    requests_.erase(it);
    return status;
  }

  [[noreturn]] void abortAll(int exitCode) override {
    MPI_Abort(MPI_COMM_WORLD, exitCode);
    std::_Exit(exitCode);
  }

  void finalize() override { MPI_Finalize(); }

 private:
  // The check with context that DESIGN.md decision 9 asks for: host, rank, call, file, line.
  Status check(int code, const char* call, const char* file, int line) const {
    if (code == MPI_SUCCESS) return Status::ok();
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(code, text, &length);
    return Status::internal(hostname_ + " rank " + std::to_string(rank_) + ": " + call +
                            " failed: " + text + " (" + file + ":" + std::to_string(line) + ")");
  }

  int rank_ = 0;
  int worldSize_ = 1;
  int localRank_ = 0;
  int localSize_ = 1;
  CommRequest lastRequest_ = 0;
  std::unordered_map<CommRequest, MPI_Request> requests_;
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
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return Status::internal(localHostname() +
                            ": MPI_Init_thread failed: is Open MPI installed "
                            "(apt-get install openmpi-bin) and the job started with mpirun?");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::unique_ptr<Communicator>(std::make_unique<MpiCommunicator>());
}

std::unique_ptr<Communicator> makeSelfCommunicator() {
  return std::make_unique<SelfCommunicator>();
}

}  // namespace ringside::trainer
