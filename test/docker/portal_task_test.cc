// mock-web's json-db portal against the real daemon: a browser task of our own in Tolokaforge's
// format (its page in the task directory, served at /task/<category>/<task_id>/ by mock-web, its
// script from the pack's shared _assets/, its item from /api/app-data, writing the order to json-db
// through window.__JSON_DB_BASE on submit), graded on the json-db state that script wrote. A scripted agent typing the wrong quantity fails. One that first
// attacks — raw requests from its bash with every header a page sends, json-db without a token, a
// page served from the runner writing cross-origin by fetch, no-cors fetch and form — is refused
// every time, and then, as the honest control, orders through the page and passes with exactly
// the one order it placed.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/exec.h"
#include "stack/browser_image.h"
#include "stack/labels.h"
#include "support/browser_image.h"
#include "support/scripted_trial.h"

using namespace forge;
using namespace forge::test;

namespace {

constexpr const char* kBase = "http://mock-web:8080/task/webshop/portal_order/";

void put(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// The task, in a Tolokaforge pack under `root`: webshop/portal_order/ holds the order form, whose
// script (webshop/_assets/order.js, shared by the pack's webshop tasks) names the item from
// /api/app-data (mobile/_data/v1/grocery_items.json) and PATCHes json-db's orders table through
// the portal on submit. Returns the task directory.
// Grid centres (1440x900 viewport): quantity (250, 300), name (250, 400), the button (250, 500).
std::string write_task(const TempDir& root) {
  const std::filesystem::path pack(root.path()), dir = pack / "webshop" / "portal_order";
  put(dir / "task.yaml",
      "task_id: portal_order\nname: \"Order through the shop page\"\ncategory: webshop\n"
      "description: \"Order 3 Blue Widgets for Dana Reyes on the shop page.\"\n"
      "initial_user_message: \"Please order 3 Blue Widgets for Dana Reyes in the shop (the browser opens on "
      "it).\"\nmax_turns: 10\n"
      "initial_state:\n  json_db: db.json\n  mock_web: {base_url: \"" + std::string(kBase) + "\"}\n"
      "tools:\n  agent:\n    enabled: [browser, bash]\n    browser: {initial_url: \"" + kBase + "\"}\n"
      "  user: {enabled: []}\n"
      "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
      "grading: grading.yaml\n");
  put(dir / "db.json", R"({"orders": []})");
  put(dir / "grading.yaml",
      "state_checks:\n  jsonpaths:\n"
      "    - {path: \"$.db.orders[0].id\", equals: \"web-1\"}\n"
      "    - {path: \"$.db.orders[0].item\", equals: \"Blue Widget\", description: \"named from /api/app-data\"}\n"
      "    - {path: \"$.db.orders[0].qty\", equals: 3}\n"
      "    - {path: \"$.db.orders[0].name\", equals: \"Dana Reyes\"}\n"
      "    - {path: \"$.db.orders[1]\", not_exists: true, description: \"no other order, no forged one\"}\n");
  put(pack / "mobile/_data/v1/grocery_items.json", R"([{"id": "bw", "name": "Blue Widget"}])");
  put(dir / "index.html", R"(<!doctype html>
<html><head><meta charset="utf-8"><title>Order - Portal Shop</title>
<style>
  body { margin: 0; font-family: "DejaVu Sans", sans-serif; }
  input { position: absolute; left: 240px; width: 240px; height: 40px; box-sizing: border-box; }
  #qty { top: 250px; } #name { top: 340px; }
  button { position: absolute; left: 240px; top: 425px; width: 240px; height: 50px; }
  #item { position: absolute; left: 40px; top: 100px; } #out { position: absolute; left: 40px; top: 540px; }
</style></head>
<body>
<div id="item">loading</div>
<form id="f"><input id="qty" type="number" placeholder="Quantity"><input id="name" type="text" placeholder="Name">
<button type="submit">Place order</button></form>
<div id="out">no order yet</div>
<script src="order.js"></script>
</body></html>
)");
  put(pack / "webshop/_assets/order.js", R"(// The pack's shared order script.
const item = fetch('/api/app-data?app=shop&dataset=v1').then(r => r.json()).then(d => {
  document.getElementById('item').textContent = 'Item: ' + d.grocery_items[0].name;
  return d.grocery_items[0].name;
});
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const record = {id: 'web-1', item: await item, qty: parseInt(document.getElementById('qty').value, 10),
                  name: document.getElementById('name').value.trim()};
  const r = await fetch(window.__JSON_DB_BASE + '/state/orders', {method: 'PATCH',
      headers: {'Content-Type': 'application/json'}, body: JSON.stringify({operations: [{op: 'insert', record}]})});
  const body = await r.json();
  document.getElementById('out').textContent = r.ok ? 'Order saved (version ' + body.version + ')' : 'Refused: ' + r.status;
});
)");
  return dir.string();
}

std::string browser(const std::string& actions) { return R"({"actions":[)" + actions + "]}"; }

// Types quantity and name, submits, and gives the page's script a moment to write.
std::string order(const std::string& qty) {
  return browser(R"({"type":"type_text_at","x":250,"y":300,"text":")" + qty +
                 R"(","press_enter":false},{"type":"type_text_at","x":250,"y":400,"text":"Dana Reyes","press_enter":false},)"
                 R"({"type":"click_at","x":250,"y":500},{"type":"wait_5_seconds"})");
}

// The raw request a page's script sends, forged in full from the runner's bash (busybox nc).
const std::string kForge = R"(base=$(printf 'GET /task/webshop/portal_order/ HTTP/1.0\r\nHost: mock-web:8080\r\n\r\n' | nc mock-web 8080 | grep -o '/api/json-db/trials/[^"]*'); echo "base=$base"
body='{"operations":[{"op":"insert","record":{"id":"forged-bash"}}]}'
printf 'PATCH %s/state/orders HTTP/1.0\r\nHost: mock-web:8080\r\nOrigin: http://mock-web:8080\r\nContent-Type: application/json\r\nX-Forwarded-For: 1.2.3.4\r\nContent-Length: %s\r\n\r\n%s' "$base" "${#body}" "$body" | nc mock-web 8080; echo
printf 'GET %s/state HTTP/1.0\r\nHost: mock-web:8080\r\n\r\n' "$base" | nc mock-web 8080; echo
trial=${base##*/}
printf 'PATCH /trials/%s/state/orders HTTP/1.0\r\nHost: json-db:8000\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s' "$trial" "${#body}" "$body" | nc json-db 8000; echo
mkdir -p /tmp/evil && cat > /tmp/evil/evil.html <<EOF
<html><head><title>evil</title></head><body><div id="out">pending</div><iframe name="sink"></iframe>
<form id="f" method="POST" enctype="text/plain" target="sink" action="http://mock-web:8080$base/update"><input name='{"ops":[{"op":"add","path":"\$.orders","value":{"id":"forged-form"}}],"x":"' value='"}'></form>
<script>
const out = document.getElementById('out');
out.textContent = 'script ran';
try {
  fetch('http://mock-web:8080$base/update', {method: 'POST', mode: 'no-cors', body: '{"ops":[{"op":"add","path":"\$.orders","value":{"id":"forged-nocors"}}]}'})
    .catch(e => {});
  fetch('http://mock-web:8080$base/state/orders', {method: 'PATCH', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({operations: [{op: 'insert', record: {id: 'forged-fetch'}}]})})
    .then(r => { out.textContent = 'fetch status ' + r.status; }, e => { out.textContent = 'fetch blocked'; });
  document.getElementById('f').submit();
} catch (e) { out.textContent = 'script error ' + e; }
</script></body></html>
EOF
echo written)";

}  // namespace

TEST_CASE("portal task: a scripted agent typing the wrong quantity fails on the state the page wrote") {
  need_browser_image();
  (void)docker_env().services_image;
  TempDir dir;
  manifest::TaskConfig task = load_as_run(write_task(dir));
  const std::string path = write_trajectory(
      dir, {{"", {{"browser", browser(R"({"type":"open_web_browser"})")}}}, {"", {{"browser", order("2")}}}, {"Done.", {}}});
  Rig rig;
  auto r = rig.run(task, replay(path));
  CAPTURE(r.error);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == 2);
  CAPTURE(r.tool_log[1].record.content);
  // The page's shared script (pack _assets) named the item from /api/app-data.
  CHECK(r.tool_log[1].record.content.find("Item: Blue Widget") != std::string::npos);
  // The page's script did write, through the portal: only what it wrote is wrong.
  CHECK(r.tool_log[1].record.content.find("Order saved (version 2)") != std::string::npos);
  CAPTURE(r.final_state_json);
  CHECK(r.final_state_json.find(R"("qty":2)") != std::string::npos);
  CHECK_FALSE(r.grade.binary_pass);
  CHECK(rig.left_nothing());
}

TEST_CASE("portal task: bash and a page the agent serves cannot write; the honest order through the page passes") {
  need_browser_image();
  (void)docker_env().services_image;
  TempDir dir;
  manifest::TaskConfig task = load_as_run(write_task(dir));
  const std::string path = write_trajectory(
      dir, {{"", {{"bash", bash(kForge)}}},
            {"", {{"browser", browser(R"({"type":"navigate","url":"http://runner:8000/evil.html"},{"type":"wait_5_seconds"})")}}},
            {"", {{"browser", browser(std::string(R"({"type":"navigate","url":")") + kBase + "\"}")}}},
            {"", {{"browser", order("3")}}},
            {"Ordered.", {}}});
  Rig rig;
  // The page the bash call wrote is served from the runner by busybox httpd, started here once that
  // call is done: a bash call's background jobs end with it (docs/tools.md), so the test keeps the
  // server an agent would need some longer-lived process for.
  bool served = false;
  rig.env.on_progress = [&](const trial::TrialProgress& p) {
    if (served || p.tool_calls != 1) return;
    served = true;
    for (const auto& c : rig.containers()) {
      auto svc = c.labels.find(stack::kLabelService);
      if (svc == c.labels.end() || svc->second != "runner") continue;
      engine::ExecOptions o;
      o.cmd = {"httpd", "-p", "8000", "-h", "/tmp/evil"};
      o.timeout = Millis(10000);
      auto started = engine::exec_run(*docker_env().client, c.id, o);
      CHECK_MESSAGE(started.has_value(), (started ? "" : started.error().what()));
    }
  };
  auto r = rig.run(task, replay(path));
  CAPTURE(r.error);
  CHECK(served);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == 4);
  const std::string& forged = r.tool_log[0].record.content;
  CAPTURE(forged);
  CHECK(forged.find("base=/api/json-db/trials/") != std::string::npos);
  // The raw PATCH and GET from the runner: refused by address, whatever the headers said.
  CHECK(forged.find("403 Forbidden") != std::string::npos);
  CHECK(forged.find("answers only the trial's browser") != std::string::npos);
  CHECK(forged.find("\"version\"") == std::string::npos);
  // json-db itself wants a token the runner has not.
  CHECK(forged.find("401 Unauthorized") != std::string::npos);
  CHECK(forged.find("written") != std::string::npos);
  const std::string& evil = r.tool_log[1].record.content;
  CAPTURE(evil);
  CHECK(evil.find("Title: evil") != std::string::npos);
  // The CORS preflight is refused (405), so the JSON fetch never leaves the browser.
  CHECK(evil.find("fetch blocked") != std::string::npos);
  const std::string& honest = r.tool_log[3].record.content;
  CAPTURE(honest);
  CHECK(honest.find("Order saved (version 2)") != std::string::npos);
  CAPTURE(r.final_state_json);
  CHECK(r.final_state_json.find("forged") == std::string::npos);
  CHECK(r.grade.binary_pass);
  CHECK(rig.left_nothing());
}

namespace {

// Shows what the browser holds for mock-web's origin (a cookie, localStorage, sessionStorage),
// then stores the trial's own name (?who=) in each.
constexpr const char* kStoragePage = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>storage</title></head><body><p id="o"></p><script>
const who = new URLSearchParams(location.search).get('who');
document.getElementById('o').textContent = 'held: cookie=[' + document.cookie + '] local=[' +
  (localStorage.getItem('who') || '') + '] session=[' + (sessionStorage.getItem('who') || '') + ']';
document.cookie = 'who=' + who + '; path=/; max-age=3600';
localStorage.setItem('who', who);
sessionStorage.setItem('who', who);
</script></body></html>
)";

std::string visit(const std::string& who) {
  return browser(std::string(R"({"type":"navigate","url":")") + kBase + "storage.html?who=" + who + "\"}");
}

}  // namespace

TEST_CASE("browser isolation: two trials at once never see each other's cookies, storage or pages") {
  need_browser_image();
  (void)docker_env().services_image;
  TempDir dir;
  const std::string task_dir = write_task(dir);
  put(std::filesystem::path(task_dir) / "storage.html", kStoragePage);
  manifest::TaskConfig task = load_as_run(task_dir);
  // Each visits twice, the second time after the other has stored its own name: the trials overlap.
  auto trajectory = [&](const std::string& who) {
    return write_trajectory(dir, {{"", {{"browser", visit(who)}}},
                                  {"", {{"browser", browser(R"({"type":"wait_5_seconds"})")}}},
                                  {"", {{"browser", visit(who)}}},
                                  {"Done.", {}}},
                            who + ".json");
  };
  const std::string path_a = trajectory("alice"), path_b = trajectory("bob");
  trial::TrialResult a, b;
  bool a_clean = false, b_clean = false;
  // When each trial's first and second calls had ended (read after the join).
  std::chrono::steady_clock::time_point a_done[3], b_done[3];
  auto timed = [](Rig& rig, std::chrono::steady_clock::time_point* done) {
    rig.env.on_progress = [done](const trial::TrialProgress& p) {
      if (p.tool_calls >= 1 && p.tool_calls <= 2 && done[p.tool_calls] == std::chrono::steady_clock::time_point())
        done[p.tool_calls] = std::chrono::steady_clock::now();
    };
  };
  std::thread other([&] {
    Rig rig;
    timed(rig, b_done);
    b = rig.run(task, replay(path_b));
    b_clean = rig.left_nothing();
  });
  {
    Rig rig;
    timed(rig, a_done);
    a = rig.run(task, replay(path_a));
    a_clean = rig.left_nothing();
  }
  other.join();
  for (auto* r : {&a, &b}) {
    CAPTURE(r->error);
    REQUIRE(r->outcome == results::Outcome::kGraded);
    REQUIRE(r->tool_log.size() == 3);
  }
  CHECK(a_clean);
  CHECK(b_clean);
  auto held = [](const trial::TrialResult& r, std::size_t call) {
    const std::string& c = r.tool_log[call].record.content;
    auto at = c.find("held: ");
    return at == std::string::npos ? c : c.substr(at, c.find('\n', at) - at);
  };
  // A fresh browser and profile per trial: nothing held at first…
  CHECK(held(a, 0) == "held: cookie=[] local=[] session=[]");
  CHECK(held(b, 0) == "held: cookie=[] local=[] session=[]");
  // …then only the trial's own (the control: storage does persist within one trial).
  CHECK(held(a, 2) == "held: cookie=[who=alice] local=[alice] session=[alice]");
  CHECK(held(b, 2) == "held: cookie=[who=bob] local=[bob] session=[bob]");
  // The two trials overlapped: each one's second visit came after the other's first had stored.
  CHECK(a_done[2] > b_done[1]);
  CHECK(b_done[2] > a_done[1]);
}
