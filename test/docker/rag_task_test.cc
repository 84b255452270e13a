// A Tolokaforge-format search_kb task of our own (test/support/tf_rag_task.h) on the built-in core
// stack, against the real daemon: the run's loader gives it `forgectl serve rag`, the trial indexes
// kb/ when it starts, and one trial's agent asks a question per document — each answering document
// ranks first, a word no document holds finds nothing, the grading material kept in kb/ is never a
// result — and passes. A corpus that is empty, missing or too large is refused before anything starts.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/json.h"
#include "core/limits.h"
#include "results/trial_record.h"
#include "support/process.h"
#include "support/scripted_trial.h"
#include "support/tf_rag_task.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

std::string ask(const std::string& query, int top_k = 3) {
  return json::Writer().begin_object().field("query", query).field("top_k", top_k).end_object().take();
}

// The doc_ids of a search_kb answer, best first.
std::vector<std::string> doc_ids(const std::string& content) {
  auto doc = json::parse(content, "search_kb output");
  REQUIRE_MESSAGE(doc.has_value(), content);
  std::vector<std::string> out;
  if (const auto* results = json::get_array(*doc, "results"))
    for (const auto& r : results->GetArray()) out.push_back(json::get_string(r, "doc_id"));
  return out;
}

}  // namespace

TEST_CASE(
    "tolokaforge rag task: search_kb ranks each question's document first and never serves grading material; "
    "the reader passes") {
  (void)docker_env().services_image;
  TempDir dir;
  tf_rag::write_task(dir.path());
  manifest::TaskConfig task = load_as_run(dir.path());
  REQUIRE(task.environment.compose.find("rag") != nullptr);

  Turn questions{"Searching the knowledge base.", {}};
  for (const auto& d : tf_rag::documents()) questions.calls.push_back({"search_kb", ask(d.question)});
  // What the withheld files say, in their words: none of them may answer.
  questions.calls.push_back({"search_kb", ask("expected answer solution reference grading 7e2a", 20)});
  questions.calls.push_back({"search_kb", ask("zeppelin")});
  std::vector<Turn> turns{questions, {std::string("The office VPN gateway is ") + tf_rag::kGateway + ".", {}}};

  TempDir traj;
  Rig rig;
  auto r = rig.run(task, replay(write_trajectory(traj, turns)));
  CAPTURE(r.error);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  const auto& docs = tf_rag::documents();
  REQUIRE(r.tool_log.size() == docs.size() + 2);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::string& out = r.tool_log[i].record.content;
    CAPTURE(docs[i].question);
    CAPTURE(out);
    CHECK(r.tool_log[i].record.outcome == tools::ToolOutcome::Kind::kOk);
    auto ids = doc_ids(out);
    REQUIRE_FALSE(ids.empty());
    CHECK(ids[0] == docs[i].doc_id);
  }
  const std::string& probe = r.tool_log[docs.size()].record.content;
  CAPTURE(probe);
  CHECK(probe.find(tf_rag::kGradingMarker) == std::string::npos);
  for (const auto& id : doc_ids(probe)) {
    bool is_document = false;
    for (const auto& d : docs) is_document = is_document || id == d.doc_id;
    CHECK_MESSAGE(is_document, id);
  }
  CHECK(r.tool_log[docs.size() + 1].record.content ==
        R"({"message":"No relevant documents found.","results":[],"query":"zeppelin"})");
  // A result carries Tolokaforge's fields and forgectl's title and snippet.
  auto first = json::parse(r.tool_log[3].record.content, "vpn answer");
  REQUIRE(first.has_value());
  const auto& top = (*json::get_array(*first, "results"))[0];
  CHECK(json::get_string(top, "title") == "VPN setup");
  CHECK(json::get_string(top, "source") == "vpn.md");
  CHECK(json::get_string(top, "retrieval_method") == "bm25");
  CHECK(json::get_string(top, "text").find(tf_rag::kGateway) != std::string::npos);
  CHECK(json::get_double(top, "score") > 0);

  CHECK(r.grade.binary_pass);
  CHECK(r.grade.score == doctest::Approx(1.0));
  CHECK(rig.left_nothing());
}

TEST_CASE("tolokaforge rag task: an empty, missing or oversized corpus is refused by validate and run, naming it") {
  TempDir empty, missing, oversized;
  tf_rag::write_task(empty.path());
  for (const auto& d : tf_rag::documents()) fs::remove(empty.path() + "/kb/" + d.doc_id);
  tf_rag::write_task(missing.path());
  fs::remove_all(missing.path() + "/kb");
  tf_rag::write_task(oversized.path());
  std::string big(limits::kMaxRagCorpusBytes / 2, 'x');
  for (int i = 0; i < 3; ++i) std::ofstream(oversized.path() + "/kb/big" + std::to_string(i) + ".txt") << big;

  struct Case {
    const TempDir* dir;
    const char* says;
  };
  for (auto c : {Case{&empty,
                      "initial_state.rag.corpus_dir 'kb' holds no documents: a document is a .md or .txt file "
                      "with text"},
                 Case{&missing, "initial_state.rag.corpus_dir: 'kb' does not exist"},
                 Case{&oversized,
                      "initial_state.rag.corpus_dir 'kb': its documents add up to more than 16.0 MiB, "
                      "the limit"}}) {
    const std::vector<std::vector<std::string>> commands = {
        {"validate", c.dir->path()}, {"run", c.dir->path(), "--agent", "noop", "--out", c.dir->path() + "/run"}};
    for (const auto& args : commands) {
      auto out = run_forgectl(args);
      REQUIRE(out.has_value());
      CAPTURE(out->text());
      CHECK(out->code == 2);
      CHECK(out->text().find(std::string("task.yaml:9:17: ") + c.says) != std::string::npos);
    }
    CHECK_FALSE(fs::exists(c.dir->path() + "/run/trials.jsonl"));
  }
}
