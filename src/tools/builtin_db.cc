// db_query and db_update: the trial's json-db namespace, reached from inside the runner on the
// task network (the same place the agent is), as Tolokaforge's tools did, each with the agent token
// of its own permission. Nothing the host relies on goes this way: forgectl's own requests (initial
// state, final state, golden replay) go from the host with the control token (src/trial/db_client.h).
#include "tools/builtin_tools.h"
#include "tools/service_post.h"

namespace forge::tools {

namespace {

Result<std::string> post(Sandbox& sb, const DbRoute& db, const std::string& token, const std::string& path,
                         const std::string& body, Deadline deadline) {
  return post_json(sb, {db.host, db.port, "database"}, token, path, body, deadline);
}

}  // namespace

ToolSpec db_query_spec() {
  return {"db_query", "Query the task's database with a JSONPath expression, e.g. $.orders[?(@.status == 'paid')].",
          R"({"type":"object","properties":{"jsonpath":{"type":"string","minLength":1}},"required":["jsonpath"],"additionalProperties":false})"};
}

ToolSpec db_update_spec() {
  return {"db_update",
          "Change the task's database: a list of operations {op: replace|add|remove, path: JSONPath to one node, value}.",
          R"({"type":"object","properties":{"ops":{"type":"array","minItems":1,"items":{"type":"object","properties":{)"
          R"("op":{"type":"string","enum":["replace","add","remove"]},"path":{"type":"string","minLength":1},"value":{}},)"
          R"("required":["op","path"],"additionalProperties":false}}},"required":["ops"],"additionalProperties":false})"};
}

std::vector<std::shared_ptr<Tool>> db_tools(const BuiltinOptions& o) {
  std::vector<std::shared_ptr<Tool>> out;
  if (o.db.trial.empty()) return out;
  auto sb = o.sandbox;
  auto db = o.db;
  out.push_back(std::make_shared<FunctionTool>(
      db_query_spec(),
      [sb, db](const json::Value& a, const CallContext& ctx) -> Result<std::string> {
        json::Writer w;
        w.begin_object().field("jsonpath", json::get_string(a, "jsonpath")).end_object();
        auto body = post(*sb, db, db.read_token, "/trials/" + db.trial + "/query", w.take(), ctx.deadline);
        if (!body) return body.fail();
        auto doc = json::parse(*body, "query result");
        if (!doc) return doc.fail();
        const auto* results = json::get_array(*doc, "results");
        return results ? json::to_string(*results) : *body;
      }));
  out.push_back(std::make_shared<FunctionTool>(
      db_update_spec(),
      [sb, db](const json::Value& a, const CallContext& ctx) -> Result<std::string> {
        auto body = post(*sb, db, db.write_token, "/trials/" + db.trial + "/update", json::to_string(a), ctx.deadline);
        if (!body) return body.fail();
        auto doc = json::parse(*body, "update result");
        std::int64_t version = doc ? json::get_int(*doc, "version", -1) : -1;
        return "Database updated successfully." + (version >= 0 ? " Version: " + std::to_string(version) : std::string());
      }));
  return out;
}

}  // namespace forge::tools
