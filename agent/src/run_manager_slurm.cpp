// RunManager on a Slurm node (docs/slurm.md): a run is a Slurm job. launchSlurm writes the job
// script into the run directory and submits it with sbatch; pollSlurm follows the job through
// the tracker's squeue snapshots (PENDING is QUEUED with Slurm's reason and expected start,
// RUNNING with the job's nodes) and ends the run from the batch script's exit status and the job's
// final state (squeue's, else sacct's, else sacct -c's); a stop is scancel.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ringside/agent/run_ids.h"
#include "ringside/agent/run_manager.h"
#include "ringside/agent/slurm/slurm_command.h"
#include "ringside/agent/slurm/slurm_job.h"
#include "ringside/agent/slurm/slurm_tracker.h"
#include "ringside/agent/sweep/trial_spec.h"
#include "ringside/common/file_io.h"
#include "ringside/common/protocol.h"
#include "run_manager_detail.h"

namespace ringside::agent {

namespace fs = std::filesystem;

using run_manager_detail::copyTrialParams;
using run_manager_detail::kExitStatusFile;
using run_manager_detail::kRunKeyFile;
using run_manager_detail::readSmallFile;
using run_manager_detail::steadySeconds;
using run_manager_detail::wallSeconds;

namespace {

// In the run directory: the job id sbatch gave (a restarted agent follows the job from it), and
// the script it was given.
constexpr const char* kSlurmJobFile = "slurm_job";
constexpr const char* kJobScriptFile = "job.sh";
constexpr std::chrono::seconds kSbatchTimeout{60};
constexpr std::chrono::seconds kScancelTimeout{30};

// squeue's reasons for a pending job in words (Slurm's "Job Reason Codes", squeue(1)).
std::string reasonInWords(const std::string& reason) {
  if (reason == "Resources") return "waiting for resources (the nodes it needs are busy)";
  if (reason == "Priority") return "jobs of higher priority are ahead of it";
  if (reason == "Dependency") return "waiting for a job it depends on";
  if (reason == "PartitionNodeLimit") {
    return "it asks for more nodes than the partition allows: it can never start as it is";
  }
  if (reason == "PartitionTimeLimit") {
    return "its time limit is over the partition's: it can never start as it is";
  }
  if (reason == "ReqNodeNotAvail") return "a node it needs is not available (down or drained)";
  if (reason == "QOSMaxJobsPerUserLimit" || reason == "AssocMaxJobsLimit") {
    return "you have as many jobs running as your limit allows";
  }
  if (reason == "BeginTime") return "its start time has not come yet";
  if (reason == "None" || reason.empty()) return "submitted, waiting for the scheduler";
  return reason;
}

}  // namespace

Result<v1::RunInfo> RunManager::launchSlurm(v1::RunSpec spec, const std::vector<std::string>& argv) {
  if (!spec.hosts().empty()) {
    return Status::invalidArgument(
        "this node submits runs to Slurm, which places them: leave the host list empty and give "
        "the nodes as slurm.nodes (and the ranks per node as slurm.tasks_per_node)");
  }
  if (options_.rankTcpEndpoint.empty()) {
    return Status::failedPrecondition(
        "this agent has no rank endpoint (it runs with --insecure): the ranks of a Slurm job "
        "report from the compute nodes over CURVE; restart the agent without --insecure");
  }
  auto allocation = slurm::checkSlurmOptions(spec.slurm(), spec.ranks_per_node());
  if (!allocation.isOk()) return allocation.status();
  *spec.mutable_slurm() = allocation->options;
  spec.set_ranks_per_node(allocation->options.tasks_per_node());

  Tracked fresh;
  fresh.info.set_run_id(newTimestampedId('r'));
  *fresh.info.mutable_spec() = spec;
  copyTrialParams(fresh.info);
  fresh.info.set_created_time(now());
  fresh.info.set_queue_order(fresh.info.created_time());
  fresh.info.set_world_size(allocation->worldSize);
  const std::string dir = runDir(fresh.info.run_id());
  fresh.info.set_run_dir(dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::internal("cannot create run directory " + dir + ": " + ec.message());

  auto keys = curve::generateKeyPair();
  if (!keys.isOk()) return keys.status();
  fresh.runPublicKey = keys->publicKey;
  // What every rank gets through sbatch --export=ALL (the submitting process's environment).
  std::vector<std::string> env = options_.slurm->env();
  env.push_back(std::string(protocol::kRunIdEnv) + "=" + fresh.info.run_id());
  env.push_back(std::string(protocol::kAgentEndpointEnv) + "=" + options_.rankTcpEndpoint);
  env.push_back(std::string(protocol::kAgentPublicKeyEnv) + "=" + options_.agentPublicKey);
  env.push_back(std::string(protocol::kRunPublicKeyEnv) + "=" + keys->publicKey);
  env.push_back(std::string(protocol::kRunSecretKeyEnv) + "=" + keys->secretKey);
  if (spec.has_python()) {
    env.push_back("PYTHONUNBUFFERED=1");
    if (!options_.pythonPackageDir.empty()) {
      const auto own = spec.env().find("PYTHONPATH");
      const char* inherited = std::getenv("PYTHONPATH");
      std::string path = own != spec.env().end() ? own->second
                         : inherited != nullptr  ? std::string(inherited)
                                                 : std::string();
      path += (path.empty() ? "" : ":") + options_.pythonPackageDir;
      env.push_back("PYTHONPATH=" + path);
    }
  }
  for (const auto& [name, value] : spec.env()) {
    if (spec.has_python() && name == "PYTHONPATH" && !options_.pythonPackageDir.empty()) continue;
    // The ranks' PATH, set by each task (jobScript): sbatch, the batch script and srun keep the
    // agent's, which finds Slurm's commands.
    env.push_back((name == "PATH" ? std::string(slurm::kRankPathEnv) : name) + "=" + value);
  }
  if (spec.has_sweep_trial()) {
    auto values = valuesFromJsonMap(spec.sweep_trial().params());
    if (values.isOk()) env.push_back(std::string(kTrialParamsEnv) + "=" + valuesJsonObject(*values));
  }

  slurm::JobScriptInput input;
  input.runId = fresh.info.run_id();
  input.runDir = dir;
  input.workDir = dir;
  if (spec.has_command() && !spec.command().working_dir().empty()) {
    input.workDir = spec.command().working_dir();
  }
  if (spec.has_python() && !spec.python().working_dir().empty()) {
    input.workDir = spec.python().working_dir();
  }
  input.rankArgv = argv;
  input.mpi = spec.has_trainer();
  input.checkpointOnSignal = spec.has_trainer();
  input.allocation = *allocation;
  const std::string scriptPath = (fs::path(dir) / kJobScriptFile).string();
  RINGSIDE_RETURN_IF_ERROR(writeFileAtomic(scriptPath, slurm::jobScript(input), 0700));
  RINGSIDE_RETURN_IF_ERROR(
      writeFileAtomic((fs::path(dir) / kRunKeyFile).string(), keys->secretKey + "\n", 0600));

  // Journaled before sbatch: a restarted agent finds the run and, without a job id, knows that
  // its submission may or may not have happened (adoptSlurm).
  fresh.info.set_state(v1::QUEUED);
  fresh.info.set_waiting_reason("being submitted to Slurm");
  auto [it, inserted] = runs_.emplace(fresh.info.run_id(), std::move(fresh));
  Tracked& run = it->second;
  if (options_.runKeys != nullptr) {
    RINGSIDE_RETURN_IF_ERROR(options_.runKeys->add(run.runPublicKey, "run " + run.info.run_id()));
  }
  if (onStateChange_) onStateChange_(run.info, run.ids);

  auto submitted = slurm::runCommand({"sbatch", "--parsable", "--export=ALL", scriptPath}, env,
                                     kSbatchTimeout);
  Status failure;
  std::string jobId;
  if (!submitted.isOk()) {
    failure = submitted.status();
  } else if (submitted->exitCode != 0) {
    const std::string why = slurm::lastLine(submitted->err);
    failure = Status::invalidArgument("Slurm refused the job: " +
                                      (why.empty() ? "sbatch exited with status " +
                                                         std::to_string(submitted->exitCode)
                                                   : why));
  } else if (auto id = slurm::parseSbatchJobId(submitted->out); !id.isOk()) {
    failure = id.status();
  } else {
    jobId = *id;
  }
  if (!failure.isOk()) {
    setState(run, v1::FAILED, failure.message());
    return failure;
  }
  (void)writeFileAtomic((fs::path(dir) / kSlurmJobFile).string(), jobId + "\n", 0644);
  run.slurmJobId = jobId;
  run.slurmSeenFrom = options_.slurm->jobs().generation + 2;
  options_.slurm->refreshSoon();
  run.info.mutable_slurm_job()->set_job_id(jobId);
  run.info.mutable_slurm_job()->set_state("PENDING");
  run.info.set_waiting_reason("submitted to Slurm as job " + jobId +
                              ", waiting for the scheduler");
  if (onStateChange_) onStateChange_(run.info, run.ids);
  return run.info;
}

void RunManager::pollSlurm(Tracked& run) {
  const slurm::SlurmTracker::Jobs jobs = options_.slurm->jobs();
  if (jobs.generation == 0) return;  // no squeue yet
  const std::string& id = run.slurmJobId;
  if (id.empty()) return;
  auto found = jobs.byId.find(id);
  const std::string dir = runDir(run.info.run_id());
  if (found != jobs.byId.end() && !slurm::isFinalJobState(found->second.state)) {
    const slurm::QueuedJob& job = found->second;
    v1::SlurmJob seen = run.info.slurm_job();
    seen.set_state(job.state);
    seen.set_partition(job.partition);
    if (job.state == "PENDING") {
      seen.set_reason(job.reason);
      seen.set_estimated_start(job.expectedStart);
      const std::string waiting = "Slurm job " + id + ": " + reasonInWords(job.reason);
      if (seen.SerializeAsString() != run.info.slurm_job().SerializeAsString() ||
          run.info.state() != v1::QUEUED || run.info.waiting_reason() != waiting) {
        *run.info.mutable_slurm_job() = seen;
        run.info.set_waiting_reason(waiting);
        run.info.set_estimated_start(job.expectedStart);
        if (run.info.state() != v1::QUEUED) {
          setState(run, v1::QUEUED, "");  // requeued by Slurm
        } else if (onStateChange_) {
          onStateChange_(run.info, run.ids);
        }
      }
      return;
    }
    // RUNNING, CONFIGURING (nodes booting), COMPLETING, SUSPENDED ...
    if (run.info.state() == v1::QUEUED) {
      seen.clear_reason();
      seen.clear_estimated_start();
      seen.clear_nodes();
      std::vector<std::string> nodes;
      if (!job.nodeList.empty()) {
        auto expanded = slurm::runCommand({"scontrol", "show", "hostnames", job.nodeList},
                                          options_.slurm->env(), kScancelTimeout);
        if (expanded.isOk() && expanded->exitCode == 0) {
          std::istringstream lines(expanded->out);
          for (std::string line; std::getline(lines, line);) {
            if (!line.empty()) nodes.push_back(line);
          }
        }
        if (nodes.empty()) nodes.push_back(job.nodeList);
      }
      run.info.clear_placement();
      const uint32_t perNode = run.info.spec().slurm().tasks_per_node();
      for (const std::string& node : nodes) {
        seen.add_nodes(node);
        v1::HostSlots* placed = run.info.add_placement();
        placed->set_host(node);
        placed->set_ranks(perNode);
      }
      *run.info.mutable_slurm_job() = seen;
      run.info.set_queue_position(0);
      run.info.clear_waiting_reason();
      run.info.clear_estimated_start();
      setState(run, v1::RUNNING, "");
    } else if (run.info.slurm_job().state() != job.state) {
      *run.info.mutable_slurm_job() = seen;
      if (onStateChange_) onStateChange_(run.info, run.ids);
    }
    // The stop's grace period is over: Slurm kills what is left (SIGTERM, SIGKILL after its
    // KillWait).
    if (run.stopRequested && run.killDeadline > 0 && steadySeconds() >= run.killDeadline) {
      (void)slurm::runCommand({"scancel", id}, options_.slurm->env(), kScancelTimeout);
      run.killDeadline = 0;
      run.killed = true;
    }
    return;
  }
  if (found == jobs.byId.end() && jobs.generation < run.slurmSeenFrom) return;  // not listed yet
  // The job ended (its final state listed), or is no longer listed (it ended before Slurm's
  // MinJobAge): its end from the batch script's status and Slurm's word.
  std::string state = found != jobs.byId.end() ? found->second.state : std::string();
  const size_t space = state.find(' ');
  if (space != std::string::npos) state.resize(space);
  int exitCode = -1;
  bool statusKnown = false;
  if (auto status = readSmallFile((fs::path(dir) / kExitStatusFile).string())) {
    exitCode = std::atoi(status->c_str());
    statusKnown = true;
  } else if (errno != ENOENT) {
    noteUnreadable(run, "the exit status of its Slurm job");
    return;
  }
  if (state.empty() || !statusKnown) {
    // sacct where there is accounting, else -c: the completion log (jobcomp/filetxt).
    for (const bool completionLog : {false, true}) {
      std::vector<std::string> argv = {"sacct", "--noheader", "--parsable2", "-j", id,
                                       "--format=JobID,State,ExitCode"};
      if (completionLog) argv.insert(argv.begin() + 1, "-c");
      auto asked = slurm::runCommand(argv, options_.slurm->env(), kScancelTimeout);
      if (!asked.isOk() || asked->exitCode != 0) continue;
      if (auto end = slurm::parseSacct(asked->out, id)) {
        if (state.empty()) state = end->state;
        if (!statusKnown && end->signal == 0) {
          exitCode = end->exitCode;
          statusKnown = true;
        }
        break;
      }
    }
  }
  run.info.mutable_slurm_job()->set_state(state.empty() ? "UNKNOWN" : state);
  run.info.mutable_slurm_job()->clear_reason();
  run.info.mutable_slurm_job()->clear_estimated_start();
  const std::string slurmReason =
      slurm::slurmEndReason(state, run.info.spec().slurm().time_limit_min());
  if (!run.stopRequested && !slurmReason.empty() && state != "CANCELLED") {
    run.info.set_exit_code(statusKnown ? exitCode : -1);
    queueDirty_ = true;
    setState(run, v1::FAILED, slurmReason);
    return;
  }
  if (!run.stopRequested && state == "CANCELLED") {
    run.info.set_exit_code(statusKnown ? exitCode : -1);
    setState(run, v1::STOPPED, slurmReason);
    return;
  }
  if (run.info.state() == v1::QUEUED && !run.stopRequested && !statusKnown && state.empty()) {
    setState(run, v1::FAILED,
             "Slurm job " + id + " is gone without a trace (not in squeue, sacct or the run "
             "directory): look at " + dir + "/slurm-batch.log");
    return;
  }
  finish(run, exitCode, statusKnown);
}

bool RunManager::signalSlurm(Tracked& run, const char* signal) {
  if (run.slurmJobId.empty()) return false;
  std::vector<std::string> argv = {"scancel"};
  if (signal != nullptr && run.info.state() != v1::QUEUED) {
    argv.push_back(std::string("--signal=") + signal);  // to the ranks (the job's steps)
  }
  argv.push_back(run.slurmJobId);
  auto done = slurm::runCommand(argv, options_.slurm->env(), kScancelTimeout);
  options_.slurm->refreshSoon();
  return done.isOk() && done->exitCode == 0;
}

void RunManager::adoptSlurm(Tracked& run) {
  const std::string dir = runDir(run.info.run_id());
  if (auto id = readSmallFile((fs::path(dir) / kSlurmJobFile).string())) {
    std::string text = *id;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    run.slurmJobId = text;
    run.slurmSeenFrom = options_.slurm->jobs().generation + 2;
    return;
  }
  if (!isEnded(run.info.state())) {
    setState(run, v1::FAILED,
             "the agent stopped while it was submitting this run to Slurm: it may or may not "
             "have been submitted (look for job ringside-" +
                 run.info.run_id() +
                 " in squeue and cancel it); it was not submitted again, so that it cannot run "
                 "twice");
  }
}

}  // namespace ringside::agent
