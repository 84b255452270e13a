// mock-web's Tolokaforge portal: /api/app-data (shape, bounds, names), the pack-shared _assets/
// (assets only, confined), window.__JSON_DB_BASE in served pages, and the json-db portal's checks
// (the browser's address only, same-origin JSON writes, the trial's own namespace) before it
// forwards to json-db (a fake here; the docker suite has the real one).
#include <doctest/doctest.h>

#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/json.h"
#include "services/mock_web.h"

using namespace forge;
using namespace forge::services;
namespace fs = std::filesystem;

namespace {

constexpr const char* kBrowser = "10.231.0.7";

struct Site {
  Site() {
    std::string tmpl = (fs::temp_directory_path() / "forgectl-portal-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    write("www/index.html", "<!DOCTYPE html><html><head><title>Shop</title></head><body>hi</body></html>");
    write("www/plain.html", "<p>no head</p>");
    write("www/data.json", "{\"a\":1}");
    write("task/shop/t1/index.html", "<html><body>task</body></html>");
    write("task/shop/_assets/app.css", "body{}");
    write("task/shop/_assets/lib/ui.js", "var ui=1;");
    write("task/shop/_assets/secret.json", "{\"k\":\"SECRET\"}");
    write("task/shop/_assets/grading.yaml", "SECRET");
    write("task/mobile/_data/v1/places.json", "[{\"id\":1,\"name\":\"Cafe\"}]");
    write("task/mobile/_data/v1/notes.json", "{\"n\":[1,2]}");
    write("task/mobile/_data/bad/places.json", "{not json");
    write("outside/places.json", "[\"OUTSIDE\"]");
    fs::create_directories(dir + "/task/mobile/_data/link");
    fs::create_symlink(dir + "/outside/places.json", dir + "/task/mobile/_data/link/places.json");
  }
  ~Site() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories(fs::path(dir + "/" + rel).parent_path());
    std::ofstream(dir + "/" + rel) << text;
  }
  void portal(const std::string& browser = kBrowser) const {
    PortalConfig c;
    c.trial = "shop_t1_0";
    c.browser = browser;
    c.read_token = "agent.read.R";
    c.write_token = "agent.write.W";
    write("portal.json", portal_config_json(c));
  }
  MockWeb web() {
    MockWebOptions o;
    o.tasks_root = dir + "/task";
    o.portal_file = dir + "/portal.json";
    o.portal_send = [this](const LocalRequest& r) -> Result<LocalReply> {
      sent.push_back(r);
      return LocalReply{200, R"({"status":"ok"})"};
    };
    auto w = MockWeb::open(dir + "/www", o);
    REQUIRE(w.has_value());
    return std::move(*w);
  }
  std::string dir;
  std::vector<LocalRequest> sent;
};

Request get(const std::string& target, const std::string& peer = "10.231.0.2") {
  Request r;
  r.method = "GET";
  r.target = target;
  auto q = target.find('?');
  r.path = target.substr(0, q);
  if (q != std::string::npos) r.query = target.substr(q + 1);
  r.peer = peer;
  r.headers = {{"Host", "mock-web:8080"}};
  return r;
}

// A write as the page's fetch sends it: from the browser, same origin, JSON.
Request page_write(const std::string& method, const std::string& target, const std::string& body) {
  Request r = get(target, kBrowser);
  r.method = method;
  r.body = body;
  r.headers = {{"Host", "mock-web:8080"}, {"Origin", "http://mock-web:8080"}, {"Content-Type", "application/json"}};
  return r;
}

}  // namespace

TEST_CASE("mock-web /api/app-data: Tolokaforge's shape, missing files [], bad names 400, no escape") {
  Site s;
  MockWeb w = s.web();
  Response r = w.handle(get("/api/app-data?app=maps&dataset=v1"));
  REQUIRE(r.status == 200);
  auto doc = json::parse(r.body, "app-data");
  REQUIRE(doc.has_value());
  CHECK(json::get_string(*doc, "app") == "maps");
  CHECK(json::get_string(*doc, "dataset") == "v1");
  CHECK((*doc)["places"][0]["name"] == "Cafe");
  CHECK((*doc)["notes"]["n"].Size() == 2);
  for (const char* empty : {"menus", "hours", "reviews", "reservations", "grocery_items", "coffee_menu", "events"})
    CHECK_MESSAGE(((*doc)[empty].IsArray() && (*doc)[empty].Empty()), empty);
  // dataset defaults to v1; no app is null.
  Response d = w.handle(get("/api/app-data"));
  REQUIRE(d.status == 200);
  CHECK(d.body.find("\"app\":null,\"dataset\":\"v1\"") != std::string::npos);
  CHECK(w.handle(get("/api/app-data?dataset=v2")).status == 404);
  CHECK(w.handle(get("/api/app-data?dataset=v2")).body.find("dataset not found: v2") != std::string::npos);
  for (const char* bad : {"..", "%2e%2e", "a%2Fb", "", ".hidden", "v1%00", "solution"})
    CHECK_MESSAGE(w.handle(get(std::string("/api/app-data?dataset=") + bad)).status == 400, bad);
  CHECK(w.handle(get("/api/app-data?app=a%2Fb")).status == 400);
  CHECK(w.handle(get("/api/app-data?dataset=" + std::string(65, 'v'))).status == 400);
  // A link out of the dataset is not followed: the file counts as missing.
  Response link = w.handle(get("/api/app-data?dataset=link"));
  REQUIRE(link.status == 200);
  CHECK(link.body.find("OUTSIDE") == std::string::npos);
  CHECK(w.handle(get("/api/app-data?dataset=bad")).status == 500);
  s.write("task/mobile/_data/big/places.json", "[" + std::string(kMaxAppDataFile, ' ') + "]");
  CHECK(w.handle(get("/api/app-data?dataset=big")).status == 413);
  // Without task packs there is no dataset.
  auto bare = MockWeb::open(s.dir + "/www");
  REQUIRE(bare.has_value());
  CHECK(bare->handle(get("/api/app-data")).status == 404);
}

TEST_CASE("mock-web _assets: pack-shared static assets behind a task's paths, nothing else") {
  Site s;
  MockWeb w = s.web();
  Response css = w.handle(get("/task/shop/t1/app.css"));
  CHECK(css.status == 200);
  CHECK(css.body == "body{}");
  CHECK(w.handle(get("/task/shop/t1/lib/ui.js")).body == "var ui=1;");
  CHECK(w.handle(get("/task/shop/_assets/lib/ui.js")).status == 200);
  // Data types and withheld names are not assets.
  CHECK(w.handle(get("/task/shop/t1/secret.json")).status == 404);
  CHECK(w.handle(get("/task/shop/_assets/secret.json")).status == 404);
  CHECK(w.handle(get("/task/shop/t1/grading.yaml")).status == 404);
  CHECK(w.handle(get("/task/shop/t1/%2e%2e/_assets/app.css")).status == 400);
  // Another category's _assets is not this task's.
  CHECK(w.handle(get("/task/other/t1/app.css")).status == 404);
  // The task's own file wins.
  s.write("task/shop/t1/app.css", "own{}");
  CHECK(w.handle(get("/task/shop/t1/app.css")).body == "own{}");
}

TEST_CASE("mock-web pages get window.__JSON_DB_BASE only when the trial has a portal") {
  Site s;
  MockWeb w = s.web();
  CHECK(w.handle(get("/index.html")).body.find("__JSON_DB_BASE") == std::string::npos);
  CHECK(w.handle(get("/api/json-db/trials/shop_t1_0/state", kBrowser)).status == 404);
  s.portal();
  const std::string script = R"(<script>window.__JSON_DB_BASE="/api/json-db/trials/shop_t1_0";</script>)";
  CHECK(w.handle(get("/index.html")).body ==
        "<!DOCTYPE html><html><head>" + script + "<title>Shop</title></head><body>hi</body></html>");
  CHECK(w.handle(get("/plain.html")).body == script + "<p>no head</p>");
  CHECK(w.handle(get("/task/shop/t1/")).body == "<html>" + script + "<body>task</body></html>");
  CHECK(w.handle(get("/data.json")).body == "{\"a\":1}");
  // A trial id that could end the script is escaped.
  PortalConfig c;
  c.trial = "a</script><b";
  c.browser = kBrowser;
  std::string page = inject_db_base("<head></head>", c);
  CHECK(page.find("</script><b") == std::string::npos);
  CHECK(page.find("/api/json-db/trials/a%3C%2Fscript%3E%3Cb") != std::string::npos);
  CHECK(inject_db_base("<header>x</header>", c).rfind("<script>", 0) == 0);
}

TEST_CASE("json-db portal: the browser's same-origin JSON requests are forwarded with the trial's tokens") {
  Site s;
  s.portal();
  MockWeb w = s.web();
  Response wr = w.handle(page_write("PATCH", "/api/json-db/trials/shop_t1_0/state/orders",
                                    R"({"operations":[{"op":"insert","record":{"id":"o1"}}]})"));
  CHECK(wr.status == 200);
  REQUIRE(s.sent.size() == 1);
  CHECK(s.sent[0].method == "PATCH");
  CHECK(s.sent[0].target == "/trials/shop_t1_0/state/orders");
  CHECK(s.sent[0].bearer == "agent.write.W");
  CHECK(s.sent[0].host == "json-db");
  CHECK(s.sent[0].port == 8000);
  CHECK(s.sent[0].body.find("o1") != std::string::npos);
  CHECK(w.handle(page_write("POST", "/api/json-db/trials/shop_t1_0/update", "{\"ops\":[]}")).status == 200);
  CHECK(s.sent.back().bearer == "agent.write.W");
  CHECK(w.handle(page_write("POST", "/api/json-db/trials/shop_t1_0/query", "{\"jsonpath\":\"$\"}")).status == 200);
  CHECK(s.sent.back().bearer == "agent.read.R");
  // A page's GET (fetch sends no Origin same-origin) reads with the read token.
  CHECK(w.handle(get("/api/json-db/trials/shop_t1_0/state?tables=orders", kBrowser)).status == 200);
  CHECK(s.sent.back().target == "/trials/shop_t1_0/state?tables=orders");
  CHECK(s.sent.back().bearer == "agent.read.R");
  CHECK(s.sent.back().method == "GET");
}

TEST_CASE("json-db portal: anyone but the browser, cross-origin, non-JSON, other trials and routes are refused") {
  Site s;
  s.portal();
  MockWeb w = s.web();
  const std::string patch = R"({"operations":[{"op":"insert","record":{"id":"x"}}]})";
  const std::string path = "/api/json-db/trials/shop_t1_0/state/orders";
  // The runner (any other address), with every header a page would send.
  Request runner = page_write("PATCH", path, patch);
  runner.peer = "10.231.0.2";
  CHECK(w.handle(runner).status == 403);
  Request runner_read = get("/api/json-db/trials/shop_t1_0/state");
  CHECK(w.handle(runner_read).status == 403);
  // A forwarded-for header changes nothing: the TCP peer is the address.
  runner.headers.emplace_back("X-Forwarded-For", kBrowser);
  CHECK(w.handle(runner).status == 403);
  // The browser on a page the agent serves elsewhere: its Origin is its own.
  Request cross = page_write("PATCH", path, patch);
  cross.headers = {{"Host", "mock-web:8080"}, {"Origin", "http://10.231.0.2:9000"}, {"Content-Type", "application/json"}};
  CHECK(w.handle(cross).status == 403);
  // A rebindable name is no origin of mock-web's, even when Origin and Host agree.
  Request rebound = page_write("PATCH", path, patch);
  rebound.headers = {{"Host", "7f000001.0a0a0a0a.rbndr.us:8080"}, {"Origin", "http://7f000001.0a0a0a0a.rbndr.us:8080"},
                     {"Content-Type", "application/json"}};
  CHECK(w.handle(rebound).status == 403);
  Request by_ip = page_write("PATCH", path, patch);
  by_ip.headers = {{"Host", "10.231.0.3:8080"}, {"Origin", "http://10.231.0.3:8080"}, {"Content-Type", "application/json"}};
  CHECK(w.handle(by_ip).status == 200);
  Request by_alias = page_write("PATCH", path, patch);
  by_alias.headers = {{"Host", "tolokaforge-mock-web:8080"}, {"Origin", "http://tolokaforge-mock-web:8080"},
                      {"Content-Type", "application/json"}};
  CHECK(w.handle(by_alias).status == 200);
  s.sent.clear();
  Request no_origin = page_write("PATCH", path, patch);
  no_origin.headers = {{"Host", "mock-web:8080"}, {"Content-Type", "application/json"}};
  CHECK(w.handle(no_origin).status == 403);
  Request null_origin = page_write("POST", "/api/json-db/trials/shop_t1_0/update", "{}");
  null_origin.headers = {{"Host", "mock-web:8080"}, {"Origin", "null"}, {"Content-Type", "application/json"}};
  CHECK(w.handle(null_origin).status == 403);
  Request cross_read = get("/api/json-db/trials/shop_t1_0/state", kBrowser);
  cross_read.headers.emplace_back("Origin", "http://evil:1");
  CHECK(w.handle(cross_read).status == 403);
  // A form post (no JSON) from the page's own origin.
  for (const char* type : {"application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"}) {
    Request form = page_write("PATCH", path, patch);
    form.headers[2].second = type;
    CHECK_MESSAGE(w.handle(form).status == 415, type);
  }
  CHECK(w.handle(page_write("PATCH", path, std::string(kMaxPortalBody + 1, ' '))).status == 413);
  CHECK(w.handle(page_write("PATCH", "/api/json-db/trials/other_0/state/orders", patch)).status == 404);
  CHECK(w.handle(page_write("POST", "/api/json-db/trials/shop_t1_0/init", "{}")).status == 404);
  CHECK(w.handle(page_write("POST", "/api/json-db/trials/shop_t1_0/reset", "{}")).status == 404);
  CHECK(w.handle(page_write("DELETE", "/api/json-db/trials/shop_t1_0/state/orders", "")).status == 405);
  CHECK(w.handle(page_write("OPTIONS", path, "")).status == 405);  // no CORS preflight ever succeeds
  CHECK(w.handle(page_write("POST", "/api/json-db/trials/shop_t1_0/state", patch)).status == 405);
  CHECK(s.sent.empty());
  // Elsewhere mock-web stays read-only.
  CHECK(w.handle(page_write("POST", "/index.html", "{}")).status == 405);
}

TEST_CASE("json-db portal over real HTTP: the client's address is the TCP peer's") {
  Site s;
  MockWeb w = s.web();
  ServerOptions so;
  so.host = "127.0.0.1";
  auto server = HttpServer::start(so, w.handler());
  REQUIRE(server.has_value());
  auto send = [&]() {
    Poco::Net::HTTPClientSession session("127.0.0.1", (*server)->port());
    Poco::Net::HTTPRequest req("PATCH", "/api/json-db/trials/shop_t1_0/state/orders", "HTTP/1.1");
    req.setHost("127.0.0.1", (*server)->port());
    req.set("Origin", "http://127.0.0.1:" + std::to_string((*server)->port()));
    req.setContentType("application/json");
    const std::string body = R"({"operations":[]})";
    req.setContentLength(static_cast<std::streamsize>(body.size()));
    session.sendRequest(req) << body;
    Poco::Net::HTTPResponse resp;
    session.receiveResponse(resp);
    return static_cast<int>(resp.getStatus());
  };
  s.portal("10.231.0.7");
  CHECK(send() == 403);
  s.portal("127.0.0.1");
  CHECK(send() == 200);
  CHECK(s.sent.size() == 1);
  // A CORS preflight has no body and no Content-Length: it is answered (405) at once, not after the
  // server waits for a body until the browser gives up, and the connection stays usable.
  Poco::Net::HTTPClientSession session("127.0.0.1", (*server)->port());
  session.setTimeout(Poco::Timespan(3, 0));
  for (int i = 0; i < 2; ++i) {
    Poco::Net::HTTPRequest pre("OPTIONS", "/api/json-db/trials/shop_t1_0/state/orders", "HTTP/1.1");
    pre.set("Origin", "http://evil:1");
    pre.set("Access-Control-Request-Method", "PATCH");
    session.sendRequest(pre);
    Poco::Net::HTTPResponse resp;
    std::istream& in = session.receiveResponse(resp);
    std::string ignored(std::istreambuf_iterator<char>(in), {});
    CHECK(resp.getStatus() == 405);
  }
}

TEST_CASE("portal file: written and read back; bad ones refused naming the key") {
  PortalConfig c;
  c.trial = "t_0";
  c.browser = "10.0.0.9";
  c.read_token = "r";
  c.write_token = "w";
  auto back = parse_portal_config(portal_config_json(c));
  REQUIRE(back.has_value());
  CHECK(back->trial == "t_0");
  CHECK(back->browser == "10.0.0.9");
  CHECK(back->json_db_host == "json-db");
  CHECK(back->json_db_port == 8000);
  CHECK(back->write_token == "w");
  auto bad = parse_portal_config(R"({"trial":"t","browser":1})");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("'browser'") != std::string::npos);
  CHECK_FALSE(parse_portal_config(std::string(kMaxPortalFileBytes + 1, ' ')).has_value());
}
