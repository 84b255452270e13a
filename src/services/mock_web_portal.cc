// The json-db portal: the portal file, the page injection, and the checks before a forward.
#include "services/mock_web_portal.h"

#include <fstream>
#include <iterator>
#include <system_error>
#include <filesystem>

#include "core/json.h"
#include "core/strings.h"

namespace forge::services {

namespace {

Response portal_error(int status, std::string_view message) {
  Response r = json_error(status, message);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// The media type of a Content-Type value, lower-case, without parameters.
std::string media_type(std::string_view v) { return to_lower(trim(v.substr(0, v.find(';')))); }

// The single value of header `name`, or nullopt (absent or repeated).
std::optional<std::string> single_header(const Request& req, std::string_view name) {
  auto v = req.header_values(name);
  if (v.size() != 1) return std::nullopt;
  return std::string(trim(v[0]));
}

// Whether `host` (a Host header: name[:port]) names mock-web in a way no one can rebind: one of
// its service names, or an IPv4 address. A public name the agent resolves at will (DNS rebinding
// under full internet) would let a page of its own share that origin with mock-web.
bool mock_web_host(std::string_view host) {
  std::string name = to_lower(host.substr(0, host.rfind(':') == std::string_view::npos ? host.size() : host.rfind(':')));
  for (const char* known : {"mock-web", "tolokaforge-mock-web"})
    if (name == known) return true;
  int dots = 0;
  for (char c : name) {
    if (c == '.') ++dots;
    else if (c < '0' || c > '9') return false;
  }
  return dots == 3;
}

// A page of the portal's own origin sends Origin "http://" + the Host it asked. A page the agent
// serves elsewhere (its origin differs) and a request with no Origin at all are refused.
bool same_origin(const Request& req) {
  auto origin = single_header(req, "Origin");
  auto host = single_header(req, "Host");
  return origin && host && mock_web_host(*host) && to_lower(*origin) == "http://" + to_lower(*host);
}

enum class Access { kRead, kWrite };

struct Route {
  Access access;
  std::string allow;  // the methods of this path
  bool ok;            // the request's method is one of them
};

// Which json-db route `rest` (after the trial) is, for `method`; nullopt: none.
std::optional<Route> route_of(const std::vector<std::string>& rest, const std::string& method) {
  auto is = [&](std::initializer_list<const char*> want) {
    if (rest.size() != want.size()) return false;
    std::size_t i = 0;
    for (const char* w : want)
      if (rest[i++] != w) return false;
    return true;
  };
  const bool get = method == "GET" || method == "HEAD";
  if (is({"state"}) || is({"state", "stable"}) || is({"state", "hash"})) return Route{Access::kRead, "GET, HEAD", get};
  if (is({"query"})) return Route{Access::kRead, "POST", method == "POST"};
  if (is({"update"})) return Route{Access::kWrite, "POST", method == "POST"};
  if (rest.size() == 2 && rest[0] == "state") return Route{Access::kWrite, "PATCH", method == "PATCH"};
  return std::nullopt;
}

}  // namespace

Result<std::optional<PortalConfig>> read_portal_config(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<PortalConfig>();
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxPortalFileBytes)
    return fail(Errc::kInvalid, "the json-db portal file " + path + " is unreadable or too large");
  std::ifstream in(path, std::ios::binary);
  std::string text(std::istreambuf_iterator<char>(in), {});
  auto c = parse_portal_config(text);
  if (!c) return c.fail();
  return std::optional<PortalConfig>(std::move(*c));
}

std::string portal_base(const PortalConfig& c) { return std::string(kPortalRoute) + url_encode(c.trial); }

std::string inject_db_base(std::string_view html, const PortalConfig& c) {
  // A JSON string is a JS string; '<' escaped so no "</script>" can end the script early.
  std::string literal = json::Writer().str(portal_base(c)).take();
  std::string safe;
  for (char ch : literal) safe += ch == '<' ? std::string("\\u003c") : std::string(1, ch);
  const std::string script = "<script>window.__JSON_DB_BASE=" + safe + ";</script>";
  // Only the first 64 KiB are searched for the tags: a page's head is near its start.
  const std::string lower = to_lower(html.substr(0, 65536));
  auto after_tag = [&](std::string_view open) -> std::size_t {
    for (auto at = lower.find(open); at != std::string::npos; at = lower.find(open, at + 1)) {
      const char next = at + open.size() < lower.size() ? lower[at + open.size()] : '\0';
      if (next != '>' && next != ' ' && next != '\t' && next != '\n' && next != '\r') continue;  // <header>
      auto close = lower.find('>', at);
      return close == std::string::npos ? std::string::npos : close + 1;
    }
    return std::string::npos;
  };
  std::size_t at = after_tag("<head");
  if (at == std::string::npos) at = after_tag("<html");
  if (at == std::string::npos) {
    std::size_t lead = lower.find_first_not_of(" \t\r\n\xef\xbb\xbf");
    at = lead != std::string::npos && lower.compare(lead, 9, "<!doctype") == 0 ? lower.find('>', lead) : std::string::npos;
    at = at == std::string::npos ? 0 : at + 1;
  }
  std::string out(html.substr(0, at));
  return out + script + std::string(html.substr(at));
}

Response portal_handle(const Request& req, const std::vector<std::string>& parts, const PortalConfig& c,
                       const PortalSend& send) {
  // The source address first: nothing but the trial's browser learns anything here.
  if (req.peer != c.browser)
    return portal_error(403, "mock-web's json-db portal answers only the trial's browser (page scripts)");
  if (parts.empty() || parts[0] != c.trial) return portal_error(404, "no such trial here");
  std::vector<std::string> rest(parts.begin() + 1, parts.end());
  auto route = route_of(rest, req.method);
  if (!route) return portal_error(404, "not a json-db route: state, state/stable, state/hash, state/<table>, query, update");
  if (!route->ok) return method_not_allowed(req, route->allow);
  const bool has_body = req.method == "POST" || req.method == "PATCH";
  // A page the agent serves from elsewhere could make the browser send a form or a simple fetch
  // here; its Origin is its own and no form sends JSON.
  if ((has_body || !req.header_values("Origin").empty()) && !same_origin(req))
    return portal_error(403, "the json-db portal takes requests only from its own origin's pages (Origin must be "
                             "http://<Host>, Host mock-web, tolokaforge-mock-web or an IPv4 address)");
  if (has_body) {
    auto type = single_header(req, "Content-Type");
    if (!type || media_type(*type) != "application/json")
      return portal_error(415, "the json-db portal takes Content-Type: application/json");
    if (req.body.size() > kMaxPortalBody)
      return portal_error(413, "the body is larger than " + human_bytes(kMaxPortalBody));
  }
  LocalRequest out;
  out.method = req.method == "HEAD" ? "GET" : req.method;
  out.target = "/trials/" + url_encode(c.trial);
  for (const auto& p : rest) out.target += "/" + url_encode(p);
  if (rest.size() == 1 && rest[0] == "state")
    if (auto tables = query_param(req.query, "tables")) out.target += "?tables=" + url_encode(*tables);
  out.bearer = route->access == Access::kRead ? c.read_token : c.write_token;
  out.body = has_body ? req.body : "";
  out.host = c.json_db_host;
  out.port = c.json_db_port;
  out.timeout = Millis(10000);
  auto reply = send(out);
  if (!reply) return portal_error(502, "json-db did not answer: " + reply.error().message);
  Response r{reply->status, "application/json", req.method == "HEAD" ? "" : std::move(reply->body), {}};
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

}  // namespace forge::services
