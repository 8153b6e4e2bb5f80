// RunForm: the run setup form's values, independent of widgets, and its conversions: to the
// wire's RunSpec (launch), from a RunSpec (the history's "Clone"), to and from a preset JSON file,
// and validation with one message per offending field.
//
// Placement: the form names one or more nodes (by node id, in rank order) and the ranks on each.
// The first node owns the run: the controller sends it the Launch, its agent starts mpirun, which
// places ranks 0..r-1 on it, r..2r-1 on the second node, and so on (mpirun --host h1:r,h2:r).
//
// The trainer settings are fields of the typed run spec (ringside.v1.TrainerConfig,
// docs/run-spec.md): trainerConfig() builds it, the RunSpec carries it as TrainerJob.config, and
// presets hold it in protobuf's JSON mapping. Their defaults are ringside-trainer's own
// (defaultTrainerConfig()).
#pragma once

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include "ringside/common/run_spec.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

struct RunForm {
  // The Ringside trainer, any command under mpirun, or a user's PyTorch script (docs/pytorch.md).
  enum class Job { kTrainer, kCommand, kPython };

  QString name = QStringLiteral("fashion-mnist mlp");
  QStringList tags;
  Job job = Job::kTrainer;
  // Trainer settings; the defaults are ringside-trainer's (defaultTrainerConfig()).
  QString dataDir = QString::fromStdString(defaultTrainerConfig().data());
  // mlp | cnn; hidden is the MLP's, channels, dropout and convAlgorithm the CNN's
  // (docs/trainer.md, Models).
  QString model = QString::fromStdString(defaultTrainerConfig().model());
  QList<int> hidden{defaultTrainerConfig().hidden().begin(), defaultTrainerConfig().hidden().end()};
  QList<int> channels{defaultTrainerConfig().channels().begin(),
                      defaultTrainerConfig().channels().end()};
  double dropout = defaultTrainerConfig().dropout();
  // How the CNN computes its convolutions (run spec key conv_algorithm, the trainer's
  // --conv-algorithm): auto | direct. "auto" uses Winograd for the conv layers where it is faster
  // on this CPU, "direct" computes every layer directly (PyTorch's choice on a CPU, and its
  // rounding); docs/trainer.md, "Convolution algorithm".
  QString convAlgorithm = QString::fromStdString(defaultTrainerConfig().conv_algorithm());
  QString optimizer = QString::fromStdString(defaultTrainerConfig().optimizer());  // sgd | adamw
  double lr = defaultTrainerConfig().lr();
  double momentum = defaultTrainerConfig().momentum();
  bool nesterov = defaultTrainerConfig().nesterov();
  double weightDecay = defaultTrainerConfig().weight_decay();
  double beta1 = defaultTrainerConfig().beta1();
  double beta2 = defaultTrainerConfig().beta2();
  // constant | step | cosine
  QString lrSchedule = QString::fromStdString(defaultTrainerConfig().lr_schedule());
  qint64 warmupSteps = defaultTrainerConfig().warmup_steps();
  double lrStepEpochs = defaultTrainerConfig().lr_step_epochs();
  double lrGamma = defaultTrainerConfig().lr_gamma();
  double lrMin = defaultTrainerConfig().lr_min();
  int epochs = defaultTrainerConfig().epochs();
  qint64 globalBatch = defaultTrainerConfig().global_batch();
  // Gradient accumulation (run spec key micro_batch, the trainer's --micro-batch): samples per
  // forward/backward pass on a rank; 0 = the local batch in one pass. It must divide the local
  // batch (global batch / world size), and the nccl backend has none.
  qint64 microBatch = defaultTrainerConfig().micro_batch();
  QString backend = QString::fromStdString(defaultTrainerConfig().backend());  // auto | mpi | nccl
  double bucketMb = defaultTrainerConfig().bucket_mb();
  qint64 checkpointEvery = defaultTrainerConfig().checkpoint_every();
  // The metric interval (run spec key log_every, the trainer's --log-every): every rank reports
  // its metrics, each the mean over the steps since its last report, every this many global
  // steps (and at the end of each epoch). 1 = every step: full per-step resolution in the charts
  // and the per-rank heatmap. At least 1.
  int logEvery = defaultTrainerConfig().log_every();
  // The hang timeout (RunSpec.hang_timeout_s, docs/metrics.md "Hangs"): the owner agent fails
  // the run after this many seconds without progress. 0 = never; at most kMaxTimeoutSeconds; for
  // the trainer shorter than its collective timeout (validateHangTimeout).
  int hangTimeoutSeconds = static_cast<int>(kDefaultHangTimeoutSeconds);
  // The run's place in its owner agent's queue when its slots are busy (RunSpec.priority,
  // docs/queue.md): high runs start before normal ones, normal before low. A Slurm job's
  // priority is Slurm's.
  v1::RunPriority priority = v1::NORMAL_PRIORITY;
  quint64 seed = defaultTrainerConfig().seed();
  // Resume from checkpoint (run spec key resume, the trainer's --resume): a checkpoint file, or a
  // directory whose newest checkpoint the trainer continues from, on the node that owns the run
  // (a relative path is under the new run's own directory); "" = start afresh. A clone of a
  // resumed run keeps it; Resume (Controller::resumeRun) sets it to the original's checkpoint
  // directory. The trainer checks the checkpoint against the spec at start (docs/checkpoint.md).
  QString resumeFrom = QString::fromStdString(defaultTrainerConfig().resume());
  // The run spec this form was made from (a clone's or a preset's), for the keys the form has no
  // field for (train_samples, max_steps, threads, ...): trainerConfig() starts from it, so they
  // survive a clone or a preset. Empty for a new form.
  v1::TrainerConfig trainerBase;
  // Custom command: a command line, split on whitespace with "double quotes" grouping.
  QString command;
  // PyTorch script (RunSpec.python): the script's path on every node of the run (absolute, or
  // relative to the working directory), its arguments (a command line as `command` is), the
  // interpreter, the working directory ("" = the run's own directory), and whether each rank
  // takes a GPU (nccl) or a CPU core (gloo).
  QString pythonScript;
  QString pythonArgs;
  QString pythonInterpreter = QStringLiteral("/usr/bin/python3");
  QString pythonWorkingDir;
  bool pythonUseGpus = false;
  // Extra environment of the ranks (RunSpec.env), for every job: one NAME=value per line.
  QString environment;
  // Placement: the chosen nodes' ids in rank order (the first one owns the run) and the ranks
  // on each; world size = nodeIds.size() x ranksPerNode. Empty: none chosen yet.
  QStringList nodeIds;
  int ranksPerNode = 2;
  // The host names of the spec this form was made from (fromRunSpec of a spec with hosts), not
  // yet mapped to nodeIds: resolveSpecHosts() does that. Not used by toRunSpec() or presets.
  QStringList specHosts;

  // A Slurm job (RunSpec.slurm, docs/slurm.md): set (slurm.nodes() >= 1) when the run's node is
  // a Slurm login node (NodeChoice::slurm), which places the job itself: nodeIds then holds that
  // node alone, ranksPerNode is the tasks per node and slurm.nodes() the job's nodes. Its other
  // fields are the sbatch options (partition, GPUs per node, time limit, account, QOS, the
  // site's GPU request, requeue). nodes() == 0: not a Slurm job.
  v1::SlurmOptions slurm;

  // Ranks the run would start: nodeIds.size() x ranksPerNode (one node when none is chosen yet),
  // or for a Slurm job slurm.nodes() x ranksPerNode.
  int worldSize() const;
};

struct NodeChoice;

// Whether the form's ranks take GPU slots on `node` (the agent's rule, RunManager::usesGpus): the
// trainer with the nccl backend, or auto on a node with GPUs; a PyTorch script that uses GPUs.
// Everything else takes CPU slots (cores).
bool usesGpus(const RunForm& form, const NodeChoice& node);

// Whether `node` can take the form's ranks now: online, not draining, and with a free slot of the
// kind they take (usesGpus: a GPU, else a CPU slot; a GPU run on a node without GPUs cannot). A
// node whose free slots are unknown (freeCpuSlots/freeGpuSlots -1) counts as able: the agent
// checks at launch. The run form's own checks (validate) refuse the others.
bool canTakeRanks(const RunForm& form, const NodeChoice& node);

// The ranks per node a new run starts with on `node` (defaults that launch): on a node
// with GPUs its free GPUs (at least 1), so the default trainer run (backend auto) takes every
// free GPU; on a CPU node 2, or its free CPU slots when fewer are free (at least 1).
int defaultRanksPerNode(const NodeChoice& node);

// The run the New run form starts with: the trainer's defaults with the CNN (--model cnn) for 5
// epochs, named "fashion-mnist cnn": a run long enough to watch (about a minute at 2 ranks on 2
// cores: 2 epochs took 23 s in the screenshot tour), where a RunForm{} is the trainer's own
// default, the MLP (a few seconds); the MLP is one choice away in the form's Model box.
RunForm watchedDefaultRun();

// A node the run can be placed on, as the run setup form needs to know it (the controller makes
// these from its nodes: Controller::nodeChoices()).
struct NodeChoice {
  QString nodeId;
  QString name;  // display name, used in messages
  // Slots by kind (NodeInfo, protocol version 2): free CPU slots (cores) and free GPUs, < 0 when
  // unknown (not checked); the node's GPU count (0: a CPU node).
  int freeCpuSlots = -1;
  int freeGpuSlots = -1;
  int gpuSlotsTotal = 0;
  int cpuSlotsTotal = -1;  // the node's CPU slots in all; < 0 when unknown
  bool online = false;
  bool draining = false;  // a draining node accepts no new runs
  // The host as mpirun's --host takes it: the hostname the node's agent reported in its Hello
  // (NodeInfo.hostname), else the host of the node's address.
  QString hostName;
  // The node's launch settings (NodeRecord, node_settings.h): the interface or subnet for its
  // MPI/NCCL traffic, and extra mpirun options used when it owns the run.
  QString networkInterface;
  QString mpirunOptions;
  // A Slurm login node (NodeInfo.engine "slurm"): its runs are Slurm jobs, placed by Slurm; its
  // partitions as sinfo reports them (the default one first), for the run form's choice.
  bool slurm = false;
  QStringList slurmPartitions;
};

struct FieldError {
  QString field;    // the RunForm member's name, e.g. "globalBatch"
  QString message;  // translated, says what is wrong and what to do
};

// Every problem with the form; empty when it can be launched. `nodes`: the nodes known now (the
// chosen ones are looked up here). Placement errors are on field "nodeIds" (none chosen, a node
// unknown, offline or draining, two chosen nodes on one host, a GPU run on a node without GPUs)
// and "ranksPerNode" (below 1, or more than a chosen node's free slots of the kind the run takes,
// naming the node and the kind; unknown free slots are not checked);
// a global batch not divisible by the world size is on "globalBatch".
QList<FieldError> validate(const RunForm& form, const QList<NodeChoice>& nodes);

// The launch request's spec: TrainerJob.config = trainerConfig(form) (never the deprecated
// config_json), or the command. Assumes validate() found nothing. One chosen node: hosts empty and
// ranks_per_node set (the owning agent runs every rank). Several: hosts = each node's hostName
// from `nodes` (the node id when it is not there) with ranksPerNode ranks each and the node's
// networkInterface, in rank order; ranks_per_node is set as well. mpirun_args are the owner's
// (the first node's) mpirunOptions in words. HostSlots.gpus stay empty: the controller fills
// them from the pre-flight replies (Controller::launch).
v1::RunSpec toRunSpec(const RunForm& form, const QList<NodeChoice>& nodes = {});
// A form pre-filled from a run's spec: its TrainerJob.config, or the deprecated config_json of an
// old spec converted (trainerConfigOf; one that is not a valid run spec leaves the defaults).
// Keys the form has no field for are kept in trainerBase. nodeIds stay empty (a spec names hosts,
// not nodes): the spec's hosts go to specHosts; map them with resolveSpecHosts().
RunForm fromRunSpec(const v1::RunSpec& spec);
// Sets form->nodeIds to the nodes whose hostName matches form->specHosts (case-insensitive), in
// the spec's order, and clears specHosts. Returns the hosts no node matched (the form then has
// fewer nodes than the spec had). A form without specHosts is left as it is.
QStringList resolveSpecHosts(RunForm* form, const QList<NodeChoice>& nodes);

// Presets: {"format": "ringside-run-preset", "version": 1, "name": ..., "tags": [...],
// "job": "trainer"|"command"|"python", "trainer": {run-spec keys}, "command": "...",
// "python": {"script", "args", "interpreter", "working_dir", "use_gpus"}, "environment": "...",
// "nodes": [node ids in rank order], "ranks_per_node": N}; "trainer" is trainerConfig(form) in
// protobuf's JSON mapping (docs/run-spec.md). Presets written before multi-node placement have
// "node_id": "..." (or no node at all) instead of "nodes"; both read.
QJsonObject toPreset(const RunForm& form);
// Errors: *error says what is wrong (not a preset, wrong version, a value of the wrong type, a
// "trainer" entry that is not a valid run spec: an unknown key or a value of the wrong type);
// the returned form keeps the defaults for anything missing.
RunForm fromPreset(const QJsonObject& preset, QString* error);

// The form's run spec: trainerBase with the form's trainer settings set over it (momentum and
// nesterov only for sgd, the betas only for adamw, the step or cosine parameters only for that
// schedule).
v1::TrainerConfig trainerConfig(const RunForm& form);
// A command line as the form's command field holds it, in words: QProcess::splitCommand's rules
// ("a b \"c d\"" -> {"a", "b", "c d"}; a literal quote is written as three). joinCommandLine is
// its inverse: splitCommandLine(joinCommandLine(words)) == words for any non-empty words (an empty
// word cannot be written in QProcess's syntax and is dropped).
QStringList splitCommandLine(const QString& line);
QString joinCommandLine(const QStringList& words);

}  // namespace ringside::gui

Q_DECLARE_METATYPE(ringside::gui::RunForm)
