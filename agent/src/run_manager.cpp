// RunManager's run states, stops, polling, adoption and slot counting; the checks of a job,
// pre-flights and launches are in run_manager_launch.cpp.
#include "ringside/agent/run_manager.h"
#include "ringside/common/run_spec_limits.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ringside/agent/failure_reason.h"
#include "ringside/common/file_io.h"
#include "run_manager_detail.h"

namespace ringside::agent {

namespace fs = std::filesystem;

namespace {

// Written by failHung(): the reason a run ended by its hang timeout fails with.
constexpr const char* kHangFailureFile = "hang_failure";
// Written by stop() with a reason: the reason the run ends STOPPED with (a sweep's verdict).
constexpr const char* kStopReasonFile = "stop_reason";

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "30 s", "0.5 s": a grace period in words (never an int cast of an unchecked double).
std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

}  // namespace

namespace run_manager_detail {

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::optional<std::string> readSmallFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      errno = error;
      return std::nullopt;
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

ProcessLook procStat(pid_t pid, int64_t* startTicks, char* state) {
  const std::optional<std::string> stat = readSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) {
    if (errno == ENOENT || errno == ESRCH) return ProcessLook::kGone;
    // Out of descriptors or memory: kill(2) needs neither and knows whether the pid exists.
    if (::kill(pid, 0) != 0 && errno == ESRCH) return ProcessLook::kGone;
    return ProcessLook::kUnknown;
  }
  const size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return ProcessLook::kUnknown;
  std::istringstream fields(stat->substr(close + 2));
  std::string field;
  fields >> *state;
  // After the state (field 3) come fields 4..; starttime is field 22.
  for (int i = 4; i <= 22 && fields >> field; ++i) {
    if (i == 22) *startTicks = std::strtoll(field.c_str(), nullptr, 10);
  }
  return ProcessLook::kFound;
}

}  // namespace run_manager_detail

using run_manager_detail::kDispatchedFile;
using run_manager_detail::kExitStatusFile;
using run_manager_detail::kRunKeyFile;
using run_manager_detail::kStderrFile;
using run_manager_detail::ProcessLook;
using run_manager_detail::procStat;
using run_manager_detail::readSmallFile;
using run_manager_detail::steadySeconds;
using run_manager_detail::wallSeconds;

Status validateGraceSeconds(double graceSeconds) {
  if (std::isfinite(graceSeconds) && graceSeconds >= 0 && graceSeconds <= kMaxStopGraceSeconds) {
    return Status::ok();
  }
  char value[32];
  std::snprintf(value, sizeof value, "%g", graceSeconds);
  return Status::invalidArgument("grace_seconds " + std::string(value) +
                                 " is not a grace period: use 0 (the agent's default) or a number "
                                 "of seconds up to " +
                                 secondsText(kMaxStopGraceSeconds));
}

bool isEnded(v1::RunState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
}

RunManager::RunManager(RunManagerOptions options, RunStateCallback onStateChange)
    : options_(std::move(options)), onStateChange_(std::move(onStateChange)) {}

std::string RunManager::runDir(const std::string& runId) const {
  return (fs::path(options_.runsDir) / runId).string();
}

void RunManager::setState(Tracked& run, v1::RunState state, const std::string& reason) {
  run.info.set_state(state);
  if (!reason.empty()) run.info.set_reason(reason);
  if (state == v1::RUNNING && run.info.start_time() == 0) {
    run.info.set_start_time(std::max(now(), run.info.created_time()));
  }
  if (isEnded(state)) {
    run.info.set_end_time(std::max({now(), run.info.start_time(), run.info.created_time()}));
    // The ranks' connections stay open until they exit; no new ones for an ended run.
    if (options_.runKeys != nullptr && !run.runPublicKey.empty()) {
      options_.runKeys->remove(run.runPublicKey);
    }
  }
  if (onStateChange_) onStateChange_(run.info, run.ids);
}

bool RunManager::isLocalHost(const std::string& host) const {
  if (host == "localhost" || host == "127.0.0.1" || host == "::1") return true;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  if (host == name) return true;
  return std::find(options_.localNames.begin(), options_.localNames.end(), host) !=
         options_.localNames.end();
}

uint32_t RunManager::localRanks(const v1::RunSpec& spec) const {
  if (spec.hosts().empty()) return spec.ranks_per_node();
  uint64_t ranks = 0;  // 64-bit: host counts of an unchecked spec (a pre-flight) cannot wrap
  for (const auto& host : spec.hosts()) {
    if (isLocalHost(host.host())) ranks += host.ranks();
  }
  return static_cast<uint32_t>(std::min<uint64_t>(ranks, UINT32_MAX));
}

void RunManager::loadRunKey(Tracked& run) {
  // None for a run of an --insecure agent (or a run directory that lost it: its ranks' metrics are
  // then refused, and counted as dropped by them).
  auto keys = curve::readKeyPairFromSecretFile(
      (fs::path(runDir(run.info.run_id())) / kRunKeyFile).string());
  if (!keys.isOk()) return;
  run.runPublicKey = keys->publicKey;
  if (options_.runKeys != nullptr && !isEnded(run.info.state())) {
    (void)options_.runKeys->add(run.runPublicKey, "run " + run.info.run_id());
  }
}
Result<v1::RunInfo> RunManager::stop(const std::string& runId, double graceSeconds,
                                     const std::string& reason) {
  RINGSIDE_RETURN_IF_ERROR(validateGraceSeconds(graceSeconds));
  const double grace = graceSeconds > 0 ? graceSeconds : options_.defaultGraceSeconds;
  auto it = runs_.find(runId);
  if (it == runs_.end()) {
    // A multi-node run owned by another node: stop its ranks here (the owner's agent stops the
    // ranks on its node; the GUI asks every node of the run).
    const std::vector<pid_t> pids = rankPids(runId);
    if (pids.empty()) return Status::notFound("no run " + runId + " on this node");
    for (pid_t pid : pids) kill(pid, SIGTERM);
    foreignStops_[runId].killDeadline = steadySeconds() + grace;
    v1::RunInfo info;
    info.set_run_id(runId);
    info.set_state(v1::RUNNING);
    info.set_reason("stop requested: SIGTERM sent to " + std::to_string(pids.size()) +
                    " rank(s) on this node of a run another node owns, SIGKILL after " +
                    secondsText(grace));
    return info;
  }
  Tracked& run = it->second;
  if (isEnded(run.info.state())) {
    return Status::failedPrecondition("run " + runId + " already ended (" +
                                      v1::RunState_Name(run.info.state()) + ")");
  }
  if (run.info.state() == v1::QUEUED && !run.slurmJobId.empty()) {
    // A pending Slurm job: Slurm takes it off its queue; pollSlurm ends the run when it is gone.
    if (!signalSlurm(run, nullptr)) {
      return Status::internal("scancel of Slurm job " + run.slurmJobId +
                              " failed: look at `squeue -j " + run.slurmJobId + "`");
    }
    run.stopRequested = true;
    std::ofstream(fs::path(runDir(runId)) / "stop_requested") << wallSeconds() << "\n";
    if (!reason.empty() && run.stopReason.empty()) {
      run.stopReason = reason;
      std::ofstream(fs::path(runDir(runId)) / kStopReasonFile) << reason << "\n";
    }
    run.info.set_reason("stop requested: Slurm job " + run.slurmJobId + " cancelled (scancel)");
    if (onStateChange_) onStateChange_(run.info, run.ids);
    return run.info;
  }
  if (run.info.state() == v1::QUEUED) {
    // Nothing runs yet: the run leaves the queue, and the runs behind it move up.
    run.stopRequested = true;
    run.info.set_queue_position(0);
    run.info.clear_waiting_reason();
    run.info.clear_estimated_start();
    setState(run, v1::STOPPED,
             reason.empty() ? "cancelled while queued: it never started"
                            : reason + "; cancelled while queued: it never started");
    queueDirty_ = true;
    return run.info;
  }
  if (!reason.empty() && run.stopReason.empty()) {
    run.stopReason = reason;
    std::ofstream(fs::path(runDir(runId)) / kStopReasonFile) << reason << "\n";
  }
  if (!run.stopRequested) {
    run.stopRequested = true;
    std::ofstream(fs::path(runDir(runId)) / "stop_requested") << wallSeconds() << "\n";
  }
  run.killDeadline = steadySeconds() + grace;
  if (!run.slurmJobId.empty()) {
    (void)signalSlurm(run, "TERM");
    run.info.set_reason("stop requested: SIGTERM sent to the ranks of Slurm job " +
                        run.slurmJobId + " (scancel --signal=TERM), scancel after " +
                        secondsText(grace));
    if (onStateChange_) onStateChange_(run.info, run.ids);
    return run.info;
  }
  terminateRanks(run);
  run.info.set_reason("stop requested: SIGTERM sent to the ranks, SIGKILL after " +
                      secondsText(grace));
  if (onStateChange_) onStateChange_(run.info, run.ids);
  return run.info;
}

Status RunManager::failHung(const std::string& runId, const std::string& reason) {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return Status::notFound("no run " + runId + " owned by this node");
  Tracked& run = it->second;
  if (isEnded(run.info.state())) {
    return Status::failedPrecondition("run " + runId + " already ended");
  }
  run.hangFailure = reason.empty() ? "hung" : reason;
  std::ofstream(fs::path(runDir(runId)) / kHangFailureFile) << run.hangFailure << "\n";
  run.stopRequested = true;
  run.killDeadline = steadySeconds() + kHangStopGraceSeconds;
  if (!run.slurmJobId.empty()) {
    (void)signalSlurm(run, "TERM");
  } else {
    terminateRanks(run);
  }
  run.info.set_reason("hang timeout: SIGTERM sent to the ranks, SIGKILL after " +
                      secondsText(kHangStopGraceSeconds));
  if (onStateChange_) onStateChange_(run.info, run.ids);
  return Status::ok();
}

void RunManager::setStall(const std::string& runId, const v1::StallVerdict* verdict) {
  auto it = runs_.find(runId);
  if (it == runs_.end() || isEnded(it->second.info.state())) return;
  Tracked& run = it->second;
  if (verdict != nullptr) {
    *run.info.mutable_stall() = *verdict;
  } else if (run.info.has_stall()) {
    run.info.clear_stall();
  } else {
    return;
  }
  if (onStateChange_) onStateChange_(run.info, run.ids);
}

Status RunManager::mergeParams(const std::string& runId,
                               const google::protobuf::Map<std::string, std::string>& params) {
  auto it = runs_.find(runId);
  if (it == runs_.end()) return Status::notFound("no run " + runId + " on this node");
  Tracked& run = it->second;
  if (isEnded(run.info.state())) {
    return Status::failedPrecondition("run " + runId + " has ended: its parameters are final");
  }
  RINGSIDE_RETURN_IF_ERROR(validateRunParams(params));
  auto* stored = run.info.mutable_params();
  bool changed = false;
  size_t refused = 0;
  for (const auto& [key, value] : params) {
    auto found = stored->find(key);
    if (found == stored->end() && stored->size() >= kMaxRunParams) {
      ++refused;
      continue;
    }
    if (found != stored->end() && found->second == value) continue;
    (*stored)[key] = value;
    changed = true;
  }
  if (changed && onStateChange_) onStateChange_(run.info, run.ids);
  if (refused > 0) {
    return Status::resourceExhausted(std::to_string(refused) + " new parameter(s) refused: run " +
                                     runId + " already has " + std::to_string(kMaxRunParams) +
                                     " (the most a run keeps)");
  }
  return Status::ok();
}

const std::vector<RankProcess>& RunManager::rankProcesses(bool fresh) const {
  const double now = steadySeconds();
  if (fresh || rankScanTime_ < 0 || now - rankScanTime_ >= 1.0) {
    rankScan_ = scanRankProcesses(options_.procDir);
    rankScanTime_ = now;
    reservations_.releaseSeen(rankScan_);
  }
  return rankScan_;
}

void RunManager::terminateRanks(Tracked& run) {
  for (pid_t pid : rankPids(run.info.run_id())) {
    if (run.terminated.insert(pid).second) kill(pid, SIGTERM);
  }
}

std::vector<pid_t> RunManager::rankPids(const std::string& runId) const {
  std::vector<pid_t> pids;
  for (const RankProcess& rank : rankProcesses(/*fresh=*/true)) {
    if (rank.runId == runId) pids.push_back(rank.pid);
  }
  return pids;
}

double RunManager::now() const { return options_.wallClock ? options_.wallClock() : wallSeconds(); }

void RunManager::noteUnreadable(Tracked& run, const std::string& what) {
  if (run.unreadableNoted) return;
  run.unreadableNoted = true;
  logLine("warning", "run " + run.info.run_id() + ": cannot read " + what +
                         "; the run is left as it is and looked at again at the next poll");
}

namespace {

// The agent's shim of a run (the launcher, mpirun's parent): found running, gone (or its pid
// reused), or unknown for now.
ProcessLook shimLook(const RunProcessIds& ids) {
  if (ids.shimPid <= 0) return ProcessLook::kGone;
  int64_t ticks = 0;
  char state = 0;
  const ProcessLook look = procStat(ids.shimPid, &ticks, &state);
  if (look != ProcessLook::kFound) return look;
  if (ids.shimStartTicks != 0 && ticks != ids.shimStartTicks) return ProcessLook::kGone;  // reused
  return state == 'Z' || state == 'X' ? ProcessLook::kGone : ProcessLook::kFound;
}

}  // namespace

void RunManager::finish(Tracked& run, int exitCode, bool statusKnown) {
  queueDirty_ = true;  // its slots are free: the queue moves at the next dispatch
  run.info.set_exit_code(statusKnown ? exitCode : -1);
  run.info.clear_stall();
  if (!run.hangFailure.empty()) {
    setState(run, v1::FAILED, run.hangFailure);
  } else if (run.stopRequested) {
    std::string reason;
    const std::string why = run.stopReason.empty() ? "stopped on request" : run.stopReason;
    if (run.killed) {
      reason = why + "; killed after the grace period";
    } else if (statusKnown && exitCode == 0) {
      reason = why + "; the ranks checkpointed and exited";
    } else {
      reason = why + "; the job exited with status " +
               (statusKnown ? std::to_string(exitCode) : std::string("unknown"));
    }
    setState(run, v1::STOPPED, reason);
  } else if (statusKnown && exitCode == 0) {
    setState(run, v1::COMPLETED, "");
  } else {
    // The end of a long run's stderr says why it ended; 8 MiB bounds the agent's memory and time.
    const std::string stderrText =
        readFileTail(fs::path(runDir(run.info.run_id())) / kStderrFile, size_t{8} << 20);
    setState(run, v1::FAILED,
             runFailureReason(stderrText, run.info.placement(), statusKnown, exitCode));
  }
}

void RunManager::poll() {
  // Reap children (shims this agent started) so they do not linger as zombies.
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  for (auto it = foreignStops_.begin(); it != foreignStops_.end();) {
    if (steadySeconds() < it->second.killDeadline) {
      ++it;
      continue;
    }
    for (pid_t pid : rankPids(it->first)) kill(pid, SIGKILL);
    it = foreignStops_.erase(it);
  }
  for (auto& [id, run] : runs_) {
    if (options_.slurm != nullptr) {
      if (!isEnded(run.info.state())) pollSlurm(run);
      continue;
    }
    if (isEnded(run.info.state()) || run.info.state() == v1::QUEUED) continue;
    // Looked at before the status file: the shim writes its status, then exits.
    const ProcessLook shim = shimLook(run.ids);
    const std::string statusPath = (fs::path(runDir(id)) / kExitStatusFile).string();
    const std::optional<std::string> status = readSmallFile(statusPath);
    if (!status && errno != ENOENT) {
      // Out of descriptors (a flood of connections), say: the run is not judged from this.
      noteUnreadable(run, "its exit status file: " + std::string(std::strerror(errno)));
      continue;
    }
    if (status) {
      finish(run, std::atoi(status->c_str()), true);
      continue;
    }
    if (shim == ProcessLook::kUnknown) {
      noteUnreadable(run, "its launcher process in /proc: " + std::string(std::strerror(errno)));
      continue;
    }
    if (shim == ProcessLook::kGone) {
      // The shim writes the status before it exits: look once more, then it was killed.
      const std::optional<std::string> last = readSmallFile(statusPath);
      if (!last && errno != ENOENT) continue;  // unreadable now: judged at the next poll
      if (last) {
        finish(run, std::atoi(last->c_str()), true);
      } else {
        finish(run, -1, false);
      }
      continue;
    }
    run.unreadableNoted = false;
    if (run.info.state() == v1::STARTING && !rankPids(id).empty()) {
      setState(run, v1::RUNNING, "");
    }
    if (run.stopRequested && run.killDeadline > 0 && steadySeconds() < run.killDeadline &&
        run.slurmJobId.empty()) {
      terminateRanks(run);  // ranks that started since the stop
    }
    if (run.stopRequested && run.killDeadline > 0 && steadySeconds() >= run.killDeadline) {
      // The ranks too: Open MPI may put them in process groups of their own, and a stopped
      // (SIGSTOP) rank outlives mpirun otherwise.
      for (pid_t pid : rankPids(id)) kill(pid, SIGKILL);
      kill(-run.ids.shimPid, SIGKILL);
      run.killDeadline = 0;
      run.killed = true;
    }
  }
}

void RunManager::adopt(const v1::RunInfo& info) {
  Tracked run;
  run.info = info;
  std::istringstream shim(readFile(fs::path(runDir(info.run_id())) / "shim"));
  int64_t pid = 0;
  shim >> pid >> run.ids.shimStartTicks;
  run.ids.shimPid = static_cast<pid_t>(pid);
  std::error_code ec;
  run.stopRequested = fs::exists(fs::path(runDir(info.run_id())) / "stop_requested", ec);
  if (fs::exists(fs::path(runDir(info.run_id())) / kStopReasonFile, ec)) {
    run.stopReason = readFile(fs::path(runDir(info.run_id())) / kStopReasonFile);
    while (!run.stopReason.empty() && run.stopReason.back() == '\n') run.stopReason.pop_back();
  }
  if (fs::exists(fs::path(runDir(info.run_id())) / kHangFailureFile, ec)) {
    run.hangFailure = readFile(fs::path(runDir(info.run_id())) / kHangFailureFile);
    while (!run.hangFailure.empty() && run.hangFailure.back() == '\n') run.hangFailure.pop_back();
    run.stopRequested = true;
  }
  if (run.stopRequested) {
    run.killDeadline = steadySeconds() + options_.defaultGraceSeconds;
    // The earlier agent sent its ranks SIGTERM: not again (a second one may cut a checkpoint
    // short); ranks that appear later still get one.
    for (pid_t rank : rankPids(info.run_id())) run.terminated.insert(rank);
  }
  loadRunKey(run);
  if (options_.slurm != nullptr) {
    Tracked& adopted = runs_[info.run_id()] = std::move(run);
    adoptSlurm(adopted);
    return;
  }
  const bool dispatched = fs::exists(fs::path(runDir(info.run_id())) / kDispatchedFile, ec);
  Tracked& adopted = runs_[info.run_id()] = std::move(run);
  if (info.state() != v1::QUEUED || !dispatched) return;  // a queued run waits again
  // The earlier agent began to start this queued run and stopped before it journaled STARTING.
  adopted.info.set_queue_position(0);
  adopted.info.clear_waiting_reason();
  adopted.info.clear_estimated_start();
  if (adopted.ids.shimPid > 0) {
    setState(adopted, v1::STARTING, "");  // its shim exists: poll() follows it from here
  } else {
    setState(adopted, v1::FAILED,
             "the agent stopped while it was starting this run from the queue; the run was not "
             "started again, so that it cannot run twice: launch it again");
  }
}

const v1::RunInfo* RunManager::find(const std::string& runId) const {
  auto it = runs_.find(runId);
  return it == runs_.end() ? nullptr : &it->second.info;
}

std::vector<v1::RunInfo> RunManager::runs(bool includeEnded) const {
  std::vector<v1::RunInfo> list;
  for (const auto& [id, run] : runs_) {
    if (includeEnded || !isEnded(run.info.state())) list.push_back(run.info);
  }
  return list;
}

uint32_t RunManager::usedCpuSlots(bool fresh) const {
  uint32_t used = 0;
  for (const auto& [id, run] : runs_) {
    if (!isEnded(run.info.state()) && run.info.state() != v1::QUEUED && run.gpus.empty() &&
        !usesGpus(run.info.spec())) {
      used += localRanks(run.info.spec());
    }
  }
  // Ranks here of multi-node runs other nodes own (a one-node run here is always this agent's).
  // A rank's children inherit its environment: count ranks, not processes.
  std::set<std::pair<std::string, int>> foreign;
  for (const RankProcess& rank : rankProcesses(fresh)) {
    if (!rank.multiNode) continue;
    auto own = runs_.find(rank.runId);
    if ((own == runs_.end() || isEnded(own->second.info.state())) && rank.gpus.empty()) {
      foreign.emplace(rank.runId, rank.rank);
    }
  }
  return used + static_cast<uint32_t>(foreign.size()) + reservations_.heldSlots(steadySeconds());
}

std::vector<uint32_t> RunManager::gpusInUse() const {
  std::set<uint32_t> used;
  for (const auto& [id, run] : runs_) {
    if (!isEnded(run.info.state())) used.insert(run.gpus.begin(), run.gpus.end());
  }
  for (const RankProcess& rank : rankProcesses()) {
    auto own = runs_.find(rank.runId);
    const bool active = own != runs_.end() && !isEnded(own->second.info.state());
    if (rank.multiNode || active) used.insert(rank.gpus.begin(), rank.gpus.end());
  }
  for (uint32_t gpu : reservations_.heldGpus(steadySeconds())) used.insert(gpu);
  for (const ForeignGpuUse& foreign : foreignGpus_) used.insert(foreign.gpu);
  return {used.begin(), used.end()};
}

std::vector<uint32_t> RunManager::freeGpus() const {
  const std::vector<uint32_t> used = gpusInUse();
  std::vector<uint32_t> free;
  for (uint32_t gpu : options_.gpuIndices) {
    if (!std::binary_search(used.begin(), used.end(), gpu)) free.push_back(gpu);
  }
  return free;
}

std::string RunManager::runPublicKey(const std::string& runId) const {
  auto it = runs_.find(runId);
  return it == runs_.end() ? std::string() : it->second.runPublicKey;
}

}  // namespace ringside::agent
