// SlotReservations: the pre-flight holds on a node's slots and GPUs (slot_reservations.h).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

// reserve_seconds NaN or -inf held nothing, though the docs said 60 s. Now a
// value that is not a number of seconds is refused, saying what to send.
TEST(SlotReservationsTest, NonFiniteReserveSecondsHeldNothingAndIsNowRefused) {
  for (double bad : {std::nan(""), -std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::infinity(), -1.0}) {
    const Status status = validateReserveSeconds(bad);
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("use 0 to only check, or a number of seconds above 0"),
              std::string::npos)
        << status.message();
  }
  EXPECT_EQ(validateReserveSeconds(-std::numeric_limits<double>::infinity()).message(),
            "reserve_seconds -inf is not a hold: use 0 to only check, or a number of seconds "
            "above 0 (at most 60 are held)");
  for (double good : {0.0, 0.5, 30.0, 1e9}) EXPECT_TRUE(validateReserveSeconds(good).isOk());
}

// A launch refused because of another client's pre-flight hold said only "stop
// a run"; the refusal now names the holds: what they keep, their ids and how long they last.
TEST(SlotReservationsTest, RefusalNoteNamesTheHoldsThatKeepTheSlots) {
  SlotReservations holds;
  EXPECT_EQ(holds.refusalNote(false, 0), "");
  const Reservation cpu = holds.hold(2, {}, 41, /*now=*/100);
  EXPECT_EQ(holds.refusalNote(/*gpus=*/false, 100.2),
            "; 2 of this node's CPU slots are held by another client's pre-flight (hold " + cpu.id +
                " for 41 more s, until its run starts here or the hold expires): wait for that "
                "launch");
  EXPECT_EQ(holds.refusalNote(/*gpus=*/true, 100.2), "") << "a CPU hold keeps no GPU";
  const Reservation gpu = holds.hold(0, {3, 1}, 10, 100);
  EXPECT_EQ(holds.refusalNote(/*gpus=*/true, 101),
            "; 2 of this node's GPUs are held by another client's pre-flight (hold " + gpu.id +
                " (GPUs 1, 3) for 9 more s, until its run starts here or the hold expires): wait "
                "for that launch");
  const Reservation other = holds.hold(1, {}, 5, 100);
  const std::string both = holds.refusalNote(false, 101);
  EXPECT_NE(both.find("3 of this node's CPU slots"), std::string::npos) << both;
  EXPECT_NE(both.find("hold " + other.id + " of 1 slot for 4 more s; hold " + cpu.id +
                      " of 2 slots for 40 more s"),
            std::string::npos)
      << both;
  EXPECT_EQ(holds.refusalNote(false, 200), "") << "expired holds are not named";
}

}  // namespace
}  // namespace ringside::agent
