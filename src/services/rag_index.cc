// The FTS5 index: one row per passage (document number, title, body), porter-stemmed unicode61
// tokens with diacritics folded; statements always bind, never splice, what they are given.
#include "services/rag_index.h"

#include <sqlite3.h>

#include <set>

#include "core/limits.h"
#include "core/strings.h"
#include "services/rag_text.h"

namespace forge::services {

namespace {

// The title counts for every passage of its document, at twice a body word's weight: a document
// named for the question is the likeliest answer. The document number is not searched.
constexpr const char* kSchema =
    "CREATE VIRTUAL TABLE passages USING fts5(doc UNINDEXED, title, body, "
    "tokenize = 'porter unicode61 remove_diacritics 2')";
// FTS5 refuses its auxiliary functions inside an aggregate, so each passage's score is
// materialised first and the best passage of each document chosen from that.
constexpr const char* kBestPassages =
    "WITH m AS MATERIALIZED (SELECT rowid AS r, doc, bm25(passages, 0.0, 2.0, 1.0) AS s "
    "FROM passages WHERE passages MATCH ?1) "
    "SELECT r, doc, min(s) AS best FROM m GROUP BY doc ORDER BY best, doc LIMIT ?2";
// Up to 32 tokens of the passage around its matches, marked by nothing (results are plain text).
constexpr const char* kPassage =
    "SELECT snippet(passages, 2, '', '', '…', 32), body FROM passages WHERE passages MATCH ?1 AND rowid = ?2";

struct Finalize {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, Finalize>;

Error sql_error(sqlite3* db, std::string_view doing) {
  return Error{Errc::kIo, std::string(doing) + ": " + sqlite3_errmsg(db), {}};
}

Result<Stmt> prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) return fail(sql_error(db, "preparing a statement"));
  return Stmt(s);
}

void bind_text(sqlite3_stmt* s, int i, std::string_view v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

std::string column_text(sqlite3_stmt* s, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, col));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, col))) : std::string();
}

Status check_corpus(const std::vector<RagDocument>& docs) {
  if (docs.empty()) return fail(Errc::kInvalid, "the corpus has no documents");
  if (docs.size() > limits::kMaxRagDocuments)
    return fail(Errc::kInvalid, "the corpus has " + std::to_string(docs.size()) + " documents, over the limit of " +
                                    std::to_string(limits::kMaxRagDocuments));
  std::size_t bytes = 0;
  std::set<std::string_view> ids;
  for (const auto& d : docs) {
    if (d.doc_id.empty()) return fail(Errc::kInvalid, "a document has an empty doc_id");
    if (!ids.insert(d.doc_id).second) return fail(Errc::kInvalid, "doc_id '" + d.doc_id + "' is given twice");
    bytes += d.text.size();
    if (bytes > limits::kMaxRagCorpusBytes)
      return fail(Errc::kInvalid, "the corpus's documents add up to more than " +
                                      human_bytes(limits::kMaxRagCorpusBytes) + " (the limit), at document '" +
                                      d.doc_id + "'");
  }
  return {};
}

}  // namespace

void RagIndex::Close::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

Result<std::unique_ptr<RagIndex>> RagIndex::build(std::vector<RagDocument> docs) {
  if (auto st = check_corpus(docs); !st) return st.fail();
  std::unique_ptr<RagIndex> index(new RagIndex());
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  index->db_.reset(db);
  if (rc != SQLITE_OK) return fail(Errc::kIo, "opening an in-memory index: " + std::string(sqlite3_errstr(rc)));
  if (auto st = index->load(docs); !st) return st.fail();
  return index;
}

Status RagIndex::load(const std::vector<RagDocument>& docs) {
  sqlite3* db = db_.get();
  // Sorts and temporary tables stay in memory too: the service's root is read-only.
  if (sqlite3_exec(db, "PRAGMA temp_store = MEMORY", nullptr, nullptr, nullptr) != SQLITE_OK)
    return fail(sql_error(db, "configuring the index"));
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK)
    return fail(sql_error(db, "creating the index (does this SQLite have FTS5?)"));
  if (sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) return fail(sql_error(db, "indexing"));
  auto insert = prepare(db, "INSERT INTO passages(doc, title, body) VALUES (?1, ?2, ?3)");
  if (!insert) return insert.fail();
  for (const auto& d : docs) {
    Meta meta{d.doc_id, d.source, d.title.empty() ? document_title(d.text, d.source) : d.title};
    auto passages = split_passages(d.text);
    if (passages.empty()) return fail(Errc::kInvalid, "document '" + d.doc_id + "' has no text");
    for (const auto& p : passages) {
      sqlite3_stmt* s = insert->get();
      sqlite3_bind_int64(s, 1, static_cast<sqlite3_int64>(docs_.size()));
      bind_text(s, 2, meta.title);
      bind_text(s, 3, p);
      if (sqlite3_step(s) != SQLITE_DONE) return fail(sql_error(db, "indexing document '" + d.doc_id + "'"));
      sqlite3_reset(s);
    }
    passages_ += passages.size();
    bytes_ += d.text.size();
    docs_.push_back(std::move(meta));
  }
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return fail(sql_error(db, "indexing"));
  return {};
}

Result<std::vector<RagHit>> RagIndex::search(std::string_view query, int top_k) const {
  if (top_k < 1 || top_k > limits::kMaxRagTopK)
    return fail(Errc::kInvalid, "top_k must be between 1 and " + std::to_string(limits::kMaxRagTopK) + " (it is " +
                                    std::to_string(top_k) + ")");
  auto terms = query_terms(query);
  if (!terms) return terms.fail();
  const std::string match = match_expression(*terms);
  std::lock_guard lock(mu_);
  sqlite3* db = db_.get();
  auto best = prepare(db, kBestPassages);
  if (!best) return best.fail();
  bind_text(best->get(), 1, match);
  sqlite3_bind_int(best->get(), 2, top_k);
  std::vector<std::pair<sqlite3_int64, RagHit>> rows;
  int rc;
  while ((rc = sqlite3_step(best->get())) == SQLITE_ROW) {
    auto doc = static_cast<std::size_t>(sqlite3_column_int64(best->get(), 1));
    if (doc >= docs_.size()) return fail(Errc::kIo, "the index names a document it does not hold");
    const Meta& m = docs_[doc];
    // bm25() is negative, lower better; results read better the other way round.
    rows.push_back({sqlite3_column_int64(best->get(), 0),
                    RagHit{m.doc_id, m.source, m.title, -sqlite3_column_double(best->get(), 2), {}, {}}});
  }
  if (rc != SQLITE_DONE) return fail(sql_error(db, "searching"));
  auto passage = prepare(db, kPassage);
  if (!passage) return passage.fail();
  std::vector<RagHit> out;
  for (auto& [rowid, hit] : rows) {
    sqlite3_stmt* s = passage->get();
    bind_text(s, 1, match);
    sqlite3_bind_int64(s, 2, rowid);
    if (sqlite3_step(s) != SQLITE_ROW) return fail(sql_error(db, "reading a passage"));
    hit.snippet = column_text(s, 0);
    hit.text = column_text(s, 1);
    sqlite3_reset(s);
    out.push_back(std::move(hit));
  }
  return out;
}

}  // namespace forge::services
