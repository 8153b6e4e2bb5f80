// RunForm: the run setup form's values, independent of widgets, and its conversions: to the
// wire's RunSpec (launch), from a RunSpec (the history's "Clone"), to and from a preset JSON file,
// and validation with one message per offending field.
//
// Placement: the form names one or more nodes (by node id, in rank order) and the ranks on each.
// The first node owns the run: the controller sends it the Launch, its agent starts mpirun, which
// places ranks 0..r-1 on it, r..2r-1 on the second node, and so on (mpirun --host h1:r,h2:r).
//
// The trainer settings map one to one onto ringside-trainer's run-spec keys (`ringside-trainer
// --help`, docs/metrics.md): the RunSpec carries them as TrainerJob.config_json.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QMetaType>
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
  // Placement: the chosen nodes' ids in rank order (the first one owns the run) and the ranks
  // on each; world size = nodeIds.size() x ranksPerNode. Empty: none chosen yet.
  QStringList nodeIds;
  int ranksPerNode = 2;
  // The host names of the spec this form was made from (fromRunSpec of a spec with hosts), not
  // yet mapped to nodeIds: resolveSpecHosts() does that. Not used by toRunSpec() or presets.
  QStringList specHosts;

  // Ranks the run would start: nodeIds.size() x ranksPerNode (one node when none is chosen yet).
  int worldSize() const;
};

// A node the run can be placed on, as the run setup form needs to know it (the controller makes
// these from its nodes: Controller::nodeChoices()).
struct NodeChoice {
  QString nodeId;
  QString name;        // display name, used in messages
  int freeSlots = -1;  // < 0: unknown (not checked)
  QString slotKind;    // "gpu" or "cpu" ("" when unknown)
  bool online = false;
  bool draining = false;  // a draining node accepts no new runs
  // The host as mpirun's --host takes it: the hostname the node's agent reported in its Hello
  // (NodeInfo.hostname), else the host of the node's address.
  QString hostName;
};

struct FieldError {
  QString field;    // the RunForm member's name, e.g. "globalBatch"
  QString message;  // translated, says what is wrong and what to do
};

// Every problem with the form; empty when it can be launched. `nodes`: the nodes known now (the
// chosen ones are looked up here). Placement errors are on field "nodeIds" (none chosen, a node
// unknown, offline or draining, two chosen nodes on one host) and "ranksPerNode" (below 1, or
// more than a chosen node's free slots, naming the node; unknown free slots are not checked);
// a global batch not divisible by the world size is on "globalBatch".
QList<FieldError> validate(const RunForm& form, const QList<NodeChoice>& nodes);

// The launch request's spec. Assumes validate() found nothing. One chosen node: hosts empty and
// ranks_per_node set (the owning agent runs every rank). Several: hosts = each node's hostName
// from `nodes` (the node id when it is not there) with ranksPerNode ranks each, in rank order;
// ranks_per_node is set as well.
v1::RunSpec toRunSpec(const RunForm& form, const QList<NodeChoice>& nodes = {});
// A form pre-filled from a run's spec (keys the form does not know are ignored). nodeIds stay
// empty (a spec names hosts, not nodes): the spec's hosts go to specHosts; map them with
// resolveSpecHosts().
RunForm fromRunSpec(const v1::RunSpec& spec);
// Sets form->nodeIds to the nodes whose hostName matches form->specHosts (case-insensitive), in
// the spec's order, and clears specHosts. Returns the hosts no node matched (the form then has
// fewer nodes than the spec had). A form without specHosts is left as it is.
QStringList resolveSpecHosts(RunForm* form, const QList<NodeChoice>& nodes);

// Presets: {"format": "ringside-run-preset", "version": 1, "name": ..., "tags": [...],
// "job": "trainer"|"command", "trainer": {trainer run-spec keys}, "command": "...",
// "nodes": [node ids in rank order], "ranks_per_node": N}. Presets written before multi-node
// placement have "node_id": "..." (or no node at all) instead of "nodes"; both read.
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
