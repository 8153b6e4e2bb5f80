// bench/pipeline: can the metrics pipeline keep up with R ranks that log every step? Simulated
// trainer ranks (the trainer's ZmqMetricSink) -> the GUI's embedded ringside-agent -> the GUI's
// Controller and MetricsStore, in phases of decreasing step time, each its own run; per phase the
// samples/s that reach the GUI's SQLite, the latency from a rank's writeMetrics to the store's
// commit, the CPU the agent and this process took, and a check of every stored row (nccl-tests'
// -c). Raw batched SQLite inserts of as many rows (bench/telemetry's reference) run in the same
// process afterwards. bench/README.md ("pipeline") has the command and figures.
#include <unistd.h>
#include <QCoreApplication>
#include <QTemporaryDir>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "gui_harness.h"
#include "pipeline_bench.h"
#include "simulated_ranks.h"
#include "store_check.h"
#include "telemetry/noise_meter.h"
#include "telemetry/sqlite_reference.h"

namespace ringside::bench {
namespace {

// Time the sinks get to connect before the first step (they queue until then anyway).
constexpr int64_t kConnectMs = 300;
// After the last sample is stored: time for anything stored twice to show up before the check.
constexpr int64_t kSettleMs = 500;

struct PhaseResult {
  double stepMs = 0;
  int64_t steps = 0;
  double achievedStepsPerS = 0;  // steps / the slowest rank's loop time
  int64_t lateSteps = 0;         // over all ranks
  uint64_t expected = 0;
  double sentPerS = 0;     // samples / the slowest rank's loop time
  double storedPerS = 0;   // samples / (last commit - first step's time)
  double drainS = 0;       // last commit - the last rank's last write
  double logsStoredS = 0;  // first step's time -> every printed line in the store (+-0.1 s)
  double loopS = 0;        // the slowest rank's loop: first step's time -> its last write
  double agentCpuPct = 0;  // of one core, first step -> all stored (logsStoredS)
  ThreadCpu benchCpuPct;   // this process's threads (threadCpuSplit), % of one core
  double otherPct = 0;     // other processes, % of all cores
  uint64_t commits = 0;    // store transactions that brought samples
  uint64_t dropped = 0;    // points the sinks dropped (queue full)
  bool timedOut = false;
  StoreCheck check;
  std::string error;
  bool sustained = false;
};

std::string fmtRate(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", value);
  std::string digits = text, out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

PhaseResult runPhase(const PipelineOptions& options, GuiHarness& gui, double stepMs) {
  PhaseResult result;
  result.stepMs = stepMs;
  result.steps = std::max<int64_t>(1, std::llround(options.phaseSeconds * 1000.0 / stepMs));
  char name[64];
  std::snprintf(name, sizeof name, "pipeline-bench-%gms", stepMs);
  auto run = gui.launchPlaceholder(QString::fromLatin1(name), options.ranks);
  if (!run.isOk()) {
    result.error = run.status().toString();
    return result;
  }
  SimulatedRanks ranks(run->rankEndpoint, run->runId.toStdString(), options.ranks, result.steps,
                       stepMs, run->stderrLog);
  result.expected = ranks.expectedSamples();
  GuiHarness::spinUntil([] { return false; }, kConnectMs);

  const std::string agentPid = std::to_string(gui.agentPid());
  const double agentCpu0 = processCpuSeconds(agentPid);
  const ThreadCpu benchCpu0 = threadCpuSplit();
  const NoiseMeter noise(agentPid);
  const Clock::time_point t0 = Clock::now() + std::chrono::milliseconds(20);
  ranks.start(t0);
  const auto expected = static_cast<int64_t>(result.expected);
  const int64_t timeoutMs = std::llround(options.timeoutS * 1000);
  result.timedOut =
      !GuiHarness::spinUntil([&] { return gui.storedSamples(run->runId) >= expected; }, timeoutMs);
  // The printed lines travel separately (the agent tails the log file): wait for them too.
  const auto expectedLines = static_cast<int64_t>(ranks.expectedLogLines());
  const auto linesDeadline = t0 + std::chrono::milliseconds(timeoutMs);
  while (!result.timedOut && gui.storedLogLines(run->runId) < expectedLines) {
    if (Clock::now() >= linesDeadline) {
      result.timedOut = true;
      break;
    }
    GuiHarness::spinUntil([] { return false; }, 100);
  }
  result.logsStoredS = secondsSince(t0);
  const double agentCpu = processCpuSeconds(agentPid) - agentCpu0;
  const ThreadCpu benchCpu1 = threadCpuSplit();
  result.otherPct = noise.otherCpu().second;
  ranks.join();
  GuiHarness::spinUntil([] { return false; }, kSettleMs);
  gui.stopRun(run->runId);

  const std::vector<IngestEvent> events = gui.ingestEvents(run->runId);
  double slowestLoop = 0;
  for (const RankOutcome& rank : ranks.outcomes()) {
    if (!rank.error.empty() && result.error.empty()) result.error = "rank sink: " + rank.error;
    slowestLoop = std::max(slowestLoop, rank.loopSeconds);
    result.lateSteps += rank.lateSteps;
    result.dropped += rank.stats.droppedPoints;
  }
  auto check = checkStore(gui.databasePath(), run->runId.toStdString(), ranks, events);
  if (!check.isOk()) {
    result.error = check.status().toString();
    return result;
  }
  result.check = std::move(check).value();
  // The last write is at most the slowest loop's end; the commit that completed the run is the
  // one that stored the ranks' last sample (the agent's verdicts may come later; the last event
  // before the timeout when it timed out).
  double lastCommit = 0;
  if (!events.empty()) {
    auto completing = std::find_if(events.begin(), events.end(), [&](const IngestEvent& event) {
      return event.lastSeq >= result.check.lastRankSeq;
    });
    if (result.timedOut || completing == events.end()) completing = std::prev(events.end());
    lastCommit = secondsSince(t0, completing->steady);
  }
  result.commits = events.size();
  result.achievedStepsPerS = slowestLoop > 0 ? result.steps / slowestLoop : 0;
  result.sentPerS = slowestLoop > 0 ? result.expected / slowestLoop : 0;
  result.storedPerS = lastCommit > 0 ? result.expected / lastCommit : 0;
  result.drainS = lastCommit - slowestLoop;
  result.loopS = slowestLoop;
  result.agentCpuPct = 100 * agentCpu / result.logsStoredS;
  const double toPct = 100 / result.logsStoredS;
  result.benchCpuPct = {toPct * (benchCpu1.ranks - benchCpu0.ranks),
                        toPct * (benchCpu1.zeromq - benchCpu0.zeromq),
                        toPct * (benchCpu1.gui - benchCpu0.gui)};

  const double p99 = quantile(result.check.latencies, 0.99);
  // Sustained: everything arrived, as sent, soon (the printed lines within the same bound of
  // the last step, plus the 0.1 s they are polled at); and the ranks kept their pace (else the
  // pipeline was offered less than the phase's rate).
  result.sustained = result.error.empty() && !result.timedOut && result.check.ok() &&
                     result.dropped == 0 && p99 <= options.sustainedP99S &&
                     result.logsStoredS - slowestLoop <= options.sustainedP99S + 0.1 &&
                     result.achievedStepsPerS >= 0.95 * 1000.0 / stepMs;
  return result;
}

void printPhases(const PipelineOptions& options, const std::vector<PhaseResult>& phases) {
  std::printf(
      "| step (ms) | steps/s per rank (paced / achieved) | samples/s sent | samples/s in the GUI "
      "store | latency p50 / p99 / max (ms) | drain after last write: samples / log lines (s) | "
      "store commits "
      "(samples each) | CPU, %% of one core: agent / GUI side / ranks / ZeroMQ I/O | others (%% of "
      "cores) | "
      "check | sustained |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const PhaseResult& p : phases) {
    const auto& l = p.check.latencies;
    std::printf(
        "| %g | %s / %s | %s | %s | %.0f / %.0f / %.0f | %.2f / %.1f | %llu (%.0f) | %.0f / %.0f / "
        "%.0f / %.0f | "
        "%.1f%s | %s | %s |\n",
        p.stepMs, fmtRate(1000.0 / p.stepMs).c_str(), fmtRate(p.achievedStepsPerS).c_str(),
        fmtRate(p.sentPerS).c_str(), fmtRate(p.storedPerS).c_str(), 1000 * quantile(l, 0.5),
        1000 * quantile(l, 0.99), 1000 * (l.empty() ? 0 : l.back()), p.drainS,
        p.logsStoredS - p.loopS, static_cast<unsigned long long>(p.commits),
        p.commits > 0 ? double(p.expected) / double(p.commits) : 0.0, p.agentCpuPct,
        p.benchCpuPct.gui, p.benchCpuPct.ranks, p.benchCpuPct.zeromq, p.otherPct,
        p.otherPct > kDisturbedPct ? " disturbed" : "",
        !p.error.empty() ? "ERROR" : (p.check.ok() && p.dropped == 0 ? "PASS" : "FAIL"),
        p.sustained ? "yes" : (p.timedOut ? "no (timed out)" : "no"));
  }
  for (const PhaseResult& p : phases) {
    const StoreCheck& c = p.check;
    std::printf(
        "\nstep %g ms: %lld steps x %d ranks; %llu samples sent, %llu rows stored, %llu as sent, "
        "%llu duplicates, %llu wrong, %llu missing (besides: %llu GPU telemetry rows, %llu "
        "verdict samples of the agent); sinks dropped %llu points; %lld steps written late%s",
        p.stepMs, static_cast<long long>(p.steps), options.ranks,
        static_cast<unsigned long long>(p.expected), static_cast<unsigned long long>(c.rows),
        static_cast<unsigned long long>(c.matched), static_cast<unsigned long long>(c.duplicates),
        static_cast<unsigned long long>(c.wrong), static_cast<unsigned long long>(c.missing),
        static_cast<unsigned long long>(c.telemetryRows),
        static_cast<unsigned long long>(c.agentRows), static_cast<unsigned long long>(p.dropped),
        static_cast<long long>(p.lateSteps),
        c.outOfOrderIngests > 0 ? "; catch-up filled a gap (latency under-estimated)" : "");
    std::printf(
        "; log lines printed %llu, stored %llu: %llu as printed, %llu twice, %llu missing, "
        "%llu others",
        static_cast<unsigned long long>(c.logExpected), static_cast<unsigned long long>(c.logRows),
        static_cast<unsigned long long>(c.logMatched),
        static_cast<unsigned long long>(c.logDuplicates),
        static_cast<unsigned long long>(c.logMissing), static_cast<unsigned long long>(c.logOther));
    if (!c.firstError.empty()) std::printf("; first problem: %s", c.firstError.c_str());
    if (!p.error.empty()) std::printf("; ERROR: %s", p.error.c_str());
    std::printf("\n");
  }
}

int runBenchmark(const PipelineOptions& options) {
  if (::geteuid() == 0) {  // mpirun refuses root unless told (scripts/env.sh)
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
  QTemporaryDir temp(QDir::tempPath() + QStringLiteral("/ringside-pipeline-XXXXXX"));
  if (!temp.isValid()) {
    std::fprintf(stderr, "pipeline_bench: cannot create a temporary directory (set TMPDIR)\n");
    return 1;
  }
  temp.setAutoRemove(!options.keepDir);
  if (options.keepDir)
    std::fprintf(stderr, "pipeline_bench: keeping %s\n", qPrintable(temp.path()));

  std::vector<PhaseResult> phases;
  bool harnessOk = true;
  QStringList controllerErrors;
  {
    GuiHarness gui(options.agentPath, temp.path().toStdString() + "/gui", options.nvmlLibrary);
    if (Status s = gui.start(); !s.isOk()) {
      std::fprintf(stderr, "pipeline_bench: %s\n", s.toString().c_str());
      return 1;
    }
    for (double stepMs : options.stepMs) {
      std::fprintf(stderr, "pipeline_bench: phase %g ms per step ...\n", stepMs);
      phases.push_back(runPhase(options, gui, stepMs));
      if (!phases.back().error.empty()) harnessOk = false;
      if (!phases.back().sustained && !options.keepGoing) break;
    }
    controllerErrors = gui.errors();
  }

  Options reference;
  reference.ranks = options.ranks;
  reference.samples = options.referenceSamples;
  reference.batchPoints = options.referenceBatch;
  const NoiseMeter referenceNoise;
  auto raw = rawSqliteInserts(reference, temp.path().toStdString() + "/reference.sqlite");
  const double referencePct = referenceNoise.otherCpu().second;
  const double rawPerS = raw.isOk() && raw->seconds > 0 ? reference.samples / raw->seconds : 0;

  std::printf(
      "pipeline_bench: %d ranks logging every step (ZmqMetricSink) -> ringside-agent -> "
      "GUI Controller -> MetricsStore; %g s per phase; agent %s\n\n",
      options.ranks, options.phaseSeconds, options.agentPath.c_str());
  printPhases(options, phases);

  const PhaseResult* fastest = nullptr;
  bool checksOk = harnessOk;
  bool targetOk = false;
  for (const PhaseResult& p : phases) {
    checksOk = checksOk && p.check.ok() && p.dropped == 0 && p.error.empty();
    if (p.sustained && (fastest == nullptr || p.stepMs < fastest->stepMs)) fastest = &p;
    if (p.sustained && p.stepMs <= options.targetStepMs) targetOk = true;
  }
  std::printf("\n| measure | value |\n|---|---|\n");
  if (fastest != nullptr) {
    std::printf(
        "| fastest sustained | %g ms per step: %s steps/s, %s samples/s into the GUI "
        "store |\n",
        fastest->stepMs, fmtRate(1000.0 / fastest->stepMs).c_str(),
        fmtRate(fastest->storedPerS).c_str());
  } else {
    std::printf("| fastest sustained | none of the phases |\n");
  }
  std::printf(
      "| raw batched SQLite inserts (WAL, synchronous=NORMAL, %u rows per transaction, "
      "%s rows) | %s samples/s%s; other processes %.1f%% of the cores%s |\n",
      reference.batchPoints, fmtRate(double(reference.samples)).c_str(), fmtRate(rawPerS).c_str(),
      raw.isOk() && raw->rowsStored == reference.samples ? "" : " (FAILED)", referencePct,
      referencePct > kDisturbedPct ? " <- disturbed" : "");
  if (fastest != nullptr && rawPerS > 0) {
    std::printf("| fastest sustained / raw SQLite | %.2f |\n", fastest->storedPerS / rawPerS);
  }
  std::printf("| check: every sample in the GUI store exactly once, every field as sent | %s |\n",
              checksOk ? "PASS" : "FAIL");
  std::printf("| target: %d ranks every step at %g ms per step, p99 latency <= %g s | %s |\n",
              options.ranks, options.targetStepMs, options.sustainedP99S,
              targetOk ? "PASS" : "FAIL");
  for (const QString& error : controllerErrors) {
    std::printf("controller: %s\n", qPrintable(error));
  }
  const bool referenceOk = raw.isOk() && raw->rowsStored == reference.samples;
  if (!referenceOk) {
    std::printf("reference: %s\n",
                raw.isOk() ? "row count differs" : raw.status().toString().c_str());
  }
  if (!checksOk || !referenceOk) return 1;
  return targetOk ? 0 : 3;
}

}  // namespace
}  // namespace ringside::bench

int main(int argc, char** argv) {
  ringside::bench::PipelineOptions options;
  CLI::App app{
      "pipeline_bench: simulated ranks logging every step (the trainer's ZmqMetricSink) through "
      "the GUI's local ringside-agent into the GUI's MetricsStore, in phases of decreasing step "
      "time; checks every stored sample. Exit status: 0 all passed; 1 a sample was lost, "
      "duplicated or altered, or the harness failed; 3 the target was missed."};
  app.option_defaults()->always_capture_default();
  app.add_option("--agent", options.agentPath, "ringside-agent binary")->check(CLI::ExistingFile);
  app.add_option("--ranks", options.ranks,
                 "Simulated ranks, at most the GPUs of --nvml-library (the fake one has 8)")
      ->check(CLI::Range(2, 256));
  app.add_option("--nvml-library", options.nvmlLibrary,
                 "NVML for the local agent; its GPUs are the run's slots")
      ->check(CLI::ExistingFile);
  app.add_option("--step-ms", options.stepMs, "Step times of the phases, ms (comma-separated)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--seconds", options.phaseSeconds, "Seconds of steps per phase")
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout", options.timeoutS, "Seconds a phase may take until all is stored")
      ->check(CLI::PositiveNumber);
  app.add_option("--sustained-p99", options.sustainedP99S,
                 "A phase is sustained when its p99 latency is at most this, s");
  app.add_option("--target-step-ms", options.targetStepMs,
                 "Target: the pipeline sustains this step time, ms");
  app.add_flag("--keep-going", options.keepGoing, "Run faster phases after one not sustained");
  app.add_option("--reference-samples", options.referenceSamples, "Rows of the SQLite reference")
      ->check(CLI::PositiveNumber);
  app.add_flag("--keep", options.keepDir, "Keep the temporary directory (GUI database, journal)");
  CLI11_PARSE(app, argc, argv);
  QCoreApplication qapp(argc, argv);
  return ringside::bench::runBenchmark(options);
}
