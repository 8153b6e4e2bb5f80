#include "ringside/agent/slot_reservations.h"

#include <algorithm>
#include <cmath>
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

}  // namespace

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
