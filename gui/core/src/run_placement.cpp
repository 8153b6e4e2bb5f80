#include "ringside/gui/run_placement.h"

namespace ringside::gui {

NodeGpus runGpusOnNode(const std::vector<v1::HostSlots>& placement, const QString& hostName,
                       bool owner) {
  NodeGpus result;
  if (placement.empty()) {
    result.ofRun = owner;
    result.allGpus = owner;
    return result;
  }
  const v1::HostSlots* entry = nullptr;
  for (const v1::HostSlots& host : placement) {
    if (!hostName.isEmpty() &&
        QString::fromStdString(host.host()).compare(hostName, Qt::CaseInsensitive) == 0) {
      entry = &host;
      break;
    }
  }
  if (entry == nullptr && owner) entry = &placement.front();
  if (entry == nullptr) return result;
  result.ofRun = true;
  result.gpus.insert(entry->gpus().begin(), entry->gpus().end());
  return result;
}

bool runUsesNoGpus(const std::vector<v1::HostSlots>& placement) {
  if (placement.empty()) return false;
  for (const v1::HostSlots& host : placement) {
    if (host.gpus_size() > 0) return false;
  }
  return true;
}

}  // namespace ringside::gui
