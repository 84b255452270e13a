// Unit tests for grading's sources without a daemon: the workspace files streamed from the archive
// API within their caps (fake transport), the grader's tests and reward directory as tar headers
// for the verifier, and the reward file's parsing.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "engine/tar.h"
#include "grading/state_checks.h"
#include "support/fake_transport.h"
#include "support/manifest_helpers.h"
#include "trial/grader_setup.h"
#include "trial/grading_sources.h"

using namespace forge;
using forge::engine::EntryType;
using forge::engine::Method;
using forge::test::FakeTransport;
using forge::test::has;
using forge::test::TempFiles;
namespace fs = std::filesystem;

namespace {

// The archive GET /containers/runner/archive?path=/work answers: entries named "work/…".
std::string workspace_tar(const std::vector<std::pair<std::string, std::string>>& files) {
  engine::TarWriter w;
  REQUIRE(w.add_directory("work"));
  for (const auto& [name, content] : files) REQUIRE(w.add_file("work/" + name, content));
  auto bytes = w.finish();
  REQUIRE(bytes);
  return std::move(*bytes);
}

struct Rig {
  std::shared_ptr<FakeTransport> fake = std::make_shared<FakeTransport>();
  engine::Client c{fake};
  void serve(const std::string& tar) { fake->on(Method::kGet, "/containers/runner/archive", 200, tar); }
  std::size_t gets() const { return fake->sent("/containers/runner/archive").size(); }
};

manifest::StateAssertion contains(const std::string& glob, const std::string& text) {
  manifest::StateAssertion a;
  a.path_glob = glob;
  a.op = manifest::StateAssertion::Op::kContains;
  a.expected_json = "\"" + text + "\"";
  return a;
}

}  // namespace

TEST_CASE("workspace files: one streamed pass keeps only the files the checks ask for, within the caps") {
  Rig rig;
  rig.serve(workspace_tar({{"out/summary.md", "The refund was issued."},
                           {"out/huge.md", std::string(9u << 20, 'x') + "refund"},
                           {"notes.txt", "not asked for"}}));
  trial::WorkspaceFiles files(rig.c, "runner", "/work", {"/env/fs/agent-visible/out/*", "/work/none/*"});

  auto out = files.match("/env/fs/agent-visible/out/*");
  REQUIRE_MESSAGE(out.has_value(), (out ? "" : out.error().what()));
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].path == "/env/fs/agent-visible/out/huge.md");
  CHECK((*out)[0].content.empty());  // never loaded
  CHECK((*out)[0].unread == "larger than 8 MiB (9437190 bytes); forgectl reads at most 8 MiB of a file");
  CHECK((*out)[1].path == "/env/fs/agent-visible/out/summary.md");
  CHECK((*out)[1].content == "The refund was issued.");
  CHECK((*out)[1].unread.empty());
  CHECK(files.match("/work/none/*")->empty());
  CHECK(rig.gets() == 1);  // both globs from one pass
  // A glob no check declared streams again, for itself.
  CHECK(files.match("/work/notes.txt")->at(0).content == "not asked for");
  CHECK(rig.gets() == 2);

  // The check sees the agent's doing: an over-cap file fails a content check with the reason.
  grading::Evidence ev;
  ev.files = [&](const std::string& g) { return files.match(g); };
  auto huge = grading::check_file(contains("/work/out/huge.md", "refund"), ev);
  REQUIRE(huge.has_value());
  CHECK_FALSE(huge->passed);
  CHECK(has(huge->reason, "/env/fs/agent-visible/out/huge.md is larger than 8 MiB"));
  auto some = grading::check_file(contains("/work/out/*", "refund was"), ev);
  REQUIRE(some.has_value());
  CHECK(some->passed);
}

TEST_CASE("workspace files: the total caps end in a reason, not in memory or an error") {
  Rig rig;
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 20; ++i) many.push_back({"f" + std::to_string(100 + i) + ".txt", std::string(100, 'a')});
  rig.serve(workspace_tar(many));

  trial::WorkspaceFiles kept(rig.c, "runner", "/work", {}, {1000, 450, 1000});
  auto out = kept.match("/work/*.txt");
  REQUIRE(out.has_value());
  REQUIRE(out->size() == 20);
  CHECK((*out)[3].unread.empty());
  CHECK((*out)[4].unread == "not read: the files that checks read exceed 450 bytes in all");

  trial::WorkspaceFiles examined(rig.c, "runner", "/work", {}, {1000, 1u << 20, 6});
  out = examined.match("/work/*.txt");
  REQUIRE(out.has_value());
  REQUIRE(out->size() == 6);  // the directory and 5 files examined, then the note
  CHECK(out->back().path.empty());
  CHECK(out->back().unread == "the workspace holds more than 6 entries; those after them were not examined");
  grading::Evidence ev;
  ev.files = [&](const std::string& g) { return examined.match(g); };
  auto r = grading::check_file(contains("/work/f119.txt", "a"), ev);
  REQUIRE(r.has_value());
  CHECK_FALSE(r->passed);
  CHECK(has(r->reason, "no file matches; the workspace holds more than 6 entries"));
}

TEST_CASE("workspace files: the archive API failing is an error of grading, with its code") {
  Rig rig;
  rig.fake->on(Method::kGet, "/containers/runner/archive", 404, R"({"message":"No such container: runner"})");
  trial::WorkspaceFiles files(rig.c, "runner", "/work");
  auto out = files.match("/work/*");
  REQUIRE_FALSE(out.has_value());
  CHECK(out.error().code == Errc::kNotFound);
  CHECK(has(out.error().what(), "reading the workspace for grading"));
}

TEST_CASE("grader files: the tests belong to the verifier alone, the reward directory too") {
  TempFiles t("forgectl-grader-");
  t.write("tests/test.sh", "exit 0\n");
  t.write("tests/cases/a.csv", "amount\n1\n");
  fs::permissions(t.file("tests/test.sh"), fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  auto dir = ConfinedDir::open(t.dir());
  REQUIRE(dir);
  auto tar = trial::tests_tar(*dir, "tests");
  REQUIRE_MESSAGE(tar.has_value(), (tar ? "" : tar.error().what()));
  auto entries = engine::read_tar(*tar);
  REQUIRE(entries);
  std::vector<std::string> seen;
  for (const auto& e : *entries) {
    CHECK(e.uid == trial::kVerifierUid);
    CHECK(e.gid == trial::kVerifierGid);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", e.mode);
    seen.push_back(e.path + " " + mode);
  }
  CHECK(seen ==
        std::vector<std::string>{"tests/ 0700", "tests/cases/ 0700", "tests/cases/a.csv 0600", "tests/test.sh 0700"});

  // A link out of the task refuses the tests, naming it, before any container exists.
  TempFiles outside("forgectl-grader-out-");
  fs::create_symlink(outside.write("expected.txt", "sk-fake-expected"), t.file("tests/expected.txt"));
  auto refused = trial::tests_tar(*dir, "tests");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == Errc::kForbidden);
  CHECK(has(refused.error().what(), "'tests/expected.txt' leads outside the task directory"));

  auto logs = engine::read_tar(trial::verifier_logs_tar().value());
  REQUIRE(logs);
  REQUIRE(logs->size() == 2);
  CHECK((*logs)[0].path == "logs/");
  CHECK((*logs)[0].uid == 0);
  CHECK((*logs)[1].path == "logs/verifier/");
  CHECK((*logs)[1].uid == trial::kVerifierUid);
  CHECK((*logs)[1].mode == 0700);
}

TEST_CASE("grader files: the reward is the last line's number; nothing is no value; garbage is an error") {
  CHECK(trial::parse_reward("0.5\n").value() == std::optional<double>(0.5));
  CHECK(trial::parse_reward("checks: 3/4\n0.75\n").value() == std::optional<double>(0.75));
  CHECK(trial::parse_reward("  1  \n\n").value() == std::optional<double>(1.0));
  CHECK_FALSE(trial::parse_reward("").value().has_value());
  CHECK_FALSE(trial::parse_reward(" \n\t\n").value().has_value());
  for (const char* bad : {"pass\n", "0.5 points\n", "nan\n"}) {
    CAPTURE(bad);
    auto r = trial::parse_reward(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::kProtocol);
    CHECK(has(r.error().message, "is not a number"));
    CHECK_FALSE(has(r.error().message, "points"));  // the file's words are not quoted
  }
  // Numbers out of any range come back as they are, for the [0, 1] check of whoever reads them.
  CHECK(std::isinf(*trial::parse_reward("inf\n").value()));
  CHECK(std::isinf(*trial::parse_reward("1e400\n").value()));
  CHECK(*trial::parse_reward("1e308\n").value() == 1e308);
}
