// RunManager's queue (docs/queue.md) with real commands under the real mpirun: a launch on busy
// slots waits and starts by itself when they free up, in priority then submission order; why it
// waits; cancelling; and a restarted agent that starts every queued run exactly once.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "build_paths.h"
#include "ringside/agent/run_manager.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

class AgentQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
    char pattern[] = "/tmp/ringside-queue-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  void TearDown() override {
    // Every gate opens, so that no run outlives the test; then a moment for them to exit.
    for (const char* gate : {"first.go", "second.go", "head.go", "all.go", "cpu.go",
                             "running.go", "queued.go", "busy.go"}) {
      open(gate);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A node of `slots` CPU slots whose state changes are recorded in order; `left`, when set,
  // says how long each active run has left (by run name), as the agent's RunEtas would.
  RunManager makeManager(uint32_t slots,
                         std::map<std::string, double>* left = nullptr) {
    RunManagerOptions o;
    o.runsDir = dir_ + "/runs";
    o.mpirunPath = ringside::test::mpiexec();
    o.trainerPath = ringside::test::trainerBin();
    o.rankEndpoint = "ipc://" + dir_ + "/ranks.sock";
    o.defaultGraceSeconds = 5;
    o.cpuSlots = slots;
    if (left != nullptr) {
      o.remainingSeconds = [left](const v1::RunInfo& run) -> std::optional<double> {
        auto it = left->find(run.spec().name());
        if (it == left->end()) return std::nullopt;
        return it->second;
      };
    }
    return RunManager(o, [this](const v1::RunInfo& run, const RunProcessIds&) {
      events_.push_back(run);
    });
  }

  // A one-rank command that runs until the file `gate` (in the test's folder) exists.
  v1::RunSpec gated(const std::string& name, const std::string& gate,
                    v1::RunPriority priority = v1::NORMAL_PRIORITY, uint32_t ranks = 1) {
    v1::RunSpec spec;
    spec.set_name(name);
    spec.set_ranks_per_node(ranks);
    spec.set_priority(priority);
    const std::string path = dir_ + "/" + gate;
    for (const char* word : {"sh", "-c"}) spec.mutable_command()->add_argv(word);
    spec.mutable_command()->add_argv("while [ ! -e '" + path + "' ]; do sleep 0.05; done");
    return spec;
  }
  void open(const std::string& gate) { std::ofstream(dir_ + "/" + gate) << "go\n"; }

  // What the node's agent does every 100 ms: poll the runs, dispatch the queue.
  static void tick(RunManager& manager) {
    manager.poll();
    manager.dispatchQueue();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  template <typename Done>
  static bool tickUntil(RunManager& manager, Done done, int seconds = 60) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      tick(manager);
      if (done()) return true;
    }
    return false;
  }
  static v1::RunState state(RunManager& manager, const std::string& id) {
    return manager.find(id)->state();
  }
  // Run ids in the order their STARTING state was reported, and how often each.
  std::vector<std::string> startOrder() const {
    std::vector<std::string> order;
    for (const v1::RunInfo& run : events_) {
      if (run.state() == v1::STARTING) order.push_back(run.run_id());
    }
    return order;
  }

  std::string dir_;
  std::vector<v1::RunInfo> events_;
};

TEST_F(AgentQueueTest, ALaunchOnBusySlotsWaitsSaysWhyAndStartsWhenTheyFree) {
  RunManager manager = makeManager(2);
  auto first = manager.launch(gated("first", "first.go", v1::NORMAL_PRIORITY, 2), 2);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_EQ(first->state(), v1::STARTING);
  auto second = manager.launch(gated("second", "second.go"), 0);
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_EQ(second->state(), v1::QUEUED);
  EXPECT_EQ(second->queue_position(), 1u);
  EXPECT_EQ(second->waiting_reason(), "waiting for 1 CPU slot: 0 of 2 free; 2 slots held by run " +
                                          first->run_id() + " (first)");
  // Journaled once as QUEUED, with its place and reason; it holds no slot while it waits.
  ASSERT_FALSE(events_.empty());
  EXPECT_EQ(events_.back().run_id(), second->run_id());
  EXPECT_EQ(events_.back().queue_position(), 1u);
  EXPECT_EQ(manager.usedCpuSlots(/*fresh=*/true), 2u);
  for (int i = 0; i < 10; ++i) tick(manager);
  EXPECT_EQ(state(manager, second->run_id()), v1::QUEUED);

  open("first.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return state(manager, second->run_id()) != v1::QUEUED; }));
  EXPECT_EQ(state(manager, first->run_id()), v1::COMPLETED);
  EXPECT_EQ(manager.find(second->run_id())->queue_position(), 0u);
  EXPECT_TRUE(manager.find(second->run_id())->waiting_reason().empty());
  open("second.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return isEnded(state(manager, second->run_id())); }));
  EXPECT_EQ(state(manager, second->run_id()), v1::COMPLETED)
      << manager.find(second->run_id())->reason();
  EXPECT_EQ(startOrder(), (std::vector<std::string>{first->run_id(), second->run_id()}));
}

TEST_F(AgentQueueTest, RunsStartInPriorityThenSubmissionOrderAndACancelledOneNever) {
  RunManager manager = makeManager(1);
  auto head = manager.launch(gated("head", "head.go"), 1);
  ASSERT_TRUE(head.isOk()) << head.status().toString();
  std::map<std::string, std::string> ids;  // name -> run id
  const std::vector<std::pair<std::string, v1::RunPriority>> submitted = {
      {"low", v1::LOW_PRIORITY},        {"normal-1", v1::NORMAL_PRIORITY},
      {"high", v1::HIGH_PRIORITY},      {"normal-2", v1::NORMAL_PRIORITY},
      {"cancelled", v1::HIGH_PRIORITY}, {"normal-3", v1::NORMAL_PRIORITY}};
  for (const auto& [name, priority] : submitted) {
    auto run = manager.launch(gated(name, "all.go", priority), 0);
    ASSERT_TRUE(run.isOk()) << run.status().toString();
    ASSERT_EQ(run->state(), v1::QUEUED) << name;
    ids[name] = run->run_id();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // distinct submission times
  }
  // Places: high, cancelled (high, later), normal-1, normal-2, normal-3, low.
  EXPECT_EQ(manager.find(ids["high"])->queue_position(), 1u);
  EXPECT_EQ(manager.find(ids["cancelled"])->queue_position(), 2u);
  EXPECT_EQ(manager.find(ids["normal-1"])->queue_position(), 3u);
  EXPECT_EQ(manager.find(ids["low"])->queue_position(), 6u);

  auto cancelled = manager.stop(ids["cancelled"], 0);
  ASSERT_TRUE(cancelled.isOk()) << cancelled.status().toString();
  EXPECT_EQ(cancelled->state(), v1::STOPPED);
  EXPECT_EQ(cancelled->reason(), "cancelled while queued: it never started");
  EXPECT_EQ(manager.stop(ids["cancelled"], 0).status().code(), Status::Code::kFailedPrecondition);
  manager.dispatchQueue(/*force=*/true);
  EXPECT_EQ(manager.find(ids["normal-1"])->queue_position(), 2u);  // moved up

  open("head.go");
  open("all.go");  // each starts, ends at once, and frees the slot for the next
  ASSERT_TRUE(tickUntil(manager, [&] {
    for (const auto& [name, id] : ids) {
      if (!isEnded(state(manager, id))) return false;
    }
    return true;
  }));
  const std::vector<std::string> expected = {head->run_id(),     ids["high"],     ids["normal-1"],
                                             ids["normal-2"], ids["normal-3"], ids["low"]};
  EXPECT_EQ(startOrder(), expected);  // each once; the cancelled run never
  for (const auto& [name, id] : ids) {
    if (name != "cancelled") {
      EXPECT_EQ(state(manager, id), v1::COMPLETED) << name;
    }
  }
}

TEST_F(AgentQueueTest, ALaunchDoesNotOvertakeTheQueueButAHigherPriorityDoes) {
  RunManager manager = makeManager(1);
  auto cpu = manager.launch(gated("cpu", "cpu.go"), 1);
  ASSERT_TRUE(cpu.isOk());
  auto waiting = manager.launch(gated("cpu-2", "cpu.go"), 0);
  ASSERT_TRUE(waiting.isOk());
  EXPECT_EQ(waiting->state(), v1::QUEUED);
  // A third CPU run waits behind the second even when the node reports a free slot for it:
  // it would overtake a run of its own kind and priority.
  auto third = manager.launch(gated("cpu-3", "cpu.go"), 1);
  ASSERT_TRUE(third.isOk());
  EXPECT_EQ(third->state(), v1::QUEUED);
  EXPECT_EQ(third->queue_position(), 2u);
  // A high-priority run goes ahead of both.
  auto urgent = manager.launch(gated("urgent", "cpu.go", v1::HIGH_PRIORITY), 0);
  ASSERT_TRUE(urgent.isOk());
  EXPECT_EQ(urgent->queue_position(), 1u);
  EXPECT_EQ(manager.find(third->run_id())->queue_position(), 3u);
  open("cpu.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return isEnded(state(manager, third->run_id())); }));
  EXPECT_EQ(startOrder(), (std::vector<std::string>{cpu->run_id(), urgent->run_id(),
                                                    waiting->run_id(), third->run_id()}));
}

TEST_F(AgentQueueTest, AQueuedRunMovesWithinItsPriorityAndChangesPriority) {
  RunManager manager = makeManager(1);
  auto head = manager.launch(gated("head", "head.go"), 1);
  ASSERT_TRUE(head.isOk());
  std::vector<std::string> ids;  // a, b, c, d as submitted
  for (const char* name : {"a", "b", "c", "d"}) {
    auto run = manager.launch(gated(name, "all.go"), 0);
    ASSERT_TRUE(run.isOk());
    ids.push_back(run->run_id());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto place = [&](int i) { return manager.find(ids[i])->queue_position(); };
  // d two places up: a, d, b, c.
  auto moved = manager.reorderQueued(ids[3], -2, nullptr);
  ASSERT_TRUE(moved.isOk()) << moved.status().toString();
  EXPECT_EQ(moved->queue_position(), 2u);
  EXPECT_EQ(std::vector<uint32_t>({place(0), place(1), place(2), place(3)}),
            std::vector<uint32_t>({1, 3, 4, 2}));
  // a far down (stops at the end): d, b, c, a. The change is journaled.
  events_.clear();
  ASSERT_TRUE(manager.reorderQueued(ids[0], 99, nullptr).isOk());
  EXPECT_EQ(std::vector<uint32_t>({place(0), place(1), place(2), place(3)}),
            std::vector<uint32_t>({4, 2, 3, 1}));
  bool journaled = false;
  for (const v1::RunInfo& run : events_) journaled |= run.run_id() == ids[0];
  EXPECT_TRUE(journaled);
  // c becomes high priority: c, d, b, a; then low: d, b, a, c.
  const v1::RunPriority high = v1::HIGH_PRIORITY, low = v1::LOW_PRIORITY;
  ASSERT_TRUE(manager.reorderQueued(ids[2], 0, &high).isOk());
  EXPECT_EQ(place(2), 1u);
  ASSERT_TRUE(manager.reorderQueued(ids[2], 0, &low).isOk());
  EXPECT_EQ(std::vector<uint32_t>({place(0), place(1), place(2), place(3)}),
            std::vector<uint32_t>({3, 2, 4, 1}));
  // Only a queued run moves.
  EXPECT_EQ(manager.reorderQueued(head->run_id(), -1, nullptr).status().code(),
            Status::Code::kFailedPrecondition);
  EXPECT_EQ(manager.reorderQueued("r-none", -1, nullptr).status().code(),
            Status::Code::kNotFound);
  open("head.go");
  open("all.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return isEnded(state(manager, ids[2])); }));
  // (The head's start was before the events were cleared above.)
  EXPECT_EQ(startOrder(), (std::vector<std::string>{ids[3], ids[1], ids[0], ids[2]}));
}

// The estimated start: the slots of the running runs free up at their ETAs, in that order; a
// queued run once started keeps its slots (its length is unknown), so a run needing them has none.
TEST_F(AgentQueueTest, AQueuedRunsEstimatedStartComesFromTheETAsOfTheRunsHoldingItsSlots) {
  std::map<std::string, double> left = {{"ends-later", 300.0}, {"ends-first", 100.0}};
  RunManager manager = makeManager(2, &left);
  ASSERT_TRUE(manager.launch(gated("ends-later", "all.go"), 2).isOk());
  ASSERT_TRUE(manager.launch(gated("ends-first", "all.go"), 1).isOk());
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  auto a = manager.launch(gated("a", "all.go"), 0);
  auto b = manager.launch(gated("b", "all.go"), 0);
  auto c = manager.launch(gated("c", "all.go"), 0);
  ASSERT_TRUE(a.isOk() && b.isOk() && c.isOk());
  EXPECT_NEAR(manager.find(a->run_id())->estimated_start(), now + 100.0, 5.0);
  EXPECT_NEAR(manager.find(b->run_id())->estimated_start(), now + 300.0, 5.0);
  EXPECT_EQ(manager.find(c->run_id())->estimated_start(), 0.0);  // after a or b: unknown
  // The ETAs move: a's estimate follows once it moves by more than 30 s (and 5 %).
  left["ends-first"] = 20.0;
  left["ends-later"] = 290.0;
  manager.dispatchQueue(/*force=*/true);
  EXPECT_NEAR(manager.find(a->run_id())->estimated_start(), now + 20.0, 5.0);
  EXPECT_NEAR(manager.find(b->run_id())->estimated_start(), now + 300.0, 5.0);  // 10 s: kept
  // A run with no known end: its slot frees at no known time. a takes the other run's slot at
  // its end; b, which needs the unknown one, has no estimate.
  left.erase("ends-first");
  manager.dispatchQueue(/*force=*/true);
  EXPECT_NEAR(manager.find(a->run_id())->estimated_start(), now + 290.0, 5.0);
  EXPECT_EQ(manager.find(b->run_id())->estimated_start(), 0.0);
}

TEST_F(AgentQueueTest, ASmallRunBackfillsOnlyWhereItDelaysNoRunAheadOfIt) {
  // 4 CPU slots: "holder-a" holds 2 for 100 s more, "holder-b" 1 for 300 s; 1 is free. "big"
  // needs 2: it starts when holder-a ends (in 100 s), with 1 slot to spare then. So "small"
  // (1 slot) may take the free slot now: big still starts in 100 s.
  std::map<std::string, double> left = {{"holder-a", 100.0}, {"holder-b", 300.0}};
  RunManager manager = makeManager(4, &left);
  auto holderA = manager.launch(gated("holder-a", "all.go", v1::NORMAL_PRIORITY, 2), 4);
  auto holderB = manager.launch(gated("holder-b", "all.go"), 2);
  ASSERT_TRUE(holderA.isOk() && holderB.isOk());
  auto big = manager.launch(gated("big", "all.go", v1::NORMAL_PRIORITY, 2), 1);
  ASSERT_TRUE(big.isOk());
  EXPECT_EQ(big->state(), v1::QUEUED);
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(manager.find(big->run_id())->estimated_start(), now + 100.0, 5.0);
  auto small = manager.launch(gated("small", "all.go"), 1);
  ASSERT_TRUE(small.isOk());
  EXPECT_EQ(small->state(), v1::STARTING) << small->waiting_reason();
  // Its slot was the one spare: a second small run would delay big, so it waits.
  auto small2 = manager.launch(gated("small-2", "all.go"), 0);
  ASSERT_TRUE(small2.isOk());
  EXPECT_EQ(small2->state(), v1::QUEUED);
  EXPECT_NEAR(manager.find(big->run_id())->estimated_start(), now + 100.0, 5.0);  // not later
  EXPECT_EQ(manager.find(big->run_id())->queue_position(), 1u);
  EXPECT_EQ(manager.find(small2->run_id())->queue_position(), 2u);
  open("all.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return isEnded(state(manager, small2->run_id())); }));
  EXPECT_EQ(state(manager, small->run_id()), v1::COMPLETED);
}

TEST_F(AgentQueueTest, NoBackfillThatWouldDelayTheRunAheadOrPastOneWithoutAnEstimate) {
  // 3 CPU slots: holder-a holds 1 for 100 s, holder-b 1 for 300 s; 1 is free. "big" needs 2 and
  // starts when holder-a ends, with nothing to spare: "small" would delay it and waits, saying
  // why, though its slot is free now.
  std::map<std::string, double> left = {{"holder-a", 100.0}, {"holder-b", 300.0}};
  RunManager manager = makeManager(3, &left);
  ASSERT_TRUE(manager.launch(gated("holder-a", "first.go"), 3).isOk());
  ASSERT_TRUE(manager.launch(gated("holder-b", "second.go"), 2).isOk());
  auto big = manager.launch(gated("big", "all.go", v1::NORMAL_PRIORITY, 2), 1);
  auto small = manager.launch(gated("small", "all.go"), 1);
  ASSERT_TRUE(big.isOk() && small.isOk());
  EXPECT_EQ(big->state(), v1::QUEUED);
  EXPECT_EQ(small->state(), v1::QUEUED);
  EXPECT_NE(small->waiting_reason().find("its slots are free, but run " + big->run_id()),
            std::string::npos)
      << small->waiting_reason();
  EXPECT_NE(small->waiting_reason().find("could delay it: it starts after that run"),
            std::string::npos)
      << small->waiting_reason();
  // Without an ETA for the run big waits for, when big starts is not known: no backfill.
  left.clear();
  manager.dispatchQueue(/*force=*/true);
  EXPECT_EQ(state(manager, small->run_id()), v1::QUEUED);
  EXPECT_NE(manager.find(small->run_id())->waiting_reason().find("is not known"),
            std::string::npos)
      << manager.find(small->run_id())->waiting_reason();
  // holder-a ends: big starts on its slot and the free one; small waits for holder-b's.
  open("first.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return state(manager, big->run_id()) != v1::QUEUED; }));
  EXPECT_EQ(state(manager, small->run_id()), v1::QUEUED);
  open("second.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return state(manager, small->run_id()) != v1::QUEUED; }));
  const std::vector<std::string> order = startOrder();
  ASSERT_GE(order.size(), 4u);
  EXPECT_EQ(order[2], big->run_id());
  EXPECT_EQ(order[3], small->run_id());
  open("all.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return isEnded(state(manager, small->run_id())); }));
}

TEST_F(AgentQueueTest, ARestartedAgentStartsEachQueuedRunExactlyOnce) {
  std::vector<v1::RunInfo> journaled;
  std::string runningId, queuedId, dispatchedId;
  {
    RunManager first = makeManager(1);
    auto running = first.launch(gated("running", "running.go"), 1);
    ASSERT_TRUE(running.isOk());
    auto queued = first.launch(gated("queued", "queued.go"), 0);
    ASSERT_TRUE(queued.isOk());
    ASSERT_EQ(queued->state(), v1::QUEUED);
    auto dispatched = first.launch(gated("dispatched", "queued.go"), 0);
    ASSERT_TRUE(dispatched.isOk());
    runningId = running->run_id();
    queuedId = queued->run_id();
    dispatchedId = dispatched->run_id();
    // The agent is killed: what it journaled last of each run is what the next one adopts.
    journaled = {*first.find(runningId), *first.find(queuedId), *first.find(dispatchedId)};
  }
  // The earlier agent had begun to start `dispatched` (its marker, no shim yet) when it died.
  std::ofstream(dir_ + "/runs/" + dispatchedId + "/dispatched") << "1\n";
  events_.clear();
  RunManager second = makeManager(1);
  for (const v1::RunInfo& run : journaled) second.adopt(run);
  EXPECT_EQ(state(second, runningId), v1::STARTING);
  EXPECT_EQ(state(second, queuedId), v1::QUEUED);
  EXPECT_EQ(state(second, dispatchedId), v1::FAILED);
  EXPECT_NE(second.find(dispatchedId)->reason().find("was not started again"), std::string::npos);
  for (int i = 0; i < 10; ++i) tick(second);
  EXPECT_EQ(state(second, queuedId), v1::QUEUED);  // the adopted run still holds the slot
  open("running.go");
  open("queued.go");
  ASSERT_TRUE(tickUntil(second, [&] { return isEnded(state(second, queuedId)); }));
  EXPECT_EQ(state(second, queuedId), v1::COMPLETED) << second.find(queuedId)->reason();
  EXPECT_EQ(startOrder(), std::vector<std::string>{queuedId});
}

TEST_F(AgentQueueTest, AQueuedRunWhoseProgramWentMissingFailsInsteadOfStarting) {
  RunManager manager = makeManager(1);
  auto busy = manager.launch(gated("busy", "busy.go"), 1);
  ASSERT_TRUE(busy.isOk());
  const std::string program = dir_ + "/program.sh";
  std::ofstream(program) << "#!/bin/sh\nexit 0\n";
  fs::permissions(program, fs::perms::owner_all);
  v1::RunSpec spec;
  spec.set_name("vanishing");
  spec.set_ranks_per_node(1);
  spec.mutable_command()->add_argv(program);
  auto queued = manager.launch(spec, 0);
  ASSERT_TRUE(queued.isOk()) << queued.status().toString();
  ASSERT_EQ(queued->state(), v1::QUEUED);
  fs::remove(program);
  open("busy.go");
  ASSERT_TRUE(tickUntil(manager, [&] { return isEnded(state(manager, queued->run_id())); }));
  const v1::RunInfo* failed = manager.find(queued->run_id());
  EXPECT_EQ(failed->state(), v1::FAILED);
  EXPECT_NE(failed->reason().find("could not start from the queue"), std::string::npos)
      << failed->reason();
  EXPECT_NE(failed->reason().find(program), std::string::npos) << failed->reason();
}

}  // namespace
}  // namespace ringside::agent
