// The rag service: per-trial BM25 indexes behind Tolokaforge's rag-service routes
// (env/rag_service/app.py), each behind the token check of JsonDbAuth: only the control token
// loads or deletes an index; an agent read token searches its own trial's (docs/services.md, "rag").
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/json.h"
#include "core/result.h"
#include "services/http_server.h"
#include "services/json_db_auth.h"
#include "services/rag_index.h"

namespace forge::services {

// search's top_k when the request gives none (Tolokaforge's default).
inline constexpr int kDefaultRagTopK = 5;

class RagStore {
 public:
  // POST /trials/{id}/index: {documents: [{doc_id, text, source?, title?, metadata?}], domain_name?,
  // trial_id?}. kConflict when the trial has an index (one load per trial: nothing is added
  // later), kServer when kMaxRagIndexes are held, kInvalid for a body or corpus RagIndex refuses.
  Result<std::string> index(const std::string& trial, const json::Value& body);
  // POST /trials/{id}/search: {query, top_k?, alpha?}. alpha (0–1, Tolokaforge's blend weight) is
  // accepted and has no effect: ranking is BM25 alone. kNotFound without an index.
  Result<std::string> search(const std::string& trial, const json::Value& body) const;
  // DELETE /trials/{id}/index.
  Result<std::string> remove(const std::string& trial);
  std::size_t count() const;

 private:
  std::shared_ptr<const RagIndex> find(const std::string& trial) const;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const RagIndex>> indexes_;
};

// A handler serving `store` (which must outlive it); every request but GET/HEAD /health must carry
// a token `auth` accepts for what the route does.
Handler rag_handler(RagStore& store, JsonDbAuth auth);

}  // namespace forge::services
