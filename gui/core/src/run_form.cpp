#include "ringside/gui/run_form.h"

#include <QCoreApplication>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <algorithm>
#include <functional>

#include "ringside/common/run_spec_limits.h"
#include "ringside/gui/node_settings.h"

namespace ringside::gui {

namespace {

// lupdate files the tr() calls of free functions under their namespace, so that is the context.
QString tr(const char* text) { return QCoreApplication::translate("ringside::gui", text); }

constexpr int kPresetVersion = 1;

// A node known to have no GPU (not one whose slots are unknown), which GPU ranks cannot use.
bool knownWithoutGpu(const NodeChoice& node) {
  return node.gpuSlotsTotal == 0 && node.freeGpuSlots >= 0;
}

// The node's free slots of the kind the ranks take (GPUs or CPU slots); < 0 when unknown.
int freeSlotsFor(bool gpus, const NodeChoice& node) {
  return gpus ? node.freeGpuSlots : node.freeCpuSlots;
}

}  // namespace

QStringList splitCommandLine(const QString& line) { return QProcess::splitCommand(line); }

QString joinCommandLine(const QStringList& words) {
  QStringList quoted;
  for (QString word : words) {
    // QProcess::splitCommand's quoting: a word with white space or quotes in double quotes, a
    // literal quote as three.
    if (word.contains(QLatin1Char('"')) ||
        std::any_of(word.begin(), word.end(), [](QChar c) { return c.isSpace(); })) {
      word.replace(QLatin1Char('"'), QStringLiteral("\"\"\""));
      word = QLatin1Char('"') + word + QLatin1Char('"');
    }
    quoted << word;
  }
  return quoted.join(QLatin1Char(' '));
}

int RunForm::worldSize() const {
  if (slurm.nodes() > 0) return static_cast<int>(slurm.nodes()) * ranksPerNode;
  return static_cast<int>(std::max<qsizetype>(1, nodeIds.size())) * ranksPerNode;
}

bool usesGpus(const RunForm& form, const NodeChoice& node) {
  switch (form.job) {
    case RunForm::Job::kPython:
      return form.pythonUseGpus;
    case RunForm::Job::kCommand:
      return false;
    case RunForm::Job::kTrainer:
      return form.backend == QLatin1String("nccl") ||
             (form.backend == QLatin1String("auto") && node.gpuSlotsTotal > 0);
  }
  return false;
}

bool canTakeRanks(const RunForm& form, const NodeChoice& node) {
  if (!node.online || node.draining) return false;
  if (node.slurm) return true;  // Slurm holds the job until its nodes are free
  const bool gpus = usesGpus(form, node);
  if (gpus && knownWithoutGpu(node)) return false;
  return freeSlotsFor(gpus, node) != 0;
}

int defaultRanksPerNode(const NodeChoice& node) {
  if (node.slurm) return 1;  // per node of the job; the job's nodes are the Slurm options'
  if (node.gpuSlotsTotal > 0) return std::max(1, node.freeGpuSlots);
  return node.freeCpuSlots < 0 ? 2 : std::clamp(node.freeCpuSlots, 1, 2);
}

namespace {

// One NAME=value per line of the form's environment field; blank lines skipped. Sets *problem to
// the first line that is not such an assignment, or names a variable the agent sets itself.
QList<QPair<QString, QString>> parseEnvironment(const QString& text, QString* problem) {
  QList<QPair<QString, QString>> entries;
  static const QRegularExpression name(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
  for (const QString& raw : text.split(QLatin1Char('\n'))) {
    const QString line = raw.trimmed();
    if (line.isEmpty()) continue;
    const qsizetype equals = line.indexOf(QLatin1Char('='));
    const QString key = equals < 0 ? line : line.left(equals).trimmed();
    if (equals < 0 || !name.match(key).hasMatch()) {
      if (problem != nullptr && problem->isEmpty()) {
        *problem = tr("\"%1\" is not NAME=value (a name of letters, digits and _).").arg(line);
      }
      continue;
    }
    if (key.startsWith(QLatin1String("RINGSIDE_")) ||
        key == QLatin1String("CUDA_VISIBLE_DEVICES")) {
      if (problem != nullptr && problem->isEmpty()) {
        *problem = tr("%1 is set by the agent for every run; remove it.").arg(key);
      }
      continue;
    }
    entries.append({key, line.mid(equals + 1)});
  }
  return entries;
}

}  // namespace

namespace {

const NodeChoice* findNode(const QList<NodeChoice>& nodes, const QString& nodeId) {
  for (const NodeChoice& node : nodes) {
    if (node.nodeId == nodeId) return &node;
  }
  return nullptr;
}

QString displayName(const NodeChoice& node) {
  return node.name.isEmpty() ? node.nodeId : node.name;
}

// The node, the ranks and the host checks of validate().
void validatePlacement(const RunForm& form, const QList<NodeChoice>& nodes,
                       const std::function<void(const char*, const QString&)>& add) {
  if (form.nodeIds.isEmpty()) {
    add("nodeIds", tr("Choose at least one node to run on (add nodes under Nodes)."));
  }
  const NodeChoice* fewestFree = nullptr;
  int fewestFreeCount = 0;
  bool fewestFreeGpus = false;
  QHash<QString, const NodeChoice*> byHost;  // lower-case host name -> the first node on it
  for (const QString& nodeId : form.nodeIds) {
    const NodeChoice* node = findNode(nodes, nodeId);
    if (node == nullptr) {
      add("nodeIds", tr("Node %1 is not known (removed?); choose another node.").arg(nodeId));
      continue;
    }
    if (!node->online) {
      add("nodeIds", tr("%1 is offline; wait until it is online or choose another node.")
                         .arg(displayName(*node)));
    } else if (node->draining) {
      add("nodeIds", tr("%1 is draining and accepts no new runs; undrain it under Nodes or "
                        "choose another node.")
                         .arg(displayName(*node)));
    }
    if (node->slurm) {
      // Slurm places the job on its own nodes: nothing here to count.
      if (form.nodeIds.size() > 1) {
        add("nodeIds", tr("%1 is a Slurm cluster, which places its jobs itself: choose it alone, "
                          "and give the job's nodes under Slurm job.")
                           .arg(displayName(*node)));
      }
      if (form.ranksPerNode < 1) add("ranksPerNode", tr("A run needs at least one rank."));
      return;
    }
    const bool gpus = usesGpus(form, *node);
    if (gpus && knownWithoutGpu(*node)) {
      add("nodeIds",
          form.job == RunForm::Job::kPython
              ? tr("%1 has no GPU; uncheck \"Use GPUs\" to run the script on its CPU cores, or "
                   "choose a GPU node.")
                    .arg(displayName(*node))
              : tr("%1 has no GPU; choose the MPI (CPU) backend or a GPU node.")
                    .arg(displayName(*node)));
      continue;
    }
    const int free = freeSlotsFor(gpus, *node);
    if (free >= 0 && (fewestFree == nullptr || free < fewestFreeCount)) {
      fewestFree = node;
      fewestFreeCount = free;
      fewestFreeGpus = gpus;
    }
    // mpirun would put both nodes' ranks on that one host.
    if (form.nodeIds.size() > 1 && !node->hostName.isEmpty()) {
      const QString host = node->hostName.toLower();
      if (const NodeChoice* first = byHost.value(host)) {
        add("nodeIds", tr("%1 and %2 are the same host (%3); choose only one of them.")
                           .arg(displayName(*first), displayName(*node), node->hostName));
      } else {
        byHost.insert(host, node);
      }
    }
  }
  // A one-node run on busy slots waits in its agent's queue (docs/queue.md): only more ranks
  // than the node has in all is refused. A multi-node run is not queued: it needs free slots.
  const bool queued = form.nodeIds.size() == 1;
  const NodeChoice* only = queued ? findNode(nodes, form.nodeIds.first()) : nullptr;
  const int total = only == nullptr ? -1
                    : usesGpus(form, *only) ? only->gpuSlotsTotal
                                            : only->cpuSlotsTotal;
  if (form.ranksPerNode < 1) {
    add("ranksPerNode", tr("A run needs at least one rank."));
  } else if (queued) {
    if (only != nullptr && total >= 0 && form.ranksPerNode > total) {
      add("ranksPerNode",
          usesGpus(form, *only)
              ? tr("%1 has %L2 GPUs in all (one per rank); choose at most %L2 ranks per node, "
                   "or add nodes.")
                    .arg(displayName(*only))
                    .arg(total)
              : tr("%1 has %L2 CPU slots in all; choose at most %L2 ranks per node, or add "
                   "nodes.")
                    .arg(displayName(*only))
                    .arg(total));
    }
  } else if (fewestFree != nullptr && form.ranksPerNode > fewestFreeCount) {
    add("ranksPerNode",
        fewestFreeGpus
            ? tr("Only %L1 GPUs are free on %2 (one per rank); choose at most %L1 ranks per "
                 "node, or stop a run that holds GPUs there.")
                  .arg(fewestFreeCount)
                  .arg(displayName(*fewestFree))
            : tr("Only %L1 CPU slots are free on %2; choose at most %L1 ranks per node.")
                  .arg(fewestFreeCount)
                  .arg(displayName(*fewestFree)));
  }
}

}  // namespace

namespace {

QList<FieldError> validateFields(const RunForm& form, const QList<NodeChoice>& nodes) {
  QList<FieldError> errors;
  auto add = [&](const char* field, const QString& message) {
    errors.append({QString::fromLatin1(field), message});
  };
  if (form.name.trimmed().isEmpty()) add("name", tr("Give the run a name."));
  validatePlacement(form, nodes, add);
  QString envProblem;
  parseEnvironment(form.environment, &envProblem);
  if (!envProblem.isEmpty()) add("environment", envProblem);
  if (form.hangTimeoutSeconds < 0 || form.hangTimeoutSeconds > kMaxTimeoutSeconds) {
    add("hangTimeout", tr("The hang timeout must be 0 (never) or at most %L1 s (a week).")
                           .arg(kMaxTimeoutSeconds));
  }
  if (form.job == RunForm::Job::kPython) {
    const QString script = form.pythonScript.trimmed();
    if (script.isEmpty()) {
      add("pythonScript", tr("Enter the path of the script on the nodes, e.g. "
                             "/srv/train/ddp_fashion_mnist.py."));
    } else if (!script.startsWith(QLatin1Char('/')) && form.pythonWorkingDir.trimmed().isEmpty()) {
      add("pythonScript", tr("Give an absolute path, or a working directory the script is in."));
    }
    if (form.pythonInterpreter.trimmed().isEmpty()) {
      add("pythonInterpreter", tr("Enter the Python interpreter, e.g. /usr/bin/python3."));
    }
    return errors;
  }
  if (form.job == RunForm::Job::kCommand) {
    if (splitCommandLine(form.command).isEmpty()) {
      add("command", tr("Enter the command to run, e.g. python3 train.py --epochs 3."));
    }
    return errors;
  }
  if (form.dataDir.trimmed().isEmpty()) add("dataDir", tr("Choose the dataset directory."));
  if (form.model == QLatin1String("cnn")) {
    if (form.channels.isEmpty() || form.channels.size() > 4) {
      add("channels", tr("Give 1 to 4 conv stages' channels, e.g. 32,64 (each stage halves the "
                         "28x28 image)."));
    }
    for (int channels : form.channels) {
      if (channels <= 0 || channels > kMaxConvChannels) {
        add("channels",
            tr("Channels must be from 1 to %L1 (got %2).").arg(kMaxConvChannels).arg(channels));
        break;
      }
    }
    if (!(form.dropout >= 0.0 && form.dropout < 1.0)) {
      add("dropout", tr("Dropout is a probability from 0 to below 1."));
    }
    if (form.convAlgorithm != QLatin1String("auto") &&
        form.convAlgorithm != QLatin1String("direct")) {
      add("convAlgorithm", tr("Choose Auto or Direct."));
    }
  } else if (form.model == QLatin1String("mlp")) {
    if (form.hidden.isEmpty())
      add("hidden", tr("Give at least one hidden layer width, e.g. 256,128."));
    for (int width : form.hidden) {
      if (width <= 0) {
        add("hidden", tr("Layer widths must be positive (got %1).").arg(width));
        break;
      }
    }
  } else {
    add("model", tr("Choose the MLP or the CNN."));
  }
  if (form.epochs < 1) add("epochs", tr("Train for at least one epoch."));
  if (form.globalBatch < 1) add("globalBatch", tr("The global batch must be at least 1."));
  // Every rank takes global batch / world size samples a step (the local batch of docs/architecture.md's vocabulary).
  const int worldSize = form.worldSize();
  if (form.ranksPerNode >= 1 && form.globalBatch >= 1 && form.globalBatch % worldSize != 0) {
    if (form.nodeIds.size() > 1) {
      add("globalBatch",
          tr("The global batch %L1 is not divisible by the world size %L2 (%L3 nodes "
             "× %L4 ranks); use a multiple of %L2.")
              .arg(form.globalBatch)
              .arg(worldSize)
              .arg(form.nodeIds.size())
              .arg(form.ranksPerNode));
    } else {
      add("globalBatch",
          tr("The global batch %1 is not divisible by %2 ranks; use a multiple of %2.")
              .arg(form.globalBatch)
              .arg(worldSize));
    }
  }
  if (form.microBatch < 0) {
    add("microBatch", tr("The micro-batch cannot be negative; 0 computes the local batch in one "
                         "pass."));
  } else if (form.microBatch > 0 && form.ranksPerNode >= 1 && form.globalBatch >= 1 &&
             form.globalBatch % worldSize == 0 &&
             (form.globalBatch / worldSize) % form.microBatch != 0) {
    add("microBatch", tr("The micro-batch %L1 does not divide the local batch %L2 (global batch "
                         "%L3 / %L4 ranks); use a divisor of %L2, or 0.")
                          .arg(form.microBatch)
                          .arg(form.globalBatch / worldSize)
                          .arg(form.globalBatch)
                          .arg(worldSize));
  } else if (form.microBatch > 0 && form.backend == QLatin1String("nccl")) {
    add("microBatch", tr("Micro-batches need the MPI (CPU) backend; set 0 for NCCL."));
  }
  if (!(form.lr > 0.0)) add("lr", tr("The learning rate must be above 0."));
  if (form.momentum < 0.0 || form.momentum >= 1.0) {
    add("momentum", tr("Momentum must be in [0, 1)."));
  }
  if (form.weightDecay < 0.0) add("weightDecay", tr("Weight decay cannot be negative."));
  if (form.optimizer == QLatin1String("adamw") &&
      (form.beta1 < 0 || form.beta1 >= 1 || form.beta2 < 0 || form.beta2 >= 1)) {
    add("beta1", tr("AdamW betas must be in [0, 1)."));
  }
  if (form.optimizer != QLatin1String("sgd") && form.optimizer != QLatin1String("adamw")) {
    add("optimizer", tr("Choose SGD or AdamW."));
  }
  if (form.lrSchedule != QLatin1String("constant") && form.lrSchedule != QLatin1String("step") &&
      form.lrSchedule != QLatin1String("cosine")) {
    add("lrSchedule", tr("Choose a constant, step or cosine schedule."));
  }
  if (form.warmupSteps < 0) add("warmupSteps", tr("Warm-up steps cannot be negative."));
  if (form.lrSchedule == QLatin1String("step") && !(form.lrStepEpochs > 0)) {
    add("lrStepEpochs", tr("The step schedule needs a period above 0 epochs."));
  }
  if (form.lrMin < 0 || form.lrMin > form.lr) {
    add("lrMin", tr("The final learning rate must be between 0 and the learning rate."));
  }
  if (form.backend != QLatin1String("auto") && form.backend != QLatin1String("mpi") &&
      form.backend != QLatin1String("nccl")) {
    add("backend", tr("Choose auto, mpi or nccl."));
  }
  if (!(form.bucketMb > 0)) add("bucketMb", tr("The bucket size must be above 0 MiB."));
  if (form.checkpointEvery < 0)
    add("checkpointEvery", tr("The checkpoint interval cannot be negative."));
  // The trainer's own bound (validateTrainerConfig): 1 to 2^31 - 1, which an int holds.
  if (form.logEvery < 1) {
    add("logEvery",
        tr("The metric interval must be at least 1 step (1 reports every step; got %L1).")
            .arg(form.logEvery));
  }
  return errors;
}

}  // namespace

QList<FieldError> validate(const RunForm& form, const QList<NodeChoice>& nodes) {
  QList<FieldError> errors = validateFields(form, nodes);
  if (form.slurm.nodes() > 0) {
    // Slurm names and the GPU request as the agent checks them (docs/slurm.md).
    static const QRegularExpression name(QStringLiteral("^[A-Za-z0-9_.-]{0,64}$"));
    static const QRegularExpression request(QStringLiteral("^--[A-Za-z0-9_.:=,{}-]*$"));
    for (const auto& [text, what] :
         {std::pair{form.slurm.partition(), tr("partition")},
          std::pair{form.slurm.account(), tr("account")}, std::pair{form.slurm.qos(), tr("QOS")}}) {
      if (!name.match(QString::fromStdString(text)).hasMatch()) {
        errors.append({QStringLiteral("slurm"),
                       tr("The %1 is not a Slurm name: use up to 64 letters, digits, '_', '.' "
                          "and '-'.")
                           .arg(what)});
      }
    }
    const QString gpuRequest = QString::fromStdString(form.slurm.gpu_request());
    if (!gpuRequest.isEmpty() &&
        (!request.match(gpuRequest).hasMatch() || !gpuRequest.contains(QLatin1String("{n}")))) {
      errors.append({QStringLiteral("slurm"),
                     tr("The GPU request is one sbatch option with {n} for the GPUs per node, "
                        "such as --gpus-per-node={n} or --gres=gpu:{n}.")});
    }
  }
  if (!errors.isEmpty()) return errors;
  // The agent's bounds on a run spec (run_spec_limits.h), checked here too so that a form the
  // agent would refuse is not sent: the same limits at both ends.
  const v1::RunSpec spec = toRunSpec(form, nodes);
  if (const Status hang = validateHangTimeout(spec); !hang.isOk()) {
    errors.append(
        {QStringLiteral("hangTimeout"), tr("%1.").arg(QString::fromStdString(hang.message()))});
    return errors;
  }
  const Status limits = validateRunSpecLimits(spec);
  if (!limits.isOk()) {
    const QString message = QString::fromStdString(limits.message());
    const char* field = message.startsWith(QLatin1String("the run's name"))          ? "name"
                        : message.startsWith(QLatin1String("the run's environment")) ? "environment"
                        : form.job == RunForm::Job::kCommand                         ? "command"
                        : form.job == RunForm::Job::kPython ? "pythonScript"
                                                            : "name";
    errors.append({QString::fromLatin1(field),
                   tr("The run is too large to send: %1. Shorten it.").arg(message)});
  }
  return errors;
}

v1::TrainerConfig trainerConfig(const RunForm& f) {
  v1::TrainerConfig config = f.trainerBase;
  config.set_data(f.dataDir.toStdString());
  config.set_model(f.model.toStdString());
  config.clear_hidden();
  for (int width : f.hidden) config.add_hidden(width);
  config.clear_channels();
  for (int channels : f.channels) config.add_channels(channels);
  config.set_dropout(f.dropout);
  config.set_conv_algorithm(f.convAlgorithm.toStdString());
  config.set_optimizer(f.optimizer.toStdString());
  config.set_lr(f.lr);
  config.set_weight_decay(f.weightDecay);
  config.set_lr_schedule(f.lrSchedule.toStdString());
  config.set_warmup_steps(static_cast<int32_t>(f.warmupSteps));
  config.set_epochs(f.epochs);
  config.set_global_batch(static_cast<int32_t>(f.globalBatch));
  config.set_micro_batch(static_cast<int32_t>(f.microBatch));
  config.set_backend(f.backend.toStdString());
  config.set_bucket_mb(f.bucketMb);
  config.set_checkpoint_every(static_cast<int32_t>(f.checkpointEvery));
  config.set_log_every(f.logEvery);
  config.set_seed(f.seed);
  if (f.resumeFrom.trimmed().isEmpty()) {
    config.clear_resume();
  } else {
    config.set_resume(f.resumeFrom.trimmed().toStdString());
  }
  // Only the parameters the chosen optimizer and schedule use.
  config.clear_momentum();
  config.clear_nesterov();
  config.clear_beta1();
  config.clear_beta2();
  config.clear_lr_step_epochs();
  config.clear_lr_gamma();
  config.clear_lr_min();
  if (f.optimizer == QLatin1String("sgd")) {
    config.set_momentum(f.momentum);
    config.set_nesterov(f.nesterov);
  } else {
    config.set_beta1(f.beta1);
    config.set_beta2(f.beta2);
  }
  if (f.lrSchedule == QLatin1String("step")) {
    config.set_lr_step_epochs(f.lrStepEpochs);
    config.set_lr_gamma(f.lrGamma);
  } else if (f.lrSchedule == QLatin1String("cosine")) {
    config.set_lr_min(f.lrMin);
  }
  return config;
}

v1::RunSpec toRunSpec(const RunForm& form, const QList<NodeChoice>& nodes) {
  v1::RunSpec spec;
  spec.set_name(form.name.trimmed().toStdString());
  for (const QString& tag : form.tags) spec.add_tags(tag.trimmed().toStdString());
  spec.set_ranks_per_node(static_cast<uint32_t>(form.ranksPerNode));
  spec.set_hang_timeout_s(static_cast<uint32_t>(std::max(0, form.hangTimeoutSeconds)));
  spec.set_priority(form.priority);
  if (form.slurm.nodes() > 0) {
    // A Slurm job: Slurm places it; the ranks per node are its tasks per node (docs/slurm.md).
    *spec.mutable_slurm() = form.slurm;
    spec.mutable_slurm()->set_tasks_per_node(static_cast<uint32_t>(form.ranksPerNode));
  } else if (form.nodeIds.size() > 1) {
    // mpirun on the first node starts the other nodes' ranks (over the node's launcher, ssh on a
    // real cluster) by host name; their ranks push their metrics to the owner's agent over CURVE
    // (docs/protocol.md, "Ranks on other nodes").
    for (const QString& nodeId : form.nodeIds) {
      const NodeChoice* node = findNode(nodes, nodeId);
      v1::HostSlots* host = spec.add_hosts();
      host->set_host(
          (node != nullptr && !node->hostName.isEmpty() ? node->hostName : nodeId).toStdString());
      host->set_ranks(static_cast<uint32_t>(form.ranksPerNode));
      if (node != nullptr) host->set_network_interface(node->networkInterface.toStdString());
    }
  }
  // The owner's agent runs mpirun, so its node's options apply.
  if (const NodeChoice* owner =
          form.nodeIds.isEmpty() ? nullptr : findNode(nodes, form.nodeIds[0])) {
    for (const QString& word : splitMpirunOptions(owner->mpirunOptions)) {
      spec.add_mpirun_args(word.toStdString());
    }
  }
  for (const auto& [name, value] : parseEnvironment(form.environment, nullptr)) {
    (*spec.mutable_env())[name.toStdString()] = value.toStdString();
  }
  if (form.job == RunForm::Job::kPython) {
    v1::PythonScript* job = spec.mutable_python();
    job->set_script(form.pythonScript.trimmed().toStdString());
    for (const QString& word : splitCommandLine(form.pythonArgs)) job->add_args(word.toStdString());
    job->set_python(form.pythonInterpreter.trimmed().toStdString());
    job->set_working_dir(form.pythonWorkingDir.trimmed().toStdString());
    job->set_use_gpus(form.pythonUseGpus);
  } else if (form.job == RunForm::Job::kCommand) {
    for (const QString& word : splitCommandLine(form.command)) {
      spec.mutable_command()->add_argv(word.toStdString());
    }
  } else {
    *spec.mutable_trainer()->mutable_config() = trainerConfig(form);
  }
  return spec;
}

namespace {

// Sets the form's fields from the keys `c` has; keeps `c` whole as the form's trainerBase.
void applyTrainerConfig(const v1::TrainerConfig& c, RunForm* f) {
  const auto text = [](const std::string& value) { return QString::fromStdString(value); };
  if (c.has_data()) f->dataDir = text(c.data());
  if (c.has_model()) f->model = text(c.model());
  if (c.hidden_size() > 0) f->hidden = QList<int>(c.hidden().begin(), c.hidden().end());
  if (c.channels_size() > 0) f->channels = QList<int>(c.channels().begin(), c.channels().end());
  if (c.has_dropout()) f->dropout = c.dropout();
  if (c.has_conv_algorithm()) f->convAlgorithm = text(c.conv_algorithm());
  if (c.has_optimizer()) f->optimizer = text(c.optimizer());
  if (c.has_lr()) f->lr = c.lr();
  if (c.has_momentum()) f->momentum = c.momentum();
  if (c.has_nesterov()) f->nesterov = c.nesterov();
  // Absent or negative: the optimizer's default (run_spec.h), shown as its value.
  f->weightDecay = withTrainerDefaults(c).weight_decay();
  if (c.has_beta1()) f->beta1 = c.beta1();
  if (c.has_beta2()) f->beta2 = c.beta2();
  if (c.has_lr_schedule()) f->lrSchedule = text(c.lr_schedule());
  if (c.has_warmup_steps()) f->warmupSteps = c.warmup_steps();
  if (c.has_lr_step_epochs()) f->lrStepEpochs = c.lr_step_epochs();
  if (c.has_lr_gamma()) f->lrGamma = c.lr_gamma();
  if (c.has_lr_min()) f->lrMin = c.lr_min();
  if (c.has_epochs()) f->epochs = c.epochs();
  if (c.has_global_batch()) f->globalBatch = c.global_batch();
  if (c.has_micro_batch()) f->microBatch = c.micro_batch();
  if (c.has_backend()) f->backend = text(c.backend());
  if (c.has_bucket_mb()) f->bucketMb = c.bucket_mb();
  if (c.has_checkpoint_every()) f->checkpointEvery = c.checkpoint_every();
  if (c.has_log_every()) f->logEvery = c.log_every();
  if (c.has_seed()) f->seed = c.seed();
  if (c.has_resume()) f->resumeFrom = text(c.resume());
  f->trainerBase = c;
}

}  // namespace

RunForm fromRunSpec(const v1::RunSpec& spec) {
  RunForm form;
  form.name = QString::fromStdString(spec.name());
  for (const auto& tag : spec.tags()) form.tags << QString::fromStdString(tag);
  form.hangTimeoutSeconds = static_cast<int>(
      std::min<uint32_t>(hangTimeoutSeconds(spec), static_cast<uint32_t>(kMaxTimeoutSeconds)));
  form.priority = v1::RunPriority_IsValid(spec.priority()) ? spec.priority() : v1::NORMAL_PRIORITY;
  if (spec.ranks_per_node() > 0) {
    form.ranksPerNode = static_cast<int>(spec.ranks_per_node());
  } else {
    form.ranksPerNode = spec.hosts_size() > 0 ? static_cast<int>(spec.hosts(0).ranks()) : 1;
  }
  for (const v1::HostSlots& host : spec.hosts())
    form.specHosts << QString::fromStdString(host.host());
  if (spec.has_slurm()) {
    form.slurm = spec.slurm();
    if (form.slurm.nodes() == 0) form.slurm.set_nodes(1);
    if (spec.slurm().tasks_per_node() > 0) {
      form.ranksPerNode = static_cast<int>(spec.slurm().tasks_per_node());
    }
  }
  QStringList environment;
  for (const auto& [name, value] : spec.env()) {
    environment << QString::fromStdString(name) + QLatin1Char('=') + QString::fromStdString(value);
  }
  environment.sort();
  form.environment = environment.join(QLatin1Char('\n'));
  if (spec.has_python()) {
    form.job = RunForm::Job::kPython;
    const v1::PythonScript& job = spec.python();
    form.pythonScript = QString::fromStdString(job.script());
    QStringList words;
    for (const auto& word : job.args()) words << QString::fromStdString(word);
    form.pythonArgs = joinCommandLine(words);
    if (!job.python().empty()) form.pythonInterpreter = QString::fromStdString(job.python());
    form.pythonWorkingDir = QString::fromStdString(job.working_dir());
    form.pythonUseGpus = job.use_gpus();
  } else if (spec.has_command()) {
    form.job = RunForm::Job::kCommand;
    QStringList words;
    for (const auto& word : spec.command().argv()) words << QString::fromStdString(word);
    form.command = joinCommandLine(words);
  } else if (spec.has_trainer()) {
    // An old spec's config_json that is not a valid run spec leaves the form's defaults.
    const auto config = trainerConfigOf(spec.trainer());
    if (config.isOk()) applyTrainerConfig(config.value(), &form);
  }
  return form;
}

QJsonObject toPreset(const RunForm& form) {
  return QJsonObject{
      {"format", "ringside-run-preset"},
      {"version", kPresetVersion},
      {"name", form.name},
      {"tags", QJsonArray::fromStringList(form.tags)},
      {"job", form.job == RunForm::Job::kCommand  ? "command"
              : form.job == RunForm::Job::kPython ? "python"
                                                  : "trainer"},
      {"python", QJsonObject{{"script", form.pythonScript},
                             {"args", form.pythonArgs},
                             {"interpreter", form.pythonInterpreter},
                             {"working_dir", form.pythonWorkingDir},
                             {"use_gpus", form.pythonUseGpus}}},
      {"environment", form.environment},
      {"trainer",
       QJsonDocument::fromJson(QByteArray::fromStdString(trainerConfigToJson(trainerConfig(form))))
           .object()},
      {"command", form.command},
      {"nodes", QJsonArray::fromStringList(form.nodeIds)},
      {"ranks_per_node", form.ranksPerNode}};
}

QStringList resolveSpecHosts(RunForm* form, const QList<NodeChoice>& nodes) {
  if (form->specHosts.isEmpty()) return {};
  QStringList unmatched;
  form->nodeIds.clear();
  for (const QString& host : form->specHosts) {
    const NodeChoice* match = nullptr;
    for (const NodeChoice& node : nodes) {
      if (!node.hostName.isEmpty() && node.hostName.compare(host, Qt::CaseInsensitive) == 0) {
        match = &node;
        break;
      }
    }
    if (match == nullptr) {
      unmatched << host;
    } else if (!form->nodeIds.contains(match->nodeId)) {
      form->nodeIds << match->nodeId;
    }
  }
  form->specHosts.clear();
  return unmatched;
}

RunForm fromPreset(const QJsonObject& preset, QString* error) {
  RunForm form;
  error->clear();
  if (preset["format"].toString() != QLatin1String("ringside-run-preset")) {
    *error = tr("This file is not a Ringside run preset.");
    return form;
  }
  if (preset["version"].toInt() != kPresetVersion) {
    *error = tr("Preset version %1 is not supported (this Ringside reads version %2).")
                 .arg(preset["version"].toInt())
                 .arg(kPresetVersion);
    return form;
  }
  form.name = preset["name"].toString();
  for (const QJsonValue& tag : preset["tags"].toArray()) form.tags << tag.toString();
  const QString job = preset["job"].toString();
  form.job = job == QLatin1String("command")  ? RunForm::Job::kCommand
             : job == QLatin1String("python") ? RunForm::Job::kPython
                                              : RunForm::Job::kTrainer;
  if (!preset["python"].isUndefined() && !preset["python"].isObject()) {
    *error = tr("The preset's \"python\" entry must be an object.");
    return form;
  }
  const QJsonObject python = preset["python"].toObject();
  form.pythonScript = python["script"].toString();
  form.pythonArgs = python["args"].toString();
  if (python["interpreter"].isString()) form.pythonInterpreter = python["interpreter"].toString();
  form.pythonWorkingDir = python["working_dir"].toString();
  form.pythonUseGpus = python["use_gpus"].toBool();
  form.environment = preset["environment"].toString();
  if (!preset["trainer"].isUndefined() && !preset["trainer"].isObject()) {
    *error = tr("The preset's \"trainer\" entry must be an object.");
    return form;
  }
  if (preset["trainer"].isObject()) {
    // The run spec is read with protobuf's JSON mapping, as ringside-trainer --config reads it.
    const auto config = trainerConfigFromJson(
        QJsonDocument(preset["trainer"].toObject()).toJson(QJsonDocument::Compact).toStdString(),
        "\"trainer\"");
    if (!config.isOk()) {
      *error = tr("The preset's run spec is not valid: %1")
                   .arg(QString::fromStdString(config.status().message()));
      return form;
    }
    applyTrainerConfig(config.value(), &form);
  }
  form.command = preset["command"].toString();
  if (preset["ranks_per_node"].isDouble()) form.ranksPerNode = preset["ranks_per_node"].toInt();
  if (preset["nodes"].isArray()) {
    for (const QJsonValue& node : preset["nodes"].toArray()) {
      const QString nodeId = node.toString();
      if (!nodeId.isEmpty() && !form.nodeIds.contains(nodeId)) form.nodeIds << nodeId;
    }
  } else if (!preset["nodes"].isUndefined()) {
    *error = tr("The preset's \"nodes\" entry must be a list of node ids.");
    return form;
  } else if (!preset["node_id"].toString().isEmpty()) {
    form.nodeIds << preset["node_id"].toString();  // a preset from before multi-node placement
  }
  return form;
}

RunForm watchedDefaultRun() {
  RunForm form;
  form.name = QStringLiteral("fashion-mnist cnn");
  form.model = QStringLiteral("cnn");
  form.epochs = defaultEpochs("cnn");
  return form;
}

}  // namespace ringside::gui
