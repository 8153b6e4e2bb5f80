// whenReady: runs a continuation on a QObject's thread once a QFuture has finished, through a
// QFutureWatcher owned by that object (so it never runs after the object is gone). Used instead
// of QFuture::then(context, ...), which crashed in Qt 6.4 on the store's already-finished
// futures. The continuation receives a copy of the result. GUI-thread helper; no waiting.
#pragma once

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>

namespace ringside::gui {

template <typename T, typename Then>
void whenReady(QObject* receiver, QFuture<T> future, Then then) {
  auto* watcher = new QFutureWatcher<T>(receiver);
  QObject::connect(watcher, &QFutureWatcher<T>::finished, receiver,
                   [watcher, then = std::move(then)]() mutable {
                     then(watcher->result());
                     watcher->deleteLater();
                   });
  watcher->setFuture(future);
}

}  // namespace ringside::gui
