// initial_state.mock_web on the host, no daemon: a core-stack task gets full.yaml's mock-web
// through the run's own loader (so keying and image resolution see it), a stack that cannot have
// one is a preflight error naming the base_url's line, and what a trial would copy into mock-web
// is exactly the task's page files — no grading asset, whatever its type or place.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "core/files.h"
#include "core/strings.h"
#include "engine/tar.h"
#include "manifest/stacks.h"
#include "manifest/task_parse.h"
#include "support/manifest_helpers.h"
#include "support/tf_web_task.h"
#include "sweep/run_plan.h"
#include "sweep/task_set.h"
#include "trial/mock_web_use.h"
#include "trial/trial_setup.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

sweep::TaskSet load_set(const std::string& dir) { return sweep::load_task_set({dir}, "", trial::PreflightInput{}); }

// Every problem's text, one per line.
std::string problems_of(const sweep::TaskSet& set) { return set.report(); }

std::string read_file(const std::string& path) {
  auto t = read_text(path);
  REQUIRE(t.has_value());
  return *t;
}

// The archive's file paths, under `prefix`, with their content.
std::vector<std::pair<std::string, std::string>> files_of(const std::optional<std::string>& tar,
                                                          const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!tar) return out;
  auto entries = engine::read_tar(*tar);
  REQUIRE_MESSAGE(entries.has_value(), (entries ? "" : entries.error().what()));
  for (const auto& e : *entries)
    if (e.type == engine::EntryType::kFile) out.emplace_back(prefix + e.path, e.content);
  return out;
}

// The paths a trial would copy into mock-web for the task in `dir`, relative to /srv, with content.
std::vector<std::pair<std::string, std::string>> copied(const std::string& dir) {
  auto task = manifest::load_task(dir + "/task.yaml");
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  auto www = trial::www_tar(*task);
  REQUIRE_MESSAGE(www.has_value(), (www ? "" : www.error().what()));
  auto pages = trial::task_pages_tar(*task);
  REQUIRE_MESSAGE(pages.has_value(), (pages ? "" : pages.error().what()));
  auto files = files_of(*www, "www/");
  for (auto& f : files_of(*pages, "")) files.push_back(f);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("mock-web use: a core-stack task with a base_url gets full.yaml's mock-web from the run's loader") {
  TempFiles dir("forgectl-tfweb-");
  tf_web::write_task(dir.dir());
  auto set = load_set(dir.dir());
  INFO(problems_of(set));
  REQUIRE(set.ok());
  REQUIRE(set.tasks.size() == 1);
  const auto& compose = set.tasks[0].environment.compose;
  const manifest::ComposeService* web = compose.find("mock-web");
  REQUIRE(web != nullptr);
  CHECK(compose.find("json-db") == nullptr);  // not used by this task: dropped, as before
  auto full = manifest::builtin_stack("full");
  REQUIRE(full.has_value());
  const manifest::ComposeService* def = full->find("mock-web");
  REQUIRE(def != nullptr);
  CHECK(web->image == def->image);
  REQUIRE(web->command.has_value());
  CHECK(*web->command == *def->command);
  CHECK(has(join(*web->command, " "), "--tasks-root /srv/task"));
  bool alias = false;
  for (const auto& [net, aliases] : web->networks)
    for (const auto& a : aliases) alias = alias || a == "tolokaforge-mock-web";
  CHECK(alias);

  // Only the run's loader adds it: the task as written names no service.
  auto plain = manifest::load_task(dir.dir() + "/task.yaml");
  REQUIRE(plain.has_value());
  CHECK(plain->environment.compose.find("mock-web") == nullptr);
  auto added = trial::add_mock_web(*plain);
  REQUIRE(added.has_value());
  CHECK(*added);
  added = trial::add_mock_web(*plain);  // once
  REQUIRE(added.has_value());
  CHECK_FALSE(*added);
}

TEST_CASE("mock-web use: a base_url on a stack without mock-web is a preflight error at its line") {
  SUBCASE("a compose file with no mock-web service") {
    TempFiles dir("forgectl-tfweb-");
    tf_web::write_task(dir.dir(), "environment: {compose_file: compose.yaml}\n");
    dir.write("compose.yaml", "services:\n  web:\n    image: forgectl/services:local\n");
    auto set = load_set(dir.dir());
    CHECK_FALSE(set.ok());
    std::string text = problems_of(set);
    CAPTURE(text);
    CHECK(has(text,
              "task.yaml:10:15: initial_state.mock_web.base_url 'http://mock-web:8080/task/webshop/order_lookup/': "
              "the compose file '"));
    CHECK(has(text, "' has no service named mock-web, so nothing would serve the task's pages"));
  }
  SUBCASE("stack: none") {
    TempFiles dir("forgectl-tfweb-");
    tf_web::write_task(dir.dir(), "environment: {stack: none}\n");
    std::string text = problems_of(load_set(dir.dir()));
    CHECK(has(text, "`stack: none` starts no services, so nothing would serve the task's pages"));
  }
  SUBCASE("a category that cannot name a directory") {
    TempFiles dir("forgectl-tfweb-");
    std::string yaml = tf_web::write_task(dir.dir());
    std::string text = read_file(yaml);
    text.replace(text.find("category: webshop"), 17, "category: \"shop/east\"");
    dir.write("task.yaml", text);
    auto set = load_set(dir.dir());
    CHECK_FALSE(set.ok());
    CHECK(has(problems_of(set),
              "category 'shop/east' cannot name the task's directory in mock-web's "
              "/task/<category>/<task_id>/ route"));
  }
  SUBCASE("a compose file with mock-web, and stack: full, are fine") {
    TempFiles dir("forgectl-tfweb-");
    tf_web::write_task(dir.dir(), "environment: {stack: full}\n");
    auto set = load_set(dir.dir());
    INFO(problems_of(set));
    CHECK(set.ok());
    TempFiles own("forgectl-tfweb-");
    tf_web::write_task(own.dir(), "environment: {compose_file: compose.yaml}\n");
    own.write("compose.yaml", "services:\n  mock-web:\n    image: forgectl/services:local\n");
    auto set2 = load_set(own.dir());
    INFO(problems_of(set2));
    CHECK(set2.ok());
  }
}

TEST_CASE("mock-web use: what a trial copies is the task's page files and nothing meant for grading") {
  TempFiles dir("forgectl-tfweb-");
  tf_web::write_task(dir.dir());
  std::vector<std::string> paths;
  for (const auto& [p, content] : copied(dir.dir())) {
    CAPTURE(p);
    CHECK(!has(content, tf_web::kGradingMarker));
    paths.push_back(p);
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> want(std::begin(tf_web::kCopiedPages), std::end(tf_web::kCopiedPages));
  std::sort(want.begin(), want.end());
  CHECK(paths == want);

  // Whatever the task names as grading, its json_db or its prompt stays out, whatever its type.
  dir.write("grade.json", "{\"transcript_rules\": {\"communicate_info\": [\"" + tf_web::kGradingMarker + "\"]}}\n");
  dir.write("prompt.txt", "You are the shop's clerk. " + tf_web::kGradingMarker);
  std::string yaml = read_file(dir.dir() + "/task.yaml");
  yaml.replace(yaml.find("grading: grading.yaml"), 21, "grading: grade.json\nsystem_prompt: prompt.txt");
  dir.write("task.yaml", yaml);
  for (const auto& [p, content] : copied(dir.dir())) {
    CAPTURE(p);
    CHECK(!has(content, tf_web::kGradingMarker));
    CHECK(!has(p, "grade.json"));
    CHECK(!has(p, "prompt.txt"));
  }
}

TEST_CASE("mock-web use: a page-named link is judged by where it lands, never copied as grading material") {
  TempFiles dir("forgectl-tfweb-");
  tf_web::write_task(dir.dir());
  const fs::path d(dir.dir());
  dir.write("prompt.txt", "You are the shop's clerk. " + tf_web::kGradingMarker);
  // Links inside the task, with page names, onto what must stay out.
  fs::create_symlink("grading.yaml", d / "alias.html");
  fs::create_symlink("tests/expected.html", d / "peek.html");
  fs::create_symlink("prompt.txt", d / "prompt-copy.txt");  // a task input, by its own name a page
  fs::create_symlink("../expected_state.json", d / "www/state.json");
  fs::create_symlink("../solution/steps.txt", d / "www/steps.txt");
  // A link in www/ onto a page outside www/ is not copied (www/ serves data types too, so only
  // links that stay in it count); one onto a page inside it is that page.
  fs::create_symlink("../orders/1187.html", d / "www/order.html");
  fs::create_symlink("carriers.html", d / "www/carriers-copy.html");
  std::string yaml = read_file(dir.dir() + "/task.yaml");
  yaml.replace(yaml.find("grading: grading.yaml"), 21, "grading: grading.yaml\nsystem_prompt: prompt.txt");
  dir.write("task.yaml", yaml);
  auto files = copied(dir.dir());
  bool copy = false;
  for (const auto& [p, content] : files) {
    CAPTURE(p);
    CHECK(!has(content, tf_web::kGradingMarker));
    CHECK(!has(content, "You are the shop's clerk."));
    for (const char* gone : {"alias.html", "peek.html", "prompt-copy.txt", "state.json", "steps.txt", "order.html"})
      CHECK(!has(p, gone));
    copy = copy || (p == "www/carriers-copy.html" && has(content, tf_web::kCarrier));
  }
  CHECK(copy);
}

namespace {

std::vector<std::string> paths_of(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> out;
  for (const auto& [p, content] : files) out.push_back(p);
  return out;
}

std::vector<std::string> pages_plus(std::initializer_list<const char*> more) {
  std::vector<std::string> want(std::begin(tf_web::kCopiedPages), std::end(tf_web::kCopiedPages));
  want.insert(want.end(), more.begin(), more.end());
  std::sort(want.begin(), want.end());
  return want;
}

// The red team's files (mockweb-leak/): a server's seed and data, what checks.py reads, expected
// outputs and reference solutions, as data types beside the pages, and www/ links onto them.
void write_leak_files(TempFiles& dir) {
  const std::string m = tf_web::kGradingMarker;
  const fs::path d(dir.dir());
  for (const char* f : {"initial_state.json", "secret_pins.json", "answers.json", "expected-output.json",
                        "Expected_out.json", "reference_solution.txt", "data/hidden.json", "notes.csv", "feed.xml",
                        "manual.pdf", "expected.html", "expectedOutput.css", "my-solution.html", "reference.html",
                        "reference-answers/index.html"})
    dir.write(f, m);
  fs::create_symlink("secret_pins.json", d / "pins-alias.json");
  fs::create_symlink("secret_pins.json", d / "pins-alias.html");  // a page name onto a data file
  fs::create_symlink("../answers.json", d / "www/link.json");
  fs::create_symlink("../initial_state.json", d / "www/link2.json");
  fs::create_symlink("../answers.json", d / "mock_web/link3.json");
  fs::create_symlink("../index.html", d / "mock_web/home.html");  // onto a page, but out of mock_web/
  // Data meant for the web, where the author puts it: www/ and mock_web/ keep every page type.
  dir.write("www/catalog.json", "{\"items\": 3}");
  dir.write("mock_web/stock.json", "{\"left\": 2}");
  dir.write("references.html", "<p>Further reading.</p>");  // "reference" not as a word of its own
}

}  // namespace

TEST_CASE("mock-web use: the task directory gives pages and static assets only, never data or answers") {
  TempFiles dir("forgectl-tfweb-");
  tf_web::write_task(dir.dir());
  write_leak_files(dir);
  auto files = copied(dir.dir());
  for (const auto& [p, content] : files) {
    CAPTURE(p);
    CHECK(!has(content, tf_web::kGradingMarker));
  }
  // The honest control: every page of the fixture is still there, with the web parts' data.
  CHECK(paths_of(files) == pages_plus({"www/catalog.json", "task/webshop/order_lookup/mock_web/stock.json",
                                       "task/webshop/order_lookup/references.html"}));
}

TEST_CASE("mock-web use: a task with a Python tool server gives mock-web only its www/ and mock_web/") {
  TempFiles dir("forgectl-tfweb-");
  tf_web::write_task(dir.dir());
  write_leak_files(dir);
  dir.write("server.py",
            "from tolokaforge.core.tools_interface import create_server\n"
            "mcp, registry, TOOLS = create_server(__file__, 'pins')\n");
  std::string yaml = read_file(dir.dir() + "/task.yaml");
  yaml.replace(yaml.find("    enabled: [http_request, write_file]\n"), 40,
               "    enabled: [http_request, write_file]\n    mcp_server: server.py\n");
  dir.write("task.yaml", yaml);
  dir.write("site.html", "<p>beside the server</p>");
  auto files = copied(dir.dir());
  // The whole task directory is copied beside the server (its seed, its data): none of it is a
  // page of the site, whatever its type.
  CHECK(paths_of(files) == std::vector<std::string>{"task/webshop/order_lookup/mock_web/help.html",
                                                    "task/webshop/order_lookup/mock_web/stock.json",
                                                    "www/carriers.html", "www/catalog.json", "www/index.html"});
}

TEST_CASE("mock-web use: a task page that links out of the task is refused at load, naming it") {
  TempFiles dir("forgectl-tfweb-");
  TempFiles outside("forgectl-tfweb-out-");
  std::string secret = outside.write("secret.html", "host secret");
  tf_web::write_task(dir.dir());
  fs::create_symlink(secret, fs::path(dir.dir()) / "leak.html");
  auto t = manifest::load_task(dir.dir() + "/task.yaml");
  REQUIRE_FALSE(t.has_value());
  CHECK(has(t.error().what(), "the task's pages (copied to mock-web): 'leak.html' leads outside the task directory"));
  CHECK(!has(t.error().what(), "host secret"));
  // A link that is no page is never copied, so it is no reason to refuse the task.
  fs::remove(fs::path(dir.dir()) / "leak.html");
  fs::create_symlink(secret, fs::path(dir.dir()) / "leak.conf");
  CHECK(manifest::load_task(dir.dir() + "/task.yaml").has_value());
}

TEST_CASE("mock-web use: whatever the task names as its input stays out of www/ too, a named directory whole") {
  TempFiles dir("forgectl-tfweb-");
  tf_web::write_task(dir.dir());
  const std::string m = tf_web::kGradingMarker;
  dir.write("www/grade.json", "{\"transcript_rules\": {\"must_contain\": [\"" + m + "\"]}, "
                              "\"custom_checks\": {\"dir\": \"www/grader\", \"command\": \"sh /tests/test.sh\"}}\n");
  dir.write("www/grader/test.sh", "grep -q " + m + " out.txt\n");
  dir.write("www/grader/cases.json", "{\"want\": \"" + m + "\"}");
  dir.write("www/solve.sh", "echo " + m + " > out.txt\n");
  dir.write("www/solve.js", "// the site's own script, not the solution");
  dir.write("www/corpus/doc.txt", m);
  dir.write("www/db.json", "{\"orders\": [{\"note\": \"" + m + "\"}]}");
  dir.write("www/prompt.txt", "You are the clerk. " + m);
  dir.write("www/copy.html", m);
  std::string yaml = read_file(dir.dir() + "/task.yaml");
  yaml.replace(yaml.find("grading: grading.yaml"), 21,
               "grading: www/grade.json\nsystem_prompt: www/prompt.txt\nsolution: {script: www/solve.sh}\n");
  yaml.replace(yaml.find("initial_state:\n"), 15,
               "initial_state:\n  json_db: www/db.json\n  rag: {corpus_dir: www/corpus}\n"
               "  filesystem:\n    copy:\n      - {from: www/copy.html, to: /work/copy.html}\n");
  dir.write("task.yaml", yaml);
  auto files = copied(dir.dir());
  for (const auto& [p, content] : files) {
    CAPTURE(p);
    CHECK(!has(content, m));
  }
  // The honest control: www/'s own pages (and solve.js, which the task does not name) are served.
  CHECK(paths_of(files) == pages_plus({"www/solve.js"}));
  // The js is no input, but its name is no reason to withhold it: only what the task names is.
  auto t = manifest::load_task(dir.dir() + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  std::string warned;
  for (const auto& w : t->warnings) warned += w.format() + "\n";
  CAPTURE(warned);
  CHECK(has(warned, "www/grade.json: warning: mock-web withholds this file (the task names it in grading)"));
  CHECK(has(warned, "www/grader/: warning: mock-web withholds this directory (the task names it in custom_checks.dir, "
                    "with everything in it)"));
  CHECK(has(warned, "www/corpus/: warning: mock-web withholds this directory (the task names it in "
                    "initial_state.rag.corpus_dir"));
  CHECK(has(warned, "www/solve.sh: warning: mock-web withholds this file (the task names it in solution.script)"));
  CHECK(has(warned, "www/db.json: warning: mock-web withholds this file (the task names it in initial_state.json_db)"));
  CHECK(has(warned, "www/prompt.txt: warning: mock-web withholds this file (the task names it in system_prompt)"));
  CHECK(has(warned, "www/copy.html: warning: mock-web withholds this file (the task names it in "
                    "initial_state.filesystem.copy)"));
  CHECK(!has(warned, "solve.js"));
}

TEST_CASE("mock-web use: a www or mock_web that is a symlink is refused at load and at setup, naming it") {
  for (const char* part : {"www", "mock_web"}) {
    CAPTURE(part);
    TempFiles dir("forgectl-tfweb-");
    tf_web::write_task(dir.dir());
    const fs::path d(dir.dir());
    fs::remove_all(d / part);
    // Another part of the task: its hidden tests, served whole were www/ followed.
    fs::create_symlink("tests", d / part);
    auto t = manifest::load_task(dir.dir() + "/task.yaml");
    REQUIRE_FALSE(t.has_value());
    CHECK(has(t.error().what(), dir.dir() + "/" + part + ": " + part + "/ (copied to mock-web): '" + part +
                                    "' is a symlink to 'tests'; mock-web copies only a real " + part + "/ directory"));
    // A task loaded before the link appeared is refused by the copy itself.
    fs::remove(d / part);
    fs::create_directories(d / part);
    auto ok = manifest::load_task(dir.dir() + "/task.yaml");
    REQUIRE_MESSAGE(ok.has_value(), (ok ? "" : ok.error().what()));
    fs::remove_all(d / part);
    fs::create_symlink("tests", d / part);
    auto tar = std::string(part) == "www" ? trial::www_tar(*ok) : trial::task_pages_tar(*ok);
    REQUIRE_FALSE(tar.has_value());
    CHECK(has(tar.error().what(), std::string("'") + part + "' is a symlink to 'tests'"));
  }
}

TEST_CASE("mock-web use: each page mock-web withholds is a warning naming it and why; one the task links to, an error") {
  TempFiles dir("forgectl-tfweb-");
  tf_web::write_task(dir.dir());
  const fs::path d(dir.dir());
  dir.write("answers.json", tf_web::kGradingMarker);
  fs::create_symlink("../answers.json", d / "www/answers.json");
  dir.write("mock_web/expected.html", tf_web::kGradingMarker);
  auto t = manifest::load_task(dir.dir() + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  std::string warned;
  for (const auto& w : t->warnings) warned += w.format() + "\n";
  CAPTURE(warned);
  // The fixture's own withheld files of www/ and mock_web/, each with its reason.
  for (const char* line : {"www/grading.yaml: warning: mock-web withholds this file (it is named grading.yaml)",
                           "www/solution_notes.txt: warning: mock-web withholds this file (its name contains 'solution')",
                           "www/tests/: warning: mock-web withholds this directory (it is named tests, with everything in it)",
                           "www/server.py: warning: mock-web withholds this file (it is not a page or asset type)",
                           "www/answers.json: warning: mock-web withholds this file (a symlink to 'answers.json', "
                           "outside www/): an agent that asks for it gets 404",
                           "mock_web/grading.yaml: warning: mock-web withholds this file (it is named grading.yaml)",
                           "mock_web/expected.html: warning: mock-web withholds this file (its name starts with 'expected')"})
    CHECK(has(warned, line));
  // The task directory's own files are not pages meant for the web: no warning for them.
  CHECK(!has(warned, "checks.py"));
  CHECK(!has(warned, "README.md"));
  // Served pages are not named.
  CHECK(!has(warned, "carriers.html"));

  SUBCASE("many: the first 20, then a count") {
    for (int i = 0; i < 30; ++i) dir.write("www/expected-" + std::to_string(100 + i) + ".html", "x");
    auto many = manifest::load_task(dir.dir() + "/task.yaml");
    REQUIRE(many.has_value());
    std::size_t withheld = 0;
    std::string text;
    for (const auto& w : many->warnings) {
      text += w.format() + "\n";
      if (has(w.message, "mock-web withholds this")) ++withheld;
    }
    CAPTURE(text);
    CHECK(withheld == 20);
    // 30 + the 7 above = 37 withheld; 20 shown.
    CHECK(has(text, "www: warning: and 17 more files of www/ and mock_web/ that mock-web withholds"));
  }

  SUBCASE("one the initial user message sends the agent to is an error") {
    std::string yaml = read_file(dir.dir() + "/task.yaml");
    yaml.replace(yaml.find("Find the "), 9, "Read http://mock-web:8080/solution_notes.txt first. Find the ");
    dir.write("task.yaml", yaml);
    auto bad = manifest::load_task(dir.dir() + "/task.yaml");
    REQUIRE_FALSE(bad.has_value());
    CHECK(has(bad.error().what(), "www/solution_notes.txt: the initial_user_message links to /solution_notes.txt, "
                                  "which mock-web withholds (its name contains 'solution'): the agent would get 404"));
  }

  SUBCASE("a task without mock-web is not warned of its www/") {
    std::string yaml = read_file(dir.dir() + "/task.yaml");
    yaml.replace(yaml.find("initial_state:\n  mock_web:\n    base_url: \"http://mock-web:8080/task/webshop/order_lookup/\"\n"),
                 std::string("initial_state:\n  mock_web:\n    base_url: \"http://mock-web:8080/task/webshop/order_lookup/\"\n").size(), "");
    dir.write("task.yaml", yaml);
    auto quiet = manifest::load_task(dir.dir() + "/task.yaml");
    REQUIRE_MESSAGE(quiet.has_value(), (quiet ? "" : quiet.error().what()));
    for (const auto& w : quiet->warnings) CHECK(!has(w.message, "mock-web withholds"));
  }
}

TEST_CASE("mock-web use: the run's plan resolves mock-web's image for the task and gives its trials a network") {
  TempFiles dir("forgectl-tfweb-");
  tf_web::write_task(dir.dir());
  manifest::RunConfig run;
  sweep::PlanInput in;
  in.task_paths = {dir.dir()};
  in.agents = {trial::AgentChoice{trial::AgentChoice::Kind::kNoop}};
  in.run = &run;
  std::vector<std::string> asked;
  auto plan = sweep::make_plan(in, [&](const std::string& ref) -> Result<std::string> {
    asked.push_back(ref);
    return "sha256:" + ref;
  });
  REQUIRE_MESSAGE(plan.has_value(), (plan ? "" : plan.error().what()));
  CHECK(std::find(asked.begin(), asked.end(), "forgectl/services:local") != asked.end());
  CHECK((*plan)->networks_per_trial >= 1);  // the runner alone would have none
  REQUIRE((*plan)->jobs.size() == 1);

  // A services image that is not on the engine stops the run before its first trial, naming it.
  auto missing = sweep::make_plan(in, [](const std::string& ref) -> Result<std::string> {
    if (ref == "forgectl/services:local") return fail(Errc::kNotFound, "no such image");
    return "sha256:" + ref;
  });
  REQUIRE_FALSE(missing.has_value());
  CHECK(has(missing.error().what(),
            "task order_lookup: service 'mock-web' image forgectl/services:local is not on the engine"));
}
