#include "ringside/trainer/hang_report.h"

#include <cstdio>

#include "ringside/common/protocol.h"

namespace ringside::trainer {

namespace {

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f s", s);
  return text;
}

std::string rankName(int rank, const std::string& host) {
  return "rank " + std::to_string(rank) + (host.empty() ? "" : " (" + host + ")");
}

}  // namespace

std::string describeCollectiveTimeout(const RankReport& self,
                                      const std::vector<std::optional<RankReport>>& peers,
                                      const std::vector<std::string>& hosts, double timeoutSeconds,
                                      double answerWaitSeconds) {
  std::string text =
      rankName(self.rank, self.host) + " waited " +
      seconds(self.activity.waitingSeconds > 0.0 ? self.activity.waitingSeconds : timeoutSeconds) +
      " in " + RankActivity::describeWait(self.activity) + " (collective timeout " +
      seconds(timeoutSeconds) + ")";
  std::vector<std::string> missing;
  std::vector<int> waiting;
  for (size_t r = 0; r < peers.size(); ++r) {
    if (static_cast<int>(r) == self.rank) continue;
    const std::optional<RankReport>& peer = peers[r];
    if (!peer) {
      missing.push_back(rankName(static_cast<int>(r), r < hosts.size() ? hosts[r] : "") +
                        " did not answer within " + seconds(answerWaitSeconds) +
                        " (its process is stopped, its node is frozen or the network is down)");
      continue;
    }
    const RankActivity::Snapshot& a = peer->activity;
    if (a.waitingIn != nullptr && a.waitingCollective == self.activity.waitingCollective) {
      waiting.push_back(static_cast<int>(r));
      continue;
    }
    std::string what;
    if (a.waitingIn != nullptr) {
      what = "it waits in " + RankActivity::describeWait(a) + " (another collective) since " +
             seconds(a.waitingSeconds);
    } else {
      what = "it has been in the " + std::string(protocol::rankPhaseName(a.phase)) +
             " phase of step " + std::to_string(a.step + 1) + " for " + seconds(a.phaseSeconds);
    }
    missing.push_back(rankName(peer->rank, peer->host) + " did not arrive: " + what);
  }
  if (!missing.empty()) {
    text += "; ";
    for (size_t i = 0; i < missing.size(); ++i) text += (i > 0 ? "; " : "") + missing[i];
  } else {
    text +=
        "; every rank waits in it, so the collective itself hung (the network, or the MPI or "
        "NCCL transport)";
  }
  return text + "; every rank of the run aborts";
}

}  // namespace ringside::trainer
