// The mpirun command line of a run, and the checks of what goes into it: host names, network
// interfaces, extra options, the remote launcher (docs/multi-node.md).
//
// Thread-safety: every function is free of shared state; checkLauncherReaches() forks processes.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// Most ranks one run may have, summed over its hosts (64-bit, so that per-host counts cannot wrap
// around): 65,536. Far above the clusters Ringside is for (a few dozen nodes of up to a few
// hundred slots), low enough that every rank count and index fits an int.
inline constexpr uint64_t kMaxWorldSize = 65536;

// OK when a run spec's `env` may set `name`: a POSIX name (letters, digits, '_', not starting
// with a digit) that is not one the agent sets for the ranks itself: RINGSIDE_* (the run id, the
// rank endpoint and its keys, protocol.h) and CUDA_VISIBLE_DEVICES (the GPUs the agent hands a
// run). Errors: InvalidArgument naming the variable and saying why.
Status validateRunEnvName(const std::string& name);

// The world size a spec asks for (ranks_per_node, or the sum of its hosts' ranks), summed in 64
// bits. Errors: InvalidArgument for 0 ranks or more than kMaxWorldSize.
Result<uint32_t> worldSizeOf(const v1::RunSpec& spec);

// `word` single-quoted for /bin/sh and bash (a ' inside becomes '\''), so that the shell takes it
// as one word whatever it holds: the shim's script and a Slurm job's batch script.
std::string shellQuote(const std::string& word);

// OK for an RFC 1123 host name (dot-separated labels of letters, digits and '-', no label
// starting or ending with '-', at most 63 characters a label and 253 in all) or an IPv4/IPv6
// address. Everything else (e.g. "-oProxyCommand=...", which ssh would read as an option) is
// InvalidArgument naming the host and saying what is allowed.
Status validateHostName(std::string_view host);

// OK for a network interface name (1-15 of letters, digits, '_', '.', ':', '-', not starting
// with '-') or an IPv4 subnet in CIDR form ("10.0.0.0/24"). InvalidArgument otherwise.
Status validateNetworkInterface(std::string_view value);

// Splits a launcher setting ("ssh -p 2222", or a path) into words, as Open MPI splits
// plm_rsh_agent: on spaces. Empty: ["ssh"] (Open MPI's default launcher).
std::vector<std::string> launcherWords(const std::string& launcher);

// What an agent adds to every mpirun it starts.
struct MpirunSettings {
  std::string mpirunPath = "mpirun";
  std::vector<std::string> args = {"--bind-to", "none"};  // --mpirun-arg, before the spec's own
  std::string launcher;          // --launcher: Open MPI's plm_rsh_agent; empty: Open MPI's default
  std::string networkInterface;  // --network-interface: for hosts whose entry names none
};

// One node's part of a run, as the command line places it.
struct HostPart {
  std::string host;
  uint32_t ranks = 0;
  std::vector<uint32_t> gpus;    // CUDA_VISIBLE_DEVICES of its ranks; empty: not set
  std::string networkInterface;  // resolved (the entry's, else MpirunSettings::networkInterface)
  std::string reservationId;     // the node's pre-flight hold, set for its ranks; empty: none
};

// The argv of mpirun for a run of `worldSize` ranks that runs `job` (program and arguments):
//   mpirun --tag-output <settings.args> <spec.mpirun_args> [--mca plm_rsh_agent L]
//          [--mca btl_tcp_if_include I --mca oob_tcp_if_include I] <placement>
// --tag-output puts "[<job>,<rank>]<stream>:" before every line a rank prints, so the agent knows
// which rank wrote each line of the run's logs (log_tailer.h splitRankTag) and whose error a
// failure was (failure_reason.h).
// `exported` names the environment variables mpirun forwards to every rank (-x NAME, which Open
// MPI 4.1 takes per app context), or gives one with its value (-x NAME=VALUE: the run's PATH,
// which mpirun itself must not use). Placement: one node (`hosts` empty): `-x NAME... -np worldSize
// [env CUDA_VISIBLE_DEVICES=...] job`; several: one Open MPI app context per node, `-np r --host
// h:r -x NAME... [env CUDA_VISIBLE_DEVICES=.. NCCL_SOCKET_IFNAME=.. RINGSIDE_RESERVATION_ID=..]
// job`, joined by ":" (ranks are numbered in host order). I is the comma-separated set of the
// nodes' interfaces/subnets (Open MPI uses whichever each node has). Errors: InvalidArgument for a
// host name, interface or extra option that validation refuses (naming it), an entry with fewer
// GPUs than ranks, or a reservation id that is not 32 hex digits.
Result<std::vector<std::string>> buildMpirunCommand(const MpirunSettings& settings,
                                                    const v1::RunSpec& spec,
                                                    const std::vector<HostPart>& hosts,
                                                    uint32_t worldSize,
                                                    const std::vector<uint32_t>& singleNodeGpus,
                                                    const std::vector<std::string>& exported,
                                                    const std::vector<std::string>& job);

// Runs `<launcher words> HOST true` for every host at once and waits at most `timeout`: the check
// that mpirun will reach those nodes. Errors: Unavailable naming each host that failed, with the
// launcher's last stderr line (or "no answer within N s") and what to do (ssh keys for the agent's
// user, or --launcher).
Status checkLauncherReaches(const std::string& launcher, const std::vector<std::string>& hosts,
                            std::chrono::milliseconds timeout);

}  // namespace ringside::agent
