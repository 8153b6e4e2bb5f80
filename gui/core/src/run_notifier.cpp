// Desktop notifications for this GUI's runs (run_notifier.h).
#include "ringside/gui/run_notifier.h"

#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDir>
#include <QFile>
#include <QSaveFile>
#include <QVariantMap>

#include "ringside/gui/controller.h"
#include "ringside/gui/duration_format.h"

namespace ringside::gui {
namespace {

constexpr const char* kService = "org.freedesktop.Notifications";
constexpr const char* kPath = "/org/freedesktop/Notifications";
constexpr const char* kInterface = "org.freedesktop.Notifications";
// How long a notification stays, in ms (the spec's expire_timeout).
constexpr int kExpireMs = 10000;

}  // namespace

RunNotifier::RunNotifier(Controller& controller, std::function<void(const RunNotification&)> show,
                         QObject* parent)
    : QObject(parent), controller_(controller), show_(std::move(show)) {
  file_ = QDir(controller_.dataDir()).filePath(QStringLiteral("launched-runs"));
  QFile file(file_);
  if (file.open(QIODevice::ReadOnly | QIODevice::Text)) {
    // At most a few times kRememberedRuns lines are read: the file is ours, but may be damaged.
    while (!file.atEnd() && order_.size() < 4 * kRememberedRuns) {
      const QString id = QString::fromUtf8(file.readLine(256)).trimmed();
      if (!id.isEmpty() && !launched_.contains(id)) {
        order_.append(id);
        launched_.insert(id);
      }
    }
    while (order_.size() > kRememberedRuns) launched_.remove(order_.takeFirst());
  }
  connect(&controller_, &Controller::runLaunched, this, &RunNotifier::onLaunched);
  connect(&controller_, &Controller::runStateChanged, this, &RunNotifier::onStateChanged);
  // A run that waits is known as QUEUED from the agents' lists too (a GUI started after the
  // launch), so that its start is told.
  // Coalesced: a node's run list notes each run, and queuedRuns() sorts them all.
  queueDue_.setSingleShot(true);
  queueDue_.setInterval(0);
  connect(&queueDue_, &QTimer::timeout, this, [this] {
    for (const QueuedRun& queued : controller_.queuedRuns()) {
      const QString id = QString::fromStdString(queued.run.run_id());
      if (launched_.contains(id)) lastState_.insert(id, v1::QUEUED);
    }
  });
  connect(&controller_, &Controller::queueChanged, &queueDue_, qOverload<>(&QTimer::start));
}

void RunNotifier::onLaunched(const QString& runId) {
  if (!launched_.contains(runId)) {
    launched_.insert(runId);
    order_.append(runId);
    while (order_.size() > kRememberedRuns) launched_.remove(order_.takeFirst());
    save();
  }
  if (const auto info = controller_.runInfo(runId)) lastState_.insert(runId, info->state());
}

void RunNotifier::onStateChanged(const QString& runId, v1::RunState state) {
  if (!launched_.contains(runId)) return;
  const v1::RunState before = lastState_.value(runId, v1::RUN_STATE_UNSPECIFIED);
  lastState_.insert(runId, state);
  if (before == state || !enabled_ || !show_) return;
  const std::optional<v1::RunInfo> info = controller_.runInfo(runId);
  const QString name = info && !info->spec().name().empty()
                           ? QString::fromStdString(info->spec().name())
                           : runId;
  QString where;
  if (const auto node = controller_.node(controller_.nodeOfRun(runId))) {
    where = tr(" on %1").arg(node->record.name);
  }
  RunNotification notification;
  notification.runId = runId;
  if ((state == v1::STARTING || state == v1::RUNNING) && before == v1::QUEUED) {
    notification.title = tr("Run started");
    notification.body = name + where;
    if (info && info->created_time() > 0) {
      const double started = info->start_time() > 0
                                 ? info->start_time()
                                 : static_cast<double>(QDateTime::currentSecsSinceEpoch());
      notification.body +=
          tr(", after waiting %1 in the queue")
              .arg(formatDuration(std::max(0.0, started - info->created_time())));
    }
  } else if (state == v1::COMPLETED) {
    notification.title = tr("Run completed");
    notification.body = name + where;
    if (info && info->start_time() > 0 && info->end_time() >= info->start_time()) {
      notification.body +=
          tr(" in %1").arg(formatDuration(info->end_time() - info->start_time()));
    }
  } else if (state == v1::FAILED) {
    notification.title = tr("Run failed");
    notification.critical = true;
    notification.body = name + where;
    if (info && !info->reason().empty()) {
      notification.body += QStringLiteral(": ") + QString::fromStdString(info->reason());
    }
  } else {
    return;  // starting without a wait, running, stopped by hand: nothing to tell
  }
  show_(notification);
}

void RunNotifier::save() {
  QSaveFile file(file_);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
    emit errorMessage(tr("Could not write %1 (the runs this GUI launched, for notifications): %2")
                          .arg(file_, file.errorString()));
    return;
  }
  for (const QString& id : order_) file.write(id.toUtf8() + '\n');
  if (!file.commit()) {
    emit errorMessage(tr("Could not write %1 (the runs this GUI launched, for notifications): %2")
                          .arg(file_, file.errorString()));
  }
}

FreedesktopNotifications::FreedesktopNotifications(QDBusConnection bus, QObject* parent)
    : QObject(parent), bus_(std::move(bus)) {}

bool FreedesktopNotifications::available() const {
  if (!bus_.isConnected() || bus_.interface() == nullptr) return false;
  const QString service = QString::fromLatin1(kService);
  if (bus_.interface()->isServiceRegistered(service).value()) return true;
  // A service the bus starts on the first call (most desktops' notification daemons).
  return bus_.interface()->activatableServiceNames().value().contains(service);
}

void FreedesktopNotifications::show(const RunNotification& notification) {
  if (!bus_.isConnected()) {
    if (!reported_) {
      reported_ = true;
      emit unavailable(tr("Desktop notifications are off: there is no session bus (%1).")
                           .arg(bus_.lastError().message()));
    }
    return;
  }
  QDBusMessage call = QDBusMessage::createMethodCall(
      QString::fromLatin1(kService), QString::fromLatin1(kPath), QString::fromLatin1(kInterface),
      QStringLiteral("Notify"));
  QVariantMap hints;
  hints.insert(QStringLiteral("desktop-entry"), QStringLiteral("org.ringside.Ringside"));
  // The spec's urgency levels: 0 low, 1 normal, 2 critical (a byte).
  hints.insert(QStringLiteral("urgency"),
               QVariant::fromValue(static_cast<uchar>(notification.critical ? 2 : 1)));
  // Servers that support markup in the body read it as such: a reason's "<" must stay text.
  call << QStringLiteral("Ringside") << 0u << QStringLiteral("ringside") << notification.title
       << notification.body.toHtmlEscaped() << QStringList() << hints << kExpireMs;
  auto* watcher = new QDBusPendingCallWatcher(bus_.asyncCall(call), this);
  connect(watcher, &QDBusPendingCallWatcher::finished, this, [this](QDBusPendingCallWatcher* w) {
    const QDBusPendingReply<uint> reply = *w;
    w->deleteLater();
    if (!reply.isError()) {
      reported_ = false;
      return;
    }
    if (reported_) return;
    reported_ = true;
    emit unavailable(tr("The desktop's notification service did not take a notification: %1")
                         .arg(reply.error().message()));
  });
}

}  // namespace ringside::gui
