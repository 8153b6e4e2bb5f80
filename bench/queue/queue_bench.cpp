// queue_bench: the agent's run queue (docs/queue.md) through RunManager, as the agent drives it
// (poll() and dispatchQueue() every 100 ms), with real one-rank commands under the real mpirun.
//
// 1. Gap: `--runs` runs of `sleep --run-seconds` are launched at once on a node of one CPU slot;
//    each but the first waits in the queue. The gap of a run is from the moment the run before
//    it wrote its exit status (the shim's exit_status file, ns mtime) to the moment the next one
//    was reported STARTING. Printed: p50, p95, max; the goal is p95 <= 2 s. Reference, measured
//    in the same run: a launch on a free slot (launch() until STARTING), what any start costs.
// 2. Dispatch cost: with the slot held, `--queued` runs are queued behind it; then the time of
//    one dispatchQueue() (a fresh slot count from /proc and every queued run's place and reason),
//    median of 20, against the same with one queued run (the reference).
//
// Usage: queue_bench [--mpirun PATH] [--runs N] [--run-seconds S] [--queued N]
// Prints its figures; exit status 1 when a run did not complete or one started twice.
#include <stdlib.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ringside/agent/run_manager.h"

namespace {

namespace fs = std::filesystem;
using ringside::agent::RunManager;
using ringside::agent::RunManagerOptions;
using ringside::agent::RunProcessIds;
namespace v1 = ringside::v1;

double wallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
double steadyNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

v1::RunSpec shellRun(const std::string& name, const std::string& script) {
  v1::RunSpec spec;
  spec.set_name(name);
  spec.set_ranks_per_node(1);
  spec.mutable_command()->add_argv("sh");
  spec.mutable_command()->add_argv("-c");
  spec.mutable_command()->add_argv(script);
  return spec;
}

// Modification time of `path`, Unix seconds with ns resolution; 0 when it does not exist.
double mtimeOf(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return 0;
  return static_cast<double>(info.st_mtim.tv_sec) + info.st_mtim.tv_nsec / 1e9;
}

struct Events {
  std::map<std::string, double> started;  // run id -> wall time of its STARTING report
  std::map<std::string, int> starts;      // run id -> STARTING reports
};

RunManager makeManager(const std::string& dir, const std::string& mpirun, Events* events) {
  RunManagerOptions options;
  options.runsDir = dir + "/runs";
  options.mpirunPath = mpirun;
  options.rankEndpoint = "ipc://" + dir + "/ranks.sock";
  options.cpuSlots = 1;
  options.defaultGraceSeconds = 5;
  return RunManager(options, [events](const v1::RunInfo& run, const RunProcessIds&) {
    if (run.state() != v1::STARTING) return;
    events->started.emplace(run.run_id(), wallNow());
    ++events->starts[run.run_id()];
  });
}

void tick(RunManager& manager) {
  manager.poll();
  manager.dispatchQueue();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"queue_bench: the run queue's start gap and dispatch cost (bench/README.md)"};
  std::string mpirun = "mpirun";
  int runs = 20;
  double runSeconds = 0.5;
  int queued = 1000;
  app.add_option("--mpirun", mpirun, "Open MPI's mpirun");
  app.add_option("--runs", runs, "runs for the gap (one slot)")->check(CLI::Range(2, 10000));
  app.add_option("--run-seconds", runSeconds, "how long each run sleeps")
      ->check(CLI::Range(0.0, 600.0));
  app.add_option("--queued", queued, "queued runs for the dispatch cost")
      ->check(CLI::Range(1, 100000));
  CLI11_PARSE(app, argc, argv);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
  char pattern[] = "/tmp/ringside-queue-bench-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  int status = 0;

  // ---- 1. The gap between a slot freeing and the next run starting.
  {
    Events events;
    RunManager manager = makeManager(dir + "/gap", mpirun, &events);
    char sleep[64];
    std::snprintf(sleep, sizeof sleep, "sleep %.3f", runSeconds);
    std::vector<std::string> ids;
    for (int i = 0; i < runs; ++i) {
      auto run = manager.launch(shellRun("gap-" + std::to_string(i), sleep), i == 0 ? 1 : 0);
      if (!run.isOk()) {
        std::fprintf(stderr, "queue_bench: launch %d: %s\n", i, run.status().toString().c_str());
        return 1;
      }
      ids.push_back(run->run_id());
    }
    const double deadline = steadyNow() + runs * (runSeconds + 30.0);
    while (steadyNow() < deadline) {
      tick(manager);
      if (ringside::agent::isEnded(manager.find(ids.back())->state())) break;
    }
    std::vector<double> gaps;
    for (size_t i = 0; i < ids.size(); ++i) {
      const v1::RunInfo* run = manager.find(ids[i]);
      if (run->state() != v1::COMPLETED || events.starts[ids[i]] != 1) {
        std::fprintf(stderr, "queue_bench: run %zu ended %s after %d starts: %s\n", i,
                     v1::RunState_Name(run->state()).c_str(), events.starts[ids[i]],
                     run->reason().c_str());
        status = 1;
      }
      if (i == 0) continue;
      const double freed = mtimeOf(manager.runDir(ids[i - 1]) + "/exit_status");
      if (freed > 0 && events.started.count(ids[i]) != 0) {
        gaps.push_back(events.started[ids[i]] - freed);
      }
    }
    // Reference: a launch on a free slot, from launch() to STARTING (median of 5).
    std::vector<double> direct;
    for (int i = 0; i < 5; ++i) {
      const double start = steadyNow();
      auto run = manager.launch(shellRun("direct", "true"), 1);
      direct.push_back(steadyNow() - start);
      if (!run.isOk() || run->state() != v1::STARTING) {
        std::fprintf(stderr, "queue_bench: a launch on a free slot did not start\n");
        return 1;
      }
      while (!ringside::agent::isEnded(manager.find(run->run_id())->state())) tick(manager);
    }
    const double p50 = percentile(gaps, 0.5), p95 = percentile(gaps, 0.95);
    std::printf("gap from a slot freeing to the next queued run starting, %zu runs of %.1f s on "
                "1 slot (agent loop: 100 ms):\n",
                gaps.size(), runSeconds);
    std::printf("  p50 %.3f s  p95 %.3f s  max %.3f s  (goal: p95 <= 2 s: %s)\n", p50, p95,
                percentile(gaps, 1.0), p95 <= 2.0 ? "met" : "NOT met");
    std::printf("  reference: a launch on a free slot takes %.3f s (median of 5); p50 gap / it "
                "= %.1fx\n",
                percentile(direct, 0.5), p50 / std::max(1e-9, percentile(direct, 0.5)));
  }

  // ---- 2. Dispatch cost with many queued runs.
  {
    Events events;
    RunManager manager = makeManager(dir + "/dispatch", mpirun, &events);
    const std::string gate = dir + "/dispatch.go";
    auto holder = manager.launch(
        shellRun("holder", "while [ ! -e '" + gate + "' ]; do sleep 0.1; done"), 1);
    if (!holder.isOk()) return 1;
    auto dispatchMs = [&manager] {
      std::vector<double> times;
      for (int i = 0; i < 20; ++i) {
        const double start = steadyNow();
        manager.dispatchQueue(/*force=*/true);
        times.push_back((steadyNow() - start) * 1e3);
      }
      return percentile(times, 0.5);
    };
    std::vector<double> enqueue;
    auto first = manager.launch(shellRun("queued-0", "true"), 0);
    if (!first.isOk() || first->state() != v1::QUEUED) return 1;
    const double one = dispatchMs();
    for (int i = 1; i < queued; ++i) {
      const double start = steadyNow();
      auto run = manager.launch(shellRun("queued-" + std::to_string(i), "true"), 0);
      enqueue.push_back((steadyNow() - start) * 1e3);
      if (!run.isOk() || run->state() != v1::QUEUED) {
        std::fprintf(stderr, "queue_bench: queued run %d was not queued\n", i);
        return 1;
      }
    }
    const double many = dispatchMs();
    std::printf("dispatch with %d queued runs: %.2f ms (median of 20); with 1: %.2f ms "
                "(reference); ratio %.1fx\n",
                queued, many, one, many / std::max(1e-9, one));
    std::printf("  a launch into that queue (journal callback not included): p50 %.2f ms, "
                "p95 %.2f ms\n",
                percentile(enqueue, 0.5), percentile(enqueue, 0.95));
    std::ofstream(gate) << "go\n";
    for (const v1::RunInfo& run : manager.runs(/*includeEnded=*/false)) {
      if (run.state() == v1::QUEUED) (void)manager.stop(run.run_id(), 0);
    }
    while (!ringside::agent::isEnded(manager.find(holder->run_id())->state())) tick(manager);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return status;
}
