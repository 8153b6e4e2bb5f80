#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ringside/trainer/sampler.h"

namespace ringside::trainer {
namespace {

TEST(DistributedSamplerTest, UnionOfLocalBatchesEqualsSingleRankBatch) {
  const int64_t datasetSize = 1003, globalBatch = 12;
  auto single = DistributedSampler::create(datasetSize, globalBatch, 1, 0, 99);
  ASSERT_TRUE(single.isOk());
  for (int world = 1; world <= 4; ++world) {
    std::vector<DistributedSampler> ranks;
    for (int r = 0; r < world; ++r) {
      auto sampler = DistributedSampler::create(datasetSize, globalBatch, world, r, 99);
      ASSERT_TRUE(sampler.isOk()) << sampler.status().toString();
      ranks.push_back(std::move(sampler).value());
    }
    for (int64_t epoch : {0, 1, 5}) {
      single->setEpoch(epoch);
      for (auto& sampler : ranks) sampler.setEpoch(epoch);
      for (int64_t step = 0; step < single->stepsPerEpoch(); ++step) {
        std::vector<int64_t> joined;
        for (auto& sampler : ranks) {
          auto local = sampler.localBatch(step);
          ASSERT_EQ(local.size(), size_t(globalBatch / world));
          joined.insert(joined.end(), local.begin(), local.end());
        }
        auto expected = single->globalBatch(step);
        ASSERT_TRUE(std::equal(joined.begin(), joined.end(), expected.begin(), expected.end()))
            << "world " << world << " epoch " << epoch << " step " << step;
      }
    }
  }
}

TEST(DistributedSamplerTest, EpochIsAPermutationAndDropsTheLastPartialBatch) {
  auto sampler = DistributedSampler::create(100, 32, 2, 0, 5);
  ASSERT_TRUE(sampler.isOk());
  EXPECT_EQ(sampler->stepsPerEpoch(), 3);  // 100 / 32, the last 4 samples dropped
  sampler->setEpoch(0);
  std::set<int64_t> seen;
  for (int64_t step = 0; step < 3; ++step) {
    for (int64_t i : sampler->globalBatch(step)) {
      EXPECT_TRUE(seen.insert(i).second) << "index " << i << " drawn twice";
      EXPECT_LT(i, 100);
    }
  }
  EXPECT_EQ(seen.size(), 96u);
}

TEST(DistributedSamplerTest, ShuffleDependsOnSeedAndEpochOnly) {
  auto a = DistributedSampler::create(500, 50, 1, 0, 1);
  auto b = DistributedSampler::create(500, 50, 1, 0, 1);
  a->setEpoch(3);
  b->setEpoch(2);
  b->setEpoch(3);
  auto ba = a->globalBatch(0), bb = b->globalBatch(0);
  EXPECT_TRUE(std::equal(ba.begin(), ba.end(), bb.begin(), bb.end()));
  a->setEpoch(4);
  auto next = a->globalBatch(0);
  EXPECT_FALSE(std::equal(next.begin(), next.end(), bb.begin(), bb.end()));
}

TEST(DistributedSamplerTest, RejectsIndivisibleGlobalBatch) {
  auto sampler = DistributedSampler::create(1000, 63, 2, 0, 1);
  ASSERT_FALSE(sampler.isOk());
  EXPECT_EQ(sampler.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(sampler.status().message().find("63 is not divisible by world size 2"),
            std::string::npos)
      << sampler.status().message();
}

TEST(DistributedSamplerTest, RejectsBatchLargerThanDataset) {
  auto sampler = DistributedSampler::create(10, 64, 1, 0, 1);
  ASSERT_FALSE(sampler.isOk());
  EXPECT_NE(sampler.status().message().find("larger than the training set"), std::string::npos);
}

}  // namespace
}  // namespace ringside::trainer
