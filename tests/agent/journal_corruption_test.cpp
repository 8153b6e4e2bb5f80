// Regression tests of corruption that went unnoticed for the agent's journal:
// a file with flipped bytes is found at open and moved aside (never written to), one run record
// that does not parse no longer hides every run, and damage met while running is reported as
// such and stops all writes. docs/journal.md, "Damaged journals".
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "journal_damage.h"
#include "ringside/agent/journal.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;
using damage::fillJournal;
using damage::markerOf;
using damage::nowSeconds;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class JournalCorruption : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (fs::temp_directory_path() /
            ("ringside_corruption_" + std::string(info->name()) + "_" + std::to_string(getpid())))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = dir_ + "/journal.sqlite";
    options_.log = [this](const char* level, const std::string& text) {
      logged_.emplace_back(level, text);
    };
  }
  void TearDown() override {
    if (!immutableDir_.empty()) (void)std::system(("chattr -i '" + immutableDir_ + "'").c_str());
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }

  std::unique_ptr<Journal> open() {
    auto journal = Journal::open(path_, options_);
    EXPECT_TRUE(journal.isOk()) << journal.status().toString();
    return journal.isOk() ? std::move(journal).value() : nullptr;
  }

  // The lines logged at `level`.
  std::vector<std::string> logged(const std::string& level) const {
    std::vector<std::string> lines;
    for (const auto& [at, text] : logged_) {
      if (at == level) lines.push_back(text);
    }
    return lines;
  }

  // Flips the header of a metric_samples leaf page in the middle of the file's and checks that
  // SQLite's own check finds it, so what the test asserts next is about real damage.
  void flipASamplesPage() {
    damage::checkpoint(path_);
    const std::vector<int64_t> pages = damage::leafPages(path_, "metric_samples");
    ASSERT_GT(pages.size(), 10u);
    damage::flipPageHeader(path_, pages[pages.size() / 2], damage::pageSize(path_));
    ASSERT_FALSE(damage::isSound(path_)) << "integrity_check must see the damage";
  }

  // Commits one row that stays in the WAL (closing leaves the WAL unmerged), so that the file
  // comes with a -wal and a -shm that belong to it.
  void leaveAWal() {
    {
      damage::RawDb db(path_);
      db.exec("INSERT INTO metric_keys (name) VALUES ('only/in-the-wal')");
    }
    ASSERT_TRUE(fs::exists(path_ + "-wal"));
    ASSERT_TRUE(fs::exists(path_ + "-shm"));
  }

  std::string dir_, path_;
  std::string immutableDir_;
  JournalOptions options_;
  std::vector<std::pair<std::string, std::string>> logged_;
};

TEST_F(JournalCorruption, FlippedBytesAreFoundAtStartAndTheFileQuarantined) {
  ASSERT_NO_FATAL_FAILURE(fillJournal(path_, 20, 3000));
  ASSERT_NO_FATAL_FAILURE(flipASamplesPage());
  ASSERT_NO_FATAL_FAILURE(leaveAWal());
  const std::string damagedFile = damage::readBytes(path_);
  const std::string damagedWal = damage::readBytes(path_ + "-wal");

  auto journal = open();
  ASSERT_NE(journal, nullptr);
  const std::string moved = journal->health().quarantinedTo;
  EXPECT_TRUE(std::regex_match(
      moved, std::regex(std::regex_replace(path_, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                        R"(\.corrupt-\d{8}T\d{6}Z)")))
      << moved;
  // Moved as found, with its -wal and -shm, under names SQLite pairs with it.
  EXPECT_EQ(damage::readBytes(moved), damagedFile);
  EXPECT_EQ(damage::readBytes(moved + "-wal"), damagedWal);
  EXPECT_TRUE(fs::exists(moved + "-shm"));

  const std::vector<std::string> errors = logged("error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(contains(errors[0], "journal " + path_ + " is damaged")) << errors[0];
  EXPECT_TRUE(contains(errors[0], "integrity_check found")) << errors[0];
  EXPECT_TRUE(contains(errors[0], "moved it, with its -wal and -shm files, to " + moved))
      << errors[0];
  EXPECT_TRUE(contains(errors[0], "sqlite3 " + moved + " .recover")) << errors[0];

  // An empty journal took its place, and new runs go there.
  auto runs = journal->loadRuns(false);
  ASSERT_TRUE(runs.isOk()) << runs.status().toString();
  EXPECT_TRUE(runs->empty());
  v1::RunInfo fresh;
  fresh.set_run_id("after-the-damage");
  fresh.set_state(v1::RUNNING);
  ASSERT_TRUE(journal->appendStateEvent(fresh).isOk());
  ASSERT_TRUE(journal->appendLogLines("after-the-damage", {v1::LogLine()}).isOk());
  journal.reset();

  EXPECT_EQ(damage::readBytes(moved), damagedFile) << "nothing is written into a damaged file";
  EXPECT_TRUE(damage::isSound(path_));
  damage::RawDb fresh_db(path_);
  EXPECT_EQ(fresh_db.column("SELECT run_id FROM runs"),
            std::vector<std::string>{"after-the-damage"});
  EXPECT_TRUE(fresh_db.column("SELECT 1 FROM metric_keys WHERE name = 'only/in-the-wal'").empty());
  damage::RawDb moved_db(moved);  // the moved WAL is still read with the moved file
  EXPECT_EQ(moved_db.column("SELECT count(*) FROM metric_keys WHERE name = 'only/in-the-wal'"),
            std::vector<std::string>{"1"});
}

// A journal whose WAL holds `rows` transactions of one metric_keys row each ("<prefix><i>"),
// left unmerged, with a page size of 4096: frame i (1-based) is 32 + (i - 1) * (24 + 4096).
void writeTransactionsIntoTheWal(const std::string& path, int rows,
                                 const std::string& prefix = "wal-row-") {
  damage::RawDb db(path);  // the journal exists (created by open() before)
  for (int i = 0; i < rows; ++i) {
    db.exec("INSERT INTO metric_keys (name) VALUES ('" + prefix + std::to_string(i) + "')");
  }
}

TEST_F(JournalCorruption, ADamagedWalIsFoundSaidAndKeptAndTheJournalGoesOnFromWhatReplays) {
  { auto journal = open(); }
  writeTransactionsIntoTheWal(path_, 12);
  const std::string wal = path_ + "-wal";
  ASSERT_EQ(damage::pageSize(path_), 4096);
  const int64_t frameBytes = 24 + 4096;
  const int64_t frames = (static_cast<int64_t>(fs::file_size(wal)) - 32) / frameBytes;
  ASSERT_GE(frames, 12);
  // Bytes of a page in the middle of the log change: SQLite would replay up to there and drop
  // the transactions after it without a word.
  const int64_t bad = frames / 2;
  damage::writeAt(wal, 32 + (bad - 1) * frameBytes + 24 + 100, "DAMAGE");
  const std::string damaged = damage::readBytes(wal);
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  const auto errors = logged("error");
  ASSERT_EQ(errors.size(), 1u) << (errors.empty() ? "" : errors[0]);
  EXPECT_TRUE(contains(errors[0], "write-ahead log " + wal + " is damaged: frame " +
                                      std::to_string(bad) + " (byte " +
                                      std::to_string(32 + (bad - 1) * frameBytes) +
                                      ") fails its checksum"))
      << errors[0];
  EXPECT_TRUE(contains(errors[0], "cannot be replayed")) << errors[0];
  EXPECT_EQ(journal->health().walDamage, errors[0]);
  // The damaged log is kept as it was found.
  const std::regex copied("kept as (\\S+-wal\\.damaged-\\d{8}T\\d{6}Z)\\.");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(errors[0], match, copied)) << errors[0];
  EXPECT_EQ(damage::readBytes(match[1].str()), damaged);
  // The journal goes on from the transactions before the damage, and the damage, said once, is
  // not found again at the next open.
  journal.reset();
  logged_.clear();
  { auto again = open(); }
  EXPECT_TRUE(logged("error").empty()) << logged("error")[0];
  damage::RawDb db(path_);
  const auto rows = db.column("SELECT count(*) FROM metric_keys WHERE name LIKE 'wal-row-%'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GT(std::stoi(rows[0]), 0);
  EXPECT_LT(std::stoi(rows[0]), 12);
}

TEST_F(JournalCorruption, ASoundWalOrOneWithStaleFramesOrATornUncommittedTailSaysNothing) {
  { auto journal = open(); }
  writeTransactionsIntoTheWal(path_, 12);
  { auto journal = open(); }  // a sound log
  EXPECT_TRUE(logged("error").empty()) << logged("error")[0];
  // A checkpoint that restarts the log, then two transactions: they overwrite its first frames
  // with new salts and leave the older frames after them, stale, as SQLite does.
  writeTransactionsIntoTheWal(path_, 12, "second-");
  {
    damage::RawDb db(path_);
    db.exec("PRAGMA wal_checkpoint(RESTART)");
    db.exec("INSERT INTO metric_keys (name) VALUES ('after-restart-1')");
    db.exec("INSERT INTO metric_keys (name) VALUES ('after-restart-2')");
  }
  ASSERT_GT(fs::file_size(path_ + "-wal"), 32u + 4u * (24 + 4096));  // stale frames remain
  { auto journal = open(); }
  EXPECT_TRUE(logged("error").empty()) << logged("error")[0];
  // A torn last frame of a transaction that never committed (this log's salts, no commit mark,
  // a checksum that fails), then half a frame: nothing committed is lost.
  {
    damage::RawDb db(path_);
    db.exec("INSERT INTO metric_keys (name) VALUES ('before-the-tail')");
  }
  const std::string log = damage::readBytes(path_ + "-wal");
  ASSERT_GE(log.size(), 32u);
  std::string torn(24 + 4096, 'x');
  torn.replace(0, 8, std::string("\0\0\0\x02\0\0\0\0", 8));  // page 2, not a commit
  torn.replace(8, 8, log.substr(16, 8));                           // the log's salts
  const auto frames = (log.size() - 32) / (24 + 4096);
  damage::writeAt(path_ + "-wal", static_cast<int64_t>(32 + frames * (24 + 4096)), torn);
  std::ofstream(path_ + "-wal", std::ios::app | std::ios::binary) << std::string(1000, 'x');
  { auto journal = open(); }
  EXPECT_TRUE(logged("error").empty()) << logged("error")[0];
}

TEST_F(JournalCorruption, AWalWhoseHeaderIsDamagedLosesEveryFrameAndSaysSo) {
  { auto journal = open(); }
  writeTransactionsIntoTheWal(path_, 3);
  damage::writeAt(path_ + "-wal", 16, "XXXX");  // salt-1: the header's checksum fails
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  const auto errors = logged("error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(contains(errors[0], "its header fails its checksum, so none of its")) << errors[0];
}

TEST_F(JournalCorruption, ADamagedJournalThatCannotBeMovedAsideIsRefusedWithWhatToDo) {
  ASSERT_NO_FATAL_FAILURE(fillJournal(path_, 20, 3000));
  ASSERT_NO_FATAL_FAILURE(flipASamplesPage());
  ASSERT_NO_FATAL_FAILURE(leaveAWal());  // SQLite needs no new file in the directory to read it
  // A directory the agent cannot rename in. Root ignores modes, not the immutable attribute.
  if (::geteuid() == 0) {
    if (std::system(("chattr +i '" + dir_ + "' 2>/dev/null").c_str()) != 0) {
      GTEST_SKIP() << "running as root and chattr +i is not available here";
    }
    immutableDir_ = dir_;
  } else {
    fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  }
  const std::string damagedFile = damage::readBytes(path_);

  auto journal = Journal::open(path_, options_);
  ASSERT_FALSE(journal.isOk());
  EXPECT_EQ(journal.status().code(), Status::Code::kCorruption);
  const std::string& message = journal.status().message();
  EXPECT_TRUE(contains(message, "journal " + path_ + " is damaged (PRAGMA integrity_check found"))
      << message;
  EXPECT_TRUE(contains(message, "could not be moved aside: cannot move")) << message;
  EXPECT_TRUE(contains(message, "Move it away yourself")) << message;
  EXPECT_EQ(damage::readBytes(path_), damagedFile) << "a refused file is left as it was";
}

TEST_F(JournalCorruption, OneRunRecordThatDoesNotParseIsSkippedAndTheOthersListed) {
  ASSERT_NO_FATAL_FAILURE(fillJournal(path_, 10, 100));
  ASSERT_NO_FATAL_FAILURE(damage::breakRunInfo(path_, markerOf(3)));
  // The b-trees are intact: this is the one-bad-row case, not a damaged file.
  ASSERT_TRUE(damage::isSound(path_));

  auto journal = open();
  ASSERT_NE(journal, nullptr);
  EXPECT_TRUE(journal->health().quarantinedTo.empty());
  for (int listing = 0; listing < 3; ++listing) {
    auto runs = journal->loadRuns(false);
    ASSERT_TRUE(runs.isOk()) << runs.status().toString();
    ASSERT_EQ(runs->size(), 9u);
    for (const StoredRun& run : *runs) EXPECT_NE(run.info.run_id(), "run-3");
  }
  EXPECT_EQ(journal->health().unreadableRuns, 1u);
  const std::vector<std::string> warnings = logged("warning");
  ASSERT_EQ(warnings.size(), 1u) << "reported once, not at every listing";
  EXPECT_TRUE(contains(warnings[0], "run run-3 in journal " + path_ +
                                        " cannot be read: its "
                                        "RunInfo"))
      << warnings[0];

  auto bad = journal->findRun("run-3");
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), Status::Code::kCorruption);
  EXPECT_TRUE(contains(bad.status().message(), "run run-3")) << bad.status().message();
  auto page = journal->fetchSince("run-4", 0);
  ASSERT_TRUE(page.isOk()) << page.status().toString();
  EXPECT_EQ(page->samples_size(), 100);
  // One bad row is not a damaged file: writing goes on.
  EXPECT_FALSE(journal->health().damaged);
  v1::RunInfo next;
  next.set_run_id("run-new");
  next.set_state(v1::QUEUED);
  ASSERT_TRUE(journal->upsertRun(next).isOk());
  EXPECT_EQ(journal->loadRuns(false)->size(), 10u);
}

TEST_F(JournalCorruption, ANullOrAWrongTypeInARunRowSkipsOnlyThatRun) {
  ASSERT_NO_FATAL_FAILURE(fillJournal(path_, 6, 100));
  {
    damage::RawDb db(path_);
    db.exec("UPDATE runs SET info = 42 WHERE run_id = 'run-1'");  // BLOB affinity keeps 42
    // NOT NULL forbids NULL; a damaged schema (here: edited) lets one in.
    db.exec(
        "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, "
        "'last_seq     INTEGER NOT NULL', 'last_seq     INTEGER') WHERE name = 'runs'; "
        "PRAGMA writable_schema = OFF");
  }
  {
    damage::RawDb db(path_);
    ASSERT_FALSE(contains(db.column("SELECT sql FROM sqlite_schema WHERE name = 'runs'").front(),
                          "last_seq     INTEGER NOT NULL"));
    db.exec("UPDATE runs SET last_seq = NULL WHERE run_id = 'run-2'");
  }
  damage::checkpoint(path_);
  ASSERT_TRUE(damage::isSound(path_));

  auto journal = open();
  ASSERT_NE(journal, nullptr);
  auto runs = journal->loadRuns(false);
  ASSERT_TRUE(runs.isOk()) << runs.status().toString();
  std::vector<std::string> listed;
  for (const StoredRun& run : *runs) listed.push_back(run.info.run_id());
  EXPECT_EQ(listed, (std::vector<std::string>{"run-0", "run-3", "run-4", "run-5"}));
  EXPECT_EQ(journal->health().unreadableRuns, 2u);
  const std::vector<std::string> warnings = logged("warning");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_TRUE(contains(warnings[0], "run run-1 in journal " + path_ +
                                        " cannot be read: its info column holds an integer"))
      << warnings[0];
  EXPECT_TRUE(contains(warnings[1],
                       "run run-2 in journal " + path_ + " cannot be read: its last_seq is NULL"))
      << warnings[1];
  // Re-adoption after a restart lists the active runs the same way.
  EXPECT_TRUE(journal->loadRuns(true).isOk());
}

TEST_F(JournalCorruption, DamageFoundWhileRunningIsReportedAsSuchAndNothingMoreIsWritten) {
  ASSERT_NO_FATAL_FAILURE(fillJournal(path_, 5, 3000));
  damage::checkpoint(path_);
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->health().quarantinedTo.empty());
  // The disk goes bad under the running journal: every samples leaf page.
  const int64_t pageSize = damage::pageSize(path_);
  for (int64_t page : damage::leafPages(path_, "metric_samples")) {
    damage::flipPageHeader(path_, page, pageSize);
  }
  ASSERT_FALSE(damage::isSound(path_));

  auto page = journal->fetchSince("run-2", 0, 50000);
  ASSERT_FALSE(page.isOk());
  EXPECT_EQ(page.status().code(), Status::Code::kCorruption);
  const std::string& message = page.status().message();
  EXPECT_TRUE(contains(message, "journal " + path_ +
                                    " is damaged: reading the entries of run "
                                    "run-2 failed"))
      << message;
  EXPECT_TRUE(contains(message, "Restart the agent")) << message;
  EXPECT_TRUE(journal->health().damaged);

  const auto walBefore = fs::file_size(path_ + "-wal");
  v1::RunInfo next;
  next.set_run_id("run-new");
  next.set_state(v1::QUEUED);
  const Status refused = journal->upsertRun(next);
  EXPECT_EQ(refused.code(), Status::Code::kCorruption);
  EXPECT_TRUE(contains(refused.message(), "Nothing more is written to it")) << refused.message();
  EXPECT_EQ(journal->appendLogLines("run-1", {v1::LogLine()}).status().code(),
            Status::Code::kCorruption);
  bool ran = false;
  EXPECT_EQ(journal->inTransaction([&] { ran = true; }).code(), Status::Code::kCorruption);
  EXPECT_FALSE(ran);
  EXPECT_EQ(fs::file_size(path_ + "-wal"), walBefore);
  EXPECT_EQ(logged("error").size(), 1u) << "reported once";
  // What can still be read is still served.
  auto runs = journal->loadRuns(false);
  ASSERT_TRUE(runs.isOk()) << runs.status().toString();
  EXPECT_EQ(runs->size(), 5u);
}

}  // namespace
}  // namespace ringside::agent
