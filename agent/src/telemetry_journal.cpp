// TelemetryJournal (telemetry_journal.h): the node's telemetry readings in their own SQLite file.
#include "ringside/agent/telemetry_journal.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "journal_schema.h"
#include "journal_sqlite.h"

namespace ringside::agent {

using sqlite::Connection;
using sqlite::Statement;

namespace {

// PRAGMA application_id of a telemetry journal ("RSTJ"), so no other file is taken for one.
constexpr int32_t kTelemetryApplicationId = 0x5253544a;
constexpr int kTelemetrySchemaVersion = 1;

// seq is the rowid (AUTOINCREMENT: a seq is never used twice, also after retention deleted the
// newest readings); `bytes` is the serialized reading's size, kept for the size bound.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE readings (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  wall_time REAL NOT NULL,
  bytes     INTEGER NOT NULL,
  reading   BLOB NOT NULL
);
CREATE INDEX readings_by_time ON readings(wall_time);
)sql";

Status migrate(Connection& db, const std::string& path) {
  auto version = db.queryInt("PRAGMA user_version");
  if (!version.isOk()) return version.status().withContext(path);
  auto applicationId = db.queryInt("PRAGMA application_id");
  if (!applicationId.isOk()) return applicationId.status().withContext(path);
  if (version.value() == 0) {
    auto tables = db.queryInt("SELECT count(*) FROM sqlite_schema");
    if (!tables.isOk()) return tables.status().withContext(path);
    if (tables.value() != 0) {
      return Status::corruption(path +
                                " holds tables but is no Ringside telemetry journal: move it "
                                "away or pick another state directory");
    }
  } else if (applicationId.value() != kTelemetryApplicationId) {
    return Status::corruption(path + " is an SQLite database but not a Ringside telemetry journal" +
                              " (application_id " + std::to_string(applicationId.value()) +
                              "); move it away or pick another state directory");
  }
  if (version.value() > kTelemetrySchemaVersion) {
    return Status::invalidArgument(
        "telemetry journal " + path + " has schema version " + std::to_string(version.value()) +
        ", newer than this agent's " + std::to_string(kTelemetrySchemaVersion) +
        ": run a newer ringside-agent, or move the file away to start an empty one");
  }
  if (version.value() == kTelemetrySchemaVersion) return Status::ok();
  RINGSIDE_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
  Status status = db.exec(kSchemaV1);
  if (status.isOk()) {
    const std::string pragmas =
        "PRAGMA application_id = " + std::to_string(kTelemetryApplicationId) +
        "; PRAGMA user_version = " + std::to_string(kTelemetrySchemaVersion);
    status = db.exec(pragmas.c_str());
  }
  if (status.isOk()) status = db.exec("COMMIT");
  if (!status.isOk()) {
    (void)db.exec("ROLLBACK");
    return status.withContext("creating telemetry journal " + path);
  }
  return Status::ok();
}

bool isValidTime(double t) { return std::isfinite(t) && t >= 0; }

}  // namespace

struct TelemetryJournal::Impl {
  TelemetryJournalOptions options;
  Connection db;
  Statement insert, page, startSeq, endSeq, oldest;
  uint64_t lastSeq = 0;
  uint64_t entries = 0;
  uint64_t bytes = 0;
};

TelemetryJournal::TelemetryJournal(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}

TelemetryJournal::~TelemetryJournal() = default;

Result<std::unique_ptr<TelemetryJournal>> TelemetryJournal::open(
    const std::string& path, const TelemetryJournalOptions& options, std::string* quarantinedTo) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  auto problems = checkJournalIntegrity(path, options.busyTimeoutMs);
  if (!problems.isOk()) return problems.status();
  if (!problems->empty()) {
    auto moved = quarantineJournal(path);
    if (!moved.isOk()) {
      return Status::corruption("telemetry journal " + path + " is damaged (\"" +
                                problems->front() +
                                "\") and could not be moved aside: " + moved.status().message() +
                                ". Move it away yourself, with its -wal and -shm files");
    }
    if (quarantinedTo) *quarantinedTo = *moved;
  }
  auto db = Connection::open(path, /*create=*/true);
  if (!db.isOk()) return db.status();
  impl->db = std::move(db).value();
  Connection& c = impl->db;
  sqlite3_busy_timeout(c.get(), options.busyTimeoutMs);
  {
    auto mode = Statement::prepare(c.get(), "PRAGMA journal_mode = WAL");
    if (!mode.isOk()) return mode.status().withContext(path);
    auto row = mode->step();
    if (!row.isOk()) return row.status().withContext(path);
    if (!row.value() || mode->columnText(0) != "wal") {
      return Status::ioError("telemetry journal " + path +
                             " cannot use WAL mode (a network file system?): put the agent's "
                             "state directory on a local disk");
    }
  }
  RINGSIDE_RETURN_IF_ERROR(c.exec("PRAGMA synchronous = NORMAL"));
  RINGSIDE_RETURN_IF_ERROR(migrate(c, path));

  auto prepare = [&](Statement& into, const char* sql) -> Status {
    auto statement = Statement::prepare(c.get(), sql);
    if (!statement.isOk()) return statement.status().withContext(path);
    into = std::move(statement).value();
    return Status::ok();
  };
  RINGSIDE_RETURN_IF_ERROR(
      prepare(impl->insert, "INSERT INTO readings (wall_time, bytes, reading) VALUES (?, ?, ?)"));
  RINGSIDE_RETURN_IF_ERROR(prepare(impl->page,
                                   "SELECT seq, reading FROM readings WHERE seq > ? AND seq <= ? "
                                   "AND wall_time >= ? AND wall_time <= ? ORDER BY seq LIMIT ?"));
  RINGSIDE_RETURN_IF_ERROR(
      prepare(impl->startSeq, "SELECT MIN(seq) FROM readings WHERE wall_time >= ?"));
  RINGSIDE_RETURN_IF_ERROR(
      prepare(impl->endSeq, "SELECT MAX(seq) FROM readings WHERE wall_time <= ?"));
  RINGSIDE_RETURN_IF_ERROR(
      prepare(impl->oldest, "SELECT wall_time FROM readings ORDER BY seq LIMIT 1"));

  // The highest seq ever given (sqlite_sequence keeps it across deletes) and the totals.
  auto last =
      c.queryInt("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'readings'), 0)");
  if (!last.isOk()) return last.status().withContext(path);
  auto count = c.queryInt("SELECT count(*) FROM readings");
  if (!count.isOk()) return count.status().withContext(path);
  auto bytes = c.queryInt("SELECT COALESCE(SUM(bytes), 0) FROM readings");
  if (!bytes.isOk()) return bytes.status().withContext(path);
  impl->lastSeq = static_cast<uint64_t>(*last);
  impl->entries = static_cast<uint64_t>(*count);
  impl->bytes = static_cast<uint64_t>(*bytes);
  return std::unique_ptr<TelemetryJournal>(new TelemetryJournal(path, std::move(impl)));
}

Status TelemetryJournal::append(v1::NodeTelemetry& telemetry) {
  Impl& d = *impl_;
  telemetry.set_seq(d.lastSeq + 1);
  const std::string bytes = telemetry.SerializeAsString();
  d.insert.bindDouble(1, telemetry.wall_time());
  d.insert.bindInt(2, static_cast<int64_t>(bytes.size()));
  d.insert.bindBlob(3, bytes);
  Status status = d.insert.run();
  if (!status.isOk()) {
    telemetry.set_seq(0);
    return status.withContext("journaling telemetry in " + path_);
  }
  const auto seq = static_cast<uint64_t>(sqlite3_last_insert_rowid(d.db.get()));
  if (seq != d.lastSeq + 1) {
    // Another writer (none is expected): keep the seq the row really has.
    telemetry.set_seq(seq);
  }
  d.lastSeq = seq;
  ++d.entries;
  d.bytes += bytes.size();
  return Status::ok();
}

Result<v1::FetchTelemetryReply> TelemetryJournal::fetch(const v1::FetchTelemetryRequest& request) {
  Impl& d = *impl_;
  if (!isValidTime(request.from_time()) || !isValidTime(request.to_time())) {
    return Status::invalidArgument(
        "from_time and to_time must be Unix seconds, 0 or more (to_time 0: no upper end)");
  }
  const double to = request.to_time() > 0 ? request.to_time() : HUGE_VAL;
  if (to < request.from_time()) {
    return Status::invalidArgument("to_time " + std::to_string(request.to_time()) +
                                   " is before from_time " + std::to_string(request.from_time()));
  }
  uint32_t limit = request.max_entries() == 0 ? d.options.defaultPageSize : request.max_entries();
  limit = std::clamp<uint32_t>(limit, 1, std::max<uint32_t>(1, d.options.maxPageSize));

  v1::FetchTelemetryReply reply;
  reply.set_last_seq(request.after_seq());
  auto oldestRow = d.oldest.step();
  if (!oldestRow.isOk()) return oldestRow.status().withContext(path_);
  if (*oldestRow) reply.set_oldest_time(d.oldest.columnDouble(0));
  d.oldest.reset();

  // Start at the first reading of the window (the time index), not at seq 1: no reading with a
  // lower seq lies in the window, so the scan skips none, also where the clock stepped back.
  uint64_t after = request.after_seq();
  d.startSeq.bindDouble(1, request.from_time());
  auto startRow = d.startSeq.step();
  if (!startRow.isOk()) return startRow.status().withContext(path_);
  if (*startRow && !d.startSeq.columnIsNull(0)) {
    after = std::max<uint64_t>(after, static_cast<uint64_t>(d.startSeq.columnInt(0)) - 1);
  } else if (*startRow) {
    after = std::max(after, d.lastSeq);  // nothing at or after from_time
  }
  d.startSeq.reset();

  // And end at the last reading of the window: a window older than every reading held (lost to
  // retention) costs two index look-ups, not a scan of the journal.
  uint64_t last = 0;
  d.endSeq.bindDouble(1, to);
  auto endRow = d.endSeq.step();
  if (!endRow.isOk()) return endRow.status().withContext(path_);
  if (*endRow && !d.endSeq.columnIsNull(0)) last = static_cast<uint64_t>(d.endSeq.columnInt(0));
  d.endSeq.reset();
  if (last <= after) return reply;

  d.page.bindInt(1, static_cast<int64_t>(after));
  d.page.bindInt(2, static_cast<int64_t>(last));
  d.page.bindDouble(3, request.from_time());
  d.page.bindDouble(4, to);
  d.page.bindInt(5, int64_t{limit} + 1);  // one more: tells whether more follow
  size_t pageBytes = 0;
  uint32_t taken = 0;
  Status status = d.page.forEachRow([&](const Statement& row) -> Status {
    if (reply.more()) return Status::ok();
    const std::string_view blob = row.columnBlob(1);
    if (taken == limit || (taken > 0 && pageBytes + blob.size() > d.options.maxPageBytes)) {
      reply.set_more(true);
      return Status::ok();
    }
    v1::NodeTelemetry& entry = *reply.add_entries();
    if (!entry.ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
      return Status::corruption("telemetry reading " + std::to_string(row.columnInt(0)) + " in " +
                                path_ + " does not parse");
    }
    entry.set_seq(static_cast<uint64_t>(row.columnInt(0)));
    reply.set_last_seq(entry.seq());
    pageBytes += blob.size();
    ++taken;
    return Status::ok();
  });
  if (!status.isOk()) return status.withContext("fetching telemetry");
  if (reply.entries_size() > 0) reply.set_node_id(reply.entries(0).node_id());
  return reply;
}

Result<TelemetryRetentionReport> TelemetryJournal::applyRetention(double now) {
  Impl& d = *impl_;
  TelemetryRetentionReport report;
  Connection& c = d.db;
  RINGSIDE_RETURN_IF_ERROR(c.exec("BEGIN IMMEDIATE"));
  auto rollback = [&](Status status) {
    (void)c.exec("ROLLBACK");
    return status.withContext("telemetry retention in " + path_);
  };
  const std::string ageSql = d.options.maxAgeDays > 0
                                 ? "DELETE FROM readings WHERE wall_time < " +
                                       std::to_string(now - d.options.maxAgeDays * 86400.0)
                                 : std::string();
  if (!ageSql.empty()) {
    if (Status s = c.exec(ageSql.c_str()); !s.isOk()) return rollback(s);
    report.byAge = static_cast<uint64_t>(sqlite3_changes64(c.get()));
  }
  auto bytes = c.queryInt("SELECT COALESCE(SUM(bytes), 0) FROM readings");
  if (!bytes.isOk()) return rollback(bytes.status());
  uint64_t held = static_cast<uint64_t>(*bytes);
  if (d.options.maxBytes > 0 && held > d.options.maxBytes) {
    // The oldest readings up to the one that brings the rest under the bound.
    uint64_t excess = held - d.options.maxBytes;
    int64_t cut = 0;
    auto oldest = Statement::prepare(c.get(), "SELECT seq, bytes FROM readings ORDER BY seq");
    if (!oldest.isOk()) return rollback(oldest.status());
    Status scan = oldest->forEachRow([&](const Statement& row) -> Status {
      if (excess == 0) return Status::ok();
      cut = row.columnInt(0);
      const auto size = static_cast<uint64_t>(row.columnInt(1));
      excess = size >= excess ? 0 : excess - size;
      return Status::ok();
    });
    if (!scan.isOk()) return rollback(scan);
    oldest = Statement();
    const std::string sql = "DELETE FROM readings WHERE seq <= " + std::to_string(cut);
    if (Status s = c.exec(sql.c_str()); !s.isOk()) return rollback(s);
    report.bySize = static_cast<uint64_t>(sqlite3_changes64(c.get()));
  }
  auto count = c.queryInt("SELECT count(*) FROM readings");
  if (!count.isOk()) return rollback(count.status());
  auto left = c.queryInt("SELECT COALESCE(SUM(bytes), 0) FROM readings");
  if (!left.isOk()) return rollback(left.status());
  if (Status s = c.exec("COMMIT"); !s.isOk()) return rollback(s);
  d.entries = static_cast<uint64_t>(*count);
  d.bytes = static_cast<uint64_t>(*left);
  return report;
}

uint64_t TelemetryJournal::lastSeq() const { return impl_->lastSeq; }
uint64_t TelemetryJournal::entries() const { return impl_->entries; }
uint64_t TelemetryJournal::bytes() const { return impl_->bytes; }

}  // namespace ringside::agent
