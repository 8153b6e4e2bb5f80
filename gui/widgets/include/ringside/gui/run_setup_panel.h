// RunSetupPanel: the point-and-click run setup form. Edits a RunForm, validates every field as the
// user types (the message appears under the field and Launch stays disabled until the form is
// valid), loads and saves presets, and asks for a launch with launchRequested().
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
class QPushButton;
class QRadioButton;
class QSpinBox;
class QStackedWidget;

namespace ringside::gui {

// A node the run can be placed on.
struct NodeChoice {
  QString nodeId;
  QString name;
  int freeSlots = -1;  // < 0: unknown
  QString slotKind;    // "gpu" or "cpu"
  bool online = false;
};

class RunSetupPanel : public QWidget {
  Q_OBJECT

 public:
  explicit RunSetupPanel(QWidget* parent = nullptr);

  RunForm form() const;
  // Fills every field (the history's Clone, a preset).
  void setForm(const RunForm& form);
  void setNodes(const QList<NodeChoice>& nodes);
  // The validation messages currently shown, by field (empty when the form is valid).
  QHash<QString, QString> fieldErrors() const { return shownErrors_; }
  bool canLaunch() const;

 signals:
  void launchRequested(const ringside::gui::RunForm& form);

 public slots:
  void loadPreset();
  void savePreset();

 private slots:
  void revalidate();

 private:
  void addErrorLabel(const QString& field, QWidget* after, QFormLayout* layout);
  int freeSlotsOfSelectedNode() const;

  QLineEdit* name_;
  QLineEdit* tags_;
  QRadioButton* trainerJob_;
  QRadioButton* commandJob_;
  QStackedWidget* jobPages_;
  QLineEdit* dataDir_;
  QLineEdit* hidden_;
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
  QComboBox* backend_;
  QDoubleSpinBox* bucketMb_;
  QSpinBox* checkpointEvery_;
  QLineEdit* seed_;
  QLineEdit* command_;
  QComboBox* node_;
  QLabel* slotsLabel_;
  QSpinBox* ranks_;
  QPushButton* launch_;
  QHash<QString, QLabel*> errorLabels_;
  QHash<QString, QString> shownErrors_;
  QList<NodeChoice> nodes_;
};

}  // namespace ringside::gui
