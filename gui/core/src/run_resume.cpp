#include "ringside/gui/run_resume.h"

#include <QDir>

#include "ringside/common/run_spec.h"

namespace ringside::gui {

QString resumedFromRunId(const QStringList& tags) {
  const QString prefix = QString::fromLatin1(kResumedFromTagPrefix);
  for (const QString& tag : tags) {
    const QString trimmed = tag.trimmed();
    if (trimmed.startsWith(prefix)) return trimmed.mid(prefix.size()).trimmed();
  }
  return {};
}

QString resumedFromRunId(const QString& commaSeparatedTags) {
  return resumedFromRunId(commaSeparatedTags.split(QLatin1Char(',')));
}

bool hasResumableCheckpoint(v1::RunState state, const v1::RunSpec& spec) {
  if (!spec.has_trainer()) return false;
  if (state == v1::STOPPED) return true;
  if (state != v1::FAILED) return false;
  const auto config = trainerConfigOf(spec.trainer());
  return config.isOk() && withTrainerDefaults(config.value()).checkpoint_every() > 0;
}

Result<QString> checkpointDirOfRun(const v1::RunInfo& run) {
  if (!run.spec().has_trainer()) {
    return Status::invalidArgument("run " + run.run_id() +
                                   " is a custom command: only trainer runs can be resumed");
  }
  auto config = trainerConfigOf(run.spec().trainer());
  if (!config.isOk()) return config.status().withContext("run " + run.run_id());
  if (run.run_dir().empty()) {
    return Status::invalidArgument("the agent did not report the directory of run " + run.run_id() +
                                   ": update the node's agent");
  }
  const QString dir = QString::fromStdString(withTrainerDefaults(config.value()).checkpoint_dir());
  if (QDir::isAbsolutePath(dir)) return QDir::cleanPath(dir);
  return QDir::cleanPath(QString::fromStdString(run.run_dir()) + QLatin1Char('/') + dir);
}

Result<v1::RunSpec> resumedRunSpec(const v1::RunInfo& original) {
  auto dir = checkpointDirOfRun(original);
  if (!dir.isOk()) return dir.status();
  auto config = trainerConfigOf(original.spec().trainer());
  if (!config.isOk()) return config.status();
  v1::RunSpec spec = original.spec();
  config->set_resume(dir->toStdString());
  // A fresh job: an old spec's deprecated config_json is replaced by the typed config.
  v1::TrainerJob job;
  job.set_trainer_path(original.spec().trainer().trainer_path());
  *job.mutable_config() = config.value();
  *spec.mutable_trainer() = std::move(job);
  spec.clear_tags();
  for (const std::string& tag : original.spec().tags()) {
    if (!QString::fromStdString(tag).trimmed().startsWith(
            QString::fromLatin1(kResumedFromTagPrefix))) {
      spec.add_tags(tag);
    }
  }
  spec.add_tags(kResumedFromTagPrefix + original.run_id());
  for (v1::HostSlots& host : *spec.mutable_hosts()) {
    host.clear_gpus();
    host.clear_reservation_id();
  }
  return spec;
}

}  // namespace ringside::gui
