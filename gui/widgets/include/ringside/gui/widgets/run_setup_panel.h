// RunSetupPanel: the point-and-click run setup form. Edits a RunForm, validates every field as the
// user types (the message appears under the field and Launch stays disabled until the form is
// valid), loads and saves presets, and asks for a launch with launchRequested().
// Placement is a checkable list of the nodes (name, state, free slots) in rank order (drag to
// reorder; the first checked node owns the run), the ranks per node, and a read-out of the world
// size. Until the user picks nodes (or setForm() names some), the first online node that is not
// draining is checked (else the first node), so the default is one local node; until the user
// sets the ranks per node, they follow that node (defaultRanksPerNode: its free GPUs on a GPU
// node, so the default run launches on a one-GPU workstation).
// The job is the Ringside trainer, a custom command or a PyTorch script (script, arguments,
// interpreter, working directory, GPUs or CPU cores); every job takes an environment.
// GUI thread only.
#pragma once

#include <QHash>
#include <QWidget>

#include "ringside/gui/run_form.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QRadioButton;
class QGroupBox;
class QSpinBox;
class QStackedWidget;

namespace ringside::gui {

class RunSetupPanel : public QWidget {
  Q_OBJECT

 public:
  explicit RunSetupPanel(QWidget* parent = nullptr);

  // The form as shown; nodeIds are the checked nodes in list order.
  RunForm form() const;
  // Fills every field (the history's Clone, a preset). Nodes: when form.nodeIds is not empty,
  // exactly those of them that are in the list are checked, moved to the top in that order;
  // otherwise the checked nodes stay as they are.
  void setForm(const RunForm& form);
  // The nodes to offer (NodeChoice is in run_form.h; Controller::nodeChoices() makes them).
  // Updates the list in place: the order and the checks of the nodes already listed stay, new
  // nodes are appended unchecked, nodes no longer there go.
  void setNodes(const QList<NodeChoice>& nodes);
  // The world-size read-out as shown, e.g. "2 nodes × 4 ranks = 8 ranks".
  QString worldSizeText() const;
  // The validation messages currently shown, by field (empty when the form is valid).
  QHash<QString, QString> fieldErrors() const { return shownErrors_; }
  bool canLaunch() const;
  // The node list's tools (at 64 nodes): the filter by name or host ("" shows all), "Check all
  // shown" (every node the filter shows that is online and not draining) and "Uncheck all".
  QLineEdit* nodeFilter() const { return nodeFilter_; }
  QPushButton* checkAllNodesButton() const { return checkAllNodes_; }
  QPushButton* uncheckAllNodesButton() const { return uncheckAllNodes_; }
  QListWidget* nodeList() const { return nodeList_; }

 signals:
  void launchRequested(const ringside::gui::RunForm& form);

 public slots:
  void loadPreset();
  void savePreset();

 private slots:
  void revalidate();

 private:
  void addErrorLabel(const QString& field, QWidget* after, QFormLayout* layout);
  QStringList checkedNodeIds() const;
  // Checks exactly `nodeIds` that are listed, moved to the top in that order.
  void checkNodes(const QStringList& nodeIds);
  // While the user has not chosen: checks the default node (see the class comment).
  void checkDefaultNode();
  // Hides the nodes that do not match nodeFilter_.
  void filterNodes();
  // Checks (`checked`) the shown usable nodes, or unchecks every node; the user's choice.
  void checkShownNodes(bool checked);
  // While the user has not set them: the ranks per node the first checked node starts with
  // (defaultRanksPerNode, of the kind of slot the job takes there).
  void applyDefaultRanks();
  QString nodeItemText(const NodeChoice& node) const;

  QLineEdit* name_;
  QLineEdit* tags_;
  QRadioButton* trainerJob_;
  QRadioButton* commandJob_;
  QRadioButton* pythonJob_;
  QStackedWidget* jobPages_;
  QLineEdit* dataDir_;
  QComboBox* model_;
  QLineEdit* hidden_;
  QLineEdit* channels_;
  QDoubleSpinBox* dropout_;
  QComboBox* convAlgorithm_;
  QComboBox* optimizer_;
  QDoubleSpinBox* lr_;
  QDoubleSpinBox* momentum_;
  QCheckBox* nesterov_;
  QDoubleSpinBox* weightDecay_;
  QDoubleSpinBox* beta1_;
  QDoubleSpinBox* beta2_;
  QComboBox* schedule_;
  QSpinBox* warmup_;
  QDoubleSpinBox* stepEpochs_;
  QDoubleSpinBox* gamma_;
  QDoubleSpinBox* lrMin_;
  QSpinBox* epochs_;
  QSpinBox* globalBatch_;
  QSpinBox* microBatch_;
  QComboBox* backend_;
  QDoubleSpinBox* bucketMb_;
  QSpinBox* checkpointEvery_;
  QSpinBox* logEvery_;
  QSpinBox* hangTimeout_;
  QComboBox* priority_;  // RunForm.priority: its data is the v1::RunPriority
  QLineEdit* seed_;
  QLineEdit* resumeFrom_;
  QLineEdit* command_;
  QLineEdit* pythonScript_;
  QLineEdit* pythonArgs_;
  QLineEdit* pythonInterpreter_;
  QLineEdit* pythonWorkingDir_;
  QCheckBox* pythonUseGpus_;
  QPlainTextEdit* environment_;
  QListWidget* nodeList_;
  QLineEdit* nodeFilter_;  // hides the nodes whose text and host do not contain it
  QPushButton* checkAllNodes_;
  QPushButton* uncheckAllNodes_;
  QSpinBox* ranks_;
  QLabel* worldSize_;
  // The Slurm job's options (RunForm::slurm), shown when the run's node is a Slurm login node.
  QGroupBox* slurmBox_;
  QComboBox* slurmPartition_;
  QSpinBox* slurmNodes_;
  QSpinBox* slurmGpus_;
  QSpinBox* slurmTime_;
  QLineEdit* slurmAccount_;
  QLineEdit* slurmQos_;
  QLineEdit* slurmGpuRequest_;
  QCheckBox* slurmRequeue_;
  // The NodeChoice of the first checked node when it is a Slurm node; nullptr otherwise.
  const NodeChoice* slurmOwner() const;
  QPushButton* launch_;
  QHash<QString, QLabel*> errorLabels_;
  QHash<QString, QString> shownErrors_;
  QList<NodeChoice> nodes_;
  bool userChoseNodes_ = false;  // the user (or setForm) picked nodes: no default check any more
  // The user (or setForm) set the ranks per node: no default from the node any more.
  bool userChoseRanks_ = false;
  // RunForm::trainerBase of the last setForm(): run-spec keys without a widget, kept for form().
  v1::TrainerConfig trainerBase_;
  bool updatingNodes_ = false;  // the list is being changed by code, not by the user
};

}  // namespace ringside::gui
