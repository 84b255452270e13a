// The rag service's store and routes. An index is built outside the store's lock (it can take a
// second) and published whole, so a search sees a trial's index complete or not at all.
#include "services/rag_http.h"

#include <initializer_list>
#include <tuple>
#include <variant>
#include <vector>

#include "core/limits.h"
#include "core/sha256.h"
#include "services/json_db.h"
#include "services/json_db_http.h"

namespace forge::services {

namespace {

// Keys outside `allowed` are refused: a misspelt top_k must not silently become the default.
Status known_keys(const json::Value& obj, std::initializer_list<std::string_view> allowed, std::string_view what) {
  if (!obj.IsObject()) return fail(Errc::kInvalid, std::string(what) + " must be a JSON object");
  for (const auto& m : obj.GetObject()) {
    std::string_view k(m.name.GetString(), m.name.GetStringLength());
    bool ok = false;
    for (auto a : allowed) ok = ok || a == k;
    if (!ok) return fail(Errc::kInvalid, std::string(what) + " has an unknown key '" + std::string(k) + "'");
  }
  return {};
}

// A string member, required or not; kInvalid naming it when it has another type.
Result<std::string> string_member(const json::Value& obj, const char* key, std::string_view what, bool required) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) {
    if (required) return fail(Errc::kInvalid, std::string(what) + " needs '" + key + "'");
    return std::string();
  }
  if (!it->value.IsString()) return fail(Errc::kInvalid, std::string(what) + "'s '" + key + "' must be a string");
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

Result<std::vector<RagDocument>> documents_of(const json::Value& body) {
  if (auto st = known_keys(body, {"documents", "domain_name", "trial_id"}, "the index request"); !st) return st.fail();
  const json::Value* docs = json::get_array(body, "documents");
  if (!docs) return fail(Errc::kInvalid, "the index request needs 'documents', an array");
  if (docs->Size() > limits::kMaxRagDocuments)
    return fail(Errc::kInvalid, "the corpus has " + std::to_string(docs->Size()) + " documents, over the limit of " +
                                    std::to_string(limits::kMaxRagDocuments));
  std::vector<RagDocument> out;
  for (rapidjson::SizeType i = 0; i < docs->Size(); ++i) {
    const std::string what = "documents[" + std::to_string(i) + "]";
    const json::Value& d = (*docs)[i];
    if (auto st = known_keys(d, {"doc_id", "text", "source", "title", "metadata"}, what); !st) return st.fail();
    RagDocument doc;
    for (auto [key, field, required] :
         {std::tuple{"doc_id", &doc.doc_id, true}, std::tuple{"text", &doc.text, true},
          std::tuple{"source", &doc.source, false}, std::tuple{"title", &doc.title, false}}) {
      auto v = string_member(d, key, what, required);
      if (!v) return v.fail();
      *field = std::move(*v);
    }
    if (doc.source.empty()) doc.source = doc.doc_id.substr(doc.doc_id.find_last_of('/') + 1);
    out.push_back(std::move(doc));
  }
  return out;
}

struct SearchArgs {
  std::string query;
  int top_k = kDefaultRagTopK;
};

Result<SearchArgs> search_args(const json::Value& body) {
  if (auto st = known_keys(body, {"query", "top_k", "alpha"}, "the search request"); !st) return st.fail();
  SearchArgs a;
  auto q = string_member(body, "query", "the search request", true);
  if (!q) return q.fail();
  a.query = std::move(*q);
  if (auto it = body.FindMember("top_k"); it != body.MemberEnd()) {
    if (!it->value.IsInt()) return fail(Errc::kInvalid, "top_k must be an integer");
    a.top_k = it->value.GetInt();
  }
  if (auto it = body.FindMember("alpha"); it != body.MemberEnd())
    if (!it->value.IsNumber() || it->value.GetDouble() < 0 || it->value.GetDouble() > 1)
      return fail(Errc::kInvalid, "alpha must be a number from 0 to 1");
  return a;
}

Response ok(Result<std::string> body) {
  if (!body) return error_response(body.error());
  return Response{200, "application/json", std::move(*body), {}};
}

Response trial_route(RagStore& store, const Caller& who, const Request& req, const std::string& id,
                     const std::string& verb) {
  auto deny = [&](Access need) { return JsonDbAuth::authorize(who, req, id, need); };
  auto with_body = [&](auto&& call) -> Response {
    auto doc = parse_body(req.body);
    if (!doc) return error_response(doc.error());
    return ok(call(*doc));
  };
  if (verb == "search") {
    if (req.method != "POST") return method_not_allowed(req, "POST");
    if (auto r = deny(Access::kRead)) return *r;
    return with_body([&](const json::Document& body) { return store.search(id, body); });
  }
  if (verb == "index") {
    if (req.method != "POST" && req.method != "DELETE") return method_not_allowed(req, "POST, DELETE");
    if (auto r = deny(Access::kControl)) return *r;
    if (req.method == "DELETE") return ok(store.remove(id));
    return with_body([&](const json::Document& body) { return store.index(id, body); });
  }
  return json_error(404, "no route for " + req.method + " " + req.path);
}

Response health(const RagStore& store, std::string_view auth, const Request& req) {
  if (req.method != "GET" && req.method != "HEAD") return method_not_allowed(req, "GET, HEAD");
  json::Writer w;
  w.begin_object().field("status", "healthy").field("service", "rag").field("retrieval", "bm25");
  w.field("active_indices", static_cast<std::int64_t>(store.count())).field("faiss_available", false);
  w.field("auth", auth).end_object();
  return Response{200, "application/json", w.take(), {}};
}

}  // namespace

std::shared_ptr<const RagIndex> RagStore::find(const std::string& trial) const {
  std::lock_guard lock(mu_);
  auto it = indexes_.find(trial);
  return it == indexes_.end() ? nullptr : it->second;
}

std::size_t RagStore::count() const {
  std::lock_guard lock(mu_);
  return indexes_.size();
}

Result<std::string> RagStore::index(const std::string& trial, const json::Value& body) {
  auto taken = [&] { return fail(Errc::kConflict, "trial '" + trial + "' already has an index; it is loaded once"); };
  if (find(trial)) return taken();
  auto docs = documents_of(body);
  if (!docs) return docs.fail();
  std::string all_text;
  for (const auto& d : *docs) all_text += d.text;
  const std::string index_id = trial + "_" + sha256_hex(all_text).substr(0, 16);  // Tolokaforge's form
  auto built = RagIndex::build(std::move(*docs));
  if (!built) return built.fail();
  std::shared_ptr<const RagIndex> index = std::move(*built);
  {
    std::lock_guard lock(mu_);
    if (indexes_.count(trial)) return taken();
    if (indexes_.size() >= limits::kMaxRagIndexes)
      return fail(Errc::kServer,
                  "the rag service holds " + std::to_string(indexes_.size()) + " indexes, its limit; delete one first");
    indexes_.emplace(trial, index);
  }
  json::Writer w;
  w.begin_object().field("status", "success").field("trial_id", trial);
  w.field("domain_name", json::get_string(body, "domain_name", "default"));
  w.field("documents_indexed", static_cast<std::int64_t>(index->documents()));
  w.field("passages_indexed", static_cast<std::int64_t>(index->passages()));
  w.field("index_id", index_id).end_object();
  return w.take();
}

Result<std::string> RagStore::search(const std::string& trial, const json::Value& body) const {
  auto args = search_args(body);
  if (!args) return args.fail();
  auto index = find(trial);
  if (!index) return fail(Errc::kNotFound, "no index for trial '" + trial + "'");
  auto hits = index->search(args->query, args->top_k);
  if (!hits) return hits.fail();
  json::Writer w;
  w.begin_object().key("results").begin_array();
  for (const auto& h : *hits) {
    w.begin_object().field("doc_id", h.doc_id).field("source", h.source).field("title", h.title);
    w.key("score").num(h.score);
    w.field("snippet", h.snippet).field("text", h.text).field("retrieval_method", "bm25").end_object();
  }
  w.end_array().field("query", args->query).field("trial_id", trial);
  w.field("total_results", static_cast<std::int64_t>(hits->size())).end_object();
  return w.take();
}

Result<std::string> RagStore::remove(const std::string& trial) {
  {
    std::lock_guard lock(mu_);
    if (indexes_.erase(trial) == 0) return fail(Errc::kNotFound, "no index for trial '" + trial + "'");
  }
  return json::Writer()
      .begin_object()
      .field("status", "success")
      .field("trial_id", trial)
      .field("deleted", true)
      .end_object()
      .take();
}

Handler rag_handler(RagStore& store, JsonDbAuth auth) {
  return [&store, auth = std::move(auth)](const Request& req) -> Response {
    auto seg = path_segments(req.path);
    if (seg && *seg == std::vector<std::string>{"health"})
      return health(store, auth.required() ? "bearer" : "disabled", req);
    // Everything else, unknown routes included, is for token holders only.
    auto who = auth.authenticate(req);
    if (auto* refused = std::get_if<Response>(&who)) return *refused;
    if (!seg) return json_error(400, "malformed request path '" + req.path + "'");
    if (seg->size() == 3 && (*seg)[0] == "trials") {
      if (auto st = check_name("trial id", (*seg)[1]); !st) return error_response(st.error());
      return trial_route(store, std::get<Caller>(who), req, (*seg)[1], (*seg)[2]);
    }
    return json_error(404, "no route for " + req.method + " " + req.path);
  };
}

}  // namespace forge::services
