// TelemetryJournal (agent/include/ringside/agent/telemetry_journal.h; docs/design.md decision 12):
// every reading numbered and kept whole, a run's window served page by page within its bounds,
// retention by age and size, and a torn WAL tail after a crash costing the last reading only.
#include "ringside/agent/telemetry_journal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_util.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;
using trainer::TempDir;

// A reading of a node with two GPUs at `wallTime`, every field set (values follow the time so
// a reading read back is recognisable).
v1::NodeTelemetry reading(double wallTime) {
  v1::NodeTelemetry t;
  t.set_node_id("node-a");
  t.set_wall_time(wallTime);
  t.set_cpu_pct(10 + wallTime / 1000);
  t.set_mem_used_mib(2048);
  t.set_net_rx_mbps(1.5);
  t.set_net_tx_mbps(0.5);
  t.set_cpu_slots_used(2);
  t.set_gpu_slots_used(2);
  for (uint32_t i = 0; i < 2; ++i) {
    v1::GpuTelemetry& gpu = *t.add_gpus();
    gpu.set_index(i);
    gpu.set_util_pct(wallTime - 1000 + i);
    gpu.set_mem_used_mib(1000 + i);
    gpu.set_power_w(150);
    gpu.set_temp_c(60);
    gpu.set_mem_total_mib(81559);
    gpu.set_sm_clock_mhz(1980);
    gpu.set_pcie_rx_mbps(12);
    gpu.set_pcie_tx_mbps(13);
    gpu.set_nvlink_rx_mbps(14);
    gpu.set_nvlink_tx_mbps(15);
  }
  return t;
}

std::unique_ptr<TelemetryJournal> openJournal(const std::string& path,
                                              const TelemetryJournalOptions& options = {}) {
  auto journal = TelemetryJournal::open(path, options);
  EXPECT_TRUE(journal.isOk()) << journal.status().toString();
  return journal.isOk() ? std::move(journal).value() : nullptr;
}

void appendAt(TelemetryJournal& journal, double from, int count) {
  for (int i = 0; i < count; ++i) {
    v1::NodeTelemetry t = reading(from + i);
    ASSERT_TRUE(journal.append(t).isOk());
  }
}

v1::FetchTelemetryRequest window(double from, double to, uint64_t afterSeq = 0,
                                 uint32_t maxEntries = 0) {
  v1::FetchTelemetryRequest request;
  request.set_from_time(from);
  request.set_to_time(to);
  request.set_after_seq(afterSeq);
  request.set_max_entries(maxEntries);
  return request;
}

TEST(TelemetryJournal, AppendNumbersReadingsAndKeepsEveryField) {
  TempDir dir;
  auto journal = openJournal(dir.path() + "/telemetry.sqlite");
  ASSERT_TRUE(journal);
  v1::NodeTelemetry first = reading(1000);
  ASSERT_TRUE(journal->append(first).isOk());
  EXPECT_EQ(first.seq(), 1u);
  v1::NodeTelemetry second = reading(1001);
  ASSERT_TRUE(journal->append(second).isOk());
  EXPECT_EQ(second.seq(), 2u);

  auto page = journal->fetch(window(0, 0));
  ASSERT_TRUE(page.isOk()) << page.status().toString();
  ASSERT_EQ(page->entries_size(), 2);
  EXPECT_EQ(page->entries(0).SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(page->entries(1).SerializeAsString(), second.SerializeAsString());
  EXPECT_EQ(page->last_seq(), 2u);
  EXPECT_FALSE(page->more());
  EXPECT_EQ(page->oldest_time(), 1000);
  EXPECT_EQ(page->node_id(), "node-a");

  // Seqs continue after a reopen.
  journal.reset();
  journal = openJournal(dir.path() + "/telemetry.sqlite");
  v1::NodeTelemetry third = reading(1002);
  ASSERT_TRUE(journal->append(third).isOk());
  EXPECT_EQ(third.seq(), 3u);
}

TEST(TelemetryJournal, WindowIsServedInBoundedPagesUntilMoreIsFalse) {
  TempDir dir;
  TelemetryJournalOptions options;
  options.maxPageSize = 4;  // asked for more, a page still holds 4
  auto journal = openJournal(dir.path() + "/telemetry.sqlite", options);
  ASSERT_TRUE(journal);
  appendAt(*journal, 1000, 25);  // seqs 1..25 at 1000..1024

  std::vector<double> times;
  uint64_t after = 0;
  int pages = 0;
  while (true) {
    auto page = journal->fetch(window(1005, 1014, after, 100));
    ASSERT_TRUE(page.isOk()) << page.status().toString();
    ++pages;
    EXPECT_LE(page->entries_size(), 4);
    for (const auto& entry : page->entries()) {
      times.push_back(entry.wall_time());
      EXPECT_GT(entry.seq(), after);
    }
    after = page->last_seq();
    if (!page->more()) break;
    ASSERT_LT(pages, 10);
  }
  EXPECT_EQ(pages, 3);  // 4 + 4 + 2
  ASSERT_EQ(times.size(), 10u);
  for (size_t i = 0; i < times.size(); ++i) EXPECT_EQ(times[i], 1005.0 + static_cast<double>(i));

  // A page also ends at its byte bound, after at least one reading.
  TelemetryJournalOptions tiny;
  tiny.maxPageBytes = 1;
  journal.reset();
  journal = openJournal(dir.path() + "/telemetry.sqlite", tiny);
  auto one = journal->fetch(window(1000, 0));
  ASSERT_TRUE(one.isOk());
  EXPECT_EQ(one->entries_size(), 1);
  EXPECT_TRUE(one->more());

  // An empty window: no readings, last_seq stays after_seq, nothing more.
  auto none = journal->fetch(window(2000, 3000, 7));
  ASSERT_TRUE(none.isOk());
  EXPECT_EQ(none->entries_size(), 0);
  EXPECT_EQ(none->last_seq(), 7u);
  EXPECT_FALSE(none->more());
}

TEST(TelemetryJournal, BadWindowIsRefusedSayingWhy) {
  TempDir dir;
  auto journal = openJournal(dir.path() + "/telemetry.sqlite");
  ASSERT_TRUE(journal);
  auto negative = journal->fetch(window(-1, 0));
  ASSERT_FALSE(negative.isOk());
  EXPECT_EQ(negative.status().code(), Status::Code::kInvalidArgument);
  auto backwards = journal->fetch(window(2000, 1000));
  ASSERT_FALSE(backwards.isOk());
  EXPECT_NE(backwards.status().message().find("before from_time"), std::string::npos);
}

TEST(TelemetryJournal, RetentionDeletesReadingsPastTheAgeAndSizeBounds) {
  TempDir dir;
  TelemetryJournalOptions options;
  options.maxAgeDays = 1;
  options.maxBytes = 0;
  const double now = 10 * 86400.0;
  auto journal = openJournal(dir.path() + "/telemetry.sqlite", options);
  ASSERT_TRUE(journal);
  appendAt(*journal, now - 2 * 86400, 5);  // two days old
  appendAt(*journal, now - 100, 5);        // fresh
  auto report = journal->applyRetention(now);
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->byAge, 5u);
  EXPECT_EQ(report->bySize, 0u);
  EXPECT_EQ(journal->entries(), 5u);
  auto page = journal->fetch(window(0, 0));
  ASSERT_TRUE(page.isOk());
  ASSERT_EQ(page->entries_size(), 5);
  EXPECT_EQ(page->entries(0).seq(), 6u);
  EXPECT_EQ(page->oldest_time(), now - 100);

  // The size bound: the oldest go first, until the rest fit.
  const uint64_t perReading = journal->bytes() / journal->entries();
  journal.reset();
  options.maxAgeDays = 0;
  options.maxBytes = perReading * 3;
  journal = openJournal(dir.path() + "/telemetry.sqlite", options);
  report = journal->applyRetention(now);
  ASSERT_TRUE(report.isOk());
  EXPECT_EQ(report->bySize, 2u);
  EXPECT_LE(journal->bytes(), options.maxBytes);
  page = journal->fetch(window(0, 0));
  ASSERT_EQ(page->entries_size(), 3);
  EXPECT_EQ(page->entries(0).seq(), 8u);

  // A seq is never given twice, also once retention deleted everything.
  options.maxBytes = 1;
  journal.reset();
  journal = openJournal(dir.path() + "/telemetry.sqlite", options);
  ASSERT_TRUE(journal->applyRetention(now).isOk());
  EXPECT_EQ(journal->entries(), 0u);
  v1::NodeTelemetry next = reading(now);
  ASSERT_TRUE(journal->append(next).isOk());
  EXPECT_EQ(next.seq(), 11u);
}

// A crash of the machine while the last reading was being written leaves a torn WAL tail: the
// copy of the files taken while the journal is open is what a crash leaves on disk; tearing the
// last bytes of its WAL loses that last reading and never the ones before it.
TEST(TelemetryJournal, TornWalTailLosesOnlyTheLastReading) {
  TempDir dir;
  const std::string path = dir.path() + "/telemetry.sqlite";
  auto journal = openJournal(path);
  ASSERT_TRUE(journal);
  appendAt(*journal, 1000, 40);
  ASSERT_TRUE(fs::exists(path + "-wal"));

  const std::string crashed = dir.path() + "/crashed";
  fs::create_directories(crashed);
  fs::copy_file(path, crashed + "/telemetry.sqlite");
  fs::copy_file(path + "-wal", crashed + "/telemetry.sqlite-wal");
  const auto walSize = fs::file_size(crashed + "/telemetry.sqlite-wal");
  fs::resize_file(crashed + "/telemetry.sqlite-wal", walSize - 100);

  auto reopened = openJournal(crashed + "/telemetry.sqlite");
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->entries(), 39u);
  auto page = reopened->fetch(window(0, 0));
  ASSERT_TRUE(page.isOk()) << page.status().toString();
  ASSERT_EQ(page->entries_size(), 39);
  for (int i = 0; i < 39; ++i) {
    EXPECT_EQ(page->entries(i).seq(), static_cast<uint64_t>(i + 1));
    EXPECT_EQ(page->entries(i).SerializeAsString(), [&] {
      v1::NodeTelemetry expected = reading(1000 + i);
      expected.set_seq(static_cast<uint64_t>(i + 1));
      return expected.SerializeAsString();
    }());
  }
  // Journaling goes on after the last reading kept.
  v1::NodeTelemetry next = reading(2000);
  ASSERT_TRUE(reopened->append(next).isOk());
  EXPECT_EQ(next.seq(), 40u);
}

TEST(TelemetryJournal, DamagedFileIsMovedAsideAndAnEmptyJournalStarted) {
  TempDir dir;
  const std::string path = dir.path() + "/telemetry.sqlite";
  {
    auto journal = openJournal(path);
    ASSERT_TRUE(journal);
    appendAt(*journal, 1000, 300);
  }
  // Zero a page in the middle of the file (the header stays, so SQLite opens it).
  ASSERT_GT(fs::file_size(path), 3u * 4096);
  {
    FILE* file = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(file, nullptr);
    std::fseek(file, 2 * 4096, SEEK_SET);
    const std::vector<char> zeros(4096, '\xff');
    std::fwrite(zeros.data(), 1, zeros.size(), file);
    std::fclose(file);
  }
  std::string movedTo;
  auto journal = TelemetryJournal::open(path, {}, &movedTo);
  ASSERT_TRUE(journal.isOk()) << journal.status().toString();
  EXPECT_FALSE(movedTo.empty());
  EXPECT_TRUE(fs::exists(movedTo));
  EXPECT_EQ((*journal)->entries(), 0u);
}

}  // namespace
}  // namespace ringside::agent
