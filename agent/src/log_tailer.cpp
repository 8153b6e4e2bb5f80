#include "ringside/agent/log_tailer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "ringside/agent/launch_command.h"
#include "ringside/common/json_limits.h"
#include "ringside/common/metric_names.h"
#include "ringside/common/run_spec_limits.h"
#include "ringside/common/utf8.h"

namespace ringside::agent {

namespace {

using Json = nlohmann::json;

constexpr const char* kStreams[2] = {"stdout", "stderr"};
// Longest rank tag splitRankTag accepts: "[" 10 digits "," 10 digits "]<stddiag>:" is 33 bytes.
// A line is read whole when its text after such a tag fits kMaxLogLineBytes.
constexpr uint64_t kMaxRankTagBytes = 33;
// mpirun forwards output in blocks of at most 4 KiB (Open MPI's ORTE_IOF_BASE_MSG_MAX) and tags
// each; the head read of a cut line leaves room for those copies, so that 64 KiB of text remain.
constexpr uint64_t kCutLineHeadBytes =
    kMaxLogLineBytes + (kMaxLogLineBytes / 4096 + 2) * kMaxRankTagBytes + 1;
static_assert(kMaxTaggedRank == static_cast<int64_t>(kMaxWorldSize) - 1);
// Bytes of complete lines read per stream per poll.
constexpr uint64_t kMaxChunkBytes = 1 << 20;
// Bytes of an over-long line's rest scanned for its newline per stream per poll (read in
// kMaxChunkBytes blocks and dropped): the agent's loop never waits long on one run's output.
constexpr uint64_t kMaxSkipBytesPerPoll = uint64_t{64} << 20;
// Largest step, epoch and first_step: 2^53, the largest integer every JSON reader (a double)
// holds exactly.
constexpr int64_t kMaxCount = int64_t{1} << 53;

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string numberText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

// Reads the fields of one record, keeping the first problem found (docs/metrics.md's types).
class RecordReader {
 public:
  explicit RecordReader(const Json& record) : record_(record) {}
  const std::string& problem() const { return problem_; }
  void fail(std::string problem) {
    if (problem_.empty()) problem_ = std::move(problem);
  }

  // record[key] as an integer in [min, max] (an integral float such as 3.0 too); nullopt when
  // absent or wrong (then problem() says why).
  std::optional<int64_t> integer(const char* key, int64_t min, int64_t max) {
    const auto it = record_.find(key);
    if (it == record_.end()) return std::nullopt;
    const std::string allowed =
        ": use an integer from " + std::to_string(min) + " to " + std::to_string(max);
    if (it->is_number_unsigned()) {
      const uint64_t value = it->get<uint64_t>();
      if (value <= static_cast<uint64_t>(max) && static_cast<int64_t>(value) >= min) {
        return static_cast<int64_t>(value);
      }
      fail("\"" + std::string(key) + "\" is " + std::to_string(value) + allowed);
    } else if (it->is_number_integer()) {
      const int64_t value = it->get<int64_t>();
      if (value >= min && value <= max) return value;
      fail("\"" + std::string(key) + "\" is " + std::to_string(value) + allowed);
    } else if (it->is_number_float()) {
      const double value = it->get<double>();
      if (std::isfinite(value) && value == std::floor(value) && value >= static_cast<double>(min) &&
          value <= static_cast<double>(max)) {
        return static_cast<int64_t>(value);
      }
      fail("\"" + std::string(key) + "\" is " + numberText(value) + allowed);
    } else {
      fail("\"" + std::string(key) + "\" is " + article(*it) + ", not an integer");
    }
    return std::nullopt;
  }

  // record[key] as a finite number in [min, max]; nullopt when absent or wrong.
  std::optional<double> number(const char* key, double min, double max) {
    const auto it = record_.find(key);
    if (it == record_.end()) return std::nullopt;
    if (!it->is_number()) {
      fail("\"" + std::string(key) + "\" is " + article(*it) + ", not a number");
      return std::nullopt;
    }
    const double value = it->get<double>();
    if (std::isfinite(value) && value >= min && value <= max) return value;
    fail("\"" + std::string(key) + "\" is " + numberText(value) + ": use a number from " +
         numberText(min) + " to " + numberText(max));
    return std::nullopt;
  }

  // "a string", "an object", ...: a JSON value's type in a sentence.
  static std::string article(const Json& value) {
    const std::string name = value.type_name();
    return (name == "object" || name == "array" ? "an " : "a ") + name;
  }

 private:
  const Json& record_;
  std::string problem_;
};

// Reads a "metrics" record's fields, adding one sample per value to *samples, or, when `samples`
// is null, only checking them (isMetricsRecord).
void readMetricsRecord(const Json& record, RecordReader* reader,
                       std::vector<v1::MetricSample>* samples) {
  const int64_t step = reader->integer("step", 0, kMaxCount).value_or(0);
  const int64_t epoch = reader->integer("epoch", 0, kMaxCount).value_or(0);
  const int64_t rank =
      reader->integer("rank", -1, static_cast<int64_t>(kMaxWorldSize) - 1).value_or(-1);
  const std::optional<double> recordTime = reader->number(
      "time", std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
  const auto metrics = record.find("metrics");
  if (metrics == record.end() || !metrics->is_object()) {
    reader->fail(metrics == record.end()
                     ? std::string("\"metrics\" is missing")
                     : "\"metrics\" is " + RecordReader::article(*metrics) + ", not an object");
    return;
  }
  if (metrics->size() > kMaxMetricsPerRecord) {
    reader->fail("\"metrics\" has " + std::to_string(metrics->size()) + " values, more than " +
                 std::to_string(kMaxMetricsPerRecord));
    return;
  }
  const double time = samples != nullptr ? recordTime.value_or(wallSeconds()) : 0;
  for (const auto& item : metrics->items()) {
    const std::string& name = item.key();
    const Json& value = item.value();
    if (name.empty() || name.size() > kMaxMetricNameBytes) {
      reader->fail("a metric name of " + std::to_string(name.size()) + " bytes: use 1 to " +
                   std::to_string(kMaxMetricNameBytes));
      return;
    }
    if (value.is_null()) continue;  // a value that was not finite (docs/metrics.md)
    if (!value.is_number()) {
      reader->fail("metric \"" + name + "\" is " + RecordReader::article(value) +
                   ", not a number (or null)");
      return;
    }
    if (samples == nullptr) continue;
    v1::MetricSample sample;
    sample.set_step(step);
    sample.set_epoch(epoch);
    sample.set_wall_time(time);
    sample.set_rank(static_cast<int32_t>(rank));
    sample.set_name(name);
    sample.set_value(value.get<double>());
    samples->push_back(std::move(sample));
  }
}

void readStartRecord(RecordReader* reader, std::vector<v1::MetricSample>* samples) {
  // The run's size, as the trainer sends it to the agent sink: global samples at first_step.
  const int64_t firstStep = reader->integer("first_step", 0, kMaxCount).value_or(0);
  const double time = reader
                          ->number("time", std::numeric_limits<double>::lowest(),
                                   std::numeric_limits<double>::max())
                          .value_or(wallSeconds());
  const auto total = reader->number("total_steps", 0.0, static_cast<double>(kMaxCount));
  const auto perEpoch = reader->number("steps_per_epoch", 0.0, static_cast<double>(kMaxCount));
  const int64_t stepsPerEpoch = perEpoch ? static_cast<int64_t>(*perEpoch) : 0;
  for (const auto& [value, name] :
       {std::pair{total, metric::kRunTotalSteps}, std::pair{perEpoch, metric::kRunStepsPerEpoch}}) {
    if (!value) continue;
    v1::MetricSample sample;
    sample.set_step(firstStep);
    sample.set_epoch(stepsPerEpoch > 0 ? firstStep / stepsPerEpoch : 0);
    sample.set_wall_time(time);
    sample.set_rank(-1);
    sample.set_name(name);
    sample.set_value(*value);
    samples->push_back(std::move(sample));
  }
}

// A "config" record's params (docs/metrics.md): a JSON object, nested objects flattened to dotted
// keys, each leaf kept as its JSON text; bounded as RunParams (run_spec_limits.h).
void readConfigRecord(const Json& record, std::map<std::string, std::string>* params,
                      std::string* problem) {
  const auto found = record.find("params");
  if (found == record.end() || !found->is_object()) {
    *problem = "a config record's \"params\" is missing or not an object";
    return;
  }
  google::protobuf::Map<std::string, std::string> flat;
  std::vector<std::pair<std::string, const Json*>> pending = {{"", &*found}};
  while (!pending.empty() && flat.size() <= kMaxRunParams) {
    auto [prefix, object] = pending.back();
    pending.pop_back();
    for (auto it = object->begin(); it != object->end(); ++it) {
      const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
      if (it->is_object() && !it->empty()) {
        pending.emplace_back(key, &*it);
      } else {
        flat[key] = it->dump(-1, ' ', false, Json::error_handler_t::replace);
      }
    }
  }
  if (Status valid = validateRunParams(flat); !valid.isOk()) {
    *problem = "a config record: " + valid.message();
    return;
  }
  params->insert(flat.begin(), flat.end());
}

// Bytes [offset, offset + length) of `fd`, fewer at its end.
std::string readAt(int fd, uint64_t offset, uint64_t length) {
  std::string bytes(length, '\0');
  size_t got = 0;
  while (got < length) {
    const ssize_t n =
        ::pread(fd, bytes.data() + got, length - got, static_cast<off_t>(offset + got));
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

// The offset of the first '\n' in [from, size) of `fd`, scanning at most kMaxSkipBytesPerPoll;
// nullopt when there is none that far, with *scannedTo where the scan stopped.
std::optional<uint64_t> findNewline(int fd, uint64_t from, uint64_t size, uint64_t* scannedTo) {
  const uint64_t end = std::min(size, from + kMaxSkipBytesPerPoll);
  uint64_t at = from;
  while (at < end) {
    const std::string block = readAt(fd, at, std::min(kMaxChunkBytes, end - at));
    if (block.empty()) break;
    const size_t newline = block.find('\n');
    if (newline != std::string::npos) return at + newline;
    at += block.size();
  }
  *scannedTo = at;
  return std::nullopt;
}

}  // namespace

std::string logLineText(std::string_view line, uint64_t totalBytes) {
  const RankTaggedLine split = splitRankTag(line);
  if (split.rank < 0) {
    const uint64_t total = std::max<uint64_t>(totalBytes, line.size());
    if (total <= kMaxLogLineBytes) return toValidUtf8(line);
    const size_t kept = utf8PrefixLength(line, kMaxLogLineBytes);
    return toValidUtf8(line.substr(0, kept)) + " [line truncated: " + std::to_string(total) +
           " bytes, kept the first " + std::to_string(kept) + "]";
  }
  // mpirun's copies of the tag inside a long line are not the program's text (rank_tag.h).
  const std::string_view tag = line.substr(0, line.size() - split.text.size());
  const std::string text = textWithoutRankTags(line);
  const std::string prefix = "[rank " + std::to_string(split.rank) + "] ";
  if (totalBytes <= line.size() && text.size() <= kMaxLogLineBytes) {
    return prefix + toValidUtf8(text);
  }
  // A cut line's size is its bytes in the log file after the leading tag (the copies inside it
  // included: the unread rest of the line is never scanned for them).
  const uint64_t total = std::max<uint64_t>(totalBytes, line.size()) - tag.size();
  const size_t kept = utf8PrefixLength(text, kMaxLogLineBytes);
  return prefix + toValidUtf8(std::string_view(text).substr(0, kept)) +
         " [line truncated: " + std::to_string(total) + " bytes, kept the first " +
         std::to_string(kept) + "]";
}

namespace {

// The text of a record line `taggedLine` without its rank tags (textWithoutRankTags): a view into
// `taggedLine` when it has no copies of its tag inside (every line shorter than mpirun's 4 KiB
// blocks), else built in *storage.
std::string_view recordText(std::string_view taggedLine, std::string* storage) {
  const RankTaggedLine split = splitRankTag(taggedLine);
  if (split.rank < 0) return taggedLine;
  const std::string_view tag = taggedLine.substr(0, taggedLine.size() - split.text.size());
  if (split.text.find(tag) == std::string_view::npos) return split.text;
  *storage = textWithoutRankTags(taggedLine);
  return *storage;
}

// parseMetricsLine's reading of the record `line` (its text without rank tags): the record's
// "type" in *recordType (empty when the line is no JSON object with a string "type"), the first
// problem in *why; its samples added to *samples unless `samples` is null (then the fields are
// only checked), a config record's params to *params unless `params` is null.
void readRecord(std::string_view line, std::string* why, std::map<std::string, std::string>* params,
                std::string* recordType, std::vector<v1::MetricSample>* samples) {
  why->clear();
  recordType->clear();
  if (line.empty() || line.front() != '{') return;
  if (line.size() > kMaxLogLineBytes) {
    *why = "a record of " + std::to_string(line.size()) + " bytes, longer than a log line (" +
           std::to_string(kMaxLogLineBytes) + ")";
    return;
  }
  // Refused before a document is built: copying or printing a deep one recurses per level.
  if (Status depth = checkJsonDepth(line, kMaxJsonDepth, "the record"); !depth.isOk()) {
    *why = depth.message();
    return;
  }
  const size_t kept = samples != nullptr ? samples->size() : 0;
  // nlohmann::json reports with exceptions; none leaves this function (a line is never fatal).
  try {
    const Json record = Json::parse(line.begin(), line.end());
    if (!record.is_object()) {
      *why = "not a JSON object";
      return;
    }
    const auto type = record.find("type");
    if (type == record.end() || !type->is_string()) {
      *why = type == record.end()
                 ? std::string("\"type\" is missing")
                 : "\"type\" is " + RecordReader::article(*type) + ", not a string";
      return;
    }
    *recordType = type->get<std::string>();
    RecordReader reader(record);
    if (*type == "metrics") {
      readMetricsRecord(record, &reader, samples);
    } else if (*type == "start" && samples != nullptr) {
      readStartRecord(&reader, samples);
    } else if (*type == "config" && params != nullptr) {
      readConfigRecord(record, params, why);
      return;
    }
    if (!reader.problem().empty()) {
      *why = reader.problem();
      if (samples != nullptr) samples->resize(kept);
    }
  } catch (const Json::exception& error) {
    *why = std::string("not valid JSON: ") + error.what();
    if (samples != nullptr) samples->resize(kept);
  }
}

}  // namespace

std::vector<v1::MetricSample> parseMetricsLine(std::string_view taggedLine, std::string* problem,
                                               std::map<std::string, std::string>* params) {
  std::string unused;
  std::string type;
  std::string storage;
  std::vector<v1::MetricSample> samples;
  readRecord(recordText(taggedLine, &storage), problem != nullptr ? problem : &unused, params,
             &type, &samples);
  return samples;
}

bool isMetricsRecord(std::string_view line) {
  const std::string_view text = splitRankTag(line).text;
  if (text.empty() || text.front() != '{') return false;  // most lines: no parse
  std::string problem;
  std::string type;
  std::string storage;
  readRecord(recordText(line, &storage), &problem, nullptr, &type, nullptr);
  return problem.empty() && type == "metrics";
}

LogTailer::LogTailer(std::string runDir, StdoutRecords records)
    : runDir_(std::move(runDir)), records_(records) {
  // "<stdout> <stderr>" offsets, then (since the long-line bound) the malformed-record count and
  // per stream "<skipping 0|1> <line start>", then (since the sink note) "<sink note 0|1>"; fields an
  // older agent did not write stay 0.
  std::ifstream offsets(runDir_ + "/tail_offsets");
  offsets >> committed_[0].offset >> committed_[1].offset >> malformedCommitted_ >>
      committed_[0].skipping >> committed_[0].lineStart >> committed_[1].skipping >>
      committed_[1].lineStart >> sinkNoteCommitted_;
  pending_[0] = committed_[0];
  pending_[1] = committed_[1];
  malformedPending_ = malformedCommitted_;
  sinkNotePending_ = sinkNoteCommitted_;
}

LogTailer::Chunk LogTailer::poll() {
  Chunk chunk;
  const double now = wallSeconds();
  malformedPending_ = malformedCommitted_;
  sinkNotePending_ = sinkNoteCommitted_;
  for (int s = 0; s < 2; ++s) {
    pending_[s] = committed_[s];
    readStream(s, now, &chunk);
  }
  const bool moved =
      pending_[0].offset != committed_[0].offset || pending_[1].offset != committed_[1].offset;
  // Only skipped bytes of an over-long line: nothing to journal, so nothing to wait for.
  if (chunk.lines.empty() && moved) commit();
  return chunk;
}

void LogTailer::readStream(int s, double now, Chunk* chunk) {
  StreamState& state = pending_[s];
  const std::string path = runDir_ + "/" + kStreams[s] + ".log";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat info {};
  const uint64_t size = ::fstat(fd, &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
  bool capped = false;  // the last block read stopped at kMaxChunkBytes before the file's end
  // Two rounds: an over-long line that ends beyond the first block, then the lines after it.
  for (int round = 0; round < 2 && size > state.offset; ++round) {
    if (state.skipping) {
      // Inside an over-long line: find its end, then go on with the lines after it.
      uint64_t scannedTo = state.offset;
      const auto newline = findNewline(fd, state.offset, size, &scannedTo);
      if (!newline) {
        state.offset = scannedTo;
        break;
      }
      addTruncatedLine(s, fd, state.lineStart, *newline, now, chunk);
      state = StreamState{.offset = *newline + 1};
      if (size <= state.offset) break;
    }
    capped = size - state.offset > kMaxChunkBytes;
    const std::string bytes =
        readAt(fd, state.offset, std::min(size - state.offset, kMaxChunkBytes));
    size_t begin = 0;
    while (begin < bytes.size()) {
      const size_t newline = bytes.find('\n', begin);
      const size_t end = newline == std::string::npos ? bytes.size() : newline;
      if (end - begin > kMaxLogLineBytes + kMaxRankTagBytes) {
        if (newline != std::string::npos) {
          addTruncatedLine(s, fd, state.offset + begin, state.offset + newline, now, chunk);
          begin = newline + 1;
          continue;
        }
        // Its end lies beyond this block: the next round (or poll) looks for it.
        state = StreamState{.offset = state.offset + bytes.size(),
                            .skipping = true,
                            .lineStart = state.offset + begin};
        break;
      }
      if (newline == std::string::npos) break;  // a partial last line waits for its newline
      addLine(s, std::string_view(bytes).substr(begin, end - begin), now, chunk);
      begin = newline + 1;
    }
    if (!state.skipping) {
      state.offset += begin;
      break;
    }
  }
  // Bytes beyond this poll's blocks (not a partial last line, which waits for its newline).
  if (capped || (state.skipping && size > state.offset)) chunk->more = true;
  ::close(fd);
}

void LogTailer::addLine(int s, std::string_view raw, double now, Chunk* chunk) {
  std::string problem;
  std::vector<v1::MetricSample> samples;
  // A record is parsed from the bytes printed; invalid UTF-8 inside one makes it malformed.
  if (records_ == StdoutRecords::kParse && s == 0) {
    samples = parseMetricsLine(raw, &problem, &chunk->params);
  } else if (records_ == StdoutRecords::kSentToSink && s == 0 && isMetricsRecord(raw)) {
    noteSentToSink(now, chunk);
    return;
  }
  v1::LogLine line;
  line.set_wall_time(now);
  line.set_stream(kStreams[s]);
  line.set_text(logLineText(raw));
  chunk->lines.push_back(std::move(line));
  for (auto& sample : samples) chunk->samples.push_back(std::move(sample));
  if (!problem.empty()) noteMalformed(problem, now, chunk);
}

void LogTailer::addTruncatedLine(int s, int fd, uint64_t lineStart, uint64_t newline, double now,
                                 Chunk* chunk) {
  // More than is kept, so that the cut can step back to a character boundary; never past the
  // line's end (a line with its tag copies can be over the limit and its text within it).
  const std::string head = readAt(fd, lineStart, std::min(kCutLineHeadBytes, newline - lineStart));
  const uint64_t total = newline - lineStart;
  v1::LogLine line;
  line.set_wall_time(now);
  line.set_stream(kStreams[s]);
  line.set_text(logLineText(head, total));
  chunk->lines.push_back(std::move(line));
  const std::string_view body = splitRankTag(head).text;
  if (records_ == StdoutRecords::kParse && s == 0 && !body.empty() && body.front() == '{') {
    noteMalformed("a record of " + std::to_string(total) + " bytes, longer than a log line (" +
                      std::to_string(kMaxLogLineBytes) + ")",
                  now, chunk);
  }
}

void LogTailer::noteMalformed(const std::string& problem, double now, Chunk* chunk) {
  if (++malformedPending_ > 1) return;  // the run's first only: a log is not a counter
  v1::LogLine note;
  note.set_wall_time(now);
  note.set_stream(kStreams[0]);
  note.set_text(toValidUtf8("[ringside-agent: skipped the metrics record above: " + problem +
                            " (docs/metrics.md); later malformed records are skipped without a "
                            "note]"));
  chunk->lines.push_back(std::move(note));
}

void LogTailer::noteSentToSink(double now, Chunk* chunk) {
  if (sinkNotePending_) return;  // the run's first only
  sinkNotePending_ = true;
  v1::LogLine note;
  note.set_wall_time(now);
  note.set_stream(kStreams[0]);
  note.set_text(
      "[ringside-agent: the trainer's metrics records on stdout are journaled as the metric "
      "samples its ranks send, not as log lines; the run's stdout.log keeps them "
      "(docs/metrics.md)]");
  chunk->lines.push_back(std::move(note));
}

void LogTailer::commit() {
  committed_[0] = pending_[0];
  committed_[1] = pending_[1];
  malformedCommitted_ = malformedPending_;
  sinkNoteCommitted_ = sinkNotePending_;
  const std::string path = runDir_ + "/tail_offsets";
  {
    std::ofstream out(path + ".tmp");
    out << committed_[0].offset << " " << committed_[1].offset << " " << malformedCommitted_;
    for (const StreamState& state : committed_) {
      out << " " << (state.skipping ? 1 : 0) << " " << state.lineStart;
    }
    out << " " << (sinkNoteCommitted_ ? 1 : 0) << "\n";
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

}  // namespace ringside::agent
