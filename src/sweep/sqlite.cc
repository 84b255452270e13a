// libsqlite3 wrappers.
#include "sweep/sqlite.h"

#include <sqlite3.h>

namespace forge::sweep::sqlite {

namespace {

// Busy and locked are transient (another connection holds the write lock past busy_timeout);
// a file that is not a database is the user's to fix.
Errc code_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Errc::kUnavailable;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT: return Errc::kInvalid;
    case SQLITE_CONSTRAINT: return Errc::kConflict;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH: return Errc::kForbidden;
    default: return Errc::kIo;
  }
}

}  // namespace

void Db::Close::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

Result<Db> Db::open(const std::string& path) {
  sqlite3* raw = nullptr;
  // NOMUTEX: the owner's mutex already serialises every call, and must anyway, since a
  // transaction spans several calls on one connection.
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  Db db(raw, path);  // owns the handle even when opening failed
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    return fail(code_of(rc), "cannot open " + path + ": " + msg);
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Error Db::error(int rc, std::string_view doing) const {
  return make_error(code_of(rc), std::string(doing) + " in " + path_ + ": " + last_message());
}

std::string Db::last_message() const { return sqlite3_errmsg(db_.get()); }

int Db::changes() const { return sqlite3_changes(db_.get()); }

Status Db::exec(const char* sql) {
  auto s = Stmt::prepare(*this, sql);
  if (!s) return s.fail();
  for (;;) {  // PRAGMAs may return a row
    auto row = s->step();
    if (!row) return row.fail();
    if (!*row) return {};
  }
}

void Stmt::Finalize::operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }

Result<Stmt> Stmt::prepare(const Db& db, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db.get(), sql, -1, &raw, nullptr);
  Stmt s(db, raw, sql);
  if (rc != SQLITE_OK) return fail(db.error(rc, std::string("preparing \"") + sql + "\""));
  return s;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  int rc = sqlite3_bind_text(stmt_.get(), i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_rc_ == 0) bind_rc_ = rc;
  return *this;
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  int rc = sqlite3_bind_int64(stmt_.get(), i, v);
  if (rc != SQLITE_OK && bind_rc_ == 0) bind_rc_ = rc;
  return *this;
}

Result<bool> Stmt::step() {
  if (bind_rc_ != 0) return fail(db_->error(bind_rc_, std::string("binding \"") + sql_ + "\""));
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return fail(db_->error(rc, std::string("running \"") + sql_ + "\""));
}

Status Stmt::run() {
  auto r = step();
  if (!r) return r.fail();
  return {};
}

void Stmt::reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_rc_ = 0;
}

std::string Stmt::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_.get(), col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), col)));
}

std::int64_t Stmt::int64(int col) const { return sqlite3_column_int64(stmt_.get(), col); }

bool Stmt::is_null(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }

Result<Transaction> Transaction::begin(Db& db) {
  auto s = db.exec("BEGIN IMMEDIATE");
  if (!s) return s.fail();
  return Transaction(db);
}

Transaction::~Transaction() {
  // After a failed statement SQLite may already have rolled back; ROLLBACK then fails harmlessly.
  if (db_) (void)db_->exec("ROLLBACK");
}

Status Transaction::commit() {
  auto s = db_->exec("COMMIT");
  // A failed COMMIT (disk full, busy) leaves the transaction open: the destructor rolls it back.
  if (s) db_ = nullptr;
  return s;
}

}  // namespace forge::sweep::sqlite
