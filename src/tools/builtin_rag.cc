// search_kb: Tolokaforge's knowledge-base search (tools/builtin/rag_search.py: query, top_k, alpha),
// sent from inside the runner to the trial's rag service with the trial's read token, which may only
// search that trial's index; loading it is the host's alone (src/trial/rag_use.h).
#include <cmath>

#include "core/limits.h"
#include "tools/builtin_tools.h"
#include "tools/service_post.h"

namespace forge::tools {

namespace {

// The service's answer as the model reads it: Tolokaforge's rendering (rag_service_backend.py
// _render) with forgectl's title and snippet, scores to four decimals.
std::string render(const json::Value& reply, const std::string& query) {
  const json::Value* results = json::get_array(reply, "results");
  json::Writer w;
  w.begin_object();
  if (!results || results->Empty()) {
    w.field("message", "No relevant documents found.").key("results").begin_array().end_array();
    return w.field("query", query).end_object().take();
  }
  w.key("results").begin_array();
  for (const auto& r : results->GetArray()) {
    w.begin_object();
    for (const char* k : {"doc_id", "title", "source"}) w.field(k, json::get_string(r, k));
    w.key("score").num(std::round(json::get_double(r, "score") * 1e4) / 1e4);
    for (const char* k : {"snippet", "text", "retrieval_method"}) w.field(k, json::get_string(r, k));
    w.end_object();
  }
  w.end_array().field("total", static_cast<std::int64_t>(results->Size()));
  return w.field("query", query).end_object().take();
}

}  // namespace

ToolSpec search_kb_spec() {
  const auto max_query = static_cast<std::int64_t>(limits::kMaxRagQueryBytes);
  json::Writer w;
  w.begin_object().field("type", "object").key("properties").begin_object();
  w.key("query").begin_object().field("type", "string").field("description", "Search query to find relevant documents");
  w.field("minLength", 1).field("maxLength", max_query).end_object();
  w.key("top_k").begin_object().field("type", "integer");
  w.field("description",
          "Number of results to return (default: 5, at most " + std::to_string(limits::kMaxRagTopK) + ")");
  w.field("default", 5).field("minimum", 1).field("maximum", limits::kMaxRagTopK).end_object();
  w.key("alpha").begin_object().field("type", "number");
  w.field("description",
          "Tolokaforge's keyword/semantic blend weight, accepted for compatibility; it has no effect: ranking is by "
          "keyword (BM25) only");
  w.key("default").num(0.5).field("minimum", 0).field("maximum", 1).end_object();
  w.end_object().key("required").begin_array().str("query").end_array().field("additionalProperties", false);
  return {"search_kb",
          "Search the knowledge base for relevant information. Documents are ranked by keyword relevance (BM25); "
          "each result has doc_id, title, source, score, a snippet and the passage that matched best.",
          w.end_object().take()};
}

std::shared_ptr<Tool> rag_tool(const BuiltinOptions& o) {
  if (o.rag.trial.empty()) return nullptr;
  auto sb = o.sandbox;
  auto rag = o.rag;
  return std::make_shared<FunctionTool>(
      search_kb_spec(), [sb, rag](const json::Value& a, const CallContext& ctx) -> Result<std::string> {
        const std::string query = json::get_string(a, "query");
        if (query.size() > limits::kMaxRagQueryBytes)
          return fail(Errc::kInvalid, "the query is " + std::to_string(query.size()) + " bytes, over the limit of " +
                                          std::to_string(limits::kMaxRagQueryBytes) + "; ask with fewer words");
        json::Writer w;
        w.begin_object().field("query", query).field("top_k", json::get_int(a, "top_k", 5));
        if (a.HasMember("alpha")) w.key("alpha").num(json::get_double(a, "alpha"));
        auto body = post_json(*sb, {rag.host, rag.port, "knowledge base"}, rag.token,
                              "/trials/" + rag.trial + "/search", w.end_object().take(), ctx.deadline);
        if (!body) return body.fail();
        auto doc = json::parse(*body, "knowledge base reply");
        if (!doc) return doc.fail();
        return render(*doc, query);
      });
}

}  // namespace forge::tools
