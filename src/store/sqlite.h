// A thin RAII layer over SQLite's C API: a connection and prepared statements. Errors
// throw UserError naming the database file (a database that cannot be opened or written
// is something the user chose with --db or can fix).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace tf {

class SqliteDb;

class SqliteStatement {
 public:
  SqliteStatement(SqliteDb& db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Parameters are 1-based, as in SQLite.
  SqliteStatement& bind(int i, std::string_view text);
  SqliteStatement& bind(int i, int64_t v);
  SqliteStatement& bind(int i, double v);
  SqliteStatement& bind(int i, std::optional<double> v);   // nullopt binds NULL
  SqliteStatement& bindNull(int i);
  // Steps once: true while there is a row to read.
  bool step();
  // Runs a statement that returns no rows.
  void run();
  void reset();

  bool isNull(int col) const;
  int64_t integer(int col) const;
  double real(int col) const;
  std::optional<double> optReal(int col) const;
  std::string text(int col) const;   // valid UTF-8: ill-formed bytes replaced by U+FFFD

 private:
  SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  enum class Mode {
    kReadWriteCreate,  // creates the file and its folder when needed
    kReadOnly,         // never writes to the file
  };
  // Opens the file. Throws UserError on failure.
  explicit SqliteDb(const std::filesystem::path& path, Mode mode = Mode::kReadWriteCreate);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void exec(std::string_view sql);
  bool hasTable(std::string_view name);
  int64_t lastInsertId() const;
  const std::filesystem::path& path() const { return path_; }
  sqlite3* handle() { return db_; }
  // Throws UserError "<path>: <what>: <sqlite message>".
  [[noreturn]] void fail(std::string_view what) const;

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed without commit().
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db);
  ~SqliteTransaction();
  void commit();

 private:
  SqliteDb& db_;
  bool done_ = false;
};

}  // namespace tf
