// The Slurm engine's pure parts: Slurm's output as the agent reads it (recorded from Slurm 22.05
// on scripts/local-slurm's cluster, docs/slurm-test-cluster.md) and the job script it writes.
#include <gtest/gtest.h>

#include <ctime>

#include "ringside/agent/slurm/slurm_job.h"
#include "ringside/agent/slurm/slurm_output.h"

namespace ringside::agent::slurm {
namespace {

TEST(SlurmOutputTest, SqueueLinesAreJobs) {
  const auto jobs = parseSqueue(
      "7|ringside-r1|PENDING|Resources|N/A||debug\n"
      "8|ringside-r2|PENDING|Priority|2026-11-29T18:12:36||debug\n"
      "6|ringside-r0|RUNNING|None|2026-11-29T18:10:36|node-[1-2]|debug\n"
      "garbage line\n"
      "5|other|TIMEOUT|TimeLimit|2026-11-29T18:00:00|node-1|gpu\n");
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].jobId, "7");
  EXPECT_EQ(jobs[0].reason, "Resources");
  EXPECT_EQ(jobs[0].expectedStart, 0.0);
  EXPECT_EQ(jobs[1].name, "ringside-r2");
  std::tm tm{};
  tm.tm_year = 126;
  tm.tm_mon = 10;
  tm.tm_mday = 29;
  tm.tm_hour = 18;
  tm.tm_min = 12;
  tm.tm_sec = 36;
  tm.tm_isdst = -1;
  EXPECT_EQ(jobs[1].expectedStart, static_cast<double>(std::mktime(&tm)));
  EXPECT_EQ(jobs[2].state, "RUNNING");
  EXPECT_EQ(jobs[2].nodeList, "node-[1-2]");
  EXPECT_EQ(jobs[3].partition, "gpu");
  EXPECT_TRUE(isFinalJobState(jobs[3].state));
  EXPECT_FALSE(isFinalJobState("PENDING"));
  EXPECT_TRUE(isFinalJobState("CANCELLED by 0"));
  EXPECT_FALSE(parseSlurmTime("Unknown"));
  EXPECT_FALSE(parseSlurmTime("2026-11-29 18:12:36"));
}

TEST(SlurmOutputTest, SinfoNodesMakePartitionsWithGpus) {
  const auto partitions = parseSinfo(
      "debug*|up|infinite|node-1|idle|2|12052|gpu:2\n"
      "debug*|up|infinite|node-2|mixed|2|12052|gpu:a100:2(S:0-1)\n"
      "gpu|up|1-00:00:00|node-1|idle|2|12052|gpu:2\n"
      "gpu|up|1-00:00:00|node-2|mixed|2|12052|(null)\n");
  ASSERT_EQ(partitions.size(), 2u);
  EXPECT_EQ(partitions[0].name(), "debug");
  EXPECT_TRUE(partitions[0].is_default());
  EXPECT_FALSE(partitions[1].is_default());
  EXPECT_EQ(partitions[1].time_limit(), "1-00:00:00");
  ASSERT_EQ(partitions[0].nodes_size(), 2);
  EXPECT_EQ(partitions[0].nodes(1).state(), "mixed");
  EXPECT_EQ(partitions[0].nodes(1).gpus(), 2u);
  EXPECT_EQ(partitions[0].nodes(1).memory_mib(), 12052u);
  EXPECT_EQ(partitions[1].nodes(1).gpus(), 0u);
  EXPECT_EQ(gpusOfGres("gpu:2,license:1"), 2u);
  EXPECT_EQ(gpusOfGres("gpu:a100:4,gpu:v100:2"), 6u);
}

TEST(SlurmOutputTest, SacctFinalStatesAndExitCodes) {
  const std::string text =
      "12|FAILED|3:0\n12.batch|FAILED|3:0\n13|CANCELLED by 0|0:15\n14|RUNNING|0:0\n"
      "15|TIMEOUT|0:0\n";
  auto failed = parseSacct(text, "12");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->state, "FAILED");
  EXPECT_EQ(failed->exitCode, 3);
  auto cancelled = parseSacct(text, "13");
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->state, "CANCELLED");
  EXPECT_EQ(cancelled->signal, 15);
  EXPECT_FALSE(parseSacct(text, "14")) << "not ended";
  EXPECT_FALSE(parseSacct(text, "1")) << "not listed";
  EXPECT_EQ(parseSacct(text, "15")->state, "TIMEOUT");
}

TEST(SlurmOutputTest, SbatchJobIds) {
  EXPECT_EQ(*parseSbatchJobId("1234\n"), "1234");
  EXPECT_EQ(*parseSbatchJobId("1234;cluster-a\n"), "1234");
  EXPECT_FALSE(parseSbatchJobId("sbatch: error: Batch job submission failed").isOk());
  EXPECT_FALSE(parseSbatchJobId("").isOk());
}

TEST(SlurmJobTest, OptionsAreCheckedAndFilledIn) {
  v1::SlurmOptions options;
  options.set_nodes(2);
  auto allocation = checkSlurmOptions(options, 3);
  ASSERT_TRUE(allocation.isOk()) << allocation.status().toString();
  EXPECT_EQ(allocation->worldSize, 6u);
  EXPECT_EQ(allocation->options.tasks_per_node(), 3u);

  options.set_partition("gpu; rm -rf /");
  auto refused = checkSlurmOptions(options, 1);
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("slurm.partition"), std::string::npos);
  options.set_partition("gpu");
  options.set_gpu_request("--gres=gpu:2");
  refused = checkSlurmOptions(options, 1);
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("{n}"), std::string::npos);
  options.set_gpu_request("--gres=gpu:a100:{n}");
  options.set_time_limit_min(600000);
  EXPECT_FALSE(checkSlurmOptions(options, 1).isOk());
  options.set_time_limit_min(30);
  options.set_nodes(65536);
  options.set_tasks_per_node(2);
  EXPECT_FALSE(checkSlurmOptions(options, 1).isOk()) << "more ranks than a run may have";
}

TEST(SlurmJobTest, ScriptAsksForTheAllocationAndTagsEveryRanksOutput) {
  v1::SlurmOptions options;
  options.set_nodes(2);
  options.set_tasks_per_node(1);
  options.set_partition("gpu");
  options.set_time_limit_min(30);
  options.set_gpus_per_node(4);
  options.set_gpu_request("--gres=gpu:a100:{n}");
  options.set_account("lab");
  JobScriptInput input;
  input.runId = "r20261129-120000-abcd";
  input.runDir = "/state/runs/r20261129-120000-abcd";
  input.workDir = input.runDir;
  input.rankArgv = {"/usr/bin/ringside-trainer", "--config-json", "{\"it's\":1}"};
  input.mpi = true;
  input.checkpointOnSignal = true;
  input.allocation = *checkSlurmOptions(options, 1);
  const std::string script = jobScript(input);
  for (const char* line :
       {"#!/bin/bash\n", "#SBATCH --job-name=ringside-r20261129-120000-abcd\n",
        "#SBATCH --nodes=2\n", "#SBATCH --ntasks-per-node=1\n", "#SBATCH --partition=gpu\n",
        "#SBATCH --time=30\n", "#SBATCH --account=lab\n", "#SBATCH --gres=gpu:a100:4\n",
        "#SBATCH --no-requeue\n", "#SBATCH --signal=USR1@90\n",
        "#SBATCH --output=/state/runs/r20261129-120000-abcd/slurm-batch.log\n",
        "srun --label --kill-on-bad-exit=1 --mpi=pmix ",
        "'/usr/bin/ringside-trainer' '--config-json' '{\"it'\\''s\":1}'",
        "[${SLURM_JOB_ID},\\1]<$1>:", "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))",
        "mv \"$dir/exit_status.tmp\" \"$dir/exit_status\"",
        "if [ \"${RINGSIDE_RANK_PATH+set}\" = set ]; then export PATH=\"$RINGSIDE_RANK_PATH\"; fi"}) {
    EXPECT_NE(script.find(line), std::string::npos) << line << "\n" << script;
  }
  EXPECT_EQ(script.find("--qos"), std::string::npos);
  input.mpi = false;
  input.checkpointOnSignal = false;
  options.set_requeue(true);
  input.allocation = *checkSlurmOptions(options, 1);
  const std::string plain = jobScript(input);
  EXPECT_EQ(plain.find("--mpi=pmix"), std::string::npos);
  EXPECT_EQ(plain.find("--signal="), std::string::npos);
  EXPECT_NE(plain.find("#SBATCH --requeue\n"), std::string::npos);
}

TEST(SlurmJobTest, EndReasonsSayWhatSlurmDid) {
  EXPECT_NE(slurmEndReason("TIMEOUT", 10).find("time limit (10 min)"), std::string::npos);
  EXPECT_NE(slurmEndReason("NODE_FAIL", 0).find("a node of the job failed"), std::string::npos);
  EXPECT_EQ(slurmEndReason("COMPLETED", 0), "");
  EXPECT_EQ(slurmEndReason("FAILED", 0), "");
}

}  // namespace
}  // namespace ringside::agent::slurm
