// mock-web over real HTTP on 127.0.0.1: serves www/ (also at Tolokaforge's /task/<cat>/<id>/
// paths), a task pack's own pages under --tasks-root, and nothing else of the task — not by '..',
// encoded or not, not by absolute paths, not through symlinks, not grading files placed among the
// pages, not file types that are not pages.
#include <doctest/doctest.h>

#include <Poco/Exception.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "services/mock_web.h"

using namespace forge;
using namespace forge::services;
namespace fs = std::filesystem;

namespace {

struct HttpReply {
  int status = 0;
  std::string body, content_type;
};

// One request to 127.0.0.1:port; `target` is sent exactly as given (Poco does not normalise it).
HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& target, int pad_headers = 0) {
  HttpReply out;
  try {
    Poco::Net::HTTPClientSession session("127.0.0.1", port);
    session.setTimeout(Poco::Timespan(20, 0));
    Poco::Net::HTTPRequest req(method, target, Poco::Net::HTTPMessage::HTTP_1_1);
    for (int i = 0; i < pad_headers; ++i) req.add("X-Pad-" + std::to_string(i), "1");
    session.sendRequest(req);
    Poco::Net::HTTPResponse resp;
    std::istream& in = session.receiveResponse(resp);
    out.status = resp.getStatus();
    out.content_type = resp.getContentType();
    out.body.assign(std::istreambuf_iterator<char>(in), {});
  } catch (const Poco::Exception& e) {
    FAIL_CHECK(method << " " << target << ": " << e.displayText());
  }
  return out;
}

constexpr const char* kSecret = "SECRET-ANSWER-42";

// A task directory: grading material around (and a decoy inside) www/.
struct Task {
  Task() {
    std::string tmpl = (fs::temp_directory_path() / "forgectl-mockweb-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    write("task.yaml", std::string("task_id: t\n# ") + kSecret + "\n");
    write("grading.yaml", std::string("expected: ") + kSecret + "\n");
    write("tests/test.sh", std::string("echo ") + kSecret + "\n");
    write("solution.sh", kSecret);
    write("notes.txt", kSecret);  // beside www/, under no withheld name
    write("www/index.html", "<h1>hello www</h1>");
    write("www/about/index.html", "about page");
    write("www/style.css", "body{}");
    write("www/data.json", "{}");
    write("www/grading.yaml", kSecret);  // a task author's mistake: still never served
    write("www/.env", kSecret);
    write("www/solution_notes.txt", kSecret);
    write("www/tests/answer.txt", kSecret);
    fs::create_symlink("../grading.yaml", fs::path(dir) / "www/link-out");
    fs::create_symlink("..", fs::path(dir) / "www/parent");
    fs::create_symlink("index.html", fs::path(dir) / "www/link-in");
    write("www/page.html", "page one");
    write("www/sub/ok.html", "ok");
    write("www/noindex/a.html", "a");
    // Withheld by name inside www/, or not a page type: never served.
    write("www/solution/answer.html", kSecret);
    write("www/fixtures/db.json", kSecret);
    write("www/sub/task.yaml", kSecret);
    write("www/sub/grading.yml", kSecret);
    write("www/app.py", kSecret);
    write("www/README.md", kSecret);
    write("www/config.yaml", kSecret);
    write("www/noext", kSecret);
    write("www/.git/config.json", kSecret);
    write("secret.html", kSecret);  // beside www/, with a served type
    fs::create_symlink("/etc/passwd", fs::path(dir) / "www/abs-out.txt");
    fs::create_symlink(fs::path(dir) / "secret.html", fs::path(dir) / "www/abs-out.html");
    fs::create_symlink("solution/answer.html", fs::path(dir) / "www/alias.html");
  }
  ~Task() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    fs::path p = fs::path(dir) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string dir;
};

struct Site {
  explicit Site(const Task& task) : Site(task.dir + "/www", "") {}
  // mock-web on `www`, with `tasks_root` as its --tasks-root (empty: none).
  Site(const std::string& www, const std::string& tasks_root) {
    MockWebOptions wo;
    wo.tasks_root = tasks_root;
    auto w = MockWeb::open(www, wo);
    REQUIRE_MESSAGE(w.has_value(), (w ? "" : w.error().what()));
    web = std::make_unique<MockWeb>(std::move(*w));
    ServerOptions o;
    o.host = "127.0.0.1";
    auto s = HttpServer::start(o, web->handler());
    REQUIRE_MESSAGE(s.has_value(), (s ? "" : s.error().what()));
    server = std::move(*s);
  }
  HttpReply get(const std::string& target, const std::string& method = "GET", int pad_headers = 0) {
    HttpReply r = http_request(server->port(), method, target, pad_headers);
    INFO(method << " " << target << " -> " << r.status << " " << r.body);
    CHECK(r.body.find(kSecret) == std::string::npos);  // whatever happens, never the answer
    return r;
  }
  std::unique_ptr<MockWeb> web;
  std::unique_ptr<HttpServer> server;
};

}  // namespace

TEST_CASE("services mock-web: serves files under www/ with their types") {
  Task task;
  Site site(task);
  auto index = site.get("/");
  CHECK(index.status == 200);
  CHECK(index.body == "<h1>hello www</h1>");
  CHECK(index.content_type == "text/html; charset=utf-8");
  CHECK(site.get("/index.html").body == "<h1>hello www</h1>");
  CHECK(site.get("/about/").body == "about page");
  CHECK(site.get("/about").body == "about page");
  CHECK(site.get("/style.css").content_type == "text/css; charset=utf-8");
  CHECK(site.get("/data.json?x=1").content_type == "application/json");
  CHECK(site.get("/./about/./index.html").body == "about page");
  CHECK(site.get("/link-in").body == "<h1>hello www</h1>");  // a symlink that stays inside
  auto head = site.get("/index.html", "HEAD");
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  auto health = site.get("/health");
  CHECK(health.status == 200);
  CHECK(health.body == R"({"status":"healthy","service":"mock-web"})");
  CHECK(site.get("/", "POST").status == 405);
  auto missing = site.get("/nope.html");
  CHECK(missing.status == 404);
  CHECK(missing.body.find(task.dir) == std::string::npos);  // Tolokaforge's 404 printed its roots
}

TEST_CASE("services mock-web: refuses '..' in every spelling") {
  Task task;
  Site site(task);
  for (const char* t : {"/../grading.yaml", "/%2e%2e/grading.yaml", "/%2E%2E/grading.yaml", "/%2e%2e%2fgrading.yaml",
                        "/..%2fgrading.yaml", "/..%2Fgrading.yaml", "/about/../../grading.yaml", "/.%2e/task.yaml",
                        "/about/..%5c..%5cgrading.yaml", "http://127.0.0.1/../grading.yaml",
                        "HTTP://mock-web:8080/%2e%2e/tests/test.sh"}) {
    CAPTURE(t);
    CHECK(site.get(t).status == 400);
  }
  CHECK(site.get("/%zz").status == 400);
  CHECK(site.get("/a%00b").status == 400);
  CHECK(site.get("grading.yaml").status == 400);  // not origin-form
}

TEST_CASE("services mock-web: absolute paths stay under the root") {
  Task task;
  Site site(task);
  CHECK(site.get(task.dir + "/grading.yaml").status == 404);
  CHECK(site.get("/" + task.dir + "/grading.yaml").status == 404);
  CHECK(site.get("//etc/passwd").status == 404);
  CHECK(site.get("http://mock-web" + task.dir + "/task.yaml").status == 404);
}

TEST_CASE("services mock-web: symlinks out of the root are refused") {
  Task task;
  Site site(task);
  CHECK(site.get("/link-out").status == 403);
  CHECK(site.get("/parent/notes.txt").status == 403);
  // A link is judged by where it lands: back inside the root is fine.
  CHECK(site.get("/parent/www/index.html").status == 200);
}

TEST_CASE("services mock-web: grading material is withheld by name, even inside www/") {
  Task task;
  Site site(task);
  for (const char* t : {"/grading.yaml", "/GRADING.YAML", "/%67rading.yaml", "/.env", "/solution_notes.txt",
                        "/tests/answer.txt", "/tests/", "/about/../grading.yaml"}) {
    CAPTURE(t);
    int status = site.get(t).status;
    CHECK((status == 404 || status == 400));
  }
  CHECK(is_withheld_name("Task.yml"));
  CHECK(is_withheld_name("checks.py"));
  CHECK(is_withheld_name("expected_state.json"));
  // The red team's names (mockweb-leak/): expected* with any separator, *solution*, reference.
  for (const char* n :
       {"expected-output.json", "Expected_out.json", "expected.json", "EXPECTEDoutput.txt", "reference_solution.txt",
        "my-solution.html", "Solutions", "reference.txt", "reference_answer.json", "Reference-Output"}) {
    CAPTURE(n);
    CHECK(is_withheld_name(n));
  }
  for (const char* n : {"references.html", "referenced.css", "unexpected.html", "answers.html", "resolute.js"}) {
    CAPTURE(n);
    CHECK_FALSE(is_withheld_name(n));
  }
  // The rule a name meets, for validate's warning about a withheld page.
  CHECK(withheld_name_rule("Expected.html") == "its name starts with 'expected'");
  CHECK(withheld_name_rule("SOLUTION.HTML") == "its name contains 'solution'");
  CHECK(withheld_name_rule("reference-output") == "its name starts with the word 'reference'");
  CHECK(withheld_name_rule(".hidden.html") == "it is a dot file");
  CHECK(withheld_name_rule("Grading.yml") == "it is named grading.yml");
  CHECK_FALSE(withheld_name_rule("references.html").has_value());
  // The task directory itself gives pages and static assets only; data types come from www/.
  for (const char* n : {"page.html", "a.HTM", "s.css", "m.mjs", "x.js", "i.png", "i.svg", "f.woff2", "v.mp4"}) {
    CAPTURE(n);
    CHECK(is_page_asset_type(n));
  }
  for (const char* n : {"answers.json", "notes.txt", "t.csv", "f.xml", "m.pdf", "w.wasm", "server.py", "x"}) {
    CAPTURE(n);
    CHECK_FALSE(is_page_asset_type(n));
  }
  CHECK_FALSE(is_withheld_name("index.html"));
  CHECK_FALSE(is_withheld_name("testsuite.html"));
}

TEST_CASE("services mock-web: a task directory cannot be the root") {
  Task task;
  auto r = MockWeb::open(task.dir);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::kInvalid);
  CHECK(r.error().message.find("refusing to serve a task directory; point --root at its www/") != std::string::npos);
  CHECK(MockWeb::open(task.dir + "/nowhere").error().code == Errc::kNotFound);
  CHECK(MockWeb::open(task.dir + "/www/index.html").error().code == Errc::kInvalid);
}

TEST_CASE("services mock-web: serves a task's pages at Tolokaforge's /task/<category>/<task_id>/ paths") {
  Task task;
  Site site(task);
  CHECK(site.get("/task/web/t1/page.html").body == "page one");
  CHECK(site.get("/task/web/t1/page.html").content_type == "text/html; charset=utf-8");
  CHECK(site.get("/page.html").body == "page one");
  CHECK(site.get("/task/web/t1/").body == "<h1>hello www</h1>");
  CHECK(site.get("/task/web/t1").body == "<h1>hello www</h1>");
  CHECK(site.get("/task/any-category/any_id/about/").body == "about page");
  CHECK(site.get("/task/c/i/sub/ok.html").body == "ok");
  CHECK(site.get("/").body == "<h1>hello www</h1>");
  CHECK(site.get("/task/c/i/nope.html").status == 404);
}

TEST_CASE("services mock-web: grading material and task files are refused on every route") {
  Task task;
  Site site(task);
  for (std::string prefix : {"", "/task/c/i"}) {
    for (const char* p :
         {"/task.yaml", "/grading.yaml", "/tests/answer.txt", "/solution/answer.html", "/fixtures/db.json", "/.env",
          "/sub/task.yaml", "/sub/grading.yml", "/solution/", "/.git/config.json", "/alias.html"}) {
      std::string t = prefix + p;
      CAPTURE(t);
      auto r = site.get(t);
      CHECK(r.status == 404);
      CHECK(r.body == R"({"message":"not found"})");  // names neither the request nor a directory
    }
    for (const char* p : {"/../grading.yaml", "/%2e%2e/grading.yaml", "/%2E%2E%2Fsecret.html", "/..%2fsecret.html"}) {
      std::string t = prefix + p;
      CAPTURE(t);
      CHECK(site.get(t).status == 400);
    }
    CHECK(site.get(prefix + "/link-out").status == 403);
    CHECK(site.get(prefix + "/abs-out.html").status == 403);
    CHECK(site.get(prefix + "/abs-out.txt").status == 403);
  }
  CHECK(site.get("/task/c/i/../../../grading.yaml").status == 400);
  CHECK(site.get("/task/tests/i/page.html").status == 404);  // withheld names are refused anywhere
}

TEST_CASE("services mock-web: only page and asset types are served, and directories are never listed") {
  Task task;
  Site site(task);
  for (const char* t : {"/app.py", "/README.md", "/config.yaml", "/noext"}) {
    CAPTURE(t);
    CHECK(site.get(t).status == 404);
  }
  CHECK(site.get("/noindex/a.html").body == "a");
  CHECK(site.get("/noindex/").status == 404);
  CHECK(site.get("/noindex").status == 404);
  CHECK(site.get("/sub/").status == 404);
}

TEST_CASE("services mock-web: oversized requests get 414 and 431") {
  Task task;
  Site site(task);
  auto r = site.get("/page.html?q=" + std::string(kMaxTargetBytes, 'q'));
  CHECK(r.status == 414);
  CHECK(r.content_type == "application/json");
  CHECK(site.get("/page.html", "GET", 80).status == 431);
  CHECK(site.get("/page.html").status == 200);
}

namespace {

// Tolokaforge's task packs as a trial lays them out in mock-web: www/ beside tasks/<category>/
// <task_id>/ (which, in a trial, holds only page files; here grading material is planted too).
struct Packs {
  Packs() {
    std::string tmpl = (fs::temp_directory_path() / "forgectl-mockweb-packs-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    write("www/index.html", "www home");
    write("www/page.html", "www page");
    write("tasks/web/shop_1/index.html", "task home");
    write("tasks/web/shop_1/home.html", "task page");
    write("tasks/web/shop_1/page.html", "task's own page.html");
    write("tasks/web/shop_1/sub/detail.html", "detail");
    write("tasks/web/shop_1/mock_web/extra.html", "mock_web page");
    write("tasks/web/shop_1/data.json", "{\"sku\":1}");
    write("tasks/web/shop_1/mock_web/stock.json", "{\"left\":2}");
    write("tasks/web/shop_1/answers.json", kSecret);   // a data type beside the pages: never served
    write("tasks/web/shop_1/www/page.html", kSecret);  // not this: /task/…/www/ is the www/ root
    for (const char* f : {"task.yaml", "grading.yaml", "grading.yml", "checks.py", "tests/test.html",
                          "fixtures/db.json", "solution.html", "solution/answer.html", "expected_state.json", ".env",
                          "notes.md", "app.py", "mock_web/grading.yaml", "mock_web/solution.html", "sub/.hidden.html"})
      write(std::string("tasks/web/shop_1/") + f, kSecret);
    write("tasks/web/other_task/secret.html", kSecret);
    fs::create_symlink("../other_task/secret.html", fs::path(dir) / "tasks/web/shop_1/sideways.html");
    fs::create_symlink("grading.yaml", fs::path(dir) / "tasks/web/shop_1/alias.html");
    write("tasks/tests/t9/p.html", "category named tests");
  }
  ~Packs() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    fs::path p = fs::path(dir) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string dir;
};

}  // namespace

TEST_CASE("services mock-web, task packs: /task/<category>/<task_id>/ serves that task's own pages, others 404") {
  Packs p;
  Site site(p.dir + "/www", p.dir + "/tasks");
  CHECK(site.get("/task/web/shop_1/").body == "task home");
  CHECK(site.get("/task/web/shop_1").body == "task home");
  CHECK(site.get("/task/web/shop_1/home.html").body == "task page");
  CHECK(site.get("/task/web/shop_1/sub/detail.html").body == "detail");
  CHECK(site.get("/task/web/shop_1/mock_web/extra.html").body == "mock_web page");
  // From the task directory itself only pages and static assets; data types from mock_web/ (and www/).
  CHECK(site.get("/task/web/shop_1/data.json").status == 404);
  CHECK(site.get("/task/web/shop_1/answers.json").status == 404);
  CHECK(site.get("/task/web/shop_1/mock_web/stock.json").content_type == "application/json");
  CHECK(site.get("/task/web/shop_1/www/page.html").body == "www page");  // the task's www/, copied once
  CHECK(site.get("/task/web/shop_1/www/").body == "www home");
  CHECK(site.get("/task/tests/t9/p.html").body == "category named tests");  // a category names a directory
  // Another category or id than the task's: nothing, not the task's pages under a wrong name.
  for (const char* t : {"/task/shop/shop_1/home.html", "/task/web/shop_2/home.html", "/task/web/shop_1/nope.html",
                        "/task/web/", "/task/WEB/shop_1/home.html"}) {
    CAPTURE(t);
    CHECK(site.get(t).status == 404);
  }
  // Without --tasks-root the old reading holds: <path> under www/, whatever the category and id.
  Site plain(p.dir + "/www", "");
  CHECK(plain.get("/task/any/thing/page.html").body == "www page");
}

TEST_CASE("services mock-web, task packs: /<name>.html is www/'s, then the task directory's, then its mock_web/'s") {
  Packs p;
  Site site(p.dir + "/www", p.dir + "/tasks");
  CHECK(site.get("/page.html").body == "www page");  // www/ first: a www/ task reads as before
  CHECK(site.get("/index.html").body == "www home");
  CHECK(site.get("/").body == "www home");
  CHECK(site.get("/home.html").body == "task page");
  CHECK(site.get("/extra.html").body == "mock_web page");
  CHECK(site.get("/p.html").body == "category named tests");
  CHECK(site.get("/nope.html").status == 404);
  CHECK(site.get("/detail.html").status == 404);  // one name, not a search of every subdirectory
  CHECK(site.get("/data.json").status == 404);    // /<path> other than *.html is www/'s alone
}

TEST_CASE("services mock-web, task packs: grading material and links out are refused on every route") {
  Packs p;
  Site site(p.dir + "/www", p.dir + "/tasks");
  for (std::string prefix : {"/task/web/shop_1", "/task/web/shop_1/mock_web", ""}) {
    for (const char* f : {"/task.yaml", "/grading.yaml", "/grading.yml", "/checks.py", "/tests/test.html", "/tests/",
                          "/fixtures/db.json", "/solution.html", "/solution/answer.html", "/expected_state.json",
                          "/.env", "/notes.md", "/app.py", "/sub/.hidden.html", "/alias.html", "/Grading.yaml"}) {
      std::string t = prefix + f;
      CAPTURE(t);
      auto r = site.get(t);
      CHECK(r.status == 404);
      CHECK(r.body == R"({"message":"not found"})");
    }
  }
  CHECK(site.get("/task/web/shop_1/sideways.html").status == 403);  // into another task's directory
  CHECK(site.get("/sideways.html").status == 403);
  for (const char* t : {"/task/web/shop_1/../other_task/secret.html", "/task/web/%2e%2e/web/other_task/secret.html",
                        "/task/web/shop_1/..%2fother_task%2fsecret.html", "/task/..%2f..%2f/x/grading.yaml"}) {
    CAPTURE(t);
    CHECK(site.get(t).status == 400);
  }
}

TEST_CASE("services mock-web, task packs: the tasks root may appear after start, and may not be a task directory") {
  Packs p;
  Site site(p.dir + "/www", p.dir + "/later");
  CHECK(site.get("/task/web/shop_1/home.html").status == 404);
  CHECK(site.get("/home.html").status == 404);
  fs::create_directories(p.dir + "/later/web");
  fs::rename(p.dir + "/tasks/web/shop_1", p.dir + "/later/web/shop_1");  // what the trial's copy does
  CHECK(site.get("/task/web/shop_1/home.html").body == "task page");
  CHECK(site.get("/home.html").body == "task page");

  MockWebOptions o;
  o.tasks_root = p.dir + "/later/web/shop_1";  // holds task.yaml
  auto r = MockWeb::open(p.dir + "/www", o);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("refusing to serve a task directory; point --tasks-root") != std::string::npos);
  o.tasks_root = p.dir + "/www/index.html";
  CHECK(MockWeb::open(p.dir + "/www", o).error().code == Errc::kInvalid);
}

TEST_CASE("services mock-web: /search finds the served pages holding every query word, and nothing withheld") {
  Task task;
  task.write("www/shop.html",
             "<html><head><title>Red &amp; Blue Shop</title><script>var zebra = 'red';</script></head>"
             "<body><p>Red shoes, red hats.</p><style>.zebra{}</style></body></html>");
  task.write("www/sub/hats.html", "<title>Hats</title><p>Red hats only.</p>");
  Site site(task);
  auto found = site.get("/search?q=red+hats");
  REQUIRE(found.status == 200);
  CHECK(found.content_type == "text/html; charset=utf-8");
  // Both pages hold both words; shop.html more often (red ×3 with its title), so it ranks first.
  const auto shop = found.body.find("Red &amp; Blue Shop</a>");
  const auto hats = found.body.find("&#47;sub&#47;hats.html");
  CHECK(shop != std::string::npos);
  CHECK(hats != std::string::npos);
  CHECK(shop < hats);
  CHECK(found.body.find("Red shoes, red hats.") != std::string::npos);  // the snippet, entities decoded
  CHECK(found.body.find("value=\"red hats\"") != std::string::npos);

  CHECK(site.get("/search?q=zebra").body.find("No pages match.") !=
        std::string::npos);  // script and style are not text
  CHECK(site.get("/search?q=hello%20www").body.find("&#47;index.html") != std::string::npos);
  // The withheld pages, symlinks and files beside www/ all hold the secret: none is a result.
  auto secret = site.get("/search?q=secret+answer");
  CHECK(secret.status == 200);
  CHECK(secret.body.find("No pages match.") != std::string::npos);
  auto form = site.get("/search");
  CHECK(form.status == 200);
  CHECK(form.body.find("<form") != std::string::npos);
  CHECK(form.body.find("results") == std::string::npos);
  CHECK(site.get("/search?q=" + std::string(300, 'a')).status == 400);
  CHECK(site.get("/search?q=%ZZ").status == 400);
}

TEST_CASE("services mock-web: a task's own /search page wins over the built-in one") {
  Task task;
  task.write("www/search/index.html", "<p>our own search</p>");
  Site site(task);
  CHECK(site.get("/search?q=x").body == "<p>our own search</p>");
}
