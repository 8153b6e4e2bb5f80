#include "ringside/agent/slot_reservations.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

namespace ringside::agent {

namespace {

std::string newReservationId() {
  static std::random_device device;
  std::uniform_int_distribution<uint32_t> hex(0, 15);
  std::string id(32, '0');
  for (char& c : id) c = "0123456789abcdef"[hex(device)];
  return id;
}

std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", std::ceil(std::max(0.0, seconds)));
  return text;
}

}  // namespace

Status validateReserveSeconds(double seconds) {
  if (std::isfinite(seconds) && seconds >= 0) return Status::ok();
  char value[32];
  std::snprintf(value, sizeof value, "%g", seconds);
  return Status::invalidArgument(
      "reserve_seconds " + std::string(value) +
      " is not a hold: use 0 to only check, or a number of seconds above 0 (at most " +
      secondsText(kMaxReservationSeconds) + " are held)");
}

std::string SlotReservations::refusalNote(bool gpus, double now) {
  expire(now);
  std::vector<const Reservation*> holds;
  uint32_t held = 0;
  for (const auto& [id, hold] : holds_) {
    const uint32_t count = gpus ? static_cast<uint32_t>(hold.gpus.size()) : hold.slots;
    if (count == 0) continue;
    held += count;
    holds.push_back(&hold);
  }
  if (holds.empty()) return {};
  std::sort(holds.begin(), holds.end(),
            [](const Reservation* a, const Reservation* b) { return a->expiresAt < b->expiresAt; });
  const std::string what =
      gpus ? (held == 1 ? "GPU" : "GPUs") : (held == 1 ? "CPU slot" : "CPU slots");
  std::string note = "; " + std::to_string(held) + " of this node's " + what +
                     (held == 1 ? " is" : " are") + " held by another client's pre-flight (";
  constexpr size_t kNamed = 3;
  for (size_t i = 0; i < holds.size() && i < kNamed; ++i) {
    const Reservation& hold = *holds[i];
    if (i > 0) note += "; ";
    note += "hold " + hold.id;
    if (holds.size() > 1) {
      note += gpus ? " of " + std::to_string(hold.gpus.size()) + " GPU" +
                         (hold.gpus.size() == 1 ? "" : "s")
                   : " of " + std::to_string(hold.slots) + " slot" + (hold.slots == 1 ? "" : "s");
    }
    if (gpus) {
      note += hold.gpus.size() == 1 ? " (GPU " : " (GPUs ";
      for (size_t g = 0; g < hold.gpus.size(); ++g) {
        note += (g > 0 ? ", " : "") + std::to_string(hold.gpus[g]);
      }
      note += ")";
    }
    note += " for " + secondsText(hold.expiresAt - now) + " more s";
  }
  if (holds.size() > kNamed) note += "; and " + std::to_string(holds.size() - kNamed) + " more";
  note += ", until its run starts here or the hold expires): wait for that launch";
  return note;
}

Reservation SlotReservations::hold(uint32_t slots, std::vector<uint32_t> gpus, double seconds,
                                   double now) {
  expire(now);
  if (!std::isfinite(seconds) || seconds <= 0) seconds = kMaxReservationSeconds;
  Reservation reservation;
  reservation.id = newReservationId();
  reservation.slots = slots;
  std::sort(gpus.begin(), gpus.end());
  reservation.gpus = std::move(gpus);
  reservation.expiresAt = now + std::min(seconds, kMaxReservationSeconds);
  holds_[reservation.id] = reservation;
  return reservation;
}

std::optional<Reservation> SlotReservations::take(const std::string& id, double now) {
  expire(now);
  auto it = holds_.find(id);
  if (it == holds_.end()) return std::nullopt;
  Reservation taken = std::move(it->second);
  holds_.erase(it);
  return taken;
}

void SlotReservations::releaseSeen(const std::vector<RankProcess>& ranks) {
  for (const RankProcess& rank : ranks) {
    if (!rank.reservationId.empty()) holds_.erase(rank.reservationId);
  }
}

uint32_t SlotReservations::heldSlots(double now) {
  expire(now);
  uint32_t slots = 0;
  for (const auto& [id, hold] : holds_) slots += hold.slots;
  return slots;
}

std::vector<uint32_t> SlotReservations::heldGpus(double now) {
  expire(now);
  std::set<uint32_t> gpus;
  for (const auto& [id, hold] : holds_) gpus.insert(hold.gpus.begin(), hold.gpus.end());
  return {gpus.begin(), gpus.end()};
}

size_t SlotReservations::size(double now) {
  expire(now);
  return holds_.size();
}

void SlotReservations::expire(double now) {
  std::erase_if(holds_, [now](const auto& entry) { return entry.second.expiresAt <= now; });
}

}  // namespace ringside::agent
