// runTrainerProgram: the process edge of ringside-trainer. Options, MPI start-up, collective
// agreement on set-up errors, signals, and the mapping of Status to messages and exit codes.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <CLI/CLI.hpp>

#include "ringside/common/protocol.h"
#include "ringside/trainer/checkpoint.h"
#include "ringside/trainer/memory_plan.h"
#include "ringside/trainer/trainer.h"
#include "ringside/trainer/zmq_metrics_sink.h"

namespace ringside::trainer {

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

std::atomic<bool> gStopRequested{false};

extern "C" void onStopSignal(int) { gStopRequested.store(true, std::memory_order_relaxed); }

void installStopHandlers() {
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  // Slurm's warning before a job's time limit (sbatch --signal=USR1@90, docs/slurm.md): the
  // rank checkpoints and stops as on SIGTERM, while there is time.
  sigaction(SIGUSR1, &action, nullptr);
}

// Before MPI is up, the rank comes from the launcher's environment.
int launcherRank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

// The agent's metrics sink, when the agent started this run: it sets RINGSIDE_AGENT_ENDPOINT (its
// ipc:// PULL endpoint, or for a multi-node run its CURVE tcp:// rank endpoint with the keys in
// RINGSIDE_AGENT_PUBLIC_KEY / RINGSIDE_RUN_*_KEY) and RINGSIDE_RUN_ID in the ranks' environment.
// Null without an agent.
Result<std::unique_ptr<MetricSink>> makeAgentSink(int rank, const RankActivity* activity) {
  using protocol::kAgentEndpointEnv;
  using protocol::kRunIdEnv;
  const char* endpoint = std::getenv(kAgentEndpointEnv);
  if (endpoint == nullptr || *endpoint == '\0') return std::unique_ptr<MetricSink>();
  const char* runId = std::getenv(kRunIdEnv);
  if (runId == nullptr || *runId == '\0') {
    return Status::invalidArgument(std::string(kAgentEndpointEnv) + " is set but " + kRunIdEnv +
                                   " is not: the agent sets both; unset " + kAgentEndpointEnv +
                                   " to run without an agent");
  }
  ZmqMetricSinkOptions options;
  options.activity = activity;  // the heartbeat
  // A multi-node run: the owning agent's CURVE rank endpoint, opened by the run's own keypair.
  const auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value != nullptr ? value : "");
  };
  options.agentPublicKey = env(protocol::kAgentPublicKeyEnv);
  options.runKeys.publicKey = env(protocol::kRunPublicKeyEnv);
  options.runKeys.secretKey = env(protocol::kRunSecretKeyEnv);
  auto sink = ZmqMetricSink::create(endpoint, runId, rank, options);
  if (!sink.isOk()) return sink.status();
  return std::unique_ptr<MetricSink>(std::move(sink).value());
}

// Bytes of the loaded pixels and labels of both splits.
uint64_t datasetBytes(const DatasetSplits& data) {
  uint64_t bytes = 0;
  for (const ImageDataset* split : {&data.train, &data.test}) {
    bytes += split->pixels.size() + split->labels.size() * sizeof(int32_t);
  }
  return bytes;
}

int exitCodeFor(const Status& status) {
  return status.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
}

// Every rank learns whether any rank failed, so all end together. Rank 0 prints its error; other
// ranks print theirs only when rank 0 had none (the same message from every rank once is enough).
// Returns the exit code (0 when every rank is fine).
int agreeOnFailure(Communicator& comm, const Status& status) {
  int64_t flags[2] = {comm.rank() == 0 && !status.isOk() ? 1 : 0, status.isOk() ? 0 : 1};
  int64_t code = status.isOk() ? 0 : exitCodeFor(status);
  if (!comm.allreduceMax(flags, 2).isOk() || !comm.allreduceMax(&code, 1).isOk()) {
    std::fprintf(stderr, "ringside-trainer: rank %d lost contact with the other ranks\n",
                 comm.rank());
    comm.abortAll(kExitFailure);
  }
  if (flags[1] == 0) return 0;
  if (!status.isOk() && (comm.rank() == 0 || flags[0] == 0)) {
    std::fprintf(
        stderr, "ringside-trainer: error%s: %s\n",
        comm.worldSize() > 1
            ? (" on rank " + std::to_string(comm.rank()) + " (" + comm.hostname() + ")").c_str()
            : "",
        status.message().c_str());
  }
  return static_cast<int>(code);
}

// Collective. The backend of this run: `requested` resolved on every rank (resolveBackendKind);
// for `auto`, nccl only when every rank can use it, since a run does not mix backends (a node
// without a GPU or without the plugin makes the whole run mpi, and the reason says so).
BackendChoice chooseBackend(Communicator& comm, BackendKind requested) {
  BackendChoice choice = resolveBackendKind(requested);
  if (requested != BackendKind::kAuto) return choice;
  int64_t someRankWithoutNccl = choice.kind == BackendKind::kNccl ? 0 : 1;
  if (!comm.allreduceMax(&someRankWithoutNccl, 1).isOk()) {
    std::fprintf(stderr, "ringside-trainer: rank %d lost contact with the other ranks\n",
                 comm.rank());
    comm.abortAll(kExitFailure);
  }
  if (someRankWithoutNccl != 0 && choice.kind == BackendKind::kNccl) {
    choice = {BackendKind::kMpi,
              "mpi: another rank of the run cannot use the nccl backend (its node has no usable "
              "GPU, or no libringside-nccl.so); run with --backend nccl to see its error"};
  }
  return choice;
}

}  // namespace

int runTrainerProgram(int argc, char** argv) {
  CLI::App app{
      std::string("ringside-trainer: data-parallel training of an MLP or CNN classifier on "
                  "MNIST-format data.\n"
                  "Start with `mpirun -np N ringside-trainer [options]`, or alone for one rank.\n"
                  "Writes JSON Lines metrics to stdout (docs/metrics.md) and progress to stderr. "
                  "With\n") +
      protocol::kAgentEndpointEnv + " and " + protocol::kRunIdEnv +
      " set (the agent sets them), every rank also\nsends its metrics to the agent."};
  // A stop can come at any moment after start (the agent sends SIGTERM to the ranks): catch it
  // from the first instruction, so that it ends the run at its next step with a checkpoint.
  installStopHandlers();
  v1::TrainerConfig config;  // every field set and checked once parse() returns
  addTrainerOptions(app, config);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return launcherRank() == 0 ? app.exit(e) : 0;
  } catch (const CLI::ParseError& e) {
    if (launcherRank() == 0) {
      std::fprintf(stderr, "ringside-trainer: %s\nRun ringside-trainer --help for the options.\n",
                   e.what());
    }
    return kExitUsage;
  }
  // What this rank is doing, for the heartbeat to the agent and the collective watchdog; declared
  // before the communicator, whose watchdog reads it until the communicator is gone.
  RankActivity activity;
  std::unique_ptr<Communicator> comm;
  if (launchedByMpirun()) {
    auto mpi = makeMpiCommunicator(&argc, &argv);
    if (!mpi.isOk()) {
      std::fprintf(stderr, "ringside-trainer: %s\n", mpi.status().message().c_str());
      return kExitFailure;
    }
    comm = std::move(mpi).value();
  } else {
    comm = makeSelfCommunicator();
  }
  installStopHandlers();  // again, in case the MPI library installed its own
  if (Status watched = comm->watchCollectives(&activity, config.collective_timeout_s());
      !watched.isOk()) {
    std::fprintf(stderr, "ringside-trainer: %s\n", watched.message().c_str());
    comm->abortAll(kExitFailure);
  }
  // The agent's sink, and with it the heartbeat (phase SETUP), starts before the set-up: the owner
  // agent's stall rule counts a rank silent since the run started as stuck after 8 s
  // (agent/stall_detector.h), and the data load and the backend's set-up (CUDA, NCCL and cuDNN
  // take seconds) can take longer on a loaded machine. Not before MPI_Init: Open MPI's memory
  // patcher rewrites the first instructions of glibc's memory functions (munmap, ...) as MPI
  // starts, which the sink's threads could be running then. Every rank sends its own samples to the
  // agent (rank 0 also the global ones). A failure to make the sink is reported with the set-up's,
  // once every rank can agree on it.
  Status setup;
  std::unique_ptr<MetricSink> agentSink;
  if (auto made = makeAgentSink(comm->rank(), &activity); made.isOk()) {
    agentSink = std::move(made).value();
  } else {
    setup = made.status();
  }
  // Measured before this rank loads anything: the memory plan below counts the data too.
  const std::optional<AvailableMemory> available = availableMemory();

  // Set-up: checkpoint directory, data, model, memory, backend. Each rank loads the dataset.
  // Rank 0 writes every checkpoint: an unwritable directory is found now, not after training.
  if (setup.isOk() && comm->rank() == 0) {
    setup = checkCheckpointDirWritable(config.checkpoint_dir());
  }
  auto data = loadMnistFormat(config.data(), config.train_samples(), config.test_samples());
  if (setup.isOk() && !data.isOk()) setup = data.status();
  // Every rank resolves the backend, also after a failed set-up, since `auto` agrees collectively.
  const BackendChoice choice = chooseBackend(*comm, *parseBackendKind(config.backend()));
  if (comm->rank() == 0 && !config.quiet() && !choice.reason.empty()) {
    std::fprintf(stderr, "ringside-trainer: backend auto chose %s\n", choice.reason.c_str());
  }
  std::unique_ptr<Backend> backend;
  if (setup.isOk()) {
    auto layout = modelLayoutOf(config, data->train);
    if (!layout.isOk()) setup = layout.status();
    if (setup.isOk() && config.global_batch() % comm->worldSize() != 0) {
      setup = Status::invalidArgument("--global-batch " + std::to_string(config.global_batch()) +
                                      " is not divisible by the world size " +
                                      std::to_string(comm->worldSize()) + ": use a multiple of " +
                                      std::to_string(comm->worldSize()) +
                                      " (local batch = global batch / world size)");
    }
    const BackendKind kind = choice.kind;
    const int localBatch = config.global_batch() / comm->worldSize();
    const int microBatch = config.micro_batch();
    if (setup.isOk() && microBatch > 0 && localBatch % microBatch != 0) {
      setup = Status::invalidArgument(
          "--micro-batch " + std::to_string(microBatch) + " does not divide the local batch " +
          std::to_string(localBatch) + " (global batch " + std::to_string(config.global_batch()) +
          " / world size " + std::to_string(comm->worldSize()) +
          "): use a divisor of it, or 0 for one pass per step");
    }
    if (setup.isOk() && microBatch > 0 && kind == BackendKind::kNccl) {
      setup = Status::invalidArgument("--micro-batch " + std::to_string(microBatch) +
                                      " needs the mpi backend: the nccl backend computes the "
                                      "local batch in one pass; use --micro-batch 0 there");
    }
    // Samples in one training forward pass (what activations are sized for).
    const int passBatch = microBatch > 0 ? microBatch : localBatch;
    const ConvAlgorithm convAlgorithm = *parseConvAlgorithm(config.conv_algorithm());
    const int evalBatch = evaluationBatch(config.eval_batch(), data->test.count, comm->worldSize());
    if (setup.isOk() && available) {
      // Before the backend allocates anything: a run that cannot fit ends here, saying so.
      MemoryPlanInput input;
      input.modelOnHost = kind != BackendKind::kNccl;
      input.localBatch = localBatch;
      input.microBatch = passBatch;
      input.evalBatch = evalBatch;
      input.convAlgorithm = convAlgorithm;
      input.writesCheckpoints = comm->rank() == 0;
      input.resumes = !config.resume().empty();
      input.datasetBytes = datasetBytes(*data);
      setup = checkMemoryFits(planHostMemory(*layout, optimizerConfigOf(config), input),
                              comm->localSize(), *available, comm->hostname());
    }
    if (setup.isOk()) {
      BackendOptions options;
      options.model = std::move(layout).value();
      options.optimizer = optimizerConfigOf(config);
      options.seed = config.seed();
      options.maxBatch = std::max(passBatch, evalBatch);
      options.microBatch = microBatch;
      options.convAlgorithm = convAlgorithm;
      options.bucketBytes = static_cast<size_t>(config.bucket_mb() * 1024 * 1024);
      options.threads = config.threads();
      options.stopRequested = &gStopRequested;
      options.activity = &activity;
      options.collectiveTimeoutSeconds = config.collective_timeout_s();
      auto made = makeBackend(kind, *comm, std::move(options));
      if (made.isOk()) {
        backend = std::move(made).value();
      } else {
        setup = made.status();
      }
    }
  }
  if (int code = agreeOnFailure(*comm, setup); code != 0) {
    comm->finalize();
    return code;
  }

  FanoutSink sink;
  if (comm->rank() == 0) {
    sink.add(std::make_unique<JsonLinesSink>(stdout));
    if (!config.metrics_out().empty()) {
      auto file = JsonLinesSink::openFile(config.metrics_out());
      if (file.isOk()) {
        sink.add(std::move(file).value());
      } else {
        setup = file.status();
      }
    }
  }
  if (int code = agreeOnFailure(*comm, setup); code != 0) {
    comm->finalize();
    return code;
  }

  Trainer trainer(config, *comm, *backend, *data, comm->rank() == 0 ? &sink : nullptr,
                  agentSink.get(), gStopRequested, &activity);
  auto outcome = trainer.run();
  if (!outcome.isOk()) {
    const Status& status = outcome.status();
    // A failure inside the loop can leave other ranks waiting in a collective: end them all.
    if (status.code() != Status::Code::kAborted || comm->worldSize() == 1) {
      std::fprintf(stderr, "ringside-trainer: error on rank %d (%s): %s\n", comm->rank(),
                   comm->hostname().c_str(), status.message().c_str());
    }
    backend.reset();
    if (comm->worldSize() > 1) {
      // The rank with the first-hand error aborts the run; the others (Aborted) wait for it.
      if (status.code() != Status::Code::kAborted) comm->abortAll(exitCodeFor(status));
      comm->finalize();
    }
    return exitCodeFor(status);
  }
  backend.reset();
  comm->finalize();
  return 0;
}

}  // namespace ringside::trainer
