// CatchUp, the catch-up state machine of a node connection, without sockets: what it fetches
// after (re)connecting, after a gap in the live seqs and after lost requests, how pages and live
// entries are cut so that each seq reaches the GUI once, and the concurrency limit.
#include <QTest>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ringside/gui/catch_up.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

using Outcome = CatchUp::FetchOutcome;

// Records the fetches CatchUp asks for; `accept` false plays a socket that cannot send.
struct Sender {
  std::vector<std::pair<std::string, uint64_t>> sent;
  bool accept = true;

  CatchUp::SendFetch fn() {
    return [this](const std::string& runId, uint64_t afterSeq) {
      if (!accept) return false;
      sent.emplace_back(runId, afterSeq);
      return true;
    };
  }
  // The fetches asked for since the last call.
  std::vector<std::pair<std::string, uint64_t>> take() { return std::exchange(sent, {}); }
};

using Fetches = std::vector<std::pair<std::string, uint64_t>>;

// A fetch_run_data reply for `runId`: one metric sample per seq in `sampleSeqs`, one log line per
// seq in `logSeqs`, and last_seq, more as given.
v1::Envelope pageReply(const std::string& runId, std::vector<uint64_t> sampleSeqs,
                       std::vector<uint64_t> logSeqs, uint64_t lastSeq, bool more) {
  v1::Envelope reply;
  v1::FetchRunDataReply* page = reply.mutable_fetch_run_data_reply();
  page->set_run_id(runId);
  for (uint64_t seq : sampleSeqs) page->add_samples()->set_seq(seq);
  for (uint64_t seq : logSeqs) page->add_log_lines()->set_seq(seq);
  page->set_last_seq(lastSeq);
  page->set_more(more);
  return reply;
}

v1::Envelope errorReply(v1::ErrorReply::Code code, const std::string& message) {
  v1::Envelope reply;
  reply.mutable_error()->set_code(code);
  reply.mutable_error()->set_message(message);
  return reply;
}

v1::ListRunsReply runList(const std::vector<std::pair<std::string, uint64_t>>& runs) {
  v1::ListRunsReply list;
  for (const auto& run : runs) {
    v1::RunInfo* info = list.add_runs();
    info->set_run_id(run.first);
    info->set_last_seq(run.second);
  }
  return list;
}

std::vector<uint64_t> sampleSeqs(const v1::FetchRunDataReply& page) {
  std::vector<uint64_t> seqs;
  for (const auto& sample : page.samples()) seqs.push_back(sample.seq());
  return seqs;
}

}  // namespace

class CatchUpTest : public QObject {
  Q_OBJECT

 private slots:
  void trackedRunIsFetchedFromTheGuisMarkPageByPage() {
    CatchUp catchUp(/*autoTrackRuns=*/true);
    Sender send;
    catchUp.trackRun("run-a", 5);
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 5}}));
    QVERIFY(catchUp.run("run-a")->fetching);
    catchUp.startFetches(send.fn());
    QVERIFY(send.take().empty());  // one page of a run in flight at a time

    // Entries the GUI already holds (seq <= 5) are cut from the page; `more` asks for the next.
    Outcome first =
        catchUp.onFetchReply("run-a", pageReply("run-a", {4, 6, 7}, {5, 8}, 8, true), send.fn());
    QCOMPARE(first.kind, Outcome::Kind::kPage);
    QCOMPARE(sampleSeqs(first.page), (std::vector<uint64_t>{6, 7}));
    QCOMPARE(first.page.log_lines_size(), 1);
    QCOMPARE(first.page.log_lines(0).seq(), uint64_t{8});
    QVERIFY(!first.done);
    QCOMPARE(send.take(), (Fetches{{"run-a", 8}}));

    Outcome last =
        catchUp.onFetchReply("run-a", pageReply("run-a", {9, 10}, {}, 10, false), send.fn());
    QCOMPARE(last.kind, Outcome::Kind::kPage);
    QCOMPARE(sampleSeqs(last.page), (std::vector<uint64_t>{9, 10}));
    QCOMPARE(last.done, std::optional<uint64_t>(10));
    QVERIFY(send.take().empty());
    QCOMPARE(catchUp.run("run-a")->applied, uint64_t{10});
    catchUp.startFetches(send.fn());
    QVERIFY(send.take().empty());  // caught up: nothing due
  }

  void trackRunKeepsTheHigherMark() {
    CatchUp catchUp(true);
    catchUp.trackRun("run-a", 10);
    catchUp.trackRun("run-a", 4);
    QCOMPARE(catchUp.run("run-a")->applied, uint64_t{10});
  }

  void runListFetchesRunsWhoseJournalHoldsMore() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.trackRun("held", 7);
    catchUp.startFetches(send.fn());
    send.take();
    (void)catchUp.onFetchReply("held", pageReply("held", {}, {}, 7, false), send.fn());

    // Listed: "held" unchanged, "grown" known with more entries, "new" unknown with entries,
    // "empty" unknown without any.
    catchUp.trackRun("grown", 2);
    catchUp.startFetches(send.fn());
    send.take();
    (void)catchUp.onFetchReply("grown", pageReply("grown", {}, {}, 2, false), send.fn());
    catchUp.onRunList(runList({{"held", 7}, {"grown", 9}, {"new", 3}, {"empty", 0}}));
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"grown", 2}, {"new", 0}}));
    QVERIFY(!catchUp.run("empty"));
  }

  void withoutAutoTrackUnknownRunsAreNotFetched() {
    CatchUp catchUp(/*autoTrackRuns=*/false);
    Sender send;
    catchUp.onRunList(runList({{"other", 5}}));
    catchUp.startFetches(send.fn());
    QVERIFY(send.take().empty());
    // Live entries of a run nobody follows are delivered when new, gaps or not, never fetched.
    QVERIFY(catchUp.acceptLive("other", 3));
    QVERIFY(!catchUp.acceptLive("other", 2));
    QVERIFY(catchUp.acceptLive("other", 7));
    catchUp.startFetches(send.fn());
    QVERIFY(send.take().empty());
  }

  void liveEntriesAreDeliveredOnceInOrderAndAGapIsFetched() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.onRunList(runList({{"run-a", 0}}));  // the agent told of the run
    QVERIFY(catchUp.acceptLive("run-a", 1));
    QVERIFY(!catchUp.acceptLive("run-a", 1));  // a duplicate
    QVERIFY(catchUp.acceptLive("run-a", 2));
    QVERIFY(!catchUp.acceptLive("run-a", 4));  // 3 was dropped by PUB: the journal has 3 and 4
    QCOMPARE(catchUp.run("run-a")->applied, uint64_t{2});
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 2}}));
    Outcome page =
        catchUp.onFetchReply("run-a", pageReply("run-a", {3, 4}, {}, 4, false), send.fn());
    QCOMPARE(sampleSeqs(page.page), (std::vector<uint64_t>{3, 4}));
    QVERIFY(catchUp.acceptLive("run-a", 5));
  }

  // Samples of a run the agent never told of made a permanent row in the GUI's
  // database. They are dropped and the run list is asked for; a run it shows is fetched.
  void liveEntriesOfAnUnknownRunAreDroppedUntilTheListShowsIt() {
    CatchUp catchUp(true);
    Sender send;
    QVERIFY(!catchUp.wantsRunList());
    QVERIFY(!catchUp.acceptLive("ghost", 1));
    QVERIFY(!catchUp.acceptLive("late", 1));
    QVERIFY(!catchUp.acceptLive("late", 2));
    QVERIFY(!catchUp.run("ghost") && !catchUp.run("late"));
    QVERIFY(catchUp.wantsRunList());
    catchUp.runListRequested();
    QVERIFY(!catchUp.wantsRunList());
    QVERIFY(!catchUp.acceptLive("later", 1));  // during the list: for the next one
    QVERIFY(catchUp.wantsRunList());
    catchUp.onRunList(runList({{"late", 2}}));
    const std::map<std::string, uint64_t> refused = catchUp.runListComplete();
    QCOMPARE(refused, (std::map<std::string, uint64_t>{{"ghost", 1}}));
    // The listed run is followed and fetched from its start; its next live entry is accepted.
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"late", 0}}));
    (void)catchUp.onFetchReply("late", pageReply("late", {1, 2}, {}, 2, false), send.fn());
    QVERIFY(catchUp.acceptLive("late", 3));
    // "later" waits for the next list.
    catchUp.runListRequested();
    QCOMPARE(catchUp.runListComplete(), (std::map<std::string, uint64_t>{{"later", 1}}));
    // A state event introduces its run; a tracked run is known.
    QVERIFY(catchUp.acceptLive("started", 1, /*introducesRun=*/true));
    QVERIFY(catchUp.acceptLive("started", 2));
    catchUp.trackRun("stored", 7);
    QVERIFY(catchUp.acceptLive("stored", 8));
    QVERIFY(!catchUp.wantsRunList());
  }

  void manyUnknownRunsAreCountedNotAllNamed() {
    CatchUp catchUp(true);
    for (int i = 0; i < 1000; ++i) QVERIFY(!catchUp.acceptLive("ghost-" + std::to_string(i), 1));
    catchUp.runListRequested();
    const std::map<std::string, uint64_t> refused = catchUp.runListComplete();
    QVERIFY(refused.size() <= CatchUp::kMaxUnknownRunsNamed + 1);
    uint64_t entries = 0;
    for (const auto& [runId, count] : refused) entries += count;
    QCOMPARE(entries, uint64_t{1000});
  }

  void liveEntriesDuringAFetchAreFetchedAfterIt() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.trackRun("run-a", 0);
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 0}}));
    // While the page is in flight live entries are dropped: the journal holds them.
    QVERIFY(!catchUp.acceptLive("run-a", 1));
    QVERIFY(!catchUp.acceptLive("run-a", 20));
    // The page ends before seq 20: it is fetched next, from the page's end.
    Outcome page =
        catchUp.onFetchReply("run-a", pageReply("run-a", {1, 2}, {}, 15, false), send.fn());
    QCOMPARE(page.done, std::optional<uint64_t>(15));
    QVERIFY(send.take().empty());
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 15}}));
    // A page that reaches every dropped seq leaves nothing due.
    (void)catchUp.onFetchReply("run-a", pageReply("run-a", {}, {}, 20, false), send.fn());
    catchUp.startFetches(send.fn());
    QVERIFY(send.take().empty());
  }

  void runDeletedByTheAgentIsForgotten() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.trackRun("gone", 3);
    catchUp.startFetches(send.fn());
    send.take();
    Outcome outcome =
        catchUp.onFetchReply("gone", errorReply(v1::ErrorReply::NOT_FOUND, "no run"), send.fn());
    QCOMPARE(outcome.kind, Outcome::Kind::kForgotten);
    QVERIFY(!catchUp.run("gone"));
  }

  void failedFetchWaitsForTheNextListOrGap() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.trackRun("run-a", 3);
    catchUp.startFetches(send.fn());
    send.take();
    Outcome outcome = catchUp.onFetchReply(
        "run-a", errorReply(v1::ErrorReply::INTERNAL, "the journal is damaged"), send.fn());
    QCOMPARE(outcome.kind, Outcome::Kind::kFailed);
    QCOMPARE(outcome.error, std::string("the journal is damaged"));
    catchUp.startFetches(send.fn());
    QVERIFY(send.take().empty());  // not retried in a loop
    catchUp.onRunList(runList({{"run-a", 9}}));
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 3}}));
  }

  void lostRequestsAreSentAgainFromTheMark() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.trackRun("run-a", 4);
    catchUp.trackRun("run-b", 6);
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 4}, {"run-b", 6}}));
    // One timed out.
    catchUp.fetchLost("run-a");
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 4}}));
    // The sockets were replaced (or the node went offline): every fetch in flight again.
    catchUp.fetchesLost();
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 4}, {"run-b", 6}}));
  }

  void listFailureFetchesEveryFollowedRun() {
    CatchUp catchUp(true);
    Sender send;
    for (const char* run : {"run-a", "run-b"}) {
      catchUp.trackRun(run, 1);
      catchUp.startFetches(send.fn());
      (void)catchUp.onFetchReply(run, pageReply(run, {}, {}, 1, false), send.fn());
    }
    send.take();
    catchUp.listFailed();
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 1}, {"run-b", 1}}));
  }

  void fetchThatCannotBeSentStaysDue() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.trackRun("run-a", 2);
    send.accept = false;
    catchUp.startFetches(send.fn());
    QVERIFY(!catchUp.run("run-a")->fetching);
    QVERIFY(catchUp.run("run-a")->needsFetch);
    send.accept = true;
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 2}}));
    // The same for the next page of a run.
    send.accept = false;
    (void)catchUp.onFetchReply("run-a", pageReply("run-a", {3}, {}, 3, true), send.fn());
    QVERIFY(catchUp.run("run-a")->needsFetch);
    send.accept = true;
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"run-a", 3}}));
  }

  void atMostFourPagesInFlight() {
    CatchUp catchUp(true, 4);
    Sender send;
    for (const char* run : {"r1", "r2", "r3", "r4", "r5", "r6"}) catchUp.trackRun(run, 0);
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"r1", 0}, {"r2", 0}, {"r3", 0}, {"r4", 0}}));
    (void)catchUp.onFetchReply("r2", pageReply("r2", {}, {}, 0, false), send.fn());
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"r5", 0}}));
  }

  void pageOfAnUntrackedRunIsIgnored() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.trackRun("run-a", 0);
    catchUp.startFetches(send.fn());
    send.take();
    catchUp.untrackRun("run-a");
    Outcome outcome =
        catchUp.onFetchReply("run-a", pageReply("run-a", {1}, {}, 1, true), send.fn());
    QCOMPARE(outcome.kind, Outcome::Kind::kIgnored);
    QVERIFY(send.take().empty());
    QVERIFY(!catchUp.run("run-a"));
  }

  // A run deleted in the GUI was followed again from seq 0 by the node's next
  // run list (autoTrackRuns) and its whole journal fetched, only for the store to drop it.
  void aRunTheGuiDeletedIsNeitherFetchedNorDelivered() {
    CatchUp catchUp(true);
    Sender send;
    catchUp.onRunList(runList({{"deleted", 40}, {"kept", 5}}));
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"deleted", 0}, {"kept", 0}}));
    catchUp.ignoreRun("deleted");
    // Its page in flight is ignored, not followed by the next page.
    Outcome outcome =
        catchUp.onFetchReply("deleted", pageReply("deleted", {1, 2}, {}, 40, true), send.fn());
    QCOMPARE(outcome.kind, Outcome::Kind::kIgnored);
    QVERIFY(send.take().empty());
    // Later lists (a reconnect) and live entries leave it alone, and ask for no list either.
    catchUp.onRunList(runList({{"deleted", 41}, {"kept", 5}}));
    catchUp.startFetches(send.fn());
    QVERIFY(send.take().empty());
    QVERIFY(!catchUp.acceptLive("deleted", 42));
    QVERIFY(!catchUp.acceptLive("deleted", 43, /*introducesRun=*/true));
    QVERIFY(!catchUp.wantsRunList());
    QVERIFY(!catchUp.run("deleted"));
    QVERIFY(catchUp.runListComplete().empty());
    // trackRun (the GUI holds it again) follows it as any run.
    catchUp.trackRun("deleted", 0);
    catchUp.startFetches(send.fn());
    QCOMPARE(send.take(), (Fetches{{"deleted", 0}}));
  }
};

QTEST_GUILESS_MAIN(CatchUpTest)
#include "catch_up_test.moc"
