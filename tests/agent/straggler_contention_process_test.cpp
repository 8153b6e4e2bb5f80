// A real, bursty straggler under a real agent (docs/metrics.md, "The straggler"): a 2-rank MLP
// run logging every step, each rank pinned to a CPU of its own, and for 15 s two busy loops share
// rank 1's CPU (the scheduler takes time slices from it, as another job's process would). In the
// verdicts the owner agent journals, rank 1 must be named within 10 s of the loops' start, in
// nearly every verdict while they run, with the stage "waiting for a CPU" (its run-queue delay
// explains its lateness), and no longer within 10 s of their end, unless it still waits for a
// CPU (its run-queue delay, which the kernel counts) after them.
//
// Label `slow` (opt-in): it needs two CPUs that nothing else keeps busy. Other work on the
// machine is moved by the scheduler onto the CPU the loops leave alone, which makes rank 0 as slow
// as rank 1 (or slower): the verdict then rightly names no straggler, or rank 0.
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "agent_fixture.h"
#include "ringside/agent/straggler_detector.h"
#include "straggler_contention.h"
#include "straggler_verdicts.h"

namespace ringside::agent {
namespace {

TEST_F(AgentProcessTest, ARankSharingItsCpuWithBusyLoopsIsNamedAndCleared) {
  const std::vector<int> cpus = contention::allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  nlohmann::json config = smallRun(1000);  // stopped below
  config["train_samples"] = 20000;
  config["test_samples"] = 500;
  config["log_every"] = 1;
  const v1::RunInfo launched = launch(config);
  waitForState(launched.run_id(), {v1::RUNNING});
  std::vector<pid_t> pids;
  for (int i = 0; i < 600 && (pids.empty() || pids[0] < 0 || pids[1] < 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pids = contention::rankPids(launched.run_id(), 2);
  }
  ASSERT_TRUE(pids[0] > 0 && pids[1] > 0) << "the ranks' processes were not found";
  ASSERT_TRUE(contention::pinProcess(pids[0], cpus[0]));
  ASSERT_TRUE(contention::pinProcess(pids[1], cpus[1]));

  // A clean window first, then 15 s of two busy loops on rank 1's CPU, then 12 s without.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  // Training runs by now (MPI_Init is done): pinned again, and every thread checked.
  ASSERT_TRUE(contention::repinAndCheck(pids[0], cpus[0])) << "rank 0's threads left its CPU";
  ASSERT_TRUE(contention::repinAndCheck(pids[1], cpus[1])) << "rank 1's threads left its CPU";
  contention::BusyLoops busy(cpus[1], 2);
  std::this_thread::sleep_for(std::chrono::seconds(15));
  busy.stop();
  std::this_thread::sleep_for(std::chrono::seconds(12));
  v1::Envelope stop;
  stop.mutable_stop_run()->set_run_id(launched.run_id());
  ASSERT_TRUE(request(stop).has_stop_run_reply());
  const v1::RunInfo run = waitForState(launched.run_id(), {v1::STOPPED, v1::FAILED, v1::COMPLETED});
  ASSERT_EQ(run.state(), v1::STOPPED) << run.reason();

  const auto fetched = fetchAll(launched.run_id());
  const auto verdicts = journaledVerdicts(fetched.verdicts);
  const double start = busy.startedAt(), end = busy.stoppedAt();
  // After the loops, rank 1 may still wait for a CPU: on two CPUs the agent, mpirun and this test
  // run beside the ranks, and the scheduler may put them on rank 1's. Where it waits at least what
  // the rule keeps a named rank at (its exit threshold) over the run's last 7 s, naming it is
  // right and its clearing is not judged.
  const double lingering = runQueueExcessShare(fetched.samples, 1, 0, end + 5.0, end + 12.0);
  const bool stillWaits = lingering >= StragglerRule{}.exitCostShare;
  std::optional<double> detected, cleared;
  int held = 0, heldRight = 0, cpu = 0;
  for (const JournaledVerdict& v : verdicts) {
    if (v.time >= start && v.time < end) {
      if (!detected && v.rank == 1) detected = v.time - start;
      if (detected) {
        ++held;
        heldRight += v.rank == 1 ? 1 : 0;
        cpu += v.rank == 1 && v.stage == 3 ? 1 : 0;
        if (v.rank == 1) {
          // Named for what it costs: at least the rule's threshold (it may still fall to the
          // exit threshold while named, which is lower).
          EXPECT_GE(v.cost, StragglerRule{}.exitCostShare) << "step " << v.step;
        }
      }
    }
    if (v.time >= end && !cleared && v.rank != 1) cleared = v.time - end;
    // Once cleared, the verdict does not come back to rank 1 waiting for a CPU (the loops are
    // gone; a slower CPU of this virtual machine may still make it a compute straggler).
    if (v.time >= end + 10.0 && !stillWaits) {
      EXPECT_FALSE(v.rank == 1 && v.stage == 3) << "step " << v.step;
    }
  }
  const std::string timeline = describeVerdicts(verdicts, start, start - 6.0, end + 12.0);
  ASSERT_TRUE(detected) << "rank 1 never named while the busy loops ran:\n" << timeline;
  EXPECT_LE(*detected, 10.0) << timeline;
  ASSERT_GT(held, 0);
  // The bar is 95 % (docs/metrics.md, measured on recordings by straggler_fixtures_test); this
  // test asks 90 % of a live run.
  EXPECT_GE(heldRight, 0.9 * held) << heldRight << " of " << held << ":\n" << timeline;
  EXPECT_GE(cpu, 0.9 * heldRight) << cpu << " of " << heldRight << " waiting for a CPU";
  if (stillWaits) {
    std::printf(
        "busy for %.1f s: rank 1 named after %.1f s in %d of %d verdicts; after the loops it "
        "still waited for a CPU %.1f %% of the step more than rank 0, so its clearing is not "
        "judged%s\n",
        end - start, *detected, heldRight, held, lingering * 100,
        cleared ? "" : " (still named at the end)");
    return;
  }
  ASSERT_TRUE(cleared) << "rank 1 still named at the end (it waited for a CPU "
                       << lingering * 100 << " % of the step more than rank 0 after the loops):\n"
                       << timeline;
  EXPECT_LE(*cleared, 10.0) << timeline;
  std::printf(
      "busy for %.1f s: rank 1 named after %.1f s in %d of %d verdicts, cleared %.1f s "
      "after the end (then it waited for a CPU %.1f %% of the step more than rank 0)\n",
      end - start, *detected, heldRight, held, *cleared, lingering * 100);
}

}  // namespace
}  // namespace ringside::agent
