// stored_bytes_bench: bytes stored per logged step of a trainer run at R ranks, in the agent's
// journal, in the GUI's store and in the run's log files, with rank 0's printed metrics records
// journaled as log lines (every agent before they were parsed as records) and without (now).
//
// For each world size R (--ranks, default 8,512) and each of the two ways, a fresh directory gets
// what a `ringside-trainer` run of R ranks logging every step leaves, built with the project's
// own code:
//  - samples: every rank's per-rank record (7 values: train/loss, time/step_ms,
//    time/compute_ms, time/allreduce_ms, time/exposed_comm_ms, time/data_ms, time/wait_ms) and
//    rank 0's global record (10 values), sent as the trainer's ZmqMetricSink batches them (a
//    batch per rank per 10 steps: a 100 ms flush at a 10 ms step) and journaled with
//    Journal::appendRankMetrics, as the agent does: 7 R + 10 samples per step;
//  - rank 0's output, as mpirun --tag-output writes it into the run's files: stdout.log gets the
//    start record, then per step the global record and every rank's record (the trainer's own
//    trainer::toJson, values with the digits of real timings), stderr.log the progress line;
//  - log lines: before, every line of both files journaled as a log line (logLineText: what the
//    agent's LogTailer did for a trainer run); now, the agent's LogTailer with
//    StdoutRecords::kSentToSink reads them;
//  - the GUI side: the journal fetched from seq 0 with Journal::fetchSince and ingested into a
//    gui::MetricsStore, as the GUI's catch-up does.
// Bytes are SQLite's own accounting (the dbstat virtual table: pages in use per table and index,
// WAL included) at step 0 and after the last step; bytes per step = the difference / steps. The
// log files' bytes are the same both ways (stdout.log stays the source of recovery).
// Checks: every sample sent is in the journal and in the store once; the store's log lines are
// the journal's; now, no log line is a metrics record.
// Usage: stored_bytes_bench [--ranks 8,512] [--steps 100] [--keep]. Exit status 0, 1 when a
// check failed, 2 usage.
#include <sqlite3.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QTemporaryDir>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ringside/agent/journal.h"
#include "ringside/agent/log_tailer.h"
#include "ringside/common/metric_names.h"
#include "ringside/gui/metrics_store.h"
#include "ringside/trainer/metrics_sink.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ringside::v1;
using ringside::Status;
using ringside::agent::Journal;
using ringside::agent::LogTailer;
using ringside::agent::StdoutRecords;

const char* const kRankRecord[] = {ringside::metric::kTrainLoss,     ringside::metric::kStepMs,
                                   ringside::metric::kComputeMs,     ringside::metric::kAllreduceMs,
                                   ringside::metric::kExposedCommMs, ringside::metric::kDataMs,
                                   ringside::metric::kWaitMs};
const char* const kGlobalRecord[] = {
    ringside::metric::kTrainLoss,        ringside::metric::kTrainLr,
    ringside::metric::kTrainSamplesPerS, ringside::metric::kStepMs,
    ringside::metric::kComputeMs,        ringside::metric::kAllreduceMs,
    ringside::metric::kExposedCommMs,    ringside::metric::kCommBytes,
    ringside::metric::kCommAlgbw,        ringside::metric::kCommBusbw};
constexpr int kStepsPerBatch = 10;
const std::string kRunId = "stored-bytes";

// Bytes in use per table or index (dbstat, WAL included), keyed by name.
std::map<std::string, int64_t> tableBytes(const std::string& path) {
  std::map<std::string, int64_t> bytes;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* query = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT name, SUM(pgsize - unused) FROM dbstat GROUP BY name", -1,
                           &query, nullptr) == SQLITE_OK) {
      while (sqlite3_step(query) == SQLITE_ROW) {
        bytes[reinterpret_cast<const char*>(sqlite3_column_text(query, 0))] =
            sqlite3_column_int64(query, 1);
      }
    }
    sqlite3_finalize(query);
  }
  sqlite3_close(db);
  return bytes;
}

int64_t sum(const std::map<std::string, int64_t>& bytes) {
  int64_t total = 0;
  for (const auto& [name, size] : bytes) total += size;
  return total;
}

int64_t fileBytes(const std::string& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  return error ? 0 : static_cast<int64_t>(size);
}

struct Figures {
  int64_t samples = 0;   // sent
  int64_t logLines = 0;  // journaled
  double journalPerStep = 0, journalLogPerStep = 0;
  double storePerStep = 0, storeLogPerStep = 0;
  double filesPerStep = 0;
  std::string problem;  // a failed check
};

class Run {
 public:
  Run(std::string dir, int ranks, bool recordsAsLines)
      : dir_(std::move(dir)), runDir_(dir_ + "/run"), ranks_(ranks), asLines_(recordsAsLines) {
    fs::create_directories(runDir_);
  }

  Figures measure(int steps) {
    Figures figures;
    auto journal = Journal::open(dir_ + "/journal.sqlite");
    if (!journal.isOk()) return failed(journal.status().toString());
    journal_ = std::move(journal).value();
    v1::RunInfo info;
    info.set_run_id(kRunId);
    info.set_state(v1::RUNNING);
    info.set_world_size(static_cast<uint32_t>(ranks_));
    info.set_run_dir(runDir_);
    if (Status s = journal_->upsertRun(info); !s.isOk()) return failed(s.toString());
    store_ = std::make_unique<ringside::gui::MetricsStore>(QString::fromStdString(dir_) +
                                                           "/ringside.sqlite");
    if (Status s = store_->open().result(); !s.isOk()) return failed(s.toString());
    tailer_ = std::make_unique<LogTailer>(runDir_, StdoutRecords::kSentToSink);

    print("stdout", startRecord(steps));
    if (Status s = journalLines(); !s.isOk()) return failed(s.toString());
    if (Status s = ingest(); !s.isOk()) return failed(s.toString());
    const auto journal0 = tableBytes(dir_ + "/journal.sqlite");
    const auto store0 = tableBytes(dir_ + "/ringside.sqlite");
    const int64_t files0 = fileBytes(runDir_ + "/stdout.log") + fileBytes(runDir_ + "/stderr.log");

    std::vector<v1::RankMetrics> batches(ranks_);
    for (int step = 1; step <= steps; ++step) {
      const double wall = 1.8e9 + step * 0.01;
      for (int rank = 0; rank < ranks_; ++rank) {
        v1::RankMetrics& batch = batches[rank];
        for (const char* name : kRankRecord) add(batch, name, step, wall, false);
        if (rank == 0) {
          for (const char* name : kGlobalRecord) add(batch, name, step, wall, true);
        }
      }
      printStep(step, wall, steps);
      if (step % kStepsPerBatch == 0 || step == steps) {
        for (int rank = 0; rank < ranks_; ++rank) {
          v1::RankMetrics& batch = batches[rank];
          batch.set_run_id(kRunId);
          batch.set_rank(rank);
          batch.set_batch_seq(++batchSeq_);
          figures.samples += batch.points_size();
          auto appended = journal_->appendRankMetrics(batch);
          if (!appended.isOk()) return failed(appended.status().toString());
          batch.Clear();
        }
        if (Status s = journalLines(); !s.isOk()) return failed(s.toString());
      }
    }
    if (Status s = ingest(); !s.isOk()) return failed(s.toString());
    const auto journal1 = tableBytes(dir_ + "/journal.sqlite");
    const auto store1 = tableBytes(dir_ + "/ringside.sqlite");
    const int64_t files1 = fileBytes(runDir_ + "/stdout.log") + fileBytes(runDir_ + "/stderr.log");
    auto perStep = [steps](int64_t before, int64_t after) {
      return static_cast<double>(after - before) / steps;
    };
    auto tableOf = [](const std::map<std::string, int64_t>& bytes, const char* name) {
      const auto it = bytes.find(name);
      return it == bytes.end() ? int64_t{0} : it->second;
    };
    figures.journalPerStep = perStep(sum(journal0), sum(journal1));
    figures.journalLogPerStep =
        perStep(tableOf(journal0, "log_lines"), tableOf(journal1, "log_lines"));
    figures.storePerStep = perStep(sum(store0), sum(store1));
    figures.storeLogPerStep = perStep(tableOf(store0, "logs"), tableOf(store1, "logs"));
    figures.filesPerStep = perStep(files0, files1);
    figures.logLines = logLines_;
    figures.problem = check(figures.samples);
    store_.reset();
    journal_.reset();
    return figures;
  }

 private:
  Figures failed(const std::string& why) {
    Figures figures;
    figures.problem = why;
    return figures;
  }

  // A value with the digits of a real timing or loss (the JSON text's length depends on them).
  double value() { return std::uniform_real_distribution<double>(0.05, 3.0)(random_); }

  void add(v1::RankMetrics& batch, const char* name, int step, double wall, bool global) {
    v1::RankMetricPoint* point = batch.add_points();
    point->set_step(step);
    point->set_epoch(step / 1000);
    point->set_wall_time(wall);
    point->set_global(global);
    point->set_name(name);
    point->set_value(value());
  }

  std::string startRecord(int steps) const {
    nlohmann::json start = {
        {"type", "start"},         {"world_size", ranks_}, {"backend", "mpi"}, {"model", "mlp"},
        {"steps_per_epoch", 1000}, {"total_steps", steps}, {"first_step", 0},  {"time", 1.8e9}};
    return start.dump();
  }

  void print(const char* stream, const std::string& text) {
    std::ofstream(runDir_ + "/" + stream + ".log", std::ios::app)
        << "[1,0]<" << stream << ">:" << text << "\n";
  }

  // What the trainer's rank 0 prints at a logged step (trainer.cpp): the global record, every
  // rank's, then the progress line on stderr.
  void printStep(int step, double wall, int steps) {
    std::ostringstream out;
    ringside::trainer::MetricRecord record{step, step / 1000, wall, std::nullopt, {}};
    for (const char* name : kGlobalRecord) record.values.emplace_back(name, value());
    out << "[1,0]<stdout>:" << ringside::trainer::toJson(record).dump() << "\n";
    for (int rank = 0; rank < ranks_; ++rank) {
      record.rank = rank;
      record.values.clear();
      for (const char* name : kRankRecord) record.values.emplace_back(name, value());
      out << "[1,0]<stdout>:" << ringside::trainer::toJson(record).dump() << "\n";
    }
    std::ofstream(runDir_ + "/stdout.log", std::ios::app) << out.str();
    char line[256];
    std::snprintf(line, sizeof line,
                  "epoch 1/1  step %d/%d  loss %.4f  lr %.4g  %.0f samples/s  step %.2f ms "
                  "(allreduce %.2f, exposed %.2f)  eta %.0fs",
                  step, steps, value(), 0.1, 123456.0, 10.0, 0.25, 0.05, 10.0);
    print("stderr", line);
  }

  // The new lines of both files into the journal: as the agent's tailer does now, or every line
  // as a log line (its text as logLineText makes it), as it did before.
  Status journalLines() {
    std::vector<v1::LogLine> lines;
    if (asLines_) {
      for (int s = 0; s < 2; ++s) {
        const char* stream = s == 0 ? "stdout" : "stderr";
        std::ifstream in(runDir_ + "/" + stream + ".log");
        in.seekg(static_cast<std::streamoff>(read_[s]));
        std::string raw;
        while (std::getline(in, raw)) {
          read_[s] += raw.size() + 1;
          v1::LogLine line;
          line.set_wall_time(1.8e9);
          line.set_stream(stream);
          line.set_text(ringside::agent::logLineText(raw));
          lines.push_back(std::move(line));
        }
      }
    } else {
      for (LogTailer::Chunk chunk = tailer_->poll();; chunk = tailer_->poll()) {
        lines.insert(lines.end(), chunk.lines.begin(), chunk.lines.end());
        tailer_->commit();
        if (!chunk.more) break;
      }
    }
    if (lines.empty()) return Status::ok();
    logLines_ += static_cast<int64_t>(lines.size());
    return journal_->appendLogLines(kRunId, lines).status();
  }

  // The journal from where the store is into the store, page by page (the GUI's catch-up).
  Status ingest() {
    for (bool more = true; more;) {
      auto page = journal_->fetchSince(kRunId, fetched_);
      if (!page.isOk()) return page.status();
      ringside::gui::IngestBatch batch;
      batch.runId = QString::fromStdString(kRunId);
      batch.nodeId = QStringLiteral("node");
      batch.samples.assign(page->samples().begin(), page->samples().end());
      batch.logLines.assign(page->log_lines().begin(), page->log_lines().end());
      batch.states.assign(page->states().begin(), page->states().end());
      fetched_ = std::max<uint64_t>(fetched_, page->last_seq());
      more = page->more();
      auto stored = store_->ingest(std::move(batch)).result();
      if (!stored.isOk()) return stored.status();
    }
    return Status::ok();
  }

  std::string check(int64_t sent) {
    auto samples = store_->sampleCount(QString::fromStdString(kRunId)).result();
    if (!samples.isOk()) return samples.status().toString();
    if (*samples != sent) {
      return "the store holds " + std::to_string(*samples) + " samples of " + std::to_string(sent);
    }
    auto lines = store_->logTail(QString::fromStdString(kRunId), 1'000'000).result();
    if (!lines.isOk()) return lines.status().toString();
    if (static_cast<int64_t>(lines->size()) != logLines_) {
      return "the store holds " + std::to_string(lines->size()) + " log lines of " +
             std::to_string(logLines_);
    }
    if (!asLines_) {
      for (const v1::LogLine& line : *lines) {
        const std::string& text = line.text();
        const size_t body = text.starts_with("[rank ") ? text.find("] ") + 2 : 0;
        if (ringside::agent::isMetricsRecord(text.substr(body))) {
          return "a metrics record is a log line: " + text.substr(0, 80);
        }
      }
    }
    return {};
  }

  std::string dir_, runDir_;
  int ranks_;
  bool asLines_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<ringside::gui::MetricsStore> store_;
  std::unique_ptr<LogTailer> tailer_;
  std::mt19937_64 random_{28};
  uint64_t batchSeq_ = 0;
  uint64_t read_[2] = {0, 0};
  uint64_t fetched_ = 0;
  int64_t logLines_ = 0;
};

std::string bytes(double value) {
  const long long whole = std::llround(value);
  std::string digits = std::to_string(whole < 0 ? -whole : whole);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return (whole < 0 ? "-" : "") + grouped;
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  std::vector<int> ranks = {8, 512};
  int steps = 100;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ranks" && i + 1 < argc) {
      ranks.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');)
        ranks.push_back(std::atoi(item.c_str()));
    } else if (arg == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--keep") {
      keep = true;
    } else {
      std::fprintf(stderr,
                   "usage: stored_bytes_bench [--ranks 8,512] [--steps 100] [--keep]\n"
                   "Bytes stored per logged step of a trainer run, with its metrics records "
                   "journaled as log lines (before) and not (now).\n");
      return 2;
    }
  }
  for (int r : ranks) {
    if (r < 1 || r > 65536) {
      std::fprintf(stderr, "stored_bytes_bench: --ranks: use world sizes from 1 to 65536\n");
      return 2;
    }
  }
  if (steps < 1) {
    std::fprintf(stderr, "stored_bytes_bench: --steps: use at least 1\n");
    return 2;
  }
  QTemporaryDir temp;
  temp.setAutoRemove(!keep);
  if (keep) std::fprintf(stderr, "stored_bytes_bench: keeping %s\n", qPrintable(temp.path()));

  std::printf(
      "stored_bytes_bench: %d logged steps per run; bytes per step (dbstat, WAL included)\n\n",
      steps);
  std::printf(
      "| ranks | metrics records | samples per step | log lines per step | journal (of it log "
      "lines) | GUI store (of it log lines) | stdout.log + stderr.log | all | check |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  bool ok = true;
  for (int r : ranks) {
    double all[2] = {0, 0};
    for (int way = 0; way < 2; ++way) {
      const bool asLines = way == 0;
      const std::string dir =
          temp.path().toStdString() + "/r" + std::to_string(r) + (asLines ? "-before" : "-now");
      Run run(dir, r, asLines);
      const Figures f = run.measure(steps);
      all[way] = f.journalPerStep + f.storePerStep + f.filesPerStep;
      ok = ok && f.problem.empty();
      std::printf("| %d | %s | %s | %s | %s (%s) | %s (%s) | %s | %s | %s |\n", r,
                  asLines ? "log lines too (before)" : "not log lines (now)",
                  bytes(static_cast<double>(f.samples) / steps).c_str(),
                  bytes(static_cast<double>(f.logLines) / steps).c_str(),
                  bytes(f.journalPerStep).c_str(), bytes(f.journalLogPerStep).c_str(),
                  bytes(f.storePerStep).c_str(), bytes(f.storeLogPerStep).c_str(),
                  bytes(f.filesPerStep).c_str(), bytes(all[way]).c_str(),
                  f.problem.empty() ? "PASS" : ("FAIL: " + f.problem).c_str());
    }
    std::printf("| %d | now / before | | | | | | %.2f | |\n", r, all[1] / all[0]);
  }
  return ok ? 0 : 1;
}
