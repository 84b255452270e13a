// Small RAII wrappers over libsqlite3 (a connection, a prepared statement, a transaction) whose
// errors are Results naming the database file; <sqlite3.h> stays out of the headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace forge::sweep::sqlite {

class Db {
 public:
  // Opens (creating) `path` read-write; the caller serialises use of the connection.
  static Result<Db> open(const std::string& path);

  // Runs one constant statement (DDL, PRAGMA, BEGIN…): values are always bound, never spliced in.
  Status exec(const char* sql);
  // An error for the last failed call on this connection: "<path>: <sqlite3_errmsg>".
  Error error(int rc, std::string_view doing) const;
  std::string last_message() const;  // sqlite3_errmsg
  sqlite3* get() const { return db_.get(); }
  const std::string& path() const { return path_; }
  int changes() const;

 private:
  struct Close {
    void operator()(sqlite3* db) const;
  };
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  std::unique_ptr<sqlite3, Close> db_;
  std::string path_;
};

class Stmt {
 public:
  static Result<Stmt> prepare(const Db& db, const char* sql);

  // Parameters are 1-based, as in SQLite.
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, std::int64_t v);
  // true: a row is ready; false: done. A failed bind surfaces here.
  Result<bool> step();
  // Steps a statement that returns no rows.
  Status run();
  // Ready for new bindings (statements reused in a loop).
  void reset();

  std::string text(int col) const;  // "" for NULL
  std::int64_t int64(int col) const;
  bool is_null(int col) const;

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* s) const;
  };
  Stmt(const Db& db, sqlite3_stmt* s, const char* sql) : db_(&db), stmt_(s), sql_(sql) {}
  const Db* db_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
  const char* sql_;
  int bind_rc_ = 0;  // first failed bind, reported by step()
};

// BEGIN IMMEDIATE … COMMIT; rolled back when dropped uncommitted, so an early `return fail(…)`
// leaves the database as it was. IMMEDIATE takes the write lock up front: no upgrade deadlock.
class Transaction {
 public:
  static Result<Transaction> begin(Db& db);
  Transaction(Transaction&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  ~Transaction();
  Status commit();

 private:
  explicit Transaction(Db& db) : db_(&db) {}
  Db* db_;
};

}  // namespace forge::sweep::sqlite
