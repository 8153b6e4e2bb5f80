// Recovering a trainer run's metrics from its stdout.log, on a real journal.
#include "ringside/agent/metrics_recovery.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

class MetricsRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringside_recovery_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto journal = Journal::open((dir_ / "journal.sqlite").string());
    ASSERT_TRUE(journal.isOk()) << journal.status().toString();
    journal_ = std::move(journal).value();
    v1::RunInfo info;
    info.set_run_id("r1");
    info.set_world_size(2);
    // The run's processes have ended, but its final state is journaled only after the recovery
    // (a journal takes no samples after a run's final state).
    info.set_state(v1::RUNNING);
    ASSERT_TRUE(journal_->upsertRun(info).isOk());
  }
  void TearDown() override {
    journal_.reset();
    fs::remove_all(dir_);
  }
  std::set<std::tuple<int, int64_t, std::string>> journaledKeys() {
    std::set<std::tuple<int, int64_t, std::string>> keys;
    EXPECT_TRUE(journal_
                    ->forEachSampleKey("r1",
                                       [&](int32_t rank, int64_t step, std::string_view name) {
                                         keys.emplace(rank, step, std::string(name));
                                       })
                    .isOk());
    return keys;
  }
  fs::path dir_;
  std::unique_ptr<Journal> journal_;
};

TEST_F(MetricsRecoveryTest, OnlyWhatTheJournalLacksIsJournaledOnce) {
  {
    std::ofstream out(dir_ / "stdout.log");
    out << R"([1,0]<stdout>:{"type":"start","first_step":0,"total_steps":4,"steps_per_epoch":2})"
        << "\n";
    for (int step = 1; step <= 4; ++step) {
      out << R"([1,0]<stdout>:{"type":"metrics","step":)" << step
          << R"(,"epoch":0,"metrics":{"train/loss":0.5,"train/lr":0.1}})"
          << "\n";
      out << R"([1,0]<stdout>:{"type":"metrics","step":)" << step
          << R"(,"epoch":0,"rank":1,"metrics":{"time/step_ms":2}})"
          << "\n";
    }
    out << "[1,1]<stdout>:"
        << R"({"type":"metrics","step":9,"metrics":{"other":1}})"
        << "\n";
    out << R"([1,0]<stdout>:{"type":"metrics","step":"x"})"
        << "\n";
    out << "[1,0]<stdout>:"
        << R"({"type":"end","status":"completed"})"
        << "\n";
    out << "mpirun's own line\n";
  }
  // What the sink delivered before the agent went away: steps 1 and 2.
  std::vector<v1::MetricSample> delivered;
  for (int step = 1; step <= 2; ++step) {
    for (const char* name : {"train/loss", "train/lr"}) {
      v1::MetricSample sample;
      sample.set_step(step);
      sample.set_rank(-1);
      sample.set_name(name);
      sample.set_value(0.5);
      delivered.push_back(sample);
    }
  }
  ASSERT_TRUE(journal_->appendMetricSamples("r1", delivered).isOk());

  auto report = recoverMetricsFromStdout(*journal_, "r1", (dir_ / "stdout.log").string());
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->recordsRead, 9u);    // the start record and 8 metrics records of rank 0
  EXPECT_EQ(report->samplesInLog, 14u);  // 2 run/ facts, 4 x 2 global, 4 x 1 of rank 1
  EXPECT_EQ(report->samplesMissing, 10u);
  EXPECT_EQ(report->recovered.size(), 10u);
  EXPECT_EQ(report->linesSkipped, 1u);
  const auto keys = journaledKeys();
  EXPECT_EQ(keys.size(), 14u);
  EXPECT_TRUE(keys.contains({1, 3, "time/step_ms"}));
  EXPECT_TRUE(keys.contains({-1, 0, "run/total_steps"}));
  EXPECT_FALSE(keys.contains({-1, 9, "other"})) << "only rank 0's lines are records";

  auto again = recoverMetricsFromStdout(*journal_, "r1", (dir_ / "stdout.log").string());
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(again->samplesMissing, 0u) << "nothing twice";
}

TEST_F(MetricsRecoveryTest, AMissingLogOrRunIsNotFound) {
  EXPECT_EQ(recoverMetricsFromStdout(*journal_, "r1", (dir_ / "none.log").string()).status().code(),
            Status::Code::kNotFound);
  std::ofstream(dir_ / "stdout.log") << "x\n";
  EXPECT_EQ(
      recoverMetricsFromStdout(*journal_, "r2", (dir_ / "stdout.log").string()).status().code(),
      Status::Code::kNotFound);
}

}  // namespace
}  // namespace ringside::agent
