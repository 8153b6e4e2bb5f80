// SlotReservations: the pre-flight holds on a node's slots and GPUs (slot_reservations.h).
#include <gtest/gtest.h>

#include "ringside/agent/slot_reservations.h"

namespace ringside::agent {
namespace {

TEST(SlotReservationsTest, HoldsCountUntilTakenSeenOrExpired) {
  SlotReservations holds;
  const Reservation first = holds.hold(2, {3, 1}, 30, /*now=*/100);
  const Reservation second = holds.hold(1, {0}, 5, 100);
  EXPECT_EQ(first.id.size(), 32u);
  EXPECT_NE(first.id, second.id);
  EXPECT_EQ(first.gpus, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(holds.heldSlots(101), 3u);
  EXPECT_EQ(holds.heldGpus(101), (std::vector<uint32_t>{0, 1, 3}));
  // The second expires after its 5 s.
  EXPECT_EQ(holds.heldSlots(105), 2u);
  EXPECT_FALSE(holds.take(second.id, 105).has_value());
  // The owner's launch takes its own hold once.
  auto taken = holds.take(first.id, 106);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->slots, 2u);
  EXPECT_FALSE(holds.take(first.id, 106).has_value());
  EXPECT_EQ(holds.size(106), 0u);
}

TEST(SlotReservationsTest, RanksCarryingTheIdEndTheirHold) {
  SlotReservations holds;
  const Reservation held = holds.hold(2, {}, 30, 0);
  const Reservation other = holds.hold(1, {}, 30, 0);
  RankProcess rank;
  rank.runId = "r";
  rank.rank = 2;
  rank.reservationId = held.id;
  RankProcess unrelated;
  unrelated.runId = "s";
  holds.releaseSeen({rank, unrelated});
  EXPECT_EQ(holds.heldSlots(1), 1u);
  EXPECT_TRUE(holds.take(other.id, 1).has_value());
}

TEST(SlotReservationsTest, HoldsAreBoundedToAMinute) {
  SlotReservations holds;
  EXPECT_EQ(holds.hold(1, {}, 1e9, 0).expiresAt, kMaxReservationSeconds);
  EXPECT_EQ(holds.hold(1, {}, -1, 0).expiresAt, kMaxReservationSeconds);
  EXPECT_EQ(holds.heldSlots(kMaxReservationSeconds - 1), 2u);
  EXPECT_EQ(holds.heldSlots(kMaxReservationSeconds), 0u);
}

}  // namespace
}  // namespace ringside::agent
