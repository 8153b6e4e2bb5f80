// LogTailer: follows a run's stdout.log and stderr.log (written by its mpirun, see
// run_manager.h) and turns new complete lines into log lines; for custom commands it also parses
// the JSON Lines metrics and start records on stdout (docs/metrics.md) into samples. For a
// trainer run, whose ranks send every sample to the agent's sink, the metrics records rank 0
// prints on stdout are not log lines (StdoutRecords::kSentToSink): each sample is journaled once,
// and the run's stdout.log keeps the records for recovery (metrics_recovery.h).
//
// A run's output is whatever its programs print; what leaves here is bounded and valid:
// - every line's text is valid UTF-8 (proto3 strings must be): invalid bytes become U+FFFD;
// - a line longer than kMaxLogLineBytes is cut, marked, and the rest of it skipped however long
//   (logLineText); the lines after it are read as usual;
// - a malformed metrics record is skipped whole and counted; the first one of a run is followed
//   by a note in the run's log saying what was wrong (once per run, also across agent restarts).
//
// Read offsets are kept in <run dir>/tail_offsets once the caller has journaled a chunk
// (commit()), so a restarted agent continues where the journal ends. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ringside/common/rank_tag.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::agent {

// Longest log line journaled whole: 64 KiB of a line's bytes. The longest lines programs print
// on purpose (tracebacks, JSON records, progress bars) are a few KiB; 64 KiB keeps one line a
// small part of a 16 MiB frame (protocol.h kMaxMessageBytes) and of the journal.
inline constexpr size_t kMaxLogLineBytes = 64 * 1024;

// Bounds of one metrics record: the metric values in it (a trainer record has about ten) and
// the bytes of one metric name. A record over either is malformed and skipped.
inline constexpr size_t kMaxMetricsPerRecord = 1024;
inline constexpr size_t kMaxMetricNameBytes = 256;

// What the agent does with the JSON Lines records (docs/metrics.md) a run prints on stdout.
enum class StdoutRecords {
  // Custom commands and Python scripts: metrics, start and config records are parsed into
  // samples and params; every line is also journaled as a log line.
  kParse,
  // The trainer: its ranks send every sample to the agent's sink, so a well-formed "metrics"
  // record on stdout is neither parsed nor journaled as a log line (it would store each sample a
  // second time, as ~400 bytes of text; bench/README.md, "Stored bytes"). The first one of a run is
  // replaced by one note
  // in the run's log saying so (once per run, also across agent restarts). Other lines, the
  // start and end records and anything malformed, are log lines as usual.
  kSentToSink,
};

class LogTailer {
 public:
  struct Chunk {
    std::vector<v1::LogLine> lines;         // seq unset: the journal assigns it
    std::vector<v1::MetricSample> samples;  // parsed metrics (kParse only), seq unset
    // The params of "config" records in these lines (kParse only; later ones win).
    std::map<std::string, std::string> params;
    // Bytes of the log files not read yet by this poll (at most 2 MiB per stream are): poll again
    // before taking an ended run's log as read.
    bool more = false;
  };

  LogTailer(std::string runDir, StdoutRecords records);

  // New complete lines since the last commit(): per stream per call at most two 1 MiB blocks of
  // lines, and up to 64 MiB scanned (and dropped) for the end of an over-long line. A call that
  // only skipped (no lines) commits that progress itself: there is nothing to journal.
  Chunk poll();
  // Marks what the last poll() returned as journaled.
  void commit();
  // Malformed metrics records skipped in this run so far (committed ones, kept across restarts).
  uint64_t malformedRecords() const { return malformedCommitted_; }

 private:
  struct StreamState {
    uint64_t offset = 0;     // next byte to read
    bool skipping = false;   // inside an over-long line whose newline has not come yet
    uint64_t lineStart = 0;  // where that line began (skipping only)
  };
  void readStream(int stream, double now, Chunk* chunk);
  // `raw`: the line as printed (with its rank tag), within kMaxLogLineBytes plus a tag.
  void addLine(int stream, std::string_view raw, double now, Chunk* chunk);
  // Adds the cut form of the over-long line [lineStart, newline) of `fd`.
  void addTruncatedLine(int stream, int fd, uint64_t lineStart, uint64_t newline, double now,
                        Chunk* chunk);
  void noteMalformed(const std::string& problem, double now, Chunk* chunk);
  void noteSentToSink(double now, Chunk* chunk);

  std::string runDir_;
  StdoutRecords records_;
  StreamState committed_[2];  // stdout, stderr
  StreamState pending_[2];
  uint64_t malformedCommitted_ = 0;
  uint64_t malformedPending_ = 0;
  bool sinkNoteCommitted_ = false;  // the kSentToSink note was journaled for this run
  bool sinkNotePending_ = false;
};

// Whether the agent reads metrics and config records from a run's stdout: custom commands and
// Python scripts print them (a Python script under an agent normally sends them to the sink, but
// a script may print its own); the trainer sends everything to the sink.
inline bool parsesStdoutRecords(const v1::RunSpec& spec) {
  return spec.has_command() || spec.has_python();
}
inline StdoutRecords stdoutRecordsOf(const v1::RunSpec& spec) {
  return parsesStdoutRecords(spec) ? StdoutRecords::kParse : StdoutRecords::kSentToSink;
}

// Whether `line` (as printed, with or without a rank tag) is a well-formed "metrics" record of
// docs/metrics.md: what parseMetricsLine reads without a problem.
bool isMetricsRecord(std::string_view line);

// The text one line of a run's output travels with (LogLine.text): `line` (without its newline)
// with a rank tag (common/rank_tag.h splitRankTag) written the way users read it, "[rank 1]
// <text>", as valid UTF-8, with invalid bytes replaced by U+FFFD (toValidUtf8), cut at a character
// boundary to at most kMaxLogLineBytes of the line's own text when longer and then marked, e.g.
// "<the first 65536 bytes> [line truncated: 2100000 bytes, kept the first 65536]".
// `totalBytes`: the whole line's length when `line` holds only its beginning (0: line.size()).
std::string logLineText(std::string_view line, uint64_t totalBytes = 0);

// Parses one JSON Lines record of docs/metrics.md into samples: a "metrics" record's values, or a
// "start" record's total_steps and steps_per_epoch as the global samples metric::kRunTotalSteps
// and kRunStepsPerEpoch at its first_step (0 when absent), as the trainer sends them to the agent.
// A line is a record when it starts with '{' (after a rank tag, which is skipped: splitRankTag);
// other lines give nothing. A record gives nothing
// and sets `*problem` (when not null) to what is wrong, never throwing, when it is not a JSON
// object, is longer than kMaxLogLineBytes or nests deeper than kMaxJsonDepth, has no string
// "type", or, for "metrics" and "start", has a field of the wrong type or range: step, epoch
// and first_step integers 0..2^53, rank an integer -1..kMaxWorldSize-1, time a number, metrics
// an object of at most kMaxMetricsPerRecord names (1..kMaxMetricNameBytes bytes) to numbers or
// null (a value that was not finite; skipped), total_steps and steps_per_epoch numbers >= 0.
// A "config" record ({"type":"config","params":{...}}, what ringside.config() prints without an
// agent) adds its params, nested objects flattened to dotted keys and each leaf kept as its JSON
// text, to `*params` (when not null); over validateRunParams' bounds it is a problem.
// Records of other types give nothing and no problem.
std::vector<v1::MetricSample> parseMetricsLine(
    std::string_view line, std::string* problem = nullptr,
    std::map<std::string, std::string>* params = nullptr);

}  // namespace ringside::agent
