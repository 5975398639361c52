#include "store/sqlite.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cctype>

#include "util/error.h"
#include "util/text.h"

namespace tf {

namespace {

// "file:" URI of a path: every byte but unreserved ones and '/' percent-encoded.
std::string fileUri(const std::filesystem::path& path) {
  std::string out = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace

SqliteDb::SqliteDb(const std::filesystem::path& path, Mode mode) : path_(path) {
  int flags = SQLITE_OPEN_FULLMUTEX;
  std::string name = path.string();
  if (mode == Mode::kReadOnly) {
    flags |= SQLITE_OPEN_READONLY;
    // A WAL-mode file without its -wal file holds everything in itself, and no connection
    // has it open (a writer keeps the -wal file while it has). Read it as immutable then:
    // otherwise SQLite would create -wal and -shm files beside it, which a read-only
    // connection cannot remove again.
    std::error_code ec;
    if (!std::filesystem::exists(path.string() + "-wal", ec)) {
      flags |= SQLITE_OPEN_URI;
      name = fileUri(path) + "?immutable=1";
    }
  } else {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  }
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
    throw UserError(oneLine(fmt::format("{}: cannot open the results database: {}", path.string(), msg)));
  }
  // Another tritonforge may hold the write lock for a moment.
  sqlite3_busy_timeout(db_, 10000);
}

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close_v2(db_);
}

void SqliteDb::fail(std::string_view what) const {
  // SQLite's messages quote the schema of the file ("malformed database schema (runs) -
  // unrecognized token: ..."), which a damaged file fills with any byte.
  throw UserError(oneLine(fmt::format("{}: {}: {}", path_.string(), what, db_ ? sqlite3_errmsg(db_) : "not open")));
}

void SqliteDb::exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw UserError(oneLine(fmt::format("{}: results database: {}", path_.string(), msg)));
  }
}

bool SqliteDb::hasTable(std::string_view name) {
  SqliteStatement s(*this, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  s.bind(1, name);
  return s.step();
}

int64_t SqliteDb::lastInsertId() const { return sqlite3_last_insert_rowid(db_); }

SqliteStatement::SqliteStatement(SqliteDb& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
    db_.fail(fmt::format("cannot prepare '{}'", sql.substr(0, 60)));
  }
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::bind(int i, std::string_view text) {
  if (sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
    db_.fail("bind");
  }
  return *this;
}

SqliteStatement& SqliteStatement::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) db_.fail("bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) db_.fail("bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int i, std::optional<double> v) {
  return v ? bind(i, *v) : bindNull(i);
}

SqliteStatement& SqliteStatement::bindNull(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) db_.fail("bind");
  return *this;
}

bool SqliteStatement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail("query failed");
}

void SqliteStatement::run() {
  while (step()) {
  }
  reset();
}

void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool SqliteStatement::isNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t SqliteStatement::integer(int col) const { return sqlite3_column_int64(stmt_, col); }
double SqliteStatement::real(int col) const { return sqlite3_column_double(stmt_, col); }
std::optional<double> SqliteStatement::optReal(int col) const {
  if (isNull(col)) return std::nullopt;
  return real(col);
}
std::string SqliteStatement::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return std::string();
  // SQLite stores text as given and never checks its encoding; a damaged or foreign file may
  // hold any bytes, and what is read goes into JSON output (`db ... --json`, reports).
  return toValidUtf8(std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))));
}

SqliteTransaction::SqliteTransaction(SqliteDb& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (!done_) {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {
    }
  }
}

void SqliteTransaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace tf
