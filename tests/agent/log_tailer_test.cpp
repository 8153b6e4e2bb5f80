// LogTailer and parseMetricsLine (agent/include/ringside/agent/log_tailer.h): a custom command's
// JSON Lines records (docs/metrics.md) become samples; a "start" record's total_steps and
// steps_per_epoch become the run's facts, as the trainer sends them to the agent sink. Whatever a
// run prints, what leaves the tailer is bounded, valid UTF-8, and never aborts the agent.
#include "ringside/agent/log_tailer.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "ringside/common/json_limits.h"
#include "ringside/common/metric_names.h"
#include "ringside/common/utf8.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

TEST(ParseMetricsLineTest, MetricsRecordValuesBecomeSamples) {
  std::string problem;
  const auto samples =
      parseMetricsLine(R"({"type":"metrics","step":3,"epoch":0,"time":1.5,"rank":1,)"
                       R"("metrics":{"train/loss":0.25,"broken":null}})",
                       &problem);
  EXPECT_EQ(problem, "") << "null is a value that was not finite, not a problem";
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].name(), metric::kTrainLoss);
  EXPECT_EQ(samples[0].step(), 3);
  EXPECT_EQ(samples[0].rank(), 1);
  EXPECT_EQ(samples[0].wall_time(), 1.5);
  EXPECT_TRUE(parseMetricsLine("plain progress line", &problem).empty());
  EXPECT_EQ(problem, "");
  EXPECT_TRUE(parseMetricsLine(R"({"type":"end","step":9})", &problem).empty());
  EXPECT_EQ(problem, "") << "other record types are not malformed";
  // Integral floats (a Python script's 3.0) are integers.
  const auto fromFloats =
      parseMetricsLine(R"({"type":"metrics","step":3.0,"epoch":1.0,"metrics":{"x":1e308}})");
  ASSERT_EQ(fromFloats.size(), 1u);
  EXPECT_EQ(fromFloats[0].step(), 3);
  EXPECT_EQ(fromFloats[0].value(), 1e308);
}

TEST(ParseMetricsLineTest, StartRecordGivesTheRunsTotalStepsAndStepsPerEpoch) {
  const auto samples = parseMetricsLine(
      R"({"type":"start","time":2.5,"world_size":2,"steps_per_epoch":468,"total_steps":1404,)"
      R"("first_step":936,"config":{"epochs":3,"hidden":[256,128]}})");
  ASSERT_EQ(samples.size(), 2u);
  std::map<std::string, double> values;
  for (const auto& sample : samples) {
    values[sample.name()] = sample.value();
    EXPECT_EQ(sample.rank(), -1);
    EXPECT_EQ(sample.step(), 936) << "at the step the run starts from";
    EXPECT_EQ(sample.epoch(), 2);
    EXPECT_EQ(sample.wall_time(), 2.5);
  }
  EXPECT_EQ(values[metric::kRunTotalSteps], 1404);
  EXPECT_EQ(values[metric::kRunStepsPerEpoch], 468);
  // A start record without them gives nothing.
  EXPECT_TRUE(parseMetricsLine(R"({"type":"start","world_size":1})").empty());
}

// Regression: a custom command printing this line aborted the agent with
// nlohmann's type_error.302 (the "type" read as a string), and again after every restart.
TEST(ParseMetricsLineTest, NumericTypeIsAMalformedRecordNotTypeError302) {
  std::string problem;
  EXPECT_TRUE(parseMetricsLine(R"({"type":5,"metrics":{"x":1}})", &problem).empty());
  EXPECT_EQ(problem, "\"type\" is a number, not a string");
  EXPECT_TRUE(parseMetricsLine(R"({"type":5,"metrics":{"x":1}})").empty()) << "problem optional";
}

TEST(ParseMetricsLineTest, MalformedRecordsAreSkippedWholeWithTheReason) {
  std::string manyMetrics = R"({"type":"metrics","metrics":{)";
  for (size_t i = 0; i <= kMaxMetricsPerRecord; ++i) {
    manyMetrics += (i == 0 ? "\"m" : ",\"m") + std::to_string(i) + "\":1";
  }
  manyMetrics += "}}";
  std::string bigArray = R"({"type":"metrics","metrics":{"x":[)";
  for (int i = 0; i < 10'000; ++i) bigArray += i == 0 ? "0" : ",0";
  bigArray += "]}}";
  const std::string longName =
      R"({"type":"metrics","metrics":{")" + std::string(kMaxMetricNameBytes + 1, 'n') + R"(":1}})";
  const std::map<std::string, std::string> cases = {
      // line -> a phrase of the reason
      {R"({"type":"metrics"})", "\"metrics\" is missing"},
      {R"({"type":"metrics","metrics":[1,2]})", "\"metrics\" is an array, not an object"},
      {R"({"type":"metrics","metrics":"x"})", "\"metrics\" is a string, not an object"},
      {R"({"type":"metrics","metrics":{"a":1,"x":"1"}})", "metric \"x\" is a string"},
      {R"({"type":"metrics","metrics":{"x":true}})", "metric \"x\" is a boolean"},
      {R"({"type":"metrics","metrics":{"x":{"y":1}}})", "metric \"x\" is an object"},
      {bigArray, "metric \"x\" is an array"},
      {manyMetrics, "more than 1024"},
      {longName, "a metric name of 257 bytes"},
      {R"({"type":"metrics","step":"3","metrics":{"x":1}})",
       "\"step\" is a string, not an integer"},
      {R"({"type":"metrics","step":-1,"metrics":{"x":1}})", "\"step\" is -1"},
      {R"({"type":"metrics","step":1.5,"metrics":{"x":1}})", "\"step\" is 1.5"},
      {R"({"type":"metrics","step":1e300,"metrics":{"x":1}})", "\"step\" is 1e+300"},
      {R"({"type":"metrics","step":18446744073709551615,"metrics":{"x":1}})",
       "\"step\" is 18446744073709551615"},
      {R"({"type":"metrics","epoch":{},"metrics":{"x":1}})", "\"epoch\" is an object"},
      {R"({"type":"metrics","rank":-2,"metrics":{"x":1}})", "\"rank\" is -2"},
      {R"({"type":"metrics","rank":1e10,"metrics":{"x":1}})", "\"rank\" is 1e+10"},
      {R"({"type":"metrics","rank":"0","metrics":{"x":1}})", "\"rank\" is a string"},
      {R"({"type":"metrics","time":"now","metrics":{"x":1}})", "\"time\" is a string"},
      {R"({"type":"metrics","metrics":{"x":1e999}})", "not valid JSON"},  // not finite
      {R"({"type":"metrics","metrics":{"x":NaN}})", "not valid JSON"},
      {R"({"type":"start","total_steps":"many"})", "\"total_steps\" is a string"},
      {R"({"type":"start","total_steps":-1})", "\"total_steps\" is -1"},
      {R"({"type":"start","steps_per_epoch":1e300})", "\"steps_per_epoch\" is 1e+300"},
      {R"({"type":"start","first_step":null,"total_steps":3})", "\"first_step\" is a null"},
      {R"({"type":null})", "\"type\" is a null, not a string"},
      {R"({"type":["metrics"]})", "\"type\" is an array, not a string"},
      {R"({})", "\"type\" is missing"},
      {R"({"type":"metrics","metrics":{"x":1})", "not valid JSON"},              // cut short
      {R"({'type': 'metrics'})", "not valid JSON"},                              // a Python dict
      {"{\"type\":\"metrics\",\"metrics\":{\"caf\xE9\":1}}", "not valid JSON"},  // not UTF-8
      {"{" + std::string(kMaxLogLineBytes, ' ') + "}", "longer than a log line"},
  };
  for (const auto& [line, reason] : cases) {
    std::string problem;
    EXPECT_TRUE(parseMetricsLine(line, &problem).empty()) << line.substr(0, 120);
    EXPECT_NE(problem.find(reason), std::string::npos)
        << line.substr(0, 120) << "\n  gives: " << problem << "\n  expected: " << reason;
  }
}

TEST(ParseMetricsLineTest, DeeplyNestedRecordIsRefusedBeforeADocumentIsBuilt) {
  // 20,000 levels fit a 64 KiB line; copying or printing such a document would recurse per level.
  const std::string line = R"({"type":"metrics","metrics":{"x":)" + std::string(20'000, '[') +
                           std::string(20'000, ']') + "}}";
  ASSERT_LE(line.size(), kMaxLogLineBytes);
  std::string problem;
  EXPECT_TRUE(parseMetricsLine(line, &problem).empty());
  EXPECT_NE(problem.find(std::to_string(kMaxJsonDepth) + " levels"), std::string::npos) << problem;
}

class LogTailerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ringside-tailer-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void append(const std::string& stream, const std::string& bytes) {
    std::ofstream(dir_ + "/" + stream + ".log", std::ios::app | std::ios::binary) << bytes;
  }
  // Polls and commits, as the agent does once it has journaled the chunk.
  static LogTailer::Chunk pollAndCommit(LogTailer& tailer) {
    LogTailer::Chunk chunk = tailer.poll();
    tailer.commit();
    return chunk;
  }
  static std::string metricsLine(int step) {
    return R"({"type":"metrics","step":)" + std::to_string(step) +
           R"(,"metrics":{"x":1}})"
           "\n";
  }
  std::string dir_;
};

// Regression: a 2.1 MB stdout line, then 3 metric lines: nothing after the long line
// was ever journaled (the tailer waited for a newline within 1 MiB for good).
TEST_F(LogTailerTest, LineOverOneMebibyteIsTruncatedAndTailingGoesOn) {
  append("stdout", std::string(2'100'000, 'x') + "\n" + metricsLine(1) + metricsLine(2) +
                       metricsLine(3) + "after\n");
  LogTailer tailer(dir_, StdoutRecords::kParse);
  const LogTailer::Chunk chunk = pollAndCommit(tailer);
  ASSERT_EQ(chunk.lines.size(), 5u);
  const std::string& cut = chunk.lines[0].text();
  EXPECT_EQ(cut.size(), kMaxLogLineBytes + std::string(" [line truncated: 2100000 bytes, kept the "
                                                       "first 65536]")
                                               .size());
  EXPECT_TRUE(cut.ends_with(" [line truncated: 2100000 bytes, kept the first 65536]"));
  EXPECT_EQ(chunk.lines[4].text(), "after");
  ASSERT_EQ(chunk.samples.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(chunk.samples[i].step(), i + 1);
  EXPECT_TRUE(tailer.poll().lines.empty()) << "nothing read twice";
}

TEST_F(LogTailerTest, OverLongLineStillBeingWrittenIsSkippedAcrossPollsAndRestarts) {
  append("stderr", std::string(100'000, 'y'));
  {
    LogTailer tailer(dir_, StdoutRecords::kSentToSink);
    EXPECT_TRUE(tailer.poll().lines.empty()) << "no newline yet";
    append("stderr", std::string(3'000'000, 'y'));
    EXPECT_TRUE(tailer.poll().lines.empty());
  }
  // An agent restart in the middle of the line: the next tailer goes on from tail_offsets.
  append("stderr", std::string(10, 'y') + "\nnext\n");
  LogTailer restarted(dir_, StdoutRecords::kSentToSink);
  const LogTailer::Chunk chunk = pollAndCommit(restarted);
  ASSERT_EQ(chunk.lines.size(), 2u);
  EXPECT_TRUE(
      chunk.lines[0].text().ends_with("[line truncated: 3100010 bytes, kept the first "
                                      "65536]"))
      << chunk.lines[0].text().substr(65536);
  EXPECT_EQ(chunk.lines[0].stream(), "stderr");
  EXPECT_EQ(chunk.lines[1].text(), "next");
}

TEST_F(LogTailerTest, TruncationKeepsWholeCharacters) {
  const std::string euro = "\xE2\x82\xAC";
  append("stdout", std::string(kMaxLogLineBytes - 1, 'a') + euro + std::string(100, 'b') + "\n");
  LogTailer tailer(dir_, StdoutRecords::kSentToSink);
  const LogTailer::Chunk chunk = pollAndCommit(tailer);
  ASSERT_EQ(chunk.lines.size(), 1u);
  EXPECT_TRUE(isValidUtf8(chunk.lines[0].text()));
  EXPECT_TRUE(chunk.lines[0].text().ends_with(
      std::string(kMaxLogLineBytes - 1, 'a').substr(kMaxLogLineBytes - 4) +
      " [line truncated: 65638 bytes, kept the first 65535]"));
  // A line of exactly the bound is kept whole.
  EXPECT_EQ(logLineText(std::string(kMaxLogLineBytes, 'c')), std::string(kMaxLogLineBytes, 'c'));
}

// Regression: `printf 'caf\351\n'` made every page holding the line undecodable.
TEST_F(LogTailerTest, NonUtf8BytesInOutputBecomeReplacementCharacters) {
  append("stdout", "caf\351\n");
  append("stderr", "\xC0\x80 overlong\n");
  LogTailer tailer(dir_, StdoutRecords::kParse);
  const LogTailer::Chunk chunk = pollAndCommit(tailer);
  ASSERT_EQ(chunk.lines.size(), 2u);
  EXPECT_EQ(chunk.lines[0].text(), "caf\xEF\xBF\xBD");
  EXPECT_EQ(chunk.lines[1].text(), "\xEF\xBF\xBD\xEF\xBF\xBD overlong");
  v1::LogLine parsed;
  EXPECT_TRUE(parsed.ParseFromString(chunk.lines[0].SerializeAsString()));
}

TEST_F(LogTailerTest, MalformedRecordsAreCountedAndNotedOncePerRunAcrossRestarts) {
  append("stdout", std::string(R"({"type":5,"metrics":{"x":1}})") + "\n" + metricsLine(7) +
                       R"({"type":"metrics","metrics":[]})" + "\n");
  {
    LogTailer tailer(dir_, StdoutRecords::kParse);
    const LogTailer::Chunk chunk = pollAndCommit(tailer);
    ASSERT_EQ(chunk.lines.size(), 4u) << "3 lines and one note";
    EXPECT_EQ(chunk.lines[1].text(),
              "[ringside-agent: skipped the metrics record above: \"type\" is a number, not a "
              "string (docs/metrics.md); later malformed records are skipped without a note]");
    ASSERT_EQ(chunk.samples.size(), 1u);
    EXPECT_EQ(chunk.samples[0].step(), 7);
    EXPECT_EQ(tailer.malformedRecords(), 2u);
  }
  append("stdout", "{not json\n" + metricsLine(8));
  LogTailer restarted(dir_, StdoutRecords::kParse);
  const LogTailer::Chunk chunk = pollAndCommit(restarted);
  EXPECT_EQ(chunk.lines.size(), 2u) << "no second note in the same run";
  EXPECT_EQ(chunk.samples.size(), 1u);
  EXPECT_EQ(restarted.malformedRecords(), 3u);
}

TEST_F(LogTailerTest, UncommittedPollIsReadAgain) {
  append("stdout", R"({"type":5})"
                   "\n");
  LogTailer tailer(dir_, StdoutRecords::kParse);
  EXPECT_EQ(tailer.poll().lines.size(), 2u);
  // The journal failed: nothing was committed, the same lines (and the note) come again.
  EXPECT_EQ(tailer.poll().lines.size(), 2u);
  tailer.commit();
  EXPECT_TRUE(tailer.poll().lines.empty());
  EXPECT_EQ(tailer.malformedRecords(), 1u);
}

// mpirun --tag-output's "[job,rank]<stream>:" becomes "[rank N] "; a tagged metrics record is
// still a record; an untagged line (mpirun's own) is kept as it is.
TEST_F(LogTailerTest, RankTagsBecomeARankPrefixAndTaggedRecordsAreParsed) {
  append("stdout", "[1,3]<stdout>:" + metricsLine(7) + "[12,0]<stdout>:hello\n" +
                       "[1,0]<stdout>: looks [like] a tag\n" + "[x,1]<stdout>:not a tag\n");
  append("stderr", "[1,1]<stderr>:boom\nmpirun: the job aborted\n");
  LogTailer tailer(dir_, StdoutRecords::kParse);
  const LogTailer::Chunk chunk = pollAndCommit(tailer);
  ASSERT_EQ(chunk.lines.size(), 6u);
  EXPECT_TRUE(chunk.lines[0].text().starts_with("[rank 3] {\"type\":\"metrics\""));
  EXPECT_EQ(chunk.lines[1].text(), "[rank 0] hello");
  EXPECT_EQ(chunk.lines[2].text(), "[rank 0]  looks [like] a tag");
  EXPECT_EQ(chunk.lines[3].text(), "[x,1]<stdout>:not a tag");
  EXPECT_EQ(chunk.lines[4].text(), "[rank 1] boom");
  EXPECT_EQ(chunk.lines[5].text(), "mpirun: the job aborted");
  ASSERT_EQ(chunk.samples.size(), 1u);
  EXPECT_EQ(chunk.samples[0].step(), 7);
}

// Regression: at every logged step a trainer's rank 0 prints every rank's
// metrics record, and the agent journaled each as a log line although the ranks send the same
// samples to its sink: each sample was stored twice (the lines ~60 % of the stored bytes).
TEST_F(LogTailerTest, TrainerMetricsRecordsWereJournaledTwice) {
  const std::string start =
      R"([1,0]<stdout>:{"type":"start","world_size":2,"total_steps":10,"first_step":0})"
      "\n";
  const std::string perRank =
      R"([1,0]<stdout>:{"type":"metrics","step":5,"epoch":0,"time":1.5,"rank":1,)"
      R"("metrics":{"time/step_ms":1.25}})"
      "\n";
  append("stdout", start + "[1,0]<stdout>:" + metricsLine(5) + perRank +
                       R"([1,0]<stdout>:{"type":"metrics","metrics":[]})" + "\n" +
                       "[1,0]<stdout>:plain text\n");
  append("stderr", "[1,0]<stderr>:epoch 0 step 5\n");
  {
    LogTailer tailer(dir_, StdoutRecords::kSentToSink);
    const LogTailer::Chunk chunk = pollAndCommit(tailer);
    EXPECT_TRUE(chunk.samples.empty()) << "the ranks send them to the sink";
    EXPECT_FALSE(chunk.more);
    std::vector<std::string> texts;
    for (const auto& line : chunk.lines) texts.push_back(line.text());
    ASSERT_EQ(texts.size(), 5u) << ::testing::PrintToString(texts);
    EXPECT_TRUE(texts[0].starts_with("[rank 0] {\"type\":\"start\"")) << texts[0];
    EXPECT_EQ(texts[1],
              "[ringside-agent: the trainer's metrics records on stdout are journaled as the "
              "metric samples its ranks send, not as log lines; the run's stdout.log keeps them "
              "(docs/metrics.md)]");
    EXPECT_EQ(texts[2], "[rank 0] {\"type\":\"metrics\",\"metrics\":[]}")
        << "a malformed record stays a line";
    EXPECT_EQ(texts[3], "[rank 0] plain text");
    EXPECT_EQ(texts[4], "[rank 0] epoch 0 step 5");
    EXPECT_EQ(chunk.lines[4].stream(), "stderr");
  }
  // The records stay in stdout.log, the source of recovery (metrics_recovery.h).
  std::ifstream log(dir_ + "/stdout.log");
  std::string all((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find(perRank), std::string::npos);
  // An agent restart: the note is not repeated, later records are still not lines.
  append("stdout", "[1,0]<stdout>:" + metricsLine(10) +
                       "[1,0]<stdout>:{\"type\":\"end\",\"status\":\"completed\"}\n");
  LogTailer restarted(dir_, StdoutRecords::kSentToSink);
  const LogTailer::Chunk chunk = pollAndCommit(restarted);
  ASSERT_EQ(chunk.lines.size(), 1u);
  EXPECT_EQ(chunk.lines[0].text(), "[rank 0] {\"type\":\"end\",\"status\":\"completed\"}");
}

// With no line to journal, a poll of skipped records commits its progress itself and says that
// more is to be read, so that the agent does not let go of an ended run's log before its end.
TEST_F(LogTailerTest, SkippedRecordsOverManyPollsReachTheLogsEnd) {
  std::string records;
  while (records.size() < 3 * 1024 * 1024) records += "[1,0]<stdout>:" + metricsLine(1);
  append("stdout", records + "[1,0]<stdout>:last\n");
  LogTailer tailer(dir_, StdoutRecords::kSentToSink);
  std::vector<std::string> texts;
  int polls = 0;
  for (bool more = true; more && polls < 10; ++polls) {
    const LogTailer::Chunk chunk = tailer.poll();
    for (const auto& line : chunk.lines) texts.push_back(line.text());
    if (!chunk.lines.empty()) tailer.commit();
    more = chunk.more;
  }
  EXPECT_GE(polls, 3) << "1 MiB per poll";
  ASSERT_EQ(texts.size(), 2u) << ::testing::PrintToString(texts);
  EXPECT_EQ(texts[1], "[rank 0] last");
  EXPECT_TRUE(tailer.poll().lines.empty()) << "nothing read twice";
}

TEST(IsMetricsRecordTest, OnlyWellFormedMetricsRecords) {
  EXPECT_TRUE(isMetricsRecord(R"({"type":"metrics","step":1,"metrics":{"x":1}})"));
  EXPECT_TRUE(isMetricsRecord(R"([1,0]<stdout>:{"type":"metrics","rank":3,"metrics":{}})"));
  // mpirun's copy of the tag at a 4 KiB block boundary inside the line is not part of the record.
  EXPECT_TRUE(isMetricsRecord(R"([1,0]<stdout>:{"type":"met[1,0]<stdout>:rics","metrics":{}})"));
  EXPECT_FALSE(isMetricsRecord(R"([1,0]<stdout>:{"type":"met[1,1]<stdout>:rics","metrics":{}})"));
  for (const char* other : {R"({"type":"start","total_steps":3})", R"({"type":"end"})",
                            R"({"type":"metrics","metrics":{"x":"1"}})", "{not json", "text",
                            R"({"type":"metrics","rank":-7,"metrics":{"x":1}})", ""}) {
    EXPECT_FALSE(isMetricsRecord(other)) << other;
  }
}

TEST(SplitRankTagTest, OnlyOpenMpisTagFormIsSplit) {
  EXPECT_EQ(splitRankTag("[1,2]<stderr>:x").rank, 2);
  EXPECT_EQ(splitRankTag("[1,2]<stderr>:x").text, "x");
  EXPECT_EQ(splitRankTag("[1,2]<stddiag>:").text, "");
  EXPECT_EQ(splitRankTag("[1,65535]<stdout>:x").rank, 65535);
  for (const char* untagged : {"[1,65536]<stdout>:x", "[1,2]<stdin>:x", "[1,2]x", "[,2]<stdout>:",
                               "[1,]<stdout>:", "[12345678901,1]<stdout>:", "plain", ""}) {
    EXPECT_EQ(splitRankTag(untagged).rank, -1) << untagged;
    EXPECT_EQ(splitRankTag(untagged).text, untagged);
  }
}

// mpirun tags every 4 KiB block it forwards, also one that starts inside a line: the copy of the
// line's own tag is not its text, and the record in it still parses (recorded on this machine:
// 64 of 40,000 fast-printed lines carried one).
TEST(SplitRankTagTest, CopiesOfTheLinesOwnTagInsideItAreRemoved) {
  EXPECT_EQ(textWithoutRankTags(R"([1,0]<stdout>:{"step":64[1,0]<stdout>:9,"type":"x"})"),
            R"({"step":649,"type":"x"})");
  EXPECT_EQ(textWithoutRankTags("[1,0]<stdout>:a[1,1]<stdout>:b"), "a[1,1]<stdout>:b");
  EXPECT_EQ(textWithoutRankTags("no tag [1,0]<stdout>:x"), "no tag [1,0]<stdout>:x");
  const auto samples = parseMetricsLine(
      R"([1,0]<stdout>:{"type":"metrics","step":[1,0]<stdout>:5,"metrics":{"x":1}})");
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].step(), 5);
  EXPECT_EQ(logLineText("[1,2]<stderr>:ab[1,2]<stderr>:cd"), "[rank 2] abcd");
}

// The cut counts the line's own text, not its tag: a tagged line of exactly the limit is whole.
TEST(SplitRankTagTest, TruncationCountsTheTextAfterTheTag) {
  const std::string text(kMaxLogLineBytes, 'a');
  EXPECT_EQ(logLineText("[1,0]<stdout>:" + text), "[rank 0] " + text);
  const std::string longer = logLineText("[1,0]<stdout>:" + text + "b");
  EXPECT_TRUE(longer.ends_with("[line truncated: 65537 bytes, kept the first 65536]"))
      << longer.substr(longer.size() - 80);
}

}  // namespace
}  // namespace ringside::agent
