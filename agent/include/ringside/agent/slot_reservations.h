// Holds on a node's slots and GPUs between a multi-node run's pre-flight and its start
// (PreflightRequest.reserve_seconds): without them, two launches that pre-flight the same node at
// about the same time would both find its slots (and the same GPUs) free. A hold ends when the
// owner consumes it at launch (take), when the run's ranks carrying its id appear among the
// node's processes (releaseSeen), or when it expires.
//
// Thread-safety: none; the agent's RunManager uses it from the agent's thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ringside/agent/rank_processes.h"
#include "ringside/common/status.h"

namespace ringside::agent {

// Longest hold a pre-flight may ask for, in seconds: a pre-flight answer is acted on within the
// GUI's 10 s pre-flight time-out plus the launch, so a minute is ample; a lost launch frees the
// slots at the latest then.
inline constexpr double kMaxReservationSeconds = 60.0;

// OK for PreflightRequest.reserve_seconds: 0 (only check) or a finite number of seconds above 0
// (more than kMaxReservationSeconds holds kMaxReservationSeconds). Errors: InvalidArgument naming
// the value (NaN, an infinity, a negative number) and what to send instead.
Status validateReserveSeconds(double seconds);

struct Reservation {
  std::string id;  // 32 hex digits, random
  uint32_t slots = 0;
  std::vector<uint32_t> gpus;  // NVML indices held, ascending
  double expiresAt = 0.0;      // steady seconds
};

class SlotReservations {
 public:
  // Holds `slots` slots and `gpus` for `seconds` (clamped to (0, kMaxReservationSeconds]) from
  // `now` (steady seconds); returns the hold with a new id.
  Reservation hold(uint32_t slots, std::vector<uint32_t> gpus, double seconds, double now);
  // Ends the hold `id` and returns it; nullopt when there is none (unknown or expired).
  std::optional<Reservation> take(const std::string& id, double now);
  // Ends the holds whose id one of `ranks` carries (their run has started here).
  void releaseSeen(const std::vector<RankProcess>& ranks);
  // What the live holds keep from other runs at `now` (expired ones are dropped first).
  uint32_t heldSlots(double now);
  std::vector<uint32_t> heldGpus(double now);
  size_t size(double now);

  // For a refusal that too few CPU slots (`gpus` false) or GPUs are free: the live holds that keep
  // them at `now`, in words, e.g. "; 2 of this node's CPU slots are held by another client's
  // pre-flight (hold 3fa2...e1 for 41 more s, until that run starts here or the hold expires):
  // wait for that launch"; at most 3 holds named, the others counted. Empty when no hold keeps
  // any.
  std::string refusalNote(bool gpus, double now);

 private:
  void expire(double now);
  std::map<std::string, Reservation> holds_;
};

}  // namespace ringside::agent
