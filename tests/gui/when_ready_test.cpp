// whenReady (when_ready.h): a continuation runs on the receiver's thread with a copy of the
// future's result, never after the receiver is gone.
#include <QPromise>
#include <QTest>
#include <QThread>
#include <memory>
#include <string>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/gui/when_ready.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

// A result that owns heap memory, as the store's do (Result<RunRecord>, series).
using Rows = Result<std::vector<std::string>>;

Rows someRows() {
  return std::vector<std::string>{"the first row, longer than a short-string buffer",
                                  "the second row, longer than a short-string buffer"};
}

}  // namespace

class WhenReadyTest : public QObject {
  Q_OBJECT

 private slots:
  // Regression, "the shared-future crash" (b999431): the continuation took the result with
  // QFuture::takeResult(), which empties the state every copy of the future shares. A second
  // continuation on the same future, or the caller reading its own copy afterwards, then read
  // a result that was no longer there and crashed (the dashboard, on the store's futures).
  void sharedFutureCrash_everyContinuationAndCopyGetsTheResult() {
    QObject receiver;
    QPromise<Rows> promise;
    QFuture<Rows> future = promise.future();
    promise.start();
    std::vector<Rows> seen;
    for (int i = 0; i < 2; ++i) {
      whenReady(&receiver, future, [&seen](Rows rows) { seen.push_back(std::move(rows)); });
    }
    promise.addResult(someRows());
    promise.finish();
    QTRY_COMPARE_WITH_TIMEOUT(seen.size(), size_t{2}, 5000);
    for (const Rows& rows : seen) {
      QVERIFY(rows.isOk());
      QCOMPARE(rows.value(), someRows().value());
    }
    QVERIFY(future.isValid());
    QCOMPARE(future.result().value(), someRows().value());
  }

  // The store's futures finish on its thread, often before whenReady is called.
  void continuationRunsOnTheReceiversThreadForAFutureFinishedElsewhere() {
    QObject receiver;
    auto promise = std::make_shared<QPromise<Rows>>();
    QFuture<Rows> future = promise->future();
    promise->start();
    std::unique_ptr<QThread> worker(QThread::create([promise] {
      promise->addResult(someRows());
      promise->finish();
    }));
    worker->start();
    QVERIFY(worker->wait(5000));
    QThread* ranOn = nullptr;
    bool ok = false;
    whenReady(&receiver, future, [&](Rows rows) {
      ranOn = QThread::currentThread();
      ok = rows.isOk() && rows.value() == someRows().value();
    });
    QTRY_VERIFY_WITH_TIMEOUT(ranOn != nullptr, 5000);
    QCOMPARE(ranOn, receiver.thread());
    QVERIFY(ok);
  }

  void noContinuationAfterTheReceiverIsGone() {
    QPromise<Rows> promise;
    QFuture<Rows> future = promise.future();
    promise.start();
    bool ran = false;
    {
      QObject receiver;
      whenReady(&receiver, future, [&ran](Rows) { ran = true; });
    }
    // A second receiver's continuation on the same future is the event that shows when the
    // first one would have run.
    QObject witness;
    bool witnessRan = false;
    whenReady(&witness, future, [&witnessRan](Rows) { witnessRan = true; });
    promise.addResult(someRows());
    promise.finish();
    QTRY_VERIFY_WITH_TIMEOUT(witnessRan, 5000);
    QVERIFY(!ran);
  }
};

QTEST_GUILESS_MAIN(WhenReadyTest)
#include "when_ready_test.moc"
