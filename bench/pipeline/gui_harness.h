// pipeline_bench's GUI side: the GUI's own Controller (gui/core, no widgets) on a fresh data
// directory, which starts its embedded ringside-agent on loopback with CURVE (the default
// workstation setup) and routes every event batch and catch-up page into its MetricsStore, as the
// application does. The bench adds a placeholder run to send metrics to, and a log of when the
// store committed each run's samples.
//
// GUI thread only (the thread that made the QCoreApplication): every method spins that thread's
// event loop while it waits, so the Controller's queued signals are delivered meanwhile.
#pragma once

#include <QString>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/gui/controller.h"
#include "telemetry/telemetry_bench.h"

namespace ringside::bench {

// One MetricsStore::samplesIngested of a run: a transaction that stored new samples.
struct IngestEvent {
  double unixTime = 0;       // when the store's thread emitted it, right after the commit
  Clock::time_point steady;  // the same moment on the steady clock
  int64_t newSamples = 0;    // samples not stored before
  uint64_t lastSeq = 0;      // the run's highest stored seq after it
};

// The run the ranks send to: a run of as many ranks as the bench simulates (the agent refuses
// samples of a rank outside the run's world size), each a placeholder that sleeps; world rank 0
// first writes the environment the agent gives ranks (RINGSIDE_AGENT_ENDPOINT, RINGSIDE_RUN_ID)
// to a file.
struct PlaceholderRun {
  QString runId;
  std::string rankEndpoint;  // e.g. ipc://<data dir>/local-agent/run/ranks.sock
  std::string stderrLog;     // the run's stderr.log, which the agent tails
};

class GuiHarness {
 public:
  // `dataDir`: the Controller's data directory (database, keys, local agent state).
  // `nvmlLibrary`: the NVML the local agent loads (its --nvml-library; the bench passes
  // bench/scale's fake NVML of 8 GPUs so that the node has a GPU slot per simulated rank, as an
  // 8-GPU workstation has); empty: the agent's default.
  GuiHarness(const std::string& agentPath, const std::string& dataDir,
             const std::string& nvmlLibrary = {});
  ~GuiHarness();  // destroys the Controller: the store is closed, the local agent stopped

  // Starts the Controller and waits (at most 60 s) until its local agent is online and has sent
  // its hello. Errors: kInternal with the Controller's or agent's message.
  Status start();

  // Launches a placeholder run named `name` of `worldSize` ranks, one GPU slot each, through
  // Controller::launch (RunForm, a PyTorch-script job whose interpreter is /bin/sh) and waits (at
  // most 30 s) for its rank environment file. Errors: kInternal with the reason (the launch
  // refused, e.g. fewer free GPUs than `worldSize`), also when the run's stderr.log is not where
  // the local agent keeps it.
  Result<PlaceholderRun> launchPlaceholder(const QString& name, int worldSize);

  // Controller::stopRun, then waits (at most 20 s) for the run to end in the store.
  void stopRun(const QString& runId);

  // Samples of `runId` the store has committed (the sum of its IngestEvents). Thread-safe.
  int64_t storedSamples(const QString& runId) const;
  // The run's IngestEvents in the order the store emitted them. Thread-safe.
  std::vector<IngestEvent> ingestEvents(const QString& runId) const;

  // MetricsStore::logLineCount of the run, waited for while the event loop spins; -1 on error.
  int64_t storedLogLines(const QString& runId);

  // Spins the event loop until `done()` or `timeoutMs` passed; returns done().
  static bool spinUntil(const std::function<bool()>& done, int64_t timeoutMs);

  std::string databasePath() const;
  // The local agent's process id (its ready file), 0 when unknown.
  int64_t agentPid() const { return agentPid_; }
  // Errors the Controller reported (errorMessage), for the report.
  QStringList errors() const { return errors_; }

 private:
  std::string dataDir_;
  std::string scriptPath_;
  std::string agentPath_;
  std::string nvmlLibrary_;
  std::unique_ptr<gui::Controller> controller_;
  QString nodeId_;
  int64_t agentPid_ = 0;
  QStringList errors_;
  mutable std::mutex mutex_;  // ingest_ and stored_, written on the store's thread
  std::map<QString, std::vector<IngestEvent>> ingest_;
  std::map<QString, int64_t> stored_;
};

}  // namespace ringside::bench
