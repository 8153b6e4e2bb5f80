#include "ringside/gui/run_form.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <type_traits>

namespace ringside::gui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("RunForm", text); }

constexpr int kPresetVersion = 1;

}  // namespace

QStringList splitCommandLine(const QString& line) {
  QStringList words;
  QString current;
  bool quoted = false, any = false;
  for (QChar c : line) {
    if (c == QLatin1Char('"')) {
      quoted = !quoted;
      any = true;
    } else if (c.isSpace() && !quoted) {
      if (any) words << current;
      current.clear();
      any = false;
    } else {
      current += c;
      any = true;
    }
  }
  if (any) words << current;
  return words;
}

QList<FieldError> validate(const RunForm& form, int freeSlots) {
  QList<FieldError> errors;
  auto add = [&](const char* field, const QString& message) {
    errors.append({QString::fromLatin1(field), message});
  };
  if (form.name.trimmed().isEmpty()) add("name", tr("Give the run a name."));
  if (form.ranksPerNode < 1) add("ranksPerNode", tr("A run needs at least one rank."));
  if (freeSlots >= 0 && form.ranksPerNode > freeSlots) {
    add("ranksPerNode",
        tr("Only %1 slots are free on this node; choose at most %1 ranks.").arg(freeSlots));
  }
  if (form.job == RunForm::Job::kCommand) {
    if (splitCommandLine(form.command).isEmpty()) {
      add("command", tr("Enter the command to run, e.g. python3 train.py --epochs 3."));
    }
    return errors;
  }
  if (form.dataDir.trimmed().isEmpty()) add("dataDir", tr("Choose the dataset directory."));
  if (form.hidden.isEmpty())
    add("hidden", tr("Give at least one hidden layer width, e.g. 256,128."));
  for (int width : form.hidden) {
    if (width <= 0) {
      add("hidden", tr("Layer widths must be positive (got %1).").arg(width));
      break;
    }
  }
  if (form.epochs < 1) add("epochs", tr("Train for at least one epoch."));
  if (form.globalBatch < 1) add("globalBatch", tr("The global batch must be at least 1."));
  if (form.ranksPerNode >= 1 && form.globalBatch % form.ranksPerNode != 0) {
    add("globalBatch", tr("The global batch %1 is not divisible by %2 ranks; use a multiple of %2.")
                           .arg(form.globalBatch)
                           .arg(form.ranksPerNode));
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
  return errors;
}

QJsonObject trainerConfig(const RunForm& f) {
  QJsonArray hidden;
  for (int width : f.hidden) hidden.append(width);
  QJsonObject config{{"data", f.dataDir},
                     {"hidden", hidden},
                     {"optimizer", f.optimizer},
                     {"lr", f.lr},
                     {"weight_decay", f.weightDecay},
                     {"lr_schedule", f.lrSchedule},
                     {"warmup_steps", f.warmupSteps},
                     {"epochs", f.epochs},
                     {"global_batch", f.globalBatch},
                     {"backend", f.backend},
                     {"bucket_mb", f.bucketMb},
                     {"checkpoint_every", f.checkpointEvery},
                     {"seed", QString::number(f.seed)}};
  if (f.optimizer == QLatin1String("sgd")) {
    config["momentum"] = f.momentum;
    config["nesterov"] = f.nesterov;
  } else {
    config["beta1"] = f.beta1;
    config["beta2"] = f.beta2;
  }
  if (f.lrSchedule == QLatin1String("step")) {
    config["lr_step_epochs"] = f.lrStepEpochs;
    config["lr_gamma"] = f.lrGamma;
  } else if (f.lrSchedule == QLatin1String("cosine")) {
    config["lr_min"] = f.lrMin;
  }
  return config;
}

v1::RunSpec toRunSpec(const RunForm& form) {
  v1::RunSpec spec;
  spec.set_name(form.name.trimmed().toStdString());
  for (const QString& tag : form.tags) spec.add_tags(tag.trimmed().toStdString());
  spec.set_ranks_per_node(static_cast<uint32_t>(form.ranksPerNode));
  if (form.job == RunForm::Job::kCommand) {
    for (const QString& word : splitCommandLine(form.command)) {
      spec.mutable_command()->add_argv(word.toStdString());
    }
  } else {
    spec.mutable_trainer()->set_config_json(
        QJsonDocument(trainerConfig(form)).toJson(QJsonDocument::Compact).toStdString());
  }
  return spec;
}

namespace {

// Applies trainer run-spec keys to the form; unknown keys are ignored.
void applyTrainerConfig(const QJsonObject& c, RunForm* f) {
  auto number = [&](const char* key, auto* out) {
    if (c.contains(QLatin1String(key)) && c[QLatin1String(key)].isDouble()) {
      *out = static_cast<std::remove_pointer_t<decltype(out)>>(c[QLatin1String(key)].toDouble());
    }
  };
  auto text = [&](const char* key, QString* out) {
    if (c[QLatin1String(key)].isString()) *out = c[QLatin1String(key)].toString();
  };
  text("data", &f->dataDir);
  if (c["hidden"].isArray()) {
    f->hidden.clear();
    for (const QJsonValue& v : c["hidden"].toArray()) f->hidden.append(v.toInt());
  }
  text("optimizer", &f->optimizer);
  number("lr", &f->lr);
  number("momentum", &f->momentum);
  if (c["nesterov"].isBool()) f->nesterov = c["nesterov"].toBool();
  number("weight_decay", &f->weightDecay);
  number("beta1", &f->beta1);
  number("beta2", &f->beta2);
  text("lr_schedule", &f->lrSchedule);
  number("warmup_steps", &f->warmupSteps);
  number("lr_step_epochs", &f->lrStepEpochs);
  number("lr_gamma", &f->lrGamma);
  number("lr_min", &f->lrMin);
  number("epochs", &f->epochs);
  number("global_batch", &f->globalBatch);
  text("backend", &f->backend);
  number("bucket_mb", &f->bucketMb);
  number("checkpoint_every", &f->checkpointEvery);
  if (c["seed"].isString()) f->seed = c["seed"].toString().toULongLong();
  number("seed", &f->seed);
}

QString joinCommandLine(const QStringList& words) {
  QStringList quoted;
  for (const QString& word : words) {
    quoted << (word.contains(QLatin1Char(' ')) ? QLatin1Char('"') + word + QLatin1Char('"') : word);
  }
  return quoted.join(QLatin1Char(' '));
}

}  // namespace

RunForm fromRunSpec(const v1::RunSpec& spec) {
  RunForm form;
  form.name = QString::fromStdString(spec.name());
  for (const auto& tag : spec.tags()) form.tags << QString::fromStdString(tag);
  form.ranksPerNode = spec.ranks_per_node() > 0 ? static_cast<int>(spec.ranks_per_node()) : 1;
  if (spec.has_command()) {
    form.job = RunForm::Job::kCommand;
    QStringList words;
    for (const auto& word : spec.command().argv()) words << QString::fromStdString(word);
    form.command = joinCommandLine(words);
  } else if (spec.has_trainer()) {
    const auto doc =
        QJsonDocument::fromJson(QByteArray::fromStdString(spec.trainer().config_json()));
    applyTrainerConfig(doc.object(), &form);
  }
  return form;
}

QJsonObject toPreset(const RunForm& form) {
  return QJsonObject{{"format", "ringside-run-preset"},
                     {"version", kPresetVersion},
                     {"name", form.name},
                     {"tags", QJsonArray::fromStringList(form.tags)},
                     {"job", form.job == RunForm::Job::kCommand ? "command" : "trainer"},
                     {"trainer", trainerConfig(form)},
                     {"command", form.command},
                     {"ranks_per_node", form.ranksPerNode}};
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
  form.job = preset["job"].toString() == QLatin1String("command") ? RunForm::Job::kCommand
                                                                  : RunForm::Job::kTrainer;
  if (!preset["trainer"].isUndefined() && !preset["trainer"].isObject()) {
    *error = tr("The preset's \"trainer\" entry must be an object.");
    return form;
  }
  applyTrainerConfig(preset["trainer"].toObject(), &form);
  form.command = preset["command"].toString();
  if (preset["ranks_per_node"].isDouble()) form.ranksPerNode = preset["ranks_per_node"].toInt();
  return form;
}

}  // namespace ringside::gui
