#include "ringside/gui/preflight.h"

#include <QCoreApplication>
#include <QStringList>

namespace ringside::gui {

namespace {

// lupdate files the tr() calls of free functions under their namespace, so that is the context.
QString tr(const char* text) { return QCoreApplication::translate("ringside::gui", text); }

QString text(const std::string& value) { return QString::fromStdString(value); }

}  // namespace

bool runUsesGpusOn(const v1::RunSpec& spec, const v1::PreflightReply& reply) {
  if (spec.has_python()) return spec.python().use_gpus();
  if (!spec.has_trainer()) return false;
  const std::string backend =
      spec.trainer().config().has_backend() ? spec.trainer().config().backend() : "auto";
  return backend == "nccl" || (backend == "auto" && reply.slot_kind() == "gpu");
}

QString applyPreflight(const QList<PreflightAnswer>& answers, v1::RunSpec* spec) {
  if (answers.isEmpty() || answers.size() != spec->hosts_size()) {
    return tr("The pre-flight check got %1 answers for %2 nodes; launch again.")
        .arg(answers.size())
        .arg(spec->hosts_size());
  }
  QStringList lines;
  const PreflightAnswer& owner = answers.first();
  std::vector<std::vector<uint32_t>> gpus(answers.size());
  for (qsizetype i = 0; i < answers.size(); ++i) {
    const PreflightAnswer& answer = answers[i];
    for (const std::string& problem : answer.reply.problems()) {
      lines << answer.nodeName + QStringLiteral(": ") + text(problem);
    }
    if (i == 0) continue;
    if (answer.reply.agent_version() != owner.reply.agent_version()) {
      lines << tr("%1: runs ringside-agent %2, but the owner %3 runs %4; install the same "
                  "Ringside version on every node of the run.")
                   .arg(answer.nodeName, text(answer.reply.agent_version()), owner.nodeName,
                        text(owner.reply.agent_version()));
    }
    if (!runUsesGpusOn(*spec, answer.reply)) continue;
    const uint32_t ranks = spec->hosts(static_cast<int>(i)).ranks();
    if (static_cast<uint32_t>(answer.reply.free_gpus_size()) < ranks) {
      // The agent reports this as a problem too; an older one may not.
      if (answer.reply.problems_size() == 0) {
        lines << tr("%1: %2 ranks need %2 free GPUs, but %3 are free; lower the ranks per node "
                    "or stop a run there.")
                     .arg(answer.nodeName)
                     .arg(ranks)
                     .arg(answer.reply.free_gpus_size());
      }
      continue;
    }
    if (static_cast<uint32_t>(answer.reply.reserved_gpus_size()) >= ranks) {
      gpus[i].assign(answer.reply.reserved_gpus().begin(),
                     answer.reply.reserved_gpus().begin() + ranks);
    } else {
      gpus[i].assign(answer.reply.free_gpus().begin(), answer.reply.free_gpus().begin() + ranks);
    }
  }
  if (!lines.isEmpty()) {
    return tr("The pre-flight check of the nodes found problems, so nothing was launched. Fix "
              "them and launch again:") +
           QStringLiteral("\n\n• ") + lines.join(QStringLiteral("\n• "));
  }
  for (qsizetype i = 0; i < answers.size(); ++i) {
    spec->mutable_hosts(static_cast<int>(i))->set_reservation_id(answers[i].reply.reservation_id());
  }
  for (qsizetype i = 1; i < answers.size(); ++i) {
    if (!runUsesGpusOn(*spec, answers[i].reply)) continue;
    v1::HostSlots* host = spec->mutable_hosts(static_cast<int>(i));
    host->clear_gpus();
    for (uint32_t gpu : gpus[i]) host->add_gpus(gpu);
  }
  return {};
}

}  // namespace ringside::gui
