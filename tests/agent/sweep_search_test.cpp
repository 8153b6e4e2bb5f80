// A sweep's search space (search_space.h) and a trial's run spec (trial_spec.h): the grid covers
// its product exactly once, random and model-based draws are reproducible for a seed and stay in
// their domains, bad specs are refused with the parameter named, and the values reach a trainer's
// fields, a script's arguments and the run's record.
#include "ringside/agent/sweep/search_space.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "ringside/agent/sweep/trial_spec.h"

namespace ringside::agent {
namespace {

v1::SweepSpec specOf(const std::string& json) {
  v1::SweepSpec spec;
  auto status = google::protobuf::util::JsonStringToMessage(json, &spec);
  EXPECT_TRUE(status.ok()) << status.ToString() << " in " << json;
  return spec;
}

TEST(SweepSearchTest, TheGridCoversItsProductExactlyOnceTheLastParameterFastest) {
  const v1::SweepSpec spec = specOf(R"({
    "method": "GRID",
    "parameters": [
      {"name": "lr", "logUniform": {"min": 0.001, "max": 0.1, "gridPoints": 3}},
      {"name": "hidden", "values": [64, [128, 64]]},
      {"name": "optimizer", "values": ["sgd", "adamw"]},
      {"name": "layers", "intUniform": {"min": 1, "max": 3}}
    ]})");
  ASSERT_TRUE(validateSearchSpace(spec).isOk()) << validateSearchSpace(spec).toString();
  ASSERT_EQ(trialBudget(spec), 3u * 2u * 2u * 3u);
  std::set<std::string> seen;
  for (uint32_t trial = 0; trial < trialBudget(spec); ++trial) {
    seen.insert(valuesJsonObject(gridTrial(spec, trial)));
  }
  EXPECT_EQ(seen.size(), 36u);  // every combination, none twice
  EXPECT_EQ(valuesJsonObject(gridTrial(spec, 0)),
            R"({"hidden":64,"layers":1,"lr":0.001,"optimizer":"sgd"})");
  EXPECT_EQ(valuesJsonObject(gridTrial(spec, 1)),
            R"({"hidden":64,"layers":2,"lr":0.001,"optimizer":"sgd"})");
  EXPECT_EQ(valuesJsonObject(gridTrial(spec, 35)),
            R"({"hidden":[128,64],"layers":3,"lr":0.1,"optimizer":"adamw"})");
  // The log range's middle point is the geometric mean.
  EXPECT_NEAR(gridTrial(spec, 12).at("lr").number_value(), 0.01, 1e-12);
  // max_trials below the grid's size takes the first combinations.
  v1::SweepSpec fewer = spec;
  fewer.set_max_trials(5);
  EXPECT_EQ(trialBudget(fewer), 5u);
}

TEST(SweepSearchTest, RandomDrawsAreReproducibleForASeedAndStayInTheirDomains) {
  v1::SweepSpec spec = specOf(R"({
    "method": "RANDOM", "maxTrials": 200, "seed": "7",
    "parameters": [
      {"name": "lr", "logUniform": {"min": 0.0001, "max": 0.1}},
      {"name": "momentum", "uniform": {"min": 0.5, "max": 0.99}},
      {"name": "width", "intUniform": {"min": 16, "max": 20}},
      {"name": "optimizer", "values": ["sgd", "adamw"]}
    ]})");
  ASSERT_TRUE(validateSearchSpace(spec).isOk());
  std::set<double> widths;
  std::set<std::string> optimizers;
  int belowGeometricMean = 0;
  for (uint32_t trial = 0; trial < 200; ++trial) {
    const TrialValues values = randomTrial(spec, trial);
    EXPECT_EQ(valuesJsonObject(values), valuesJsonObject(randomTrial(spec, trial)));
    const double lr = values.at("lr").number_value();
    EXPECT_GE(lr, 0.0001);
    EXPECT_LE(lr, 0.1);
    if (lr < std::sqrt(0.0001 * 0.1)) ++belowGeometricMean;
    EXPECT_GE(values.at("momentum").number_value(), 0.5);
    EXPECT_LE(values.at("momentum").number_value(), 0.99);
    widths.insert(values.at("width").number_value());
    optimizers.insert(values.at("optimizer").string_value());
  }
  EXPECT_EQ(widths, (std::set<double>{16, 17, 18, 19, 20}));  // both ends reached, integers only
  EXPECT_EQ(optimizers, (std::set<std::string>{"sgd", "adamw"}));
  // Log-uniform: about half below the geometric mean (binomial, 200 draws: 70..130 is > 99.9 %).
  EXPECT_GT(belowGeometricMean, 70);
  EXPECT_LT(belowGeometricMean, 130);
  // Another seed draws other trials.
  v1::SweepSpec other = spec;
  other.set_seed(8);
  EXPECT_NE(valuesJsonObject(randomTrial(spec, 0)), valuesJsonObject(randomTrial(other, 0)));
}

TEST(SweepSearchTest, ModelBasedDrawsAreReproducibleAndLearnFromFinishedTrials) {
  if (!haveModelBasedSearch()) GTEST_SKIP() << "built without dlib";
  const v1::SweepSpec spec = specOf(R"({
    "method": "MODEL_BASED", "maxTrials": 30, "seed": "3", "goal": "MINIMIZE",
    "parameters": [
      {"name": "x", "uniform": {"min": -4, "max": 4}},
      {"name": "y", "intUniform": {"min": -5, "max": 5}}
    ]})");
  ASSERT_TRUE(validateSearchSpace(spec).isOk());
  // A bowl with its bottom at (1, -2): the search, fed its own trials, gets close; a second
  // search with the same seed and the same results draws the same trials.
  auto bowl = [](const TrialValues& values) {
    const double x = values.at("x").number_value(), y = values.at("y").number_value();
    return (x - 1) * (x - 1) + (y + 2) * (y + 2);
  };
  auto search = ModelBasedSearch::create(spec, {});
  auto twin = ModelBasedSearch::create(spec, {});
  ASSERT_TRUE(search.isOk() && twin.isOk());
  std::vector<FinishedTrial> finished;
  for (uint32_t trial = 0; trial < 30; ++trial) {
    const TrialValues values = (*search)->next(trial);
    EXPECT_EQ(valuesJsonObject(values), valuesJsonObject((*twin)->next(trial)));
    const double x = values.at("x").number_value(), y = values.at("y").number_value();
    EXPECT_EQ(y, std::round(y));
    EXPECT_GE(x, -4);
    EXPECT_LE(x, 4);
    finished.push_back({values, bowl(values)});
    (*search)->finished(trial, bowl(values));
    (*twin)->finished(trial, bowl(values));
  }
  double best = 1e9;
  for (const FinishedTrial& trial : finished) best = std::min(best, trial.value);
  EXPECT_LT(best, 0.05);
  // Built again from the finished trials (an agent's restart), it goes on near the bottom.
  auto rebuilt = ModelBasedSearch::create(spec, finished);
  ASSERT_TRUE(rebuilt.isOk());
  EXPECT_LT(bowl((*rebuilt)->next(30)), 1.5);
}

TEST(SweepSearchTest, BadSpecsAreRefusedNamingTheParameter) {
  auto refused = [](const std::string& json, const std::string& words) {
    const Status status = validateSearchSpace(specOf(json));
    EXPECT_FALSE(status.isOk()) << json;
    EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
  };
  refused(R"({"method": "GRID", "parameters": []})", "0 parameters");
  refused(R"({"method": "GRID", "parameters": [{"name": "lr", "uniform": {"min": 0.1, "max": 1}}]})",
          "'lr' cannot be part of a grid");
  refused(R"({"method": "RANDOM", "parameters": [{"name": "lr", "uniform": {"min": 1, "max": 1}}]})",
          "finite min < max");
  refused(R"({"method": "RANDOM", "maxTrials": 3,
              "parameters": [{"name": "lr", "logUniform": {"min": 0, "max": 1}}]})",
          "log_uniform needs min > 0");
  refused(R"({"method": "RANDOM", "parameters": [{"name": "lr", "uniform": {"min": 0, "max": 1}}]})",
          "needs a budget");
  refused(R"({"method": "RANDOM", "maxTrials": 3,
              "parameters": [{"name": "a b", "values": [1]}]})",
          "is not 1 to 64 characters");
  refused(R"({"method": "RANDOM", "maxTrials": 3,
              "parameters": [{"name": "a", "values": [1]}, {"name": "a", "values": [2]}]})",
          "named twice");
  refused(R"({"method": "RANDOM", "maxTrials": 3, "parameters": [{"name": "a", "values": [{}]}]})",
          "value 1 is not");
  refused(R"({"parameters": [{"name": "a", "values": [1]}]})", "names no method");
  refused(R"({"method": "GRID", "parameters": [
              {"name": "a", "intUniform": {"min": 1, "max": 40}},
              {"name": "b", "intUniform": {"min": 1, "max": 40}}]})",
          "more than 1000 combinations");
}

TEST(SweepTrialSpecTest, ValuesReachTheTrainersFieldsTheScriptsArgumentsAndTheRecord) {
  v1::SweepSpec spec = specOf(R"({
    "name": "tune", "method": "GRID",
    "base": {"name": "mlp", "ranksPerNode": 1, "trainer": {"config": {"epochs": 4, "lr": 0.5}}},
    "parameters": [
      {"name": "lr", "values": [0.01]},
      {"name": "hidden", "values": [[128, 64]]},
      {"name": "global_batch", "values": [256]},
      {"name": "optimizer", "values": ["adamw"]}
    ]})");
  auto run = trialRunSpec(spec, "s1", 3, 2, gridTrial(spec, 0));
  ASSERT_TRUE(run.isOk()) << run.status().toString();
  const v1::TrainerConfig& config = run->trainer().config();
  EXPECT_EQ(config.lr(), 0.01);
  EXPECT_EQ(config.epochs(), 4);  // the base run's own fields stay
  ASSERT_EQ(config.hidden_size(), 2);
  EXPECT_EQ(config.hidden(0), 128);
  EXPECT_EQ(config.global_batch(), 256);
  EXPECT_EQ(config.optimizer(), "adamw");
  EXPECT_EQ(run->name(), "tune #3");
  EXPECT_EQ(run->sweep_trial().sweep_id(), "s1");
  EXPECT_EQ(run->sweep_trial().trial(), 3u);
  EXPECT_EQ(run->sweep_trial().attempt(), 2u);
  EXPECT_EQ(run->sweep_trial().params().at("hidden"), "[128,64]");
  EXPECT_EQ(run->sweep_trial().params().at("optimizer"), "\"adamw\"");

  // A field the trainer does not have, and a value of the wrong type, are named.
  spec.mutable_parameters(0)->set_name("learning_rate");
  auto unknown = trialRunSpec(spec, "s1", 0, 1, gridTrial(spec, 0));
  ASSERT_FALSE(unknown.isOk());
  EXPECT_NE(unknown.status().message().find("'learning_rate' is no trainer run-spec field"),
            std::string::npos);
  v1::SweepSpec wrong = specOf(R"({"method": "GRID", "base": {"trainer": {}},
      "parameters": [{"name": "global_batch", "values": [0.5]}]})");
  auto typed = trialRunSpec(wrong, "s1", 0, 1, gridTrial(wrong, 0));
  ASSERT_FALSE(typed.isOk());
  EXPECT_NE(typed.status().message().find("takes an integer"), std::string::npos);

  // A script: {name} in its arguments; {{ and }} stay braces.
  v1::SweepSpec script = specOf(R"({"method": "GRID",
      "base": {"python": {"script": "train.py",
                          "args": ["--lr={lr}", "--width", "{width}", "{{lr}}", "{other}"]}},
      "parameters": [{"name": "lr", "values": [0.001]}, {"name": "width", "values": [128]}]})");
  auto scripted = trialRunSpec(script, "s2", 0, 1, gridTrial(script, 0));
  ASSERT_TRUE(scripted.isOk());
  EXPECT_EQ(scripted->python().args(0), "--lr=0.001");
  EXPECT_EQ(scripted->python().args(2), "128");
  EXPECT_EQ(scripted->python().args(3), "{lr}");
  EXPECT_EQ(scripted->python().args(4), "{other}");
  EXPECT_EQ(valuesJsonObject(gridTrial(script, 0)), R"({"lr":0.001,"width":128})");
}

}  // namespace
}  // namespace ringside::agent
