// The words of a collective timeout: what one rank says when a collective it waits in has not
// completed within TrainerConfig.collective_timeout_s, after asking every other rank what it is
// doing (Communicator::watchCollectives). Pure functions, unit-tested on recorded answers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ringside/trainer/rank_activity.h"

namespace ringside::trainer {

// One rank's answer to "what are you doing?": its activity snapshot and host name.
struct RankReport {
  int rank = 0;
  std::string host;
  RankActivity::Snapshot activity;  // waitingIn points at a static string (or is null)
};

// The message of the rank `self` whose collective timed out after `timeoutSeconds`, given every
// other rank's answer (peers[r] empty: rank r did not answer in time; the entry of self itself
// is ignored) and every rank's host name (hosts[r], exchanged when the watch began). The ranks that
// did not arrive are those that are not waiting in the collective `self` waits in: no answer ("did
// not answer within N s: its process is stopped, its node is frozen or the network is down"),
// another phase ("it has been in the data phase of step 1752 for 903 s"), or an earlier collective.
// When every rank waits in the same collective, the collective itself hung (the transport). E.g.
//   "rank 0 (node-1) waited 900 s in the all-reduce of bucket 0 of step 1752; rank 1 (node-2)
//    did not arrive: it did not answer within 10 s (process stopped, node frozen or network
//    down); every rank of the run aborts"
std::string describeCollectiveTimeout(const RankReport& self,
                                      const std::vector<std::optional<RankReport>>& peers,
                                      const std::vector<std::string>& hosts, double timeoutSeconds,
                                      double answerWaitSeconds);

}  // namespace ringside::trainer
