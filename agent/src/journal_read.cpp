// The journal's read path (loadRuns, findRun, fetchSince, rankDeliveries, forEachSampleKey): a
// read-only connection under readMutex, each call one snapshot; a row that does not parse is
// skipped and reported, not fatal. Journal::Impl in journal_impl.h.
#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "journal_impl.h"

namespace ringside::agent {

using sqlite::Connection;
using sqlite::Statement;

namespace {

const char* typeName(int sqliteType) {
  switch (sqliteType) {
    case SQLITE_INTEGER:
      return "an integer";
    case SQLITE_FLOAT:
      return "a real";
    case SQLITE_TEXT:
      return "text";
    case SQLITE_NULL:
      return "NULL";
    default:
      return "a blob";
  }
}

// The run of a `runs` row, or kCorruption saying why the row cannot be read (a damaged blob, a
// NULL or a value of the wrong type where the schema puts a value): bytes of the file changed
// after they were written. Columns from firstColumn: info, last_seq, pid, pgid, run_id.
Result<StoredRun> readRunRow(const Statement& row, int firstColumn, const std::string& path) {
  const std::string runId(row.columnText(firstColumn + 4));
  auto unreadable = [&](const std::string& why) {
    return Status::corruption("run " +
                              (runId.empty() ? std::string("with an empty run id") : runId) +
                              " in journal " + path + " cannot be read: " + why);
  };
  StoredRun run;
  if (row.columnType(firstColumn) != SQLITE_BLOB) {
    return unreadable(std::string("its info column holds ") +
                      typeName(row.columnType(firstColumn)) + ", not a RunInfo");
  }
  const std::string_view blob = row.columnBlob(firstColumn);
  if (!run.info.ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
    return unreadable("its RunInfo (" + std::to_string(blob.size()) + " bytes) does not parse");
  }
  if (run.info.run_id() != runId) {
    return unreadable("its RunInfo names run '" + run.info.run_id() + "'");
  }
  if (row.columnType(firstColumn + 1) != SQLITE_INTEGER) {
    return unreadable(std::string("its last_seq is ") + typeName(row.columnType(firstColumn + 1)) +
                      ", not an integer");
  }
  run.info.set_last_seq(static_cast<uint64_t>(row.columnInt(firstColumn + 1)));
  if (!row.columnIsNull(firstColumn + 2)) run.process.pid = row.columnInt(firstColumn + 2);
  if (!row.columnIsNull(firstColumn + 3)) run.process.pgid = row.columnInt(firstColumn + 3);
  return run;
}

// Ends a read transaction. A read has nothing to commit; should COMMIT fail, ROLLBACK so the
// connection's next read does not stay on this snapshot.
void endRead(Connection& reader) {
  if (!reader.exec("COMMIT").isOk()) (void)reader.exec("ROLLBACK");
}

}  // namespace

Result<std::vector<StoredRun>> Journal::loadRuns(bool activeOnly) {
  std::vector<StoredRun> runs;
  RINGSIDE_RETURN_IF_ERROR(forEachRunAfter(activeOnly, 0, [&](StoredRun&& run) {
    runs.push_back(std::move(run));
    return true;
  }));
  return runs;
}

Status Journal::forEachRunAfter(bool activeOnly, int64_t afterRunKey,
                                const std::function<bool(StoredRun&&)>& take) {
  Impl& impl = *impl_;
  MutexLock lock(impl.readMutex);
  Statement& query = activeOnly ? impl.readActiveRuns : impl.readRuns;
  query.bindInt(1, afterRunKey);
  // One record that cannot be read must not hide the others: skip it, report it after the scan.
  std::vector<std::pair<int64_t, Status>> unreadable;
  bool stopped = false;
  Status status = query.forEachRow([&](const Statement& row) {
    auto run = readRunRow(row, 1, path_);
    if (!run.isOk()) {
      unreadable.emplace_back(row.columnInt(0), run.status());
      return Status::ok();
    }
    run->runKey = row.columnInt(0);
    if (take(std::move(run).value())) return Status::ok();
    stopped = true;
    return Status::aborted("the caller has the runs it wants");  // stops the scan
  });
  if (stopped) status = Status::ok();
  for (const auto& [runKey, why] : unreadable) impl.reportUnreadableRun(runKey, why);
  if (status.code() == Status::Code::kCorruption) return impl.damageOf(status, "listing the runs");
  if (!status.isOk()) return status.withContext("loading runs from journal " + path_);
  return Status::ok();
}

Result<StoredRun> Journal::Impl::readRunById(const std::string& runId, int64_t* runKey) {
  readRun.bindText(1, runId);
  auto row = readRun.step();
  Result<StoredRun> run = Status::notFound("run " + runId + " is not in the journal");
  if (!row.isOk()) {
    run = damageOf(row.status(), "reading run " + runId);
  } else if (row.value()) {
    *runKey = readRun.columnInt(0);
    run = readRunRow(readRun, 1, path);
    if (run.isOk()) run->runKey = *runKey;
    if (!run.isOk()) reportUnreadableRun(*runKey, run.status());
  }
  readRun.reset();
  return run;
}

Result<StoredRun> Journal::findRun(const std::string& runId) {
  MutexLock lock(impl_->readMutex);
  int64_t runKey = 0;
  return impl_->readRunById(runId, &runKey);
}

Result<v1::FetchRunDataReply> Journal::fetchSince(const std::string& runId, uint64_t afterSeq,
                                                  uint32_t maxEntries) {
  Impl& impl = *impl_;
  const uint32_t pageSize = std::min(maxEntries == 0 ? impl.options.defaultPageSize : maxEntries,
                                     impl.options.maxPageSize);
  MutexLock lock(impl.readMutex);
  // One read transaction: the run's last_seq and the entries come from the same snapshot.
  RINGSIDE_RETURN_IF_ERROR(impl.damageOf(impl.reader.exec("BEGIN"), "starting a read"));
  auto body = [&]() REQUIRES(impl.readMutex) -> Result<v1::FetchRunDataReply> {
    v1::FetchRunDataReply reply;
    reply.set_run_id(runId);
    int64_t runKey = 0;
    Result<StoredRun> run = impl.readRunById(runId, &runKey);
    if (!run.isOk()) return run.status();
    const uint64_t lastSeq = run->info.last_seq();
    *reply.mutable_run() = std::move(run->info);
    uint64_t upper = afterSeq >= lastSeq ? afterSeq : std::min(lastSeq, afterSeq + pageSize);
    if (upper > afterSeq) {
      // Cut the page where its entries pass the byte budget (at least one entry): log lines of
      // 64 KiB or large state records would otherwise make a reply over the frame limit.
      size_t bytes = 0;
      uint64_t fits = afterSeq;
      Statement& sizes = impl.readEntrySizes;
      sizes.bindInt(1, runKey);
      sizes.bindInt(2, static_cast<int64_t>(afterSeq));
      sizes.bindInt(3, static_cast<int64_t>(upper));
      bool full = false;
      Status sized = sizes.forEachRow([&](const Statement& q) {
        bytes += static_cast<size_t>(q.columnInt(1));
        if (bytes > impl.options.maxPageBytes && fits > afterSeq) {
          full = true;
          return Status::aborted("the page is full");  // stops the scan
        }
        fits = static_cast<uint64_t>(q.columnInt(0));
        return Status::ok();
      });
      if (full) sized = Status::ok();
      RINGSIDE_RETURN_IF_ERROR(impl.damageOf(sized, "reading the entries of run " + runId));
      if (full) upper = fits;
    }
    reply.set_last_seq(upper);
    reply.set_more(upper < lastSeq);
    if (upper == afterSeq) return reply;

    auto scan = [&](Statement& query, const std::function<Status(const Statement&)>& takeRow) {
      query.bindInt(1, runKey);
      query.bindInt(2, static_cast<int64_t>(afterSeq));
      query.bindInt(3, static_cast<int64_t>(upper));
      return impl.damageOf(query.forEachRow(takeRow), "reading the entries of run " + runId);
    };
    RINGSIDE_RETURN_IF_ERROR(scan(impl.readSamples, [&](const Statement& q) {
      v1::MetricSample* sample = reply.add_samples();
      sample->set_seq(q.columnInt(0));
      sample->set_step(q.columnInt(1));
      sample->set_epoch(q.columnInt(2));
      sample->set_wall_time(q.columnDouble(3));
      sample->set_rank(static_cast<int32_t>(q.columnInt(4)));
      sample->set_name(std::string(q.columnText(5)));
      sample->set_value(q.columnIsNull(6) ? std::numeric_limits<double>::quiet_NaN()
                                          : q.columnDouble(6));
      return Status::ok();
    }));
    RINGSIDE_RETURN_IF_ERROR(scan(impl.readLogs, [&](const Statement& q) {
      v1::LogLine* line = reply.add_log_lines();
      line->set_seq(q.columnInt(0));
      line->set_wall_time(q.columnDouble(1));
      line->set_stream(std::string(q.columnText(2)));
      line->set_text(std::string(q.columnText(3)));
      return Status::ok();
    }));
    // A state event that does not parse is left out (one bad row must not make the run
    // unreadable); reported after the scan.
    std::vector<uint64_t> unreadable;
    RINGSIDE_RETURN_IF_ERROR(scan(impl.readStates, [&](const Statement& q) {
      v1::RunStateEvent event;
      event.set_seq(q.columnInt(0));
      const std::string_view blob = q.columnBlob(1);
      if (q.columnType(1) != SQLITE_BLOB ||
          !event.mutable_run()->ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
        unreadable.push_back(event.seq());
      } else {
        *reply.add_states() = std::move(event);
      }
      return Status::ok();
    }));
    for (uint64_t seq : unreadable) {
      if (!impl.unreadableStates.emplace(runKey, seq).second) continue;
      impl.log("warning", "state event " + std::to_string(seq) + " of run " + runId +
                              " in journal " + path_ +
                              " cannot be read: its RunInfo does not parse. Fetches of the run "
                              "leave it out; its other entries are served");
    }
    return reply;
  };
  auto reply = body();
  endRead(impl.reader);
  if (!reply.isOk()) return reply.status().withContext("fetching run data from " + path_);
  return reply;
}

Result<std::vector<RankDelivery>> Journal::rankDeliveries(const std::string& runId) {
  Impl& impl = *impl_;
  MutexLock lock(impl.readMutex);
  RINGSIDE_RETURN_IF_ERROR(impl.damageOf(impl.reader.exec("BEGIN"), "starting a read"));
  auto body = [&]() REQUIRES(impl.readMutex) -> Result<std::vector<RankDelivery>> {
    int64_t runKey = 0;
    if (auto run = impl.readRunById(runId, &runKey); !run.isOk()) return run.status();
    std::vector<RankDelivery> deliveries;
    Statement& query = impl.readDeliveries;
    query.bindInt(1, runKey);
    const Status scanned = query.forEachRow([&](const Statement& row) {
      RankDelivery& delivery = deliveries.emplace_back();
      delivery.rank = static_cast<int32_t>(row.columnInt(0));
      delivery.lastBatchSeq = row.columnInt(1);
      delivery.batches = row.columnInt(2);
      delivery.points = row.columnInt(3);
      delivery.duplicates = row.columnInt(4);
      delivery.missingBatches = row.columnInt(5);
      delivery.droppedTotal = row.columnInt(6);
      return Status::ok();
    });
    RINGSIDE_RETURN_IF_ERROR(impl.damageOf(scanned, "reading the rank deliveries of run " + runId));
    return deliveries;
  };
  auto deliveries = body();
  endRead(impl.reader);
  return deliveries;
}

Status Journal::forEachSampleKey(
    const std::string& runId,
    const std::function<void(int32_t rank, int64_t step, std::string_view name)>& take) {
  Impl& impl = *impl_;
  MutexLock lock(impl.readMutex);
  RINGSIDE_RETURN_IF_ERROR(impl.damageOf(impl.reader.exec("BEGIN"), "starting a read"));
  auto body = [&]() REQUIRES(impl.readMutex) -> Status {
    int64_t runKey = 0;
    if (auto run = impl.readRunById(runId, &runKey); !run.isOk()) return run.status();
    Statement& query = impl.readSampleKeys;
    query.bindInt(1, runKey);
    return impl.damageOf(query.forEachRow([&](const Statement& row) {
      take(static_cast<int32_t>(row.columnInt(0)), row.columnInt(1), row.columnText(2));
      return Status::ok();
    }),
                         "reading the samples of run " + runId);
  };
  const Status status = body();
  endRead(impl.reader);
  return status;
}

}  // namespace ringside::agent
