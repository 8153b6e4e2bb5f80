// AddNodeDialog: adds a node, or edits one, by host, ports and the agent's CURVE public key, with
// the node's launch settings (NodeSettings: the network interface for MPI/NCCL traffic and extra
// mpirun options). It shows the GUI's own public key with Copy buttons and the command that
// authorizes it on the node (the agent serves only allowlisted clients, docs/design.md decision 3),
// or, for a node reached with another client key (--local-cluster), which key file that is. Fields
// are checked as the user types, with the message under the field; OK stays disabled until the
// form is valid. On accept it calls Controller::addNode / editNode and, when that fails, shows
// the returned message in the dialog and stays open.
// GUI thread only.
#pragma once

#include <QDialog>
#include <QString>

#include "ringside/gui/node_address.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace ringside::gui {

class Controller;

class AddNodeDialog : public QDialog {
  Q_OBJECT

 public:
  // Adds a new node when `nodeId` is empty; otherwise edits that node, pre-filled from
  // controller.node(nodeId).
  explicit AddNodeDialog(Controller& controller, const QString& nodeId = {},
                         QWidget* parent = nullptr);

  bool isEdit() const { return !nodeId_.isEmpty(); }
  // The message shown at the public key field ("" when it is valid or still empty).
  QString keyError() const;
  // The message shown for a failed addNode / editNode ("" when none).
  QString submitError() const;
  // The messages shown at the network interface and mpirun options fields ("" when valid).
  QString interfaceError() const;
  QString mpirunOptionsError() const;

 public slots:
  // Validates, then calls addNode / editNode; closes only when that returns OK.
  void accept() override;

 private slots:
  void revalidate();

 private:
  Controller& controller_;
  QString nodeId_;
  QLineEdit* name_;
  QLineEdit* host_;
  QLabel* hostError_;
  QSpinBox* controlPort_;
  QSpinBox* eventsPort_;
  QLineEdit* agentKey_;
  QLabel* keyError_;
  QLineEdit* networkInterface_;
  QLabel* interfaceError_;
  QLineEdit* mpirunOptions_;
  QLabel* optionsError_;
  QString clientKeyFile_;  // kept as it is on edit
  QLabel* clientKeyNote_;
  QLineEdit* guiKey_;
  QLabel* submitError_;
  QPushButton* ok_;
};

}  // namespace ringside::gui
