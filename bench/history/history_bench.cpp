// history_bench: History at 10,000 runs, each figure against a reference
// measured in the same run.
//
//  1. Agent, ListRuns: a journal (agent/.../journal.h) with N runs (100 and 10,000; each with a
//     few metric samples of rank 0, params, and its final state), listed from the first page to
//     the last with listRunsPage(journal, ...) as the agent's control loop answers ListRuns, at
//     the protocol's page budget (8 MiB) and at a small one (--page-kib, many pages). Printed:
//     the time of the whole listing and per page. Baseline: what the agent did before, every
//     run loaded (Journal::loadRuns) for each page. Reference: a raw SQLite SELECT of the same
//     rows (run_key, info, last_seq, pid, pgid, run_id) in key order through the sqlite3 C API.
//     Checks: every run listed exactly once, in key order.
//  2. GUI, History: a MetricsStore (through the GUI's Controller, no agent) with N runs stored
//     with the GUI's own calls (upsertRuns, ingest of train/loss, test/accuracy and
//     train/samples_per_s of 5 steps), then a HistoryPanel (offscreen, 1280 x 800) from
//     construction until every run is in the table and the panel has painted; filter keystrokes
//     (the filter box typed one letter at a time, then cleared) and the state filter, each until
//     painted; one run changing while History is open (a state upsert) until its row shows it;
//     a CompareView of 4 runs until loaded. Reference: a raw SQLite SELECT of the history
//     table's columns of every run (and one with the filter's LIKE) on the same file.
//     Checks: the table shows N runs; the filtered count equals the SQL's.
//
// Targets: each History/Compare open or filter step within 1 s at 10,000 runs; a ListRuns page
// costs what it holds (per-page time at 10,000 runs within 3x that at 100 runs).
// Exit status: 0 all passed, 1 a check failed, 2 usage error, 3 a target missed.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QPixmap>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>

#include <sqlite3.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ringside/agent/journal.h"
#include "ringside/agent/reply_pages.h"
#include "ringside/common/metric_names.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/metrics_store.h"
#include "ringside/gui/run_table_model.h"
#include "ringside/gui/widgets/compare_view.h"
#include "ringside/gui/widgets/history_panel.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool checksFailed = false;
bool targetMissed = false;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("CHECK FAILED: %s\n", what.c_str());
  checksFailed = true;
}

// A run as an agent reports it: a trainer-like spec with a name and tags, params, ended.
v1::RunInfo runInfoOf(int i, v1::RunState state) {
  v1::RunInfo info;
  info.set_run_id("run-" + std::to_string(100000 + i));
  info.set_state(state);
  info.set_world_size(2);
  info.set_created_time(1.7e9 + 60.0 * i);
  info.set_start_time(1.7e9 + 60.0 * i + 1);
  if (state != v1::RUNNING) info.set_end_time(1.7e9 + 60.0 * i + 50);
  info.set_run_dir("/var/lib/ringside/runs/" + info.run_id());
  v1::RunSpec& spec = *info.mutable_spec();
  spec.set_name("mlp-" + std::to_string(i % 97) + (i % 10 == 0 ? "-batch" : "-sweep"));
  spec.add_tags(i % 7 == 0 ? "baseline" : "sweep");
  spec.set_ranks_per_node(2);
  (*info.mutable_params())["lr"] = std::to_string(0.001 * (1 + i % 10));
  (*info.mutable_params())["batch_size"] = std::to_string(32 << (i % 4));
  (*info.mutable_params())["optimizer"] = i % 2 == 0 ? "\"sgd\"" : "\"adamw\"";
  return info;
}

v1::RunState endedStateOf(int i) {
  return i % 11 == 0 ? v1::FAILED : (i % 13 == 0 ? v1::STOPPED : v1::COMPLETED);
}

// --- 1. The agent's ListRuns -------------------------------------------------------------------

struct ListingFigures {
  int pages = 0;
  double newMs = 0;        // listRunsPage(journal): all pages
  double oldMs = 0;        // oldListRunsPage (every run loaded per page): all pages
  double rawSelectMs = 0;  // raw SQLite SELECT of every run row
};

std::unique_ptr<agent::Journal> filledJournal(const std::string& path, int runs) {
  auto opened = agent::Journal::open(path);
  if (!opened.isOk()) {
    std::printf("cannot open journal %s: %s\n", path.c_str(), opened.status().toString().c_str());
    std::exit(1);
  }
  std::unique_ptr<agent::Journal> journal = std::move(opened).value();
  for (int first = 0; first < runs; first += 500) {
    Status status = journal->inTransaction([&] {
      for (int i = first; i < std::min(runs, first + 500); ++i) {
        v1::RunInfo info = runInfoOf(i, v1::RUNNING);
        check(journal->upsertRun(info).isOk(), "upsertRun");
        v1::RankMetrics batch;
        batch.set_run_id(info.run_id());
        batch.set_rank(0);
        batch.set_batch_seq(1);
        for (int step = 1; step <= 5; ++step) {
          for (const char* name : {"train/loss", "time/step_ms"}) {
            v1::RankMetricPoint* point = batch.add_points();
            point->set_name(name);
            point->set_step(step);
            point->set_value(1.0 / step);
          }
        }
        check(journal->appendRankMetrics(batch).isOk(), "appendRankMetrics");
        info.set_state(endedStateOf(i));
        info.set_end_time(info.start_time() + 50);
        check(journal->appendStateEvent(info).isOk(), "appendStateEvent");
      }
    });
    check(status.isOk(), "filling the journal: " + status.toString());
  }
  return journal;
}

// Lists every page with `page(token)`; checks each run comes once in key order.
double listAll(const std::function<Result<v1::ListRunsReply>(const std::string&)>& page, int runs,
               int* pages) {
  const auto start = Clock::now();
  std::string token;
  int listed = 0;
  bool ordered = true;
  *pages = 0;
  do {
    auto reply = page(token);
    if (!reply.isOk()) {
      check(false, "listRunsPage: " + reply.status().toString());
      return 0;
    }
    ++*pages;
    for (const v1::RunInfo& run : reply->runs()) {
      ordered = ordered && run.run_id() == "run-" + std::to_string(100000 + listed);
      ++listed;
    }
    token = reply->next_page_token();
  } while (!token.empty());
  const double ms = msSince(start);
  check(listed == runs && ordered, "the pages list each of the " + std::to_string(runs) +
                                       " runs once in order (listed " + std::to_string(listed) +
                                       ")");
  return ms;
}

double rawSelectMs(const std::string& path, int runs) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  const auto start = Clock::now();
  sqlite3_prepare_v2(db,
                     "SELECT run_key, info, last_seq, pid, pgid, run_id FROM runs ORDER BY run_key",
                     -1, &stmt, nullptr);
  int rows = 0;
  size_t bytes = 0;
  std::string blob;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    blob.assign(static_cast<const char*>(sqlite3_column_blob(stmt, 1)),
                static_cast<size_t>(sqlite3_column_bytes(stmt, 1)));
    bytes += blob.size() + static_cast<size_t>(sqlite3_column_int64(stmt, 2) & 1);
    ++rows;
  }
  sqlite3_finalize(stmt);
  const double ms = msSince(start);
  sqlite3_close(db);
  check(rows == runs && bytes > 0, "raw SELECT reads every run");
  return ms;
}

// ListRuns as the agent answered it before it paged the journal (the reference): every run of the
// journal loaded for each page, then the page taken from that list, with listRunsPage's bounds
// (the runs after the token's key while they fit `budget`, at least one).
Result<v1::ListRunsReply> oldListRunsPage(agent::Journal& journal, const std::string& token,
                                          size_t budget) {
  auto all = journal.loadRuns(false);
  if (!all.isOk()) return all.status();
  int64_t after = token.empty() ? 0 : std::stoll(token);
  v1::ListRunsReply page;
  size_t bytes = 0;
  for (const agent::StoredRun& run : *all) {
    if (run.runKey <= after) continue;
    const size_t size = run.info.ByteSizeLong() + 8;
    if (page.runs_size() > 0 && bytes + size > budget) {
      page.set_next_page_token(std::to_string(after));
      break;
    }
    bytes += size;
    *page.add_runs() = run.info;
    after = run.runKey;
  }
  return page;
}

ListingFigures measureListing(const std::string& dir, int runs, size_t budget) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/journal-" + std::to_string(runs) + ".sqlite";
  std::unique_ptr<agent::Journal> journal = filledJournal(path, runs);
  ListingFigures figures;
  int pages = 0;
  (void)rawSelectMs(path, runs);  // warm the page cache for both
  figures.rawSelectMs = rawSelectMs(path, runs);
  figures.newMs = listAll(
      [&](const std::string& token) { return agent::listRunsPage(*journal, false, token, budget); },
      runs, &figures.pages);
  figures.oldMs =
      listAll([&](const std::string& token) { return oldListRunsPage(*journal, token, budget); },
              runs, &pages);
  check(pages == figures.pages, "both listings make the same pages");
  return figures;
}

// --- 2. The GUI's History and Compare ----------------------------------------------------------

// Runs the event loop until `done` or `timeoutMs`; false on timeout. Sleeps while no event is
// due (a 2 ms timer wakes it to check `done`), so the store's thread has the CPU it needs.
bool spinUntil(const std::function<bool()>& done, int timeoutMs = 120000) {
  QElapsedTimer timer;
  timer.start();
  QTimer wake;
  wake.start(2);
  while (!done()) {
    if (timer.elapsed() > timeoutMs) return false;
    QApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
  }
  return true;
}

// Every run stored as the controller stores a node's run list (slices of 256 runs), then each
// run's metrics as a catch-up page would bring them.
void fillStore(MetricsStore& store, int runs) {
  std::vector<QFuture<Result<std::vector<std::optional<uint64_t>>>>> listed;
  for (int first = 0; first < runs; first += 256) {
    std::vector<v1::RunInfo> slice;
    for (int i = first; i < std::min(runs, first + 256); ++i) {
      v1::RunInfo info = runInfoOf(i, endedStateOf(i));
      info.set_last_seq(16);
      slice.push_back(info);
    }
    listed.push_back(store.upsertRuns(QStringLiteral("node-0"), std::move(slice)));
  }
  std::vector<QFuture<Result<IngestResult>>> ingested;
  for (int i = 0; i < runs; ++i) {
    IngestBatch batch;
    batch.runId = QString::fromStdString(runInfoOf(i, v1::COMPLETED).run_id());
    batch.nodeId = QStringLiteral("node-0");
    uint64_t seq = 1;
    for (int step = 1; step <= 5; ++step) {
      for (const char* name :
           {metric::kTrainLoss, metric::kTestAccuracy, metric::kTrainSamplesPerS}) {
        v1::MetricSample sample;
        sample.set_seq(seq++);
        sample.set_step(step);
        sample.set_rank(-1);
        sample.set_wall_time(1.7e9 + 60.0 * i + step);
        sample.set_name(name);
        sample.set_value(std::string(name) == metric::kTrainSamplesPerS ? 1000.0 + i
                                                                        : 1.0 / (step + i % 5));
        batch.samples.push_back(sample);
      }
    }
    ingested.push_back(store.ingest(std::move(batch)));
  }
  for (auto& future : listed) {
    future.waitForFinished();
    check(future.result().isOk(), "upsertRuns");
  }
  for (auto& future : ingested) {
    future.waitForFinished();
    check(future.result().isOk(), "ingest");
  }
}

// The history table's columns of every run, newest first (what RunTableModel holds), and the
// count of runs whose name, id, tags or notes contain `text` (empty: all).
double rawHistorySelectMs(const QString& path, const QString& text, int* rows) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::string sql =
      "SELECT run_key, run_id, node_id, name, state, reason, exit_code, spec, config_json, "
      "world_size, created_time, start_time, end_time, last_seq, sample_count, tags, notes, "
      "final_loss, best_accuracy, samples_per_s_sum, samples_per_s_count, placement FROM runs";
  if (!text.isEmpty()) {
    sql += " WHERE name LIKE ?1 OR run_id LIKE ?1 OR tags LIKE ?1 OR notes LIKE ?1";
  }
  sql += " ORDER BY created_time DESC, run_key DESC";
  sqlite3_stmt* stmt = nullptr;
  const auto start = Clock::now();
  sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  const std::string pattern = "%" + text.toStdString() + "%";
  if (!text.isEmpty()) sqlite3_bind_text(stmt, 1, pattern.c_str(), -1, SQLITE_TRANSIENT);
  *rows = 0;
  std::vector<std::string> names;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3)));
    ++*rows;
  }
  sqlite3_finalize(stmt);
  const double ms = msSince(start);
  sqlite3_close(db);
  return ms;
}

struct HistoryFigures {
  double openMs = 0;
  double firstPaintMs = 0;  // construction until the first rows are painted
  std::vector<std::pair<QString, double>> filterSteps;  // filter text -> ms until painted
  double stateFilterMs = 0;
  double clearMs = 0;
  double changedRunMs = 0;  // one run's state changes until its row shows it
  double compareMs = 0;
  double rawSelectMs = 0;
  double rawFilterMs = 0;
};

void repaintNow(QWidget& widget) {
  QApplication::processEvents();
  (void)widget.grab();  // paints the visible rows offscreen
}

HistoryFigures measureHistory(Controller& controller, int runs) {
  HistoryFigures figures;
  const QString path = controller.store().databasePath();
  int rawRows = 0;
  (void)rawHistorySelectMs(path, {}, &rawRows);  // warm the page cache
  figures.rawSelectMs = rawHistorySelectMs(path, {}, &rawRows);
  check(rawRows == runs, "the raw SELECT reads every run");

  const auto start = Clock::now();
  HistoryPanel panel(controller);
  panel.resize(1280, 800);
  panel.show();
  bool painted = false;
  const bool opened = spinUntil([&] {
    if (!painted && panel.proxy()->rowCount() > 0) {
      repaintNow(panel);
      painted = true;
      figures.firstPaintMs = msSince(start);
    }
    return panel.model()->loaded() && panel.proxy()->rowCount() == runs;
  });
  repaintNow(panel);
  figures.openMs = msSince(start);
  check(opened, "History lists all " + std::to_string(runs) + " runs");

  auto* filter = panel.findChild<QLineEdit*>();
  const QString typed = QStringLiteral("batch");
  for (int n = 1; n <= typed.size(); ++n) {
    const QString text = typed.left(n);
    const auto step = Clock::now();
    filter->setText(text);
    repaintNow(panel);
    figures.filterSteps.emplace_back(text, msSince(step));
  }
  int rawFiltered = 0;
  figures.rawFilterMs = rawHistorySelectMs(path, typed, &rawFiltered);
  check(panel.proxy()->rowCount() == rawFiltered, "the filter shows the runs SQL finds (" +
                                                      std::to_string(panel.proxy()->rowCount()) +
                                                      " vs " + std::to_string(rawFiltered) + ")");
  auto* states = panel.findChild<QComboBox*>();
  auto step = Clock::now();
  states->setCurrentIndex(3);  // Failed
  repaintNow(panel);
  figures.stateFilterMs = msSince(step);
  states->setCurrentIndex(0);
  step = Clock::now();
  filter->clear();
  repaintNow(panel);
  figures.clearMs = msSince(step);
  check(panel.proxy()->rowCount() == runs, "clearing the filter shows every run again");

  // One run changes (a run list slice, as a reconnect brings it): its row shows the new state.
  const int changed = runs / 2;
  const QString changedId = QString::fromStdString(runInfoOf(changed, v1::COMPLETED).run_id());
  v1::RunInfo info = runInfoOf(changed, v1::STOPPED);
  info.mutable_spec()->set_name("renamed-run");
  step = Clock::now();
  (void)controller.store().upsertRun(QStringLiteral("node-0"), info);
  const bool shown = spinUntil([&] {
    const RunRecord* record = panel.model()->record(panel.model()->rowOfRun(changedId));
    return record != nullptr && record->name == QLatin1String("renamed-run");
  });
  repaintNow(panel);
  figures.changedRunMs = msSince(step);
  check(shown, "a changed run's row shows its new name");

  QStringList compared;
  for (int i : {1, runs / 3, runs / 2, runs - 2}) {
    compared << QString::fromStdString(runInfoOf(i, v1::COMPLETED).run_id());
  }
  step = Clock::now();
  {
    CompareView view(controller, compared);
    view.resize(1280, 800);
    view.show();
    const bool loaded = spinUntil([&] { return view.loaded(); });
    repaintNow(view);
    figures.compareMs = msSince(step);
    check(loaded, "Compare loads 4 runs");
  }
  return figures;
}

void printHistory(int runs, const HistoryFigures& f) {
  auto ratio = [&](double ms) { return f.rawSelectMs > 0 ? ms / f.rawSelectMs : 0.0; };
  std::printf("\nHistory with %d runs in the store (offscreen, 1280 x 800)\n", runs);
  std::printf("  raw SQLite SELECT of the table's columns, all runs: %8.1f ms (reference)\n",
              f.rawSelectMs);
  std::printf("  raw SQLite SELECT with the filter's LIKE:           %8.1f ms\n", f.rawFilterMs);
  std::printf("  open: first rows painted                            %8.1f ms\n", f.firstPaintMs);
  std::printf("  open: every run in the table, painted               %8.1f ms  (%.1fx raw)\n",
              f.openMs, ratio(f.openMs));
  double worst = 0;
  for (const auto& [text, ms] : f.filterSteps) {
    std::printf("  filter keystroke \"%s\"%*s %8.1f ms\n", qPrintable(text),
                static_cast<int>(30 - text.size()), "", ms);
    worst = std::max(worst, ms);
  }
  std::printf("  state filter (Failed)                               %8.1f ms\n", f.stateFilterMs);
  std::printf("  filter cleared (every run again)                    %8.1f ms\n", f.clearMs);
  std::printf("  one run changed until its row shows it              %8.1f ms\n", f.changedRunMs);
  std::printf("  Compare of 4 runs, loaded and painted               %8.1f ms\n", f.compareMs);
  worst = std::max({worst, f.stateFilterMs, f.clearMs, f.openMs, f.compareMs});
  const bool met = worst <= 1000;
  std::printf("  target: open and every filter step within 1 s: worst %.1f ms, %s\n", worst,
              met ? "met" : "MISSED");
  if (runs >= 10000 && !met) targetMissed = true;
}

// Part 1: prints the ListRuns table; marks a target missed when a page's cost grows with the
// journal.
void measureAgent(int fewRuns, int manyRuns, size_t pageKiB, const std::string& root) {
  std::printf(
      "ListRuns from the agent's journal (listRunsPage, as agent_control.cpp answers it)\n");
  std::printf("%8s %10s %6s %11s %11s %13s %13s %11s %9s\n", "runs", "budget", "pages", "all pages",
              "per page", "old: all", "old: per page", "raw SELECT", "new/raw");
  double perPage[2][2] = {};
  int sizeIndex = 0;
  for (int runs : {fewRuns, manyRuns}) {
    int budgetIndex = 0;
    for (size_t budget : {pageKiB * 1024, protocol::kMaxReplyPageBytes}) {
      const ListingFigures f =
          measureListing(root + "/b" + std::to_string(budgetIndex), runs, budget);
      perPage[sizeIndex][budgetIndex] = f.newMs / f.pages;
      std::printf("%8d %9zuK %6d %9.2f ms %8.3f ms %10.2f ms %10.3f ms %8.2f ms %8.2fx\n", runs,
                  budget / 1024, f.pages, f.newMs, f.newMs / f.pages, f.oldMs, f.oldMs / f.pages,
                  f.rawSelectMs, f.newMs / f.rawSelectMs);
      ++budgetIndex;
    }
    ++sizeIndex;
  }
  const double growth = perPage[1][0] / perPage[0][0];
  std::printf(
      "per-page time at %d runs / at %d runs (%zu KiB pages): %.2fx (linear: ~1x; the old "
      "path grows with the runs)\n",
      manyRuns, fewRuns, pageKiB, growth);
  if (growth > 3) {
    std::printf("target MISSED: a page costs more with more runs in the journal\n");
    targetMissed = true;
  }
}

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM",
          qgetenv("QT_QPA_PLATFORM").isEmpty() ? "offscreen" : qgetenv("QT_QPA_PLATFORM"));
  CLI::App app{"history_bench: ListRuns paging and History/Compare at 10,000 runs"};
  int manyRuns = 10000;
  int fewRuns = 100;
  size_t pageKiB = 4;
  std::string part = "all";
  app.add_option("--runs", manyRuns, "Runs of the large case")->check(CLI::Range(200, 1000000));
  app.add_option("--few-runs", fewRuns, "Runs of the small case")->check(CLI::Range(10, 100000));
  app.add_option("--page-kib", pageKiB, "The small ListRuns page budget, KiB")
      ->check(CLI::Range(1, 8192));
  app.add_option("--part", part, "What to measure: all, agent (ListRuns) or gui (History)")
      ->check(CLI::IsMember({"all", "agent", "gui"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  QApplication qapp(argc, argv);
  QTemporaryDir dir;
  if (!dir.isValid()) {
    std::printf("cannot create a temporary directory\n");
    return 1;
  }
  const std::string root = dir.path().toStdString();

  if (part != "gui") measureAgent(fewRuns, manyRuns, pageKiB, root);

  for (int runs : {fewRuns, manyRuns}) {
    if (part == "agent") break;
    QTemporaryDir guiDir;
    ControllerOptions options;
    options.dataDir = guiDir.path();
    options.startLocalAgent = false;
    Controller controller(options);
    if (Status started = controller.start(); !started.isOk()) {
      std::printf("controller: %s\n", started.toString().c_str());
      return 1;
    }
    if (!spinUntil([&] { return controller.isStarted(); }, 30000)) {
      std::printf("the controller did not start\n");
      return 1;
    }
    const auto fillStart = Clock::now();
    fillStore(controller.store(), runs);
    std::printf("\n(stored %d runs with 15 samples each through MetricsStore in %.1f s)", runs,
                msSince(fillStart) / 1000);
    printHistory(runs, measureHistory(controller, runs));
  }
  if (checksFailed) return 1;
  return targetMissed ? 3 : 0;
}
