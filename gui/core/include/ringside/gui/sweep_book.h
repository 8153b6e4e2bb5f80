// SweepBook: the sweeps of the GUI's nodes as their agents report them (docs/sweeps.md): each
// node's list when it comes online, then its sweep events; and the requests that start and steer
// them (launch_sweep, control_sweep). The agent runs the sweep; the book only shows it.
//
// Thread-safety: GUI thread only (a QObject on the controller's thread).
#pragma once

#include <QByteArray>
#include <QHash>
#include <QObject>
#include <QPair>
#include <QString>
#include <map>
#include <vector>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

class Controller;

// A SweepSpec from JSON text (protobuf's JSON mapping, as docs/sweeps.md writes it). Errors:
// InvalidArgument with the parser's words (an unknown key, a value of the wrong type), or for
// text over 1 MiB.
Result<v1::SweepSpec> sweepSpecFromJson(const QByteArray& json);

class SweepBook : public QObject {
  Q_OBJECT

 public:
  struct Entry {
    QString nodeId;  // the node whose agent runs it
    v1::SweepInfo sweep;
  };

  // Listens to `controller` (which must outlive the book): it lists a node's sweeps whenever the
  // node comes online and applies the sweep events.
  explicit SweepBook(Controller* controller, QObject* parent = nullptr);

  // Every sweep known, oldest first (by created_time).
  std::vector<Entry> sweeps() const;
  // The sweep of that id, or nullptr.
  const Entry* find(const QString& sweepId) const;

  // Starts `spec` on `nodeId`'s agent: sweepLaunched(sweepId) when the agent took it, failed() with
  // the agent's error (or "not connected") otherwise.
  void launch(const QString& nodeId, const v1::SweepSpec& spec);
  // Pauses, resumes, stops or extends the sweep (`trials` more), or reruns trial `trial`, on its
  // node; failed() with the agent's error. Unknown sweep: failed().
  void control(const QString& sweepId, v1::SweepAction action, uint32_t trials = 0,
               uint32_t trial = 0);
  // Lists the node's sweeps again.
  void refresh(const QString& nodeId);

 signals:
  void changed();
  void sweepLaunched(const QString& sweepId);
  // A request failed: a translated sentence with the agent's or the connection's words.
  void failed(const QString& message);

 private:
  enum class Ask { kList, kLaunch, kControl };
  void apply(const QString& nodeId, const v1::SweepInfo& sweep);
  void onReply(const QString& nodeId, quint64 requestId, const v1::Envelope& reply);

  Controller* controller_;
  std::map<QString, Entry> sweeps_;  // by sweep id
  QHash<QPair<QString, quint64>, Ask> asked_;
};

}  // namespace ringside::gui
