// json-db's routing: path segments are decoded one by one, so an encoded '/' stays inside its id.
#include "services/json_db_http.h"

#include <algorithm>
#include <variant>
#include <vector>

namespace forge::services {

namespace {

Response ok(Result<std::string> body, int status = 200) {
  if (!body) return error_response(body.error());
  return Response{status, "application/json", std::move(*body), {}};
}

std::vector<std::string> split_tables(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty()) out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Routes /trials/{id}/… ; `seg` holds the segments after "trials". Each route checks that the
// caller may do what it does on this trial before doing it.
Response trial_route(JsonDb& db, const Caller& who, const Request& req, const std::vector<std::string>& seg) {
  const std::string& id = seg[0];
  const std::string& m = req.method;
  auto deny = [&](Access need) { return JsonDbAuth::authorize(who, req, id, need); };
  auto with_body = [&](auto&& call) -> Response {
    auto doc = parse_body(req.body);
    if (!doc) return error_response(doc.error());
    return call(*doc);
  };
  if (seg.size() == 1) {
    if (m != "DELETE") return method_not_allowed(req, "DELETE");
    if (auto r = deny(Access::kControl)) return *r;
    return ok(db.remove(id));
  }
  const std::string& verb = seg[1];
  if (seg.size() == 2) {
    if (verb == "state") {
      if (m != "GET") return method_not_allowed(req, "GET");
      if (auto r = deny(Access::kRead)) return *r;
      auto tables = query_param(req.query, "tables");
      return ok(db.state(id, tables ? split_tables(*tables) : std::vector<std::string>{}));
    }
    if (verb == "init" || verb == "query" || verb == "update" || verb == "reset") {
      if (m != "POST") return method_not_allowed(req, "POST");
      Access need = verb == "query" ? Access::kRead : verb == "update" ? Access::kWrite : Access::kControl;
      if (auto r = deny(need)) return *r;
      if (verb == "reset") return ok(db.reset(id));
      return with_body([&](const json::Document& body) {
        if (verb == "init") return ok(db.init(id, body));
        if (verb == "query") return ok(db.query(id, body));
        return ok(db.update(id, body));
      });
    }
  }
  if (seg.size() == 3 && verb == "state") {
    if (m == "PATCH") {
      if (auto r = deny(Access::kWrite)) return *r;
      return with_body([&](const json::Document& body) { return ok(db.patch(id, seg[2], body)); });
    }
    if (seg[2] == "hash" || seg[2] == "stable") {
      if (m != "GET") return method_not_allowed(req, "GET, PATCH");
      if (auto r = deny(Access::kRead)) return *r;
      return ok(seg[2] == "hash" ? db.hash(id) : db.stable_state(id));
    }
    return method_not_allowed(req, "PATCH");
  }
  if (verb == "snapshots" && (seg.size() == 3 || (seg.size() == 4 && seg[3] == "restore"))) {
    if (m != "POST") return method_not_allowed(req, "POST");
    if (auto r = deny(Access::kControl)) return *r;
    return seg.size() == 3 ? ok(db.snapshot(id, seg[2]), 201) : ok(db.restore(id, seg[2]));
  }
  return json_error(404, "no route for " + req.method + " " + req.path);
}

// `auth` says how requests are checked: "bearer", "disabled" (--insecure-no-auth) or
// "unconfigured" (no token given: everything but /health is refused).
Response health(const JsonDb& db, std::string_view auth, const Request& req) {
  if (req.method != "GET" && req.method != "HEAD") return method_not_allowed(req, "GET, HEAD");
  json::Writer w;
  w.begin_object().field("status", "healthy").field("service", "json-db");
  w.field("active_trials", static_cast<std::int64_t>(db.trial_count()));
  w.field("auth", auth).end_object();
  return Response{200, "application/json", w.take(), {}};
}

}  // namespace

Result<json::Document> parse_body(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return fail(Errc::kInvalid, "the request needs a JSON body");
  json::Document doc;
  if (auto bad = json::parse_document(doc, body, limits::kMaxJsonBytes, json::kValidateUtf8)) {
    if (bad->why == json::ParseFailure::Why::kTooDeep)
      return fail(Errc::kInvalid,
                  "the request body nests deeper than " + std::to_string(limits::kMaxJsonDepth) + " levels");
    if (bad->why == json::ParseFailure::Why::kDuplicateKey)
      return fail(Errc::kInvalid, "the request body has " + bad->reason);
    return fail(Errc::kInvalid, "malformed JSON body at offset " + std::to_string(bad->offset) + ": " + bad->reason);
  }
  return doc;
}

Handler json_db_handler(JsonDb& db, JsonDbAuth auth) {
  return [&db, auth = std::move(auth)](const Request& req) -> Response {
    auto seg = path_segments(req.path);
    if (seg && *seg == std::vector<std::string>{"health"})
      return health(db, auth.required() ? "bearer" : "disabled", req);
    // Everything else, unknown routes included, is for token holders only.
    auto who = auth.authenticate(req);
    if (auto* refused = std::get_if<Response>(&who)) return *refused;
    const Caller& caller = std::get<Caller>(who);
    if (!seg) return json_error(400, "malformed request path '" + req.path + "'");
    if (seg->size() >= 2 && (*seg)[0] == "trials") {
      if (auto st = check_name("trial id", (*seg)[1]); !st) return error_response(st.error());
      return trial_route(db, caller, req, std::vector<std::string>(seg->begin() + 1, seg->end()));
    }
    // Tolokaforge's legacy global endpoints: the same routes on the default trial.
    if (seg->size() == 1) {
      const std::string& verb = (*seg)[0];
      std::string id(kDefaultTrial);
      if (verb == "query" || verb == "update" || verb == "reset") return trial_route(db, caller, req, {id, verb});
      if (verb == "dump") return trial_route(db, caller, req, {id, "state"});
    }
    return json_error(404, "no route for " + req.method + " " + req.path);
  };
}

Handler json_db_handler(JsonDb& db) {
  return [&db](const Request& req) -> Response {
    auto seg = path_segments(req.path);
    if (seg && *seg == std::vector<std::string>{"health"}) return health(db, "unconfigured", req);
    Response r = json_error(401, "json-db was started without its control token; it serves only /health");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"json-db\"");
    return r;
  };
}

}  // namespace forge::services
