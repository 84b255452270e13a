// forgectl/python:local against the real daemon: built by the code path `images build` takes (cached the
// second time), its Python tests pass inside it, a task's MCP server runs in it behind forgectl's own MCP
// client and tool executor, and the checks driver grades a passing and a failing trial in a fresh container.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/json.h"
#include "core/scope_guard.h"
#include "engine/archive.h"
#include "engine/exec.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "stack/local_images.h"
#include "stack/python_image.h"
#include "support/containers.h"
#include "support/paths.h"
#include "support/stack_env.h"
#include "tools/mcp_client.h"
#include "tools/stack_tools.h"

using namespace forge;
using namespace forge::test;
using tools::Actor;
using Kind = tools::ToolOutcome::Kind;
namespace fs = std::filesystem;

namespace {

constexpr const char* kMirror = "http://deb.debian.org/debian";  // `images build`'s default

const fs::path kPythonTree = fs::path(source_dir()) / "python";
const fs::path kFixtures = kPythonTree / "tests" / "fixtures";

// Built once for this file; on a machine without the base image this runs debootstrap (about a minute).
const stack::PythonImageBuild& python_image() {
  static const stack::PythonImageBuild built = [] {
    auto r = stack::build_python_image(*docker_env().client, {.debian_mirror = kMirror});
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
    return *r;
  }();
  return built;
}

// How a grader container would run: the image's user, read-only root, no capabilities, no network;
// /work an anonymous volume (writable through the archive API), /tmp a tmpfs.
engine::ContainerSpec hardened_python() {
  engine::ContainerSpec s;
  s.image = python_image().id;
  s.volumes = {"/work"};
  s.host.readonly_rootfs = true;
  s.host.tmpfs = {{"/tmp", "rw,exec,nosuid,nodev,size=64m"}};
  s.host.cap_drop = {"ALL"};
  s.host.security_opt = {"no-new-privileges"};
  s.host.network_mode = "none";
  return s;
}

engine::ExecResult run(const TestContainer& box, std::vector<std::string> cmd, const std::string& workdir = "/work") {
  engine::ExecOptions o;
  o.cmd = std::move(cmd);
  o.workdir = workdir;
  o.timeout = Millis(300000);
  auto r = engine::exec_run(*docker_env().client, box.id, o);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return *r;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

json::Document parse(const std::string& text) {
  auto doc = json::parse(text, "test output");
  REQUIRE_MESSAGE(doc.has_value(), (doc ? "" : doc.error().what()) << "\n" << text);
  return std::move(*doc);
}

tools::StackTools open_tools(const TestStack& s) {
  auto t = tools::open_stack_tools(*docker_env().client, s.result.name, {});
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

// The server's state through the internal tool, as a grader reads it.
json::Document server_state(tools::McpSession& mcp) {
  auto empty = parse("{}");
  auto text = mcp.call_tool("_tolokaforge_get_state_", empty, Deadline::in(Millis(10000)));
  REQUIRE_MESSAGE(text.has_value(), (text ? "" : text.error().what()));
  return parse(*text);
}

}  // namespace

TEST_CASE("forgectl/python:local is built without a registry, and the second build reuses it") {
  auto& c = *docker_env().client;
  const auto& first = python_image();
  auto again = stack::build_python_image(c, {.debian_mirror = kMirror});
  REQUIRE_MESSAGE(again.has_value(), (again ? "" : again.error().what()));
  CHECK_FALSE(again->built_base);
  CHECK_FALSE(again->built_image);
  CHECK(again->id == first.id);
  auto info = engine::inspect_image(c, stack::kPythonImage);
  REQUIRE(info.has_value());
  CHECK(info->labels[stack::kImageLabel] == "python");
  CHECK(info->labels[stack::kContentLabel].size() == 64);
  const std::string label = info->labels[stack::kContentLabel];

  // A changed python/ tree rebuilds the top image only; the original tree brings the original label back.
  // Under a tag of this test's own: the other docker shard's trials run on forgectl/python:local meanwhile.
  const std::string test_tag = "forgectl-test/python:" + docker_env().run_value;
  ScopeGuard remove_test_image([&] { (void)engine::remove_image(c, test_tag, true); });
  TempDir dir;
  fs::copy(kPythonTree, fs::path(dir.path()) / "python", fs::copy_options::recursive);
  std::ofstream(fs::path(dir.path()) / "python" / "tolokaforge" / "marker_for_test.py") << "MARK = 1\n";
  auto changed =
      stack::build_python_image(c, {.debian_mirror = kMirror, .python_tree = dir.path() + "/python", .tag = test_tag});
  REQUIRE_MESSAGE(changed.has_value(), (changed ? "" : changed.error().what()));
  CHECK(changed->built_image);
  CHECK_FALSE(changed->built_base);
  CHECK(changed->id != first.id);
  auto restored = stack::build_python_image(c, {.debian_mirror = kMirror, .tag = test_tag});
  REQUIRE_MESSAGE(restored.has_value(), (restored ? "" : restored.error().what()));
  CHECK(restored->built_image);
  if (restored->id != changed->id) (void)engine::remove_image(c, changed->id, true);  // no dangling test image
  auto back = engine::inspect_image(c, test_tag);
  REQUIRE(back.has_value());
  CHECK(back->labels[stack::kContentLabel] == label);
  auto shared = engine::inspect_image(c, stack::kPythonImage);
  REQUIRE(shared.has_value());
  CHECK(shared->id == first.id);

  // A mirror that is not a URL is refused before anything runs.
  auto bad = stack::build_python_image(c, {.debian_mirror = "deb.debian.org"});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("must be an http:// or https:// URL") != std::string::npos);
}

TEST_CASE("the python image runs as agent (uid 1000) and its Python unit tests pass inside it, hardened") {
  TestContainer box(hardened_python());
  auto who = run(box, {"sh", "-c",
                       "id -u; id -g; echo $HOME; stat -c %U /work /home/agent; python3 -c 'import pydantic; "
                       "print(pydantic.VERSION)'"});
  CHECK(who.exit_code == 0);
  CHECK(who.out.find("1000\n1000\n/home/agent\nagent\nagent\n2.") == 0);
  CHECK(run(box, {"sh", "-c", "test -e /.forgectl || echo no helper baked in"}).out == "no helper baked in\n");
  // http_request and the db tools send with nc: busybox's, as in forgectl's runner image.
  auto nc = run(box, {"sh", "-c", "command -v nc && nc --help 2>&1 | head -1"});
  CHECK(nc.out.find("/usr/local/bin/nc\nBusyBox") == 0);

  auto tests = run(box, {"python3", "-m", "unittest"}, stack::kPythonTreeDir);
  INFO(tests.err);
  CHECK(tests.exit_code == 0);
  CHECK(tests.err.find("\nOK\n") != std::string::npos);
  CHECK(tests.err.find("Ran ") != std::string::npos);
}

TEST_CASE("a task's MCP server runs in the python image behind forgectl's own MCP client and executor") {
  (void)python_image();
  TempDir dir;
  dir.write("mcp_server.py", slurp(kFixtures / "shop" / "mcp_server.py"));
  dir.write("initial_state.json", slurp(kFixtures / "shop" / "initial_state.json"));
  auto task = dir.write("task.yaml",
                        "task_id: t-shop\nname: shop\ncategory: c\ndescription: d\n"
                        "tools:\n  agent:\n    enabled: [list_products, place_order, confirm_payment]\n"
                        "    mcp_server: {command: [python3, /.forgectl/task/mcp_server.py], files: [mcp_server.py, "
                        "initial_state.json]}\n"
                        "environment:\n  stack: none\n  runner: {image: " +
                            std::string(stack::kPythonImage) + ", user: \"1000:1000\"}\n");
  TestStack s(task);
  auto t = open_tools(s);
  REQUIRE(t.mcp);
  auto call = [&](const char* name, const std::string& args) { return t.executor->call(Actor::kAgent, name, args); };

  // tools/list: the three domain tools, never the internal state tools.
  auto specs = t.executor->specs(Actor::kAgent);
  REQUIRE(specs.size() == 3);
  CHECK(specs[1].name == "place_order");
  CHECK(specs[1].description == "Place an order for a customer. Returns the order, unpaid.");
  CHECK(specs[1].parameters.find(R"("required":["customer_id","items"])") != std::string::npos);
  CHECK(call("_tolokaforge_set_state_", R"({"state_json":"{}"})").kind == Kind::kRefused);

  // The server inlines nested models into the schema, so forgectl's own check sees their constraints.
  auto zero = call("place_order", R"({"customer_id":"C-1","items":[{"product_id":"P-1","quantity":0}]})");
  CHECK(zero.kind == Kind::kRefused);
  CHECK(zero.content == "Error: invalid arguments for 'place_order': property 'items/0/quantity' must be >= 1");

  // A ToolError is an error result with its message; the state is untouched.
  auto unknown = call("place_order", R"({"customer_id":"C-9","items":[{"product_id":"P-1","quantity":1}]})");
  CHECK(unknown.kind == Kind::kFailed);
  CHECK(unknown.content == "Error: Customer 'C-9' not found");

  // A call changes the state, and the state tool shows it.
  auto placed = call("place_order", R"({"customer_id":"C-1","items":[{"product_id":"P-1","quantity":2}]})");
  REQUIRE(placed.kind == Kind::kOk);
  CHECK(json::get_string(parse(placed.content), "id") == "O-001");
  {
    auto state = server_state(*t.mcp);
    const auto& orders = *json::get_array(state, "orders");
    REQUIRE(orders.Size() == 1);
    CHECK(json::get_string(orders[0], "status") == "pending");
    CHECK(json::get_int((*json::get_array(state, "products"))[0], "stock") == 1);
  }
  REQUIRE(call("confirm_payment", R"({"order_id":"O-001"})").kind == Kind::kOk);
  CHECK(json::get_string((*json::get_array(server_state(*t.mcp), "orders"))[0], "status") == "paid");

  // The harness can replace the state (a golden replay starts from the initial state this way).
  auto seed = parse(R"({"state_json":"{\"products\":[],\"customers\":[],\"orders\":[]}"})");
  auto set = t.mcp->call_tool("_tolokaforge_set_state_", seed, Deadline::in(Millis(10000)));
  REQUIRE_MESSAGE(set.has_value(), (set ? "" : set.error().what()));
  CHECK(*set == R"({"status": "ok", "tables": ["products", "customers", "orders"]})");
  CHECK(json::get_array(server_state(*t.mcp), "orders")->Size() == 0);
}

TEST_CASE("the checks driver grades a passing and a failing trial in a fresh python container") {
  auto& c = *docker_env().client;
  TestContainer box(hardened_python());
  // The grader's copy of the task: checks.py, the project helper it imports, the trial's evidence.
  engine::TarWriter tar;
  must(tar.add_directory("shop", 0755));
  must(tar.add_directory("shop/trials", 0755));
  must(tar.add_directory("shop_helpers", 0755));
  for (const char* f :
       {"shop/checks.py", "shop/initial_state.json", "shop/trials/pass.json", "shop/trials/pass_final.json",
        "shop/trials/fail.json", "shop/trials/fail_final.json", "shop_helpers/order_rules.py"})
    must(tar.add_host_file(f, (kFixtures / f).string()));
  auto bytes = tar.finish();
  must(bytes);
  must(engine::put_archive(c, box.id, "/work", std::move(*bytes)));

  auto grade = [&](const std::string& trial) {
    auto r = run(box, {"python3", "-m", "forgectl_checks.run", "--checks", "/work/shop/checks.py", "--transcript",
                       "/work/shop/trials/" + trial + ".json", "--initial-state", "/work/shop/initial_state.json",
                       "--final-state", "/work/shop/trials/" + trial + "_final.json", "--relative-import",
                       "../shop_helpers", "--out", "/tmp/" + trial + ".json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return parse(run(box, {"cat", "/tmp/" + trial + ".json"}).out);
  };

  auto pass = grade("pass");
  CHECK(json::get_string(pass, "status") == "completed");
  CHECK(json::get_double(pass, "score") == 1.0);
  CHECK(json::get_int(*json::get_object(pass, "totals"), "passed") == 4);
  CHECK(json::get_string(pass, "reason") == "Custom checks: score=1.00, all 4 checks passed");

  auto fail = grade("fail");
  CHECK(json::get_string(fail, "status") == "completed");
  CHECK(json::get_double(fail, "score") == doctest::Approx(0.125));
  CHECK(json::get_int(*json::get_object(fail, "totals"), "failed") == 4);
  const auto& checks = *json::get_array(fail, "checks");
  CHECK(json::get_string(checks[0], "name") == "order_was_paid");
  CHECK_FALSE(json::get_bool(checks[0], "passed"));
  CHECK(json::get_string(checks[0], "message") == "expected 1 paid order, found 0");
}
