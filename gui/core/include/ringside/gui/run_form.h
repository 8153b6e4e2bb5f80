// RunForm: the run setup form's values, independent of widgets, and its conversions: to the
// wire's RunSpec (launch), from a RunSpec (the history's "Clone"), to and from a preset JSON file,
// and validation with one message per offending field.
//
// The trainer settings map one to one onto ringside-trainer's run-spec keys (`ringside-trainer
// --help`, docs/metrics.md): the RunSpec carries them as TrainerJob.config_json.
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QList>
#include <QString>
#include <QStringList>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

struct RunForm {
  enum class Job { kTrainer, kCommand };

  QString name = QStringLiteral("fashion-mnist mlp");
  QStringList tags;
  Job job = Job::kTrainer;
  // Trainer settings (defaults as ringside-trainer's).
  QString dataDir = QStringLiteral("/usr/share/datasets/fashion-mnist");
  QList<int> hidden = {256, 128};
  QString optimizer = QStringLiteral("sgd");  // sgd | adamw
  double lr = 0.1;
  double momentum = 0.9;
  bool nesterov = true;
  double weightDecay = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  QString lrSchedule = QStringLiteral("cosine");  // constant | step | cosine
  qint64 warmupSteps = 0;
  double lrStepEpochs = 1.0;
  double lrGamma = 0.1;
  double lrMin = 0.0;
  int epochs = 3;
  qint64 globalBatch = 128;
  QString backend = QStringLiteral("auto");  // auto | mpi | nccl
  double bucketMb = 25.0;
  qint64 checkpointEvery = 0;
  quint64 seed = 42;
  // Custom command: a command line, split on whitespace with "double quotes" grouping.
  QString command;
  // Placement: ranks on the chosen node.
  QString nodeId;
  int ranksPerNode = 2;
};

struct FieldError {
  QString field;    // the RunForm member's name, e.g. "globalBatch"
  QString message;  // translated, says what is wrong and what to do
};

// Every problem with the form; empty when it can be launched. freeSlots: the chosen node's free
// slots (more ranks than free are refused), < 0 when unknown (not checked).
QList<FieldError> validate(const RunForm& form, int freeSlots);

// The launch request's spec. Assumes validate() found nothing.
v1::RunSpec toRunSpec(const RunForm& form);
// A form pre-filled from a run's spec (keys the form does not know are ignored).
RunForm fromRunSpec(const v1::RunSpec& spec);

// Presets: {"format": "ringside-run-preset", "version": 1, "name": ..., "tags": [...],
// "job": "trainer"|"command", "trainer": {trainer run-spec keys}, "command": "...",
// "ranks_per_node": N}.
QJsonObject toPreset(const RunForm& form);
// Errors: *error says what is wrong (not a preset, wrong version, a value of the wrong type);
// the returned form keeps the defaults for anything missing.
RunForm fromPreset(const QJsonObject& preset, QString* error);

// The trainer's run-spec JSON of the form (TrainerJob.config_json).
QJsonObject trainerConfig(const RunForm& form);
// "a b \"c d\"" -> {"a", "b", "c d"}.
QStringList splitCommandLine(const QString& line);

}  // namespace ringside::gui

Q_DECLARE_METATYPE(ringside::gui::RunForm)
