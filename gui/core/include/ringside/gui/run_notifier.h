// Desktop notifications for this GUI's runs (docs/queue.md, "Notifications").
//
// RunNotifier decides what is worth a notification: a run launched from this GUI install (its
// data folder) that starts after waiting in a queue, that completes, or that fails (with the
// agent's reason). Runs launched here are remembered across restarts in <data folder>/
// launched-runs (one run id per line, the latest kRememberedRuns), so that a run queued
// yesterday still notifies when it starts today. Only live state events count (
// Controller::runStateChanged): what happened while the GUI was closed is in the History and is
// not replayed. A run stopped by hand, a sweep's trial (the agent launched it) and a run of
// another GUI never notify.
//
// FreedesktopNotifications shows them through the desktop's notification service (the
// freedesktop.org Desktop Notifications Specification 1.2, org.freedesktop.Notifications on the
// session bus, over QtDBus), without waiting for its answer.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QDBusConnection>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <functional>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

class Controller;

struct RunNotification {
  QString runId;
  QString title;     // "Run started" / "Run completed" / "Run failed" (translated)
  QString body;      // "<run name> on <node>", and for a failure the agent's reason
  bool critical = false;  // a failure: the service's "critical" urgency
};

class RunNotifier : public QObject {
  Q_OBJECT

 public:
  // How many launched run ids the file keeps (the oldest go first).
  static constexpr int kRememberedRuns = 1000;

  // `show` is called for each notification while enabled. Reads the remembered runs from
  // <controller.dataDir()>/launched-runs (a missing or unreadable file: none).
  RunNotifier(Controller& controller, std::function<void(const RunNotification&)> show,
              QObject* parent = nullptr);

  void setEnabled(bool enabled) { enabled_ = enabled; }
  bool enabled() const { return enabled_; }
  // Whether `runId` was launched from this GUI install (as far as the file remembers).
  bool launchedHere(const QString& runId) const { return launched_.contains(runId); }

 signals:
  // The launched-runs file could not be written; the message names it and the error.
  void errorMessage(const QString& message);

 private:
  void onLaunched(const QString& runId);
  void onStateChanged(const QString& runId, v1::RunState state);
  void save();

  Controller& controller_;
  std::function<void(const RunNotification&)> show_;
  QString file_;
  QStringList order_;      // launched run ids, oldest first
  QSet<QString> launched_;
  QHash<QString, v1::RunState> lastState_;  // the last state seen of each launched run
  QTimer queueDue_;
  bool enabled_ = true;
};

class FreedesktopNotifications : public QObject {
  Q_OBJECT

 public:
  // `bus`: the session bus, or another (tests).
  explicit FreedesktopNotifications(QDBusConnection bus = QDBusConnection::sessionBus(),
                                    QObject* parent = nullptr);
  // Whether a notification service is registered on the bus now.
  bool available() const;
  // Sends Notify (app "Ringside", icon "ringside" as the package installs it, desktop entry
  // org.ringside.Ringside, 10 s, urgency normal or critical; the body HTML-escaped, which a
  // server without body markup shows as typed). A failed call is reported once as unavailable.
  void show(const RunNotification& notification);

 signals:
  // The service refused or is missing: the message says so (once until a call succeeds).
  void unavailable(const QString& message);

 private:
  QDBusConnection bus_;
  bool reported_ = false;
};

}  // namespace ringside::gui
