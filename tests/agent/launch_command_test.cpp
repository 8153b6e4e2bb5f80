// The mpirun command line of one- and multi-node runs, the host-name and interface checks, and
// finding rank processes in a /proc-like directory.
#include "ringside/agent/launch_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ringside/agent/rank_processes.h"
#include "test_util.h"

namespace ringside::agent {
namespace {

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

// Regression: a run whose env set RINGSIDE_RUN_ID stayed STARTING for good and Stop
// signalled nothing (the agent finds a run's processes by that variable).
TEST(RunEnvTest, AgentReservedVariableIsRefusedNamingIt) {
  for (const char* reserved :
       {"RINGSIDE_RUN_ID", "RINGSIDE_AGENT_ENDPOINT", "RINGSIDE_RUN_SECRET_KEY",
        "RINGSIDE_ANYTHING", "CUDA_VISIBLE_DEVICES"}) {
    const Status status = validateRunEnvName(reserved);
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument) << reserved;
    EXPECT_NE(status.message().find(std::string("env variable ") + reserved), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("set by the agent"), std::string::npos) << status.message();
  }
  for (const char* good : {"OMP_NUM_THREADS", "NCCL_DEBUG", "OMPI_MCA_btl", "_X", "ringside_x"}) {
    EXPECT_TRUE(validateRunEnvName(good).isOk()) << good;
  }
  for (const char* bad : {"", "1ABC", "A=B", "A B", "PATH;rm"}) {
    EXPECT_FALSE(validateRunEnvName(bad).isOk()) << bad;
  }
}

// Regression: host rank counts summed in 32 bits, so 2^32-1 + 2 ranks was world size 1.
TEST(WorldSizeTest, HostRankCountsThatOverflowAreRefused) {
  v1::RunSpec spec;
  spec.add_hosts()->set_ranks(UINT32_MAX);
  spec.add_hosts()->set_ranks(2);
  auto world = worldSizeOf(spec);
  ASSERT_FALSE(world.isOk());
  EXPECT_EQ(world.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(world.status().message().find("4294967297 ranks"), std::string::npos)
      << world.status().message();
  v1::RunSpec many;
  many.set_ranks_per_node(static_cast<uint32_t>(kMaxWorldSize) + 1);
  EXPECT_FALSE(worldSizeOf(many).isOk());
  many.set_ranks_per_node(static_cast<uint32_t>(kMaxWorldSize));
  EXPECT_EQ(*worldSizeOf(many), kMaxWorldSize);
  EXPECT_FALSE(worldSizeOf(v1::RunSpec()).isOk()) << "0 ranks";
  v1::RunSpec twoNodes;
  twoNodes.set_ranks_per_node(99);  // ignored when hosts are given
  twoNodes.add_hosts()->set_ranks(3);
  twoNodes.add_hosts()->set_ranks(2);
  EXPECT_EQ(*worldSizeOf(twoNodes), 5u);
}

TEST(HostNameTest, AcceptsNamesAndAddressesOnly) {
  for (const char* good : {"node-2", "gpu01.cluster.example", "10.0.0.7", "::1", "fe80::1", "a"}) {
    EXPECT_TRUE(validateHostName(good).isOk()) << good;
  }
  // An ssh option disguised as a host (hosts went into mpirun/ssh unchecked).
  const Status option = validateHostName("-oProxyCommand=touch /tmp/x");
  ASSERT_FALSE(option.isOk());
  EXPECT_EQ(option.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(option.message().find("-oProxyCommand"), std::string::npos);
  EXPECT_NE(option.message().find("RFC 1123"), std::string::npos);
  for (const char* bad : {"", "node 2", "node-", "-node", "a..b", "node;rm", "n\node", "host:2"}) {
    EXPECT_FALSE(validateHostName(bad).isOk()) << bad;
  }
  EXPECT_FALSE(validateHostName(std::string(64, 'a')).isOk()) << "a label over 63 characters";
}

TEST(NetworkInterfaceTest, AcceptsNamesAndIpv4Subnets) {
  for (const char* good :
       {"eth0", "enp3s0f1", "ib0", "br-lan.10", "10.0.0.0/24", "192.168.1.0/16"}) {
    EXPECT_TRUE(validateNetworkInterface(good).isOk()) << good;
  }
  for (const char* bad :
       {"", "-eth0", "averyveryverylongname0", "10.0.0.0/33", "10.0.0/24", "eth0 --mca x"}) {
    EXPECT_FALSE(validateNetworkInterface(bad).isOk()) << bad;
  }
}

TEST(LauncherWordsTest, SplitsOnSpacesAndDefaultsToSsh) {
  EXPECT_EQ(launcherWords(""), std::vector<std::string>{"ssh"});
  EXPECT_EQ(launcherWords("ssh -p 2222"), (std::vector<std::string>{"ssh", "-p", "2222"}));
}

TEST(MpirunCommandTest, OneNodeRunHasNoHostListAndItsGpus) {
  v1::RunSpec spec;
  MpirunSettings settings;
  settings.mpirunPath = "/usr/bin/mpirun";
  auto command = buildMpirunCommand(settings, spec, {}, 2, {1, 3}, {"RINGSIDE_RUN_ID"},
                                    {"trainer", "--config-json", "{}"});
  ASSERT_TRUE(command.isOk()) << command.status().toString();
  EXPECT_EQ(join(*command),
            "/usr/bin/mpirun --tag-output --bind-to none -x RINGSIDE_RUN_ID -np 2 env "
            "CUDA_VISIBLE_DEVICES=1,3 trainer --config-json {}");
}

TEST(MpirunCommandTest, MultiNodeRunHasOneAppContextPerNode) {
  v1::RunSpec spec;
  spec.add_mpirun_args("--mca");
  spec.add_mpirun_args("btl_tcp_links");
  spec.add_mpirun_args("2");
  MpirunSettings settings;
  settings.launcher = "/opt/launch";
  settings.networkInterface = "10.1.0.0/24";
  std::vector<HostPart> hosts = {{"node-1", 2, {0, 1}, "eth1", ""}, {"node-2", 1, {}, "", ""}};
  hosts[1].networkInterface = settings.networkInterface;  // as RunManager resolves it
  auto command = buildMpirunCommand(settings, spec, hosts, 3, {}, {"A", "B"}, {"prog", "x"});
  ASSERT_TRUE(command.isOk()) << command.status().toString();
  EXPECT_EQ(
      join(*command),
      "mpirun --tag-output --bind-to none --mca btl_tcp_links 2 --mca plm_rsh_agent /opt/launch "
      "--mca btl_tcp_if_include eth1,10.1.0.0/24 --mca oob_tcp_if_include "
      "eth1,10.1.0.0/24 -np 2 --host node-1:2 -x A -x B env CUDA_VISIBLE_DEVICES=0,1 "
      "NCCL_SOCKET_IFNAME=eth1 prog x : -np 1 --host node-2:1 -x A -x B prog x");
}

TEST(MpirunCommandTest, EachNodesRanksCarryItsPreflightHold) {
  v1::RunSpec spec;
  std::vector<HostPart> hosts = {{"node-1", 1, {}, "", ""}, {"node-2", 1, {1}, "", ""}};
  hosts[1].reservationId = "0123456789abcdef0123456789abcdef";
  auto command = buildMpirunCommand({}, spec, hosts, 2, {}, {}, {"prog"});
  ASSERT_TRUE(command.isOk()) << command.status().toString();
  EXPECT_EQ(
      join(*command),
      "mpirun --tag-output --bind-to none -np 1 --host node-1:1 prog : -np 1 --host node-2:1 env "
      "CUDA_VISIBLE_DEVICES=1 RINGSIDE_RESERVATION_ID=0123456789abcdef0123456789abcdef prog");
  // An id is the agent's 32 hex digits, nothing a command line could make more of.
  hosts[1].reservationId = "x; rm -rf /";
  auto refused = buildMpirunCommand({}, spec, hosts, 2, {}, {}, {"prog"});
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("node-2"), std::string::npos);
}

TEST(MpirunCommandTest, RefusesBadHostsOptionsAndTooFewGpus) {
  v1::RunSpec spec;
  MpirunSettings settings;
  auto badHost = buildMpirunCommand(settings, spec, {{"-oProxyCommand=x", 1, {}, "", ""}}, 1, {},
                                    {}, {"prog"});
  EXPECT_FALSE(badHost.isOk());
  auto fewGpus =
      buildMpirunCommand(settings, spec, {{"node-1", 2, {0}, "", ""}}, 2, {}, {}, {"prog"});
  ASSERT_FALSE(fewGpus.isOk());
  EXPECT_NE(fewGpus.status().message().find("one GPU per rank"), std::string::npos);
  spec.add_mpirun_args("/bin/other-program");
  auto notAnOption = buildMpirunCommand(settings, spec, {}, 1, {}, {}, {"prog"});
  ASSERT_FALSE(notAnOption.isOk());
  EXPECT_NE(notAnOption.status().message().find("must start with an option"), std::string::npos);
}

TEST(LauncherCheckTest, NamesTheNodesItCannotReach) {
  EXPECT_TRUE(checkLauncherReaches("true", {"node-1", "node-2"}, std::chrono::seconds(5)).isOk());
  const Status refused = checkLauncherReaches("false", {"node-9"}, std::chrono::seconds(5));
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.message().find("node-9"), std::string::npos);
  EXPECT_NE(refused.message().find("--launcher"), std::string::npos);
  // A launcher that hangs (ssh waiting on a dead host) is cut off at the time-out.
  trainer::TempDir dir;
  const std::string hanging = dir.path() + "/hanging-ssh";
  std::ofstream(hanging) << "#!/bin/sh\nexec sleep 30\n";
  std::filesystem::permissions(hanging, std::filesystem::perms::owner_all);
  const auto start = std::chrono::steady_clock::now();
  const Status hung = checkLauncherReaches(hanging, {"node-3"}, std::chrono::milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_FALSE(hung.isOk());
  EXPECT_NE(hung.message().find("node-3: no answer"), std::string::npos) << hung.message();
}

TEST(RankProcessesTest, FindsRanksOfEveryRunWithTheirGpus) {
  trainer::TempDir dir;
  const auto process = [&](const std::string& pid, const std::string& environ) {
    std::filesystem::create_directories(dir.path() + "/" + pid);
    std::ofstream(dir.path() + "/" + pid + "/environ", std::ios::binary) << environ;
  };
  using namespace std::string_literals;
  process("100",
          "PATH=/bin\0RINGSIDE_RUN_ID=r1\0OMPI_COMM_WORLD_RANK=1\0"
          "CUDA_VISIBLE_DEVICES=2,3\0RINGSIDE_AGENT_ENDPOINT=ipc:///run/x/ranks.sock\0"
          "RINGSIDE_RUN_PUBLIC_KEY=k1\0"s);  // a one-node run: ipc://, with its own key
  process("101", "RINGSIDE_RUN_ID=r1\0"s);      // mpirun: no rank
  process("102", "OMPI_COMM_WORLD_RANK=0\0"s);  // not a Ringside run
  process("103",
          "PMIX_RANK=4\0RINGSIDE_RUN_ID=r2\0CUDA_VISIBLE_DEVICES=GPU-abc\0"
          "RINGSIDE_AGENT_ENDPOINT=tcp://node-a:47602\0RINGSIDE_RUN_PUBLIC_KEY=k\0"
          "RINGSIDE_RESERVATION_ID=hold-2\0"s);
  std::filesystem::create_directories(dir.path() + "/self");
  auto ranks = scanRankProcesses(dir.path());
  std::sort(ranks.begin(), ranks.end(),
            [](const RankProcess& a, const RankProcess& b) { return a.pid < b.pid; });
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].pid, 100);
  EXPECT_EQ(ranks[0].runId, "r1");
  EXPECT_EQ(ranks[0].rank, 1);
  EXPECT_EQ(ranks[0].gpus, (std::vector<uint32_t>{2, 3}));
  EXPECT_FALSE(ranks[0].multiNode);
  EXPECT_TRUE(ranks[1].multiNode);
  EXPECT_EQ(ranks[1].runId, "r2");
  EXPECT_EQ(ranks[1].rank, 4);
  EXPECT_TRUE(ranks[1].gpus.empty());
  EXPECT_TRUE(ranks[0].reservationId.empty());
  EXPECT_EQ(ranks[1].reservationId, "hold-2");
}

TEST(RankProcessesTest, VisibleDevicesParseIndicesOnly) {
  EXPECT_EQ(parseVisibleDevices("0"), std::vector<uint32_t>{0});
  EXPECT_EQ(parseVisibleDevices("1,0"), (std::vector<uint32_t>{1, 0}));
  EXPECT_TRUE(parseVisibleDevices("").empty());
  EXPECT_TRUE(parseVisibleDevices("GPU-5f1c").empty());
  EXPECT_TRUE(parseVisibleDevices("0,,1").empty());
}

}  // namespace
}  // namespace ringside::agent
