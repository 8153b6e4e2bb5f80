// The journal's write path (Journal::Impl::write, the appends, upsertRun, applyRetention and
// inTransaction): one write connection under writeMutex, each call one transaction or, inside
// inTransaction, one savepoint. Journal::Impl in journal_impl.h.
#include <string>
#include <vector>

#include "journal_impl.h"
#include "ringside/common/protocol_limits.h"
#include "ringside/common/run_limits.h"

namespace ringside::agent {

using sqlite::Connection;
using sqlite::Statement;

namespace {

constexpr const char* kEndedStates = "(4, 5, 6)";  // COMPLETED, FAILED, STOPPED

// Why a sample of `rank` (-1: global) at `step` and `epoch` is not journaled for a run of
// `worldSize` ranks (0: unknown, any rank), or empty when it is.
std::string sampleProblem(int64_t rank, int64_t step, int64_t epoch, uint32_t worldSize) {
  if (rank < -1 || (worldSize > 0 && rank >= static_cast<int64_t>(worldSize))) {
    return "rank " + std::to_string(rank) + " is outside the run's world size " +
           std::to_string(worldSize) + " (ranks 0 to " + std::to_string(worldSize - 1) + ")";
  }
  if (step < 0 || step > kMaxMetricStep) {
    return "step " + std::to_string(step) + " is outside 0 to 2^53";
  }
  if (epoch < 0 || epoch > kMaxMetricStep) {
    return "epoch " + std::to_string(epoch) + " is outside 0 to 2^53";
  }
  return {};
}

void noteRefused(SampleRefusal& refused, std::string problem) {
  if (refused.samples++ == 0) refused.reason = std::move(problem);
}

// The Status of an append's result, whichever type it is.
const Status& statusOf(const Status& status) { return status; }
template <typename T>
const Status& statusOf(const Result<T>& result) {
  return result.status();
}

// Calls op(impl), whose REQUIRES(impl.writeMutex) the caller has ensured. The analysis is off for
// this one call only: clang 14 matches a lambda's REQUIRES against the lambda object rather than
// its argument, so it cannot see that the caller holds impl.writeMutex.
template <typename Op, typename Impl>
auto callWithWriteLock(Op& op, Impl& impl) NO_THREAD_SAFETY_ANALYSIS {
  return op(impl);
}

}  // namespace

template <typename Op>
auto Journal::Impl::write(Op&& op) -> decltype(op(*this)) {
  RecursiveMutexLock lock(writeMutex);
  // Nothing new goes into a damaged file.
  if (damaged.load()) return refusedWrite();
  const bool nested = groupDepth > 0;
  // On its own: an IMMEDIATE transaction (the write lock is taken up front, waiting up to
  // busy_timeout, so the read-then-write inside never fails to upgrade). Inside a group: a
  // savepoint, so a failing append undoes only itself.
  RINGSIDE_RETURN_IF_ERROR(
      damageOf((nested ? savepointWrite : beginWrite).run(), "starting a write"));
  auto result = callWithWriteLock(op, *this);
  if (result.isOk()) {
    Status done = (nested ? releaseWrite : commitWrite).run();
    if (done.isOk()) return result;
    // A failed COMMIT leaves the transaction open: undo it so the next write starts clean.
    undo(nested);
    return damageOf(done, "committing a write");
  }
  undo(nested);
  // Every kCorruption of a write comes from SQLite: the write path parses no stored blob.
  if (statusOf(result).code() == Status::Code::kCorruption) {
    return damageOf(statusOf(result), "writing");
  }
  return result;
}

Result<RunKey> Journal::Impl::lookupRun(const std::string& runId) {
  findRun.bindText(1, runId);
  auto row = findRun.step();
  RunKey run;
  if (row.isOk() && row.value()) {
    run.key = findRun.columnInt(0);
    run.lastSeq = static_cast<uint64_t>(findRun.columnInt(1));
    run.state = static_cast<v1::RunState>(findRun.columnInt(2));
  }
  findRun.reset();
  if (!row.isOk()) return row.status();
  if (!row.value()) {
    return Status::notFound("run " + runId + " is not in the journal (launched by another agent?)");
  }
  return run;
}

Status Journal::Impl::checkTakesSamples(const std::string& runId, const RunKey& run,
                                        uint32_t* worldSize) {
  if (isEndedState(run.state)) {
    runKeyIds.erase(run.key);
    return Status::failedPrecondition("run " + runId + " has ended (" +
                                      v1::RunState_Name(run.state) +
                                      "): the journal takes no more samples for it");
  }
  if (auto it = worldSizes.find(runId); it != worldSizes.end()) {
    *worldSize = it->second;
    return Status::ok();
  }
  readRunInfo.bindInt(1, run.key);
  auto row = readRunInfo.step();
  v1::RunInfo info;
  // A record that does not parse bounds nothing here (loadRuns reports it); its samples are
  // still checked for steps and epochs.
  // (Not in a lambda: clang's thread-safety analysis does not see writeMutex held inside one.)
  bool parsed = false;
  if (row.isOk() && row.value()) {
    const std::string_view blob = readRunInfo.columnBlob(0);
    parsed = info.ParseFromArray(blob.data(), static_cast<int>(blob.size()));
  }
  readRunInfo.reset();
  if (!row.isOk()) return row.status();
  *worldSize = parsed ? info.world_size() : 0;
  worldSizes.emplace(runId, *worldSize);
  return Status::ok();
}

Result<int64_t> Journal::Impl::keyId(const std::string& name) {
  if (auto it = keyIds.find(name); it != keyIds.end()) return it->second;
  findKey.bindText(1, name);
  auto row = findKey.step();
  const bool found = row.isOk() && row.value();
  int64_t id = found ? findKey.columnInt(0) : 0;
  findKey.reset();
  if (!row.isOk()) return row.status();
  if (!found) {
    insertKey.bindText(1, name);
    RINGSIDE_RETURN_IF_ERROR(insertKey.run());
    id = sqlite3_last_insert_rowid(writer.get());
  }
  if (keyIds.size() >= kMaxCachedKeys) keyIds.clear();
  keyIds.emplace(name, id);
  return id;
}

Result<int64_t> Journal::Impl::runKeyId(int64_t runKey, const std::string& name,
                                        std::string* problem) {
  if (name.empty() || name.size() > kMaxMetricNameBytes) {
    *problem = "a metric name of " + std::to_string(name.size()) + " bytes (1 to " +
               std::to_string(kMaxMetricNameBytes) + " allowed)";
    return int64_t{0};
  }
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      *problem = "a metric name with a control character";
      return int64_t{0};
    }
  }
  auto key = keyId(name);
  if (!key.isOk()) return key.status();
  std::unordered_set<int64_t>& names = runKeyIds[runKey];
  if (!names.contains(*key)) {
    if (names.size() >= kMaxMetricNamesPerRun) {
      *problem = "the run already has " + std::to_string(kMaxMetricNamesPerRun) +
                 " distinct metric names, the most a run keeps";
      return int64_t{0};
    }
    names.insert(*key);
  }
  return key;
}

Status Journal::Impl::insertSampleRows(int64_t runKey, const std::vector<v1::MetricSample>& samples,
                                       const std::vector<int64_t>& keyIds) {
  size_t next = 0;
  for (size_t size = 0; size < kSampleInsertRows.size(); ++size) {
    const size_t rows = kSampleInsertRows[size];
    Statement& insert = insertSamples[size];
    for (; samples.size() - next >= rows; next += rows) {
      int index = 1;
      for (size_t i = next; i < next + rows; ++i) {
        const v1::MetricSample& sample = samples[i];
        insert.bindInt(index++, runKey);
        insert.bindInt(index++, static_cast<int64_t>(sample.seq()));
        insert.bindInt(index++, sample.step());
        insert.bindInt(index++, sample.epoch());
        insert.bindDouble(index++, sample.wall_time());
        insert.bindInt(index++, sample.rank());
        insert.bindInt(index++, keyIds[i]);
        // SQLite stores NaN as NULL; the read path turns NULL back into NaN.
        insert.bindDouble(index++, sample.value());
      }
      // Every parameter is bound again before the next run: no need to clear them.
      RINGSIDE_RETURN_IF_ERROR(insert.runKeepingBindings());
    }
  }
  return Status::ok();
}

Status Journal::Impl::setLastSeq(const RunKey& run) {
  updateLastSeq.bindInt(1, run.key);
  updateLastSeq.bindInt(2, static_cast<int64_t>(run.lastSeq));
  return updateLastSeq.run();
}

Status Journal::Impl::upsertRunRow(const v1::RunInfo& info, const ProcessIds* process) {
  if (info.run_id().empty()) return Status::invalidArgument("RunInfo has an empty run_id");
  v1::RunInfo stored = info;
  stored.set_last_seq(0);  // the last_seq column is the truth
  const std::string blob = stored.SerializeAsString();
  Statement& statement = process != nullptr ? upsertRunFull : upsertRunInfo;
  statement.bindText(1, info.run_id());
  statement.bindBlob(2, blob);
  statement.bindInt(3, info.state());
  statement.bindDouble(4, info.created_time());
  statement.bindDouble(5, info.end_time());
  statement.bindText(6, info.run_dir());
  if (process != nullptr) {
    process->pid ? statement.bindInt(7, *process->pid) : statement.bindNull(7);
    process->pgid ? statement.bindInt(8, *process->pgid) : statement.bindNull(8);
  }
  return statement.run();
}

Status Journal::upsertRun(const v1::RunInfo& info, const ProcessIds& process) {
  return impl_->write([&](Impl& impl)
                          REQUIRES(impl.writeMutex) { return impl.upsertRunRow(info, &process); });
}

Result<RankAppendResult> Journal::appendRankMetrics(const v1::RankMetrics& batch) {
  if (batch.batch_seq() == 0) {
    return Status::invalidArgument("rank " + std::to_string(batch.rank()) + " of run " +
                                   batch.run_id() + " sent batch_seq 0 (they start at 1)");
  }
  if (batch.rank() < 0) {
    return Status::invalidArgument("run " + batch.run_id() + " sent a batch for rank " +
                                   std::to_string(batch.rank()));
  }
  return impl_->write([&](Impl& impl) REQUIRES(impl.writeMutex) -> Result<RankAppendResult> {
    auto run = impl.lookupRun(batch.run_id());
    if (!run.isOk()) return run.status();
    uint32_t worldSize = 0;
    RINGSIDE_RETURN_IF_ERROR(impl.checkTakesSamples(batch.run_id(), *run, &worldSize));
    if (worldSize > 0 && static_cast<uint32_t>(batch.rank()) >= worldSize) {
      return Status::invalidArgument(sampleProblem(batch.rank(), 0, 0, worldSize) + " of run " +
                                     batch.run_id());
    }
    impl.findRankBatch.bindInt(1, run->key);
    impl.findRankBatch.bindInt(2, batch.rank());
    auto row = impl.findRankBatch.step();
    const bool seen = row.isOk() && row.value();
    const uint64_t lastBatchSeq = seen ? impl.findRankBatch.columnInt(0) : 0;
    impl.findRankBatch.reset();
    if (!row.isOk()) return row.status();

    RankAppendResult result;
    if (batch.batch_seq() <= lastBatchSeq) {
      impl.countDuplicate.bindInt(1, run->key);
      impl.countDuplicate.bindInt(2, batch.rank());
      RINGSIDE_RETURN_IF_ERROR(impl.countDuplicate.run());
      result.duplicate = true;
      return result;
    }
    result.missingBatches = batch.batch_seq() - lastBatchSeq - 1;
    result.samples.reserve(batch.points_size());
    std::vector<int64_t> keyIds;
    keyIds.reserve(batch.points_size());
    for (const v1::RankMetricPoint& point : batch.points()) {
      if (std::string problem = sampleProblem(0, point.step(), point.epoch(), 0);
          !problem.empty()) {
        noteRefused(result.refused, std::move(problem));
        continue;
      }
      std::string nameProblem;
      auto key = impl.runKeyId(run->key, point.name(), &nameProblem);
      if (!key.isOk()) return key.status();
      if (!nameProblem.empty()) {
        noteRefused(result.refused, std::move(nameProblem));
        continue;
      }
      v1::MetricSample& sample = result.samples.emplace_back();
      sample.set_seq(++run->lastSeq);
      sample.set_step(point.step());
      sample.set_epoch(point.epoch());
      sample.set_wall_time(point.wall_time());
      sample.set_rank(point.global() ? -1 : batch.rank());
      sample.set_name(point.name());
      sample.set_value(point.value());
      keyIds.push_back(key.value());
    }
    RINGSIDE_RETURN_IF_ERROR(impl.insertSampleRows(run->key, result.samples, keyIds));
    Statement& upsert = impl.upsertRankBatch;
    upsert.bindInt(1, run->key);
    upsert.bindInt(2, batch.rank());
    upsert.bindInt(3, static_cast<int64_t>(batch.batch_seq()));
    upsert.bindInt(4, static_cast<int64_t>(result.samples.size()));
    upsert.bindInt(5, static_cast<int64_t>(result.missingBatches));
    upsert.bindInt(6, static_cast<int64_t>(batch.dropped_total()));
    RINGSIDE_RETURN_IF_ERROR(upsert.run());
    RINGSIDE_RETURN_IF_ERROR(impl.setLastSeq(run.value()));
    return result;
  });
}

Result<std::vector<v1::MetricSample>> Journal::appendMetricSamples(
    const std::string& runId, const std::vector<v1::MetricSample>& samples,
    SampleRefusal* refused) {
  SampleRefusal local;
  SampleRefusal& refusal = refused != nullptr ? *refused : local;
  refusal = {};
  return impl_->write([&](Impl& impl) REQUIRES(
                          impl.writeMutex) -> Result<std::vector<v1::MetricSample>> {
    auto run = impl.lookupRun(runId);
    if (!run.isOk()) return run.status();
    uint32_t worldSize = 0;
    RINGSIDE_RETURN_IF_ERROR(impl.checkTakesSamples(runId, *run, &worldSize));
    std::vector<v1::MetricSample> stored;
    stored.reserve(samples.size());
    std::vector<int64_t> keyIds;
    keyIds.reserve(samples.size());
    for (const v1::MetricSample& input : samples) {
      if (std::string problem = sampleProblem(input.rank(), input.step(), input.epoch(), worldSize);
          !problem.empty()) {
        noteRefused(refusal, std::move(problem));
        continue;
      }
      std::string nameProblem;
      auto key = impl.runKeyId(run->key, input.name(), &nameProblem);
      if (!key.isOk()) return key.status();
      if (!nameProblem.empty()) {
        noteRefused(refusal, std::move(nameProblem));
        continue;
      }
      v1::MetricSample& sample = stored.emplace_back(input);
      sample.set_seq(++run->lastSeq);
      keyIds.push_back(key.value());
    }
    RINGSIDE_RETURN_IF_ERROR(impl.insertSampleRows(run->key, stored, keyIds));
    RINGSIDE_RETURN_IF_ERROR(impl.setLastSeq(run.value()));
    return stored;
  });
}

Result<std::vector<v1::LogLine>> Journal::appendLogLines(const std::string& runId,
                                                         const std::vector<v1::LogLine>& lines) {
  return impl_->write([&](Impl& impl)
                          REQUIRES(impl.writeMutex) -> Result<std::vector<v1::LogLine>> {
                            auto run = impl.lookupRun(runId);
                            if (!run.isOk()) return run.status();
                            std::vector<v1::LogLine> stored = lines;
                            for (v1::LogLine& line : stored) {
                              line.set_seq(++run->lastSeq);
                              impl.insertLog.bindInt(1, run->key);
                              impl.insertLog.bindInt(2, static_cast<int64_t>(line.seq()));
                              impl.insertLog.bindDouble(3, line.wall_time());
                              impl.insertLog.bindText(4, line.stream());
                              impl.insertLog.bindText(5, line.text());
                              RINGSIDE_RETURN_IF_ERROR(impl.insertLog.run());
                            }
                            RINGSIDE_RETURN_IF_ERROR(impl.setLastSeq(run.value()));
                            return stored;
                          });
}

Result<v1::RunStateEvent> Journal::appendStateEvent(const v1::RunInfo& info) {
  return impl_->write([&](Impl& impl) REQUIRES(impl.writeMutex) -> Result<v1::RunStateEvent> {
    RINGSIDE_RETURN_IF_ERROR(impl.upsertRunRow(info, nullptr));
    auto run = impl.lookupRun(info.run_id());
    if (!run.isOk()) return run.status();
    v1::RunStateEvent event;
    event.set_seq(++run->lastSeq);
    *event.mutable_run() = info;
    event.mutable_run()->set_last_seq(event.seq());
    const std::string blob = event.run().SerializeAsString();
    impl.insertState.bindInt(1, run->key);
    impl.insertState.bindInt(2, static_cast<int64_t>(event.seq()));
    impl.insertState.bindBlob(3, blob);
    RINGSIDE_RETURN_IF_ERROR(impl.insertState.run());
    RINGSIDE_RETURN_IF_ERROR(impl.setLastSeq(run.value()));
    return event;
  });
}

Result<RetentionReport> Journal::applyRetention(const RetentionPolicy& policy, double now) {
  if (!policy.maxAgeDays && !policy.maxEndedRuns) return RetentionReport{};
  return impl_->write([&](Impl& impl) REQUIRES(impl.writeMutex) -> Result<RetentionReport> {
    // Selected ended runs: too old, or beyond the newest maxEndedRuns by end time.
    std::string sql = std::string("SELECT run_key, last_seq FROM runs WHERE state IN ") +
                      kEndedStates + " AND (0";
    if (policy.maxAgeDays) sql += " OR end_time < ?1";
    if (policy.maxEndedRuns) {
      sql += std::string(" OR run_key NOT IN (SELECT run_key FROM runs WHERE state IN ") +
             kEndedStates + " ORDER BY end_time DESC, run_key DESC LIMIT ?2)";
    }
    sql += ")";
    auto select = Statement::prepare(impl.writer.get(), sql.c_str());
    if (!select.isOk()) return select.status();
    if (policy.maxAgeDays) select->bindDouble(1, now - *policy.maxAgeDays * 86400.0);
    if (policy.maxEndedRuns) select->bindInt(2, *policy.maxEndedRuns);
    std::vector<RunKey> doomed;
    RINGSIDE_RETURN_IF_ERROR(select->forEachRow([&](const Statement& row) {
      doomed.push_back({row.columnInt(0), static_cast<uint64_t>(row.columnInt(1))});
      return Status::ok();
    }));
    select = Statement();
    RetentionReport report;
    if (!doomed.empty()) impl.worldSizes.clear();
    for (const RunKey& run : doomed) {
      impl.deleteRun.bindInt(1, run.key);
      RINGSIDE_RETURN_IF_ERROR(impl.deleteRun.run());  // entries go by ON DELETE CASCADE
      ++report.runsDeleted;
      report.entriesDeleted += run.lastSeq;  // seqs are gap-free: last_seq entries
    }
    return report;
  });
}

Status Journal::inTransaction(const std::function<void()>& body) {
  RecursiveMutexLock lock(impl_->writeMutex);
  if (impl_->groupDepth > 0) {  // nested: already inside the caller's transaction
    body();
    return Status::ok();
  }
  if (impl_->damaged.load()) return impl_->refusedWrite();
  RINGSIDE_RETURN_IF_ERROR(impl_->damageOf(impl_->beginWrite.run(), "starting a write"));
  ++impl_->groupDepth;
  try {
    body();
  } catch (...) {
    // Leave no transaction open behind an escaping exception (e.g. std::bad_alloc).
    --impl_->groupDepth;
    // The exception is what the caller sees; a failed ROLLBACK cannot be reported beside it.
    (void)impl_->rollbackWrite.run();
    impl_->keyIds.clear();
    throw;
  }
  --impl_->groupDepth;
  Status committed = impl_->commitWrite.run();
  if (!committed.isOk()) {
    (void)impl_->rollbackWrite.run();  // the COMMIT's error is the one returned
    impl_->keyIds.clear();
  }
  return impl_->damageOf(committed, "committing a write");
}

}  // namespace ringside::agent
