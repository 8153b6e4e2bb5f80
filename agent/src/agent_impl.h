// Agent::Impl, private to the agent's sources: the state that agent.cpp (start-up, sockets and the
// main loop), agent_control.cpp (the control requests) and agent_ingest.cpp (rank metrics, run
// logs, run states, metric recovery and hang checks) share.
//
// Thread-safety: none needed; everything runs on the thread that calls Agent::run().
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "ringside/agent/agent.h"
#include "ringside/agent/hang_monitor.h"
#include "ringside/agent/slurm/slurm_tracker.h"
#include "ringside/agent/journal.h"
#include "ringside/agent/log_tailer.h"
#include "ringside/agent/nvml_probe.h"
#include "ringside/agent/run_eta.h"
#include "ringside/agent/run_manager.h"
#include "ringside/agent/sample_refusals.h"
#include "ringside/agent/straggler_detector.h"
#include "ringside/agent/sweep/sweep_controller.h"
#include "ringside/agent/telemetry.h"
#include "ringside/agent/telemetry_journal.h"
#include "ringside/common/curve.h"
#include "ringside/common/zap_handler.h"

namespace ringside::agent {

using Clock = std::chrono::steady_clock;

// Seconds since the epoch (system clock), as the journal and the protocol record times.
double wallSeconds();

// Writes "ringside-agent <level>: <text>" to stderr, unless `level` ("error", "warning", "info",
// "debug") is less severe than the one setLogLevel() chose. Thread-safe.
void logLine(const char* level, const std::string& text);

// How often running runs are judged for a stall (hang_monitor.h). Judging is a few comparisons
// per run (its /proc sampling is at most once a second, HangMonitor::kProcessSamplePeriodSeconds);
// a quarter second keeps the flag within StallRule::minSeconds + about half a second of the last
// progress, where a 1 s period cost up to a second more (bench/scale: 1.5-1.96 s after the 8 s
// threshold at 32 x 8).
inline constexpr std::chrono::milliseconds kHangCheckInterval{250};
// A gap between two hang checks longer than this (s) is time the agent did not run (its loop
// wakes every kPollInterval, 100 ms): it is excluded from every hang timeout (checkHangs).
inline constexpr double kAgentPauseSeconds = 2.0;

struct Agent::Impl {
  AgentConfig config;
  zmq::context_t context;
  curve::KeyPair keys;
  curve::Allowlist allowlist;
  std::unique_ptr<curve::ZapHandler> zap;
  zmq::socket_t control{context, zmq::socket_type::router};
  zmq::socket_t events{context, zmq::socket_type::pub};
  zmq::socket_t ranks{context, zmq::socket_type::pull};
  // Ranks of multi-node runs on other nodes: CURVE, per-run keys (runKeys), kRankZapDomain.
  zmq::socket_t remoteRanks{context, zmq::socket_type::pull};
  curve::Allowlist runKeys;
  std::string controlEndpoint, eventsEndpoint, rankEndpoint, rankTcpEndpoint;
  std::unique_ptr<Journal> journal;
  // The Slurm engine's view of Slurm (--engine slurm); nullptr for the local engine. Declared
  // before `runs`, which uses it, so that it outlives it.
  std::unique_ptr<slurm::SlurmTracker> slurm;
  std::unique_ptr<RunManager> runs;
  std::unique_ptr<NvmlProbe> nvml;
  GpuProbe* gpuProbe = nullptr;
  std::unique_ptr<TelemetrySampler> telemetry;
  // The node's telemetry readings (docs/design.md decision 12); null when it could not be opened
  // (the agent then publishes readings unjournaled, seq 0, and answers FetchTelemetry INTERNAL).
  std::unique_ptr<TelemetryJournal> telemetryJournal;
  std::string telemetryJournalError;  // the last append error reported (reported once per change)
  v1::NodeInfo node;
  bool draining = false;
  // The state directory's lock (agent.lock, flock), held for the agent's life: a second agent
  // on the same directory is refused. -1 before start().
  int stateLockFd = -1;
  std::map<std::string, LogTailer> tailers;  // per active run
  // Trainer runs this agent adopted while they were active: an earlier agent was away for part
  // of them, so their ranks may have ended with metrics they could not send.
  std::set<std::string> adoptedActive;
  // Runs whose processes ended and whose final state waits until their last samples are
  // journaled (agent_run_end.cpp): what the ranks sent before they exited, the end of the run's
  // log, and for a trainer run that may have lost metrics, those recovered from stdout.log.
  struct PendingEnd {
    v1::RunInfo run;  // as RunManager ended it
    RunProcessIds ids;
    Clock::time_point due;     // not before: the ranks' last batches are journaled by then
    Clock::time_point giveUp;  // not after, even while the run's log is still being read
    bool releasing = false;    // finishEndedRuns is journaling it now
  };
  std::map<std::string, PendingEnd> pendingEnds;
  // Samples the journal refused (an ended run, a rank outside the world size, a bad step), counted
  // and reported at a bounded rate (sample_refusals.h).
  SampleRefusals refusedSamples;
  std::string allowlistError;  // the last reload error reported (reported once per change)
  // The straggler verdict of each running trainer run (straggler_detector.h).
  std::map<std::string, StragglerDetector> stragglers;
  HangMonitor hangs;  // stalls and hang timeouts of the runs this agent owns
  // CLOCK_BOOTTIME (s, counts suspend too) at the last checkHangs(); -1 before the first: a gap
  // between two checks is time the agent did not run, excluded from every hang timeout.
  double lastHangCheckBoot = -1.0;
  RunEtas etas;       // how long each run it owns has left, for the queue's estimates
  // The sweeps it owns (agent_sweeps.cpp); trialRunner is their view of `runs` and `journal`.
  std::unique_ptr<TrialRunner> trialRunner;
  std::unique_ptr<SweepController> sweeps;

  explicit Impl(AgentConfig c) : config(std::move(c)) {}

  // agent.cpp: sockets, allowlist, retention.

  // Creates, configures and binds the control (ROUTER) and events (PUB) sockets on `control` and
  // `events` (tcp endpoints; port 0 or "*" picks a free one), replacing any earlier ones, and
  // records the bound endpoints. Retries a busy port for up to `retryFor` (a re-bind right after
  // the old sockets closed). Errors: Internal naming the address.
  Status bindServerSockets(const std::string& control, const std::string& events,
                           std::chrono::milliseconds retryFor);

  // Picks up `ringside-agent authorize` / `revoke` (or an edit) of the allowlist file. A key that
  // was removed loses access at once, also on connections it already has: CURVE authenticates a
  // connection only at its handshake, so the control and events sockets are closed and bound
  // again on the same ports; every client reconnects and is authenticated afresh (a GUI then
  // catches up on what it missed by sequence number). A file that cannot be read leaves the
  // previous keys in force and is reported once, until it changes.
  void reloadAllowlist();

  // Deletes runs that ended more than --retention-days ago, and telemetry readings past
  // --telemetry-retention-days and --telemetry-max-mib (at start and every hour).
  void applyRetention();

  // Takes one telemetry reading, journals it (its seq) and publishes it.
  void sampleTelemetry();

  // Sends an event on the events socket without blocking (a subscriber that lags behind its
  // queue misses it and catches up by sequence number).
  void publish(const v1::Envelope& event);

  // agent_control.cpp: the control socket.

  // The node as it is now: its inventory with the slots in use and the drain flag.
  v1::NodeInfo nodeInfo();

  // For a launch or a pre-flight: from the processes as they are now.
  // CPU slots (cores) no run or pre-flight hold takes now (a fresh process scan).
  uint32_t freeCpuSlots() const;

  // The reply to one decoded control request (docs/protocol.md); errors become ErrorReply.
  v1::Envelope handle(const v1::Envelope& request);

  // Answers every control request waiting on the control socket, one reply each.
  void serveControl();

  // agent_sweeps.cpp: the sweeps.

  // Creates the sweep controller over <stateDir>/sweeps and takes back the sweeps kept there
  // (after the runs were adopted). Errors: IOError when the folder cannot be created or read.
  Status startSweeps();

  // The reply to launch_sweep, list_sweeps or control_sweep.
  v1::Envelope handleSweepRequest(const v1::Envelope& request);

  // agent_ingest.cpp: what the runs report, and what the agent concludes from it.

  // Journals a state change, then publishes it (docs/design.md decision 2: journal before publish).
  void onRunState(const v1::RunInfo& run, const RunProcessIds& ids);

  // True when the ranks of a run may have ended with metrics the journal lacks: the agent was
  // away during the run (adopted), or a rank's batches went missing or it dropped points.
  bool mayHaveLostMetrics(const std::string& runId);

  // Journals and publishes what the run's stdout.log holds and the journal lacks, with a note
  // in the run's log saying how many samples came back.
  void recoverMetrics(const std::string& runId);

  // Journals and publishes a line of the agent's own in a run's log (stream "stderr").
  void appendAgentNote(const std::string& runId, const std::string& note);

  // Judges the running runs (hang_monitor.h) and applies the verdicts: a stall or its end is a
  // state event (RunInfo.stall) and a note in the run's log; a hang timeout fails the run.
  void checkHangs();

  // agent_run_end.cpp: the end of a run.

  // For onRunState with an ended run: holds its final state in pendingEnds (true), or false when
  // finishEndedRuns is releasing it, to be journaled now.
  bool holdFinalState(const v1::RunInfo& run, const RunProcessIds& ids);

  // Journals and publishes the final states whose time has come (`all`: every held one, at
  // shutdown), after recovering the metrics of a trainer run that may have lost some; and writes
  // the refusal reports held back (sample_refusals.h). Call every ~100 ms.
  void finishEndedRuns(bool all = false);

  // Counts and reports (at a bounded rate; for a run that has not ended, also in its log) that the
  // journal refused `samples` samples of `runId` with `why` (Journal::appendRankMetrics).
  void refuseSamples(const std::string& runId, uint64_t samples, const Status& why);
  // A rank message naming `runId` that came on a connection without that run's key: dropped,
  // counted and logged at refuseSamples' bounded rate; the run's own record is not touched.
  void refuseForeignMessage(const std::string& runId);

  // Feeds journaled samples to the hang monitor and publishes them as one MetricBatch.
  void publishSamples(const std::string& runId, std::vector<v1::MetricSample> samples);
  // Feeds the per-rank timings among `samples` to the run's StragglerDetector and returns its
  // verdicts as global samples, for publishSamples to journal and publish after them.
  std::vector<v1::MetricSample> judgeStragglers(const std::string& runId,
                                                const std::vector<v1::MetricSample>& samples);

  // Journals the rank batches of one receive burst in a single transaction (group commit: many
  // small batches cost one commit), then publishes what was journaled (decision 2: journal before
  // publish). A batch that fails alone (unknown run) is skipped; a failed commit publishes nothing.
  // A run's journaled batches of the burst are published together, in journal order, as
  // MetricBatch events of at most kMaxPublishedSamples samples.
  // From the tcp:// rank endpoint (`remote`), a batch is journaled only when the connection's
  // CURVE key is the key of the batch's run: a rank of one run cannot write into another.
  void ingestRankMessages(const std::vector<zmq::message_t>& messages, bool remote);
  // Samples of one published MetricBatch from a burst: a sample is at most ~300 bytes encoded
  // (a 256-byte name), so an event stays far below protocol::kMaxMessageBytes (16 MiB).
  static constexpr size_t kMaxPublishedSamples = 16384;

  // Journals and publishes what the runs' log files gained (log_tailer.h): log lines and, from
  // a custom command's stdout, metric samples; forgets a tailer once its run ended and is read.
  void tailLogs();
};

}  // namespace ringside::agent
