// One trial's knowledge base: its documents cut into passages in an in-memory SQLite FTS5 table,
// ranked by FTS5's bm25(); a document's score is its best passage's (docs/services.md, "rag").
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

struct sqlite3;

namespace forge::services {

struct RagDocument {
  std::string doc_id;  // unique within the index: the file's path in the corpus
  std::string source;  // the file's name, as Tolokaforge reports it
  std::string title;   // empty: document_title() of the text
  std::string text;
};

struct RagHit {
  std::string doc_id, source, title;
  double score = 0;     // BM25 of the best passage: higher is better, comparable within one query only
  std::string snippet;  // the best passage's words around the matches
  std::string text;     // the best passage, at most limits::kMaxRagPassageBytes
};

class RagIndex {
 public:
  // Indexes `docs`. kInvalid naming the document when there is none, an id is empty or repeated, a
  // document has no text, or the corpus passes kMaxRagDocuments or kMaxRagCorpusBytes.
  static Result<std::unique_ptr<RagIndex>> build(std::vector<RagDocument> docs);

  // The `top_k` (1 … kMaxRagTopK) best documents for `query`, best first, ties in document order;
  // only documents holding a query word. kInvalid for a query query_terms() refuses or a bad top_k.
  Result<std::vector<RagHit>> search(std::string_view query, int top_k) const;

  std::size_t documents() const { return docs_.size(); }
  std::size_t passages() const { return passages_; }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Meta {
    std::string doc_id, source, title;
  };
  RagIndex() = default;
  Status load(const std::vector<RagDocument>& docs);

  struct Close {
    void operator()(sqlite3* db) const;
  };
  std::unique_ptr<sqlite3, Close> db_;
  mutable std::mutex mu_;  // one statement at a time on the connection
  std::vector<Meta> docs_;
  std::size_t passages_ = 0, bytes_ = 0;
};

}  // namespace forge::services
