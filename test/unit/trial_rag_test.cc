// initial_state.rag on the host, no daemon: the corpus forgectl would index is exactly the task's
// documents (grading material, links out and other types left out, with warnings), a core-stack
// task gets full.yaml's rag from the run's loader, and what cannot work is a preflight error at the
// corpus_dir's line: search_kb without a corpus, a stack without rag, an empty, oversized, binary
// or task-directory corpus, the local executor.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/files.h"
#include "core/limits.h"
#include "core/strings.h"
#include "manifest/rag_corpus.h"
#include "manifest/stacks.h"
#include "manifest/task_parse.h"
#include "services/rag_index.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"
#include "support/tf_rag_task.h"
#include "sweep/task_set.h"
#include "trial/golden_replay.h"
#include "trial/rag_use.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

sweep::TaskSet load_set(const std::string& dir) { return sweep::load_task_set({dir}, "", trial::PreflightInput{}); }

manifest::TaskConfig load(const std::string& dir) {
  auto t = manifest::load_task(dir + "/task.yaml");
  REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().what()));
  return std::move(*t);
}

// The problems of the task in `dir`, as `forgectl validate` prints them; empty when it loads clean.
std::string problems(const std::string& dir) {
  auto set = load_set(dir);
  return set.report();
}

}  // namespace

TEST_CASE("rag corpus: one document per .md/.txt file; grading material, links out and other types never") {
  TempFiles dir("forgectl-tfrag-");
  tf_rag::write_task(dir.dir());
  auto corpus = manifest::load_rag_corpus(load(dir.dir()));
  REQUIRE_MESSAGE(corpus.has_value(), (corpus ? "" : corpus.error().what()));
  std::vector<std::string> ids, want;
  for (const auto& d : corpus->documents) {
    CAPTURE(d.doc_id);
    CHECK(!has(d.text, tf_rag::kGradingMarker));
    ids.push_back(d.doc_id);
  }
  for (const auto& d : tf_rag::documents()) want.push_back(d.doc_id);
  std::sort(want.begin(), want.end());
  CHECK(ids == want);
  CHECK(corpus->documents[0].doc_id == "accounts/passwords.md");
  CHECK(corpus->documents[0].source == "passwords.md");

  std::string left;
  for (const auto& l : corpus->left_out) left += l.path + ": " + l.reason + "\n";
  CAPTURE(left);
  CHECK(has(left, "kb/grading.yaml: "));
  CHECK(has(left, "kb/expected_answer.md: its name starts with 'expected'"));
  CHECK(has(left, "kb/solution.md: "));
  CHECK(has(left, "kb/reference.txt: "));
  CHECK(has(left, "kb/tests/: "));
  CHECK(has(left, "kb/.notes.md: "));
  CHECK(has(left, "kb/notes.md: a symlink that leaves corpus_dir"));
  CHECK_FALSE(has(left, "diagram.png"));  // not a document, not withheld: simply not read

  // What the task names as another input is withheld too, whatever its name.
  dir.write("kb/rubric.md", "The answer is " + tf_rag::kGradingMarker);
  std::string yaml = *read_text(dir.file("task.yaml"));
  yaml.replace(yaml.find("grading: grading.yaml"), 21, "grading: kb/rubric.md");
  dir.write("task.yaml", yaml);
  dir.write("kb/rubric.md", "transcript_rules:\n  communicate_info: [\"14 days\"]\n# " + tf_rag::kGradingMarker + "\n");
  auto again = manifest::load_rag_corpus(load(dir.dir()));
  REQUIRE(again.has_value());
  for (const auto& d : again->documents) CHECK(d.doc_id != "rubric.md");
  bool named = false;
  for (const auto& l : again->left_out) named = named || l.reason == "the task names it in grading";
  CHECK(named);
}

TEST_CASE(
    "rag use: a core-stack task with a corpus gets full.yaml's rag from the run's loader; validate warns of "
    "what it leaves out") {
  TempFiles dir("forgectl-tfrag-");
  tf_rag::write_task(dir.dir());
  auto set = load_set(dir.dir());
  INFO(set.report());
  REQUIRE(set.ok());
  REQUIRE(set.tasks.size() == 1);
  const auto& compose = set.tasks[0].environment.compose;
  const manifest::ComposeService* rag = compose.find("rag");
  REQUIRE(rag != nullptr);
  CHECK(compose.find("json-db") == nullptr);  // not used by this task: dropped
  auto full = manifest::builtin_stack("full");
  REQUIRE(full.has_value());
  REQUIRE(rag->command.has_value());
  CHECK(*rag->command == *full->find("rag")->command);
  CHECK(join(*rag->command, " ") == "forgectl serve rag --port 8001");

  std::string warned = set.report();
  CHECK(has(warned,
            "task.yaml:9:17: warning: the knowledge base leaves out 'kb/expected_answer.md' (its name starts "
            "with 'expected')"));
  CHECK(has(warned, "warning: the knowledge base leaves out 'kb/notes.md' (a symlink that leaves corpus_dir)"));

  // search_kb is a read-only tool: golden replay steps over it.
  CHECK(trial::builtin_golden_replayers().find("search_kb") != nullptr);
}

TEST_CASE("rag use: a corpus that cannot be served, or search_kb without one, is a preflight error") {
  SUBCASE("search_kb without initial_state.rag") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir());
    std::string yaml = *read_text(dir.file("task.yaml"));
    const std::string block = "initial_state:\n  rag:\n    corpus_dir: kb\n";
    yaml.replace(yaml.find(block), block.size(), "");
    dir.write("task.yaml", yaml);
    CHECK(has(problems(dir.dir()),
              "tool 'search_kb' searches the task's knowledge base, and the task gives none: add "
              "initial_state.rag.corpus_dir"));
  }
  SUBCASE("a compose file without rag, or stack: none") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir(), "environment: {compose_file: compose.yaml}\n");
    dir.write("compose.yaml", "services:\n  web:\n    image: forgectl/services:local\n");
    CHECK(has(problems(dir.dir()), "task.yaml:9:17: initial_state.rag.corpus_dir: the compose file '"));
    TempFiles none("forgectl-tfrag-");
    tf_rag::write_task(none.dir(), "environment: {stack: none}\n");
    CHECK(has(problems(none.dir()), "`stack: none` starts no services, so nothing would serve the knowledge base"));
  }
  SUBCASE("stack: full, and a compose file with rag, are fine") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir(), "environment: {stack: full}\n");
    auto set = load_set(dir.dir());
    INFO(set.report());
    CHECK(set.ok());
  }
  SUBCASE("an empty corpus: no document, or only blank ones and withheld ones") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir());
    for (const auto& d : tf_rag::documents()) fs::remove(dir.file(std::string("kb/") + d.doc_id));
    dir.write("kb/blank.md", " \n\n\t\n");
    std::string text = problems(dir.dir());
    CAPTURE(text);
    CHECK(has(text,
              "task.yaml:9:17: initial_state.rag.corpus_dir 'kb' holds no documents: a document is a .md or "
              ".txt file with text ("));
  }
  SUBCASE("an oversized corpus") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir());
    std::string big(limits::kMaxRagCorpusBytes / 2, 'x');
    for (int i = 0; i < 3; ++i) {
      std::ofstream f(dir.file("kb/big" + std::to_string(i) + ".txt"));
      f << big;
    }
    std::string text = problems(dir.dir());
    CAPTURE(text);
    CHECK(has(text,
              "initial_state.rag.corpus_dir 'kb': its documents add up to more than 16.0 MiB, the limit "
              "(reached at 'big1.txt')"));
  }
  SUBCASE("too many documents") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir());
    fs::create_directories(dir.file("kb/many"));
    for (std::size_t i = 0; i < limits::kMaxRagDocuments; ++i)
      std::ofstream(dir.file("kb/many/" + std::to_string(i) + ".md").c_str()) << "x";
    std::string text = problems(dir.dir());
    CHECK(has(text,
              "initial_state.rag.corpus_dir 'kb': it holds more than 2000 documents (.md and .txt files), the limit"));
  }
  SUBCASE("a document that is not text") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir());
    dir.write("kb/scan.md", std::string("PK\x03\x04\xff\xfe", 6));
    CHECK(has(problems(dir.dir()), "initial_state.rag.corpus_dir 'kb': 'scan.md' is not UTF-8 text"));
  }
  SUBCASE("the task directory itself, or a directory holding a task") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir());
    std::string yaml = *read_text(dir.file("task.yaml"));
    yaml.replace(yaml.find("corpus_dir: kb"), 14, "corpus_dir: .");
    dir.write("task.yaml", yaml);
    CHECK(has(problems(dir.dir()), "initial_state.rag.corpus_dir '.' holds a task's own files ('task.yaml')"));
    TempFiles nested("forgectl-tfrag-");
    tf_rag::write_task(nested.dir());
    nested.write("kb/other/task.yaml", "task_id: other\n");
    CHECK(has(problems(nested.dir()), "holds a task's own files ('kb/other/task.yaml')"));
  }
  SUBCASE("the local executor") {
    TempFiles dir("forgectl-tfrag-");
    tf_rag::write_task(dir.dir());
    std::string yaml = *read_text(dir.file("task.yaml"));
    yaml.replace(yaml.find("  user:\n    enabled: []\n"), 24, "  user:\n    enabled: []\n  executor: local\n");
    dir.write("task.yaml", yaml);
    CHECK(has(problems(dir.dir()), "initial_state.rag needs the rag service (a local trial starts no services)"));
  }
}

TEST_CASE("rag use: a corpus_dir that does not exist is a load error at its line") {
  TempFiles dir("forgectl-tfrag-");
  tf_rag::write_task(dir.dir());
  fs::remove_all(dir.file("kb"));
  std::string text = problems(dir.dir());
  CHECK(has(text, "task.yaml:9:17: initial_state.rag.corpus_dir: 'kb' does not exist"));
}

TEST_CASE(
    "rag use: the example pack's knowledge base ranks the intended document first for 13 of its 14 questions "
    "(docs/services.md, \"Ranking compared with Tolokaforge\")") {
  auto task = manifest::load_task(source_dir() + "/examples/tasks/kb-answer/task.yaml");
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  auto corpus = manifest::load_rag_corpus(*task);
  REQUIRE(corpus.has_value());
  std::vector<services::RagDocument> docs;
  for (const auto& d : corpus->documents) docs.push_back({d.doc_id, d.source, "", d.text});
  auto index = services::RagIndex::build(std::move(docs));
  REQUIRE(index.has_value());
  CHECK((*index)->passages() > (*index)->documents());  // the handbook is searched passage by passage
  const std::vector<std::pair<const char*, const char*>> questions = {
      {"How long until the refund arrives?", "orders/refunds.md"},
      {"refund without a receipt", "orders/refunds.md"},
      {"Can a customer get their money back without the receipt?", "orders/refunds.md"},
      {"when will my refunded payment show up", "orders/refunds.md"},
      {"how many days do I have to return an item", "orders/returns.md"},
      {"where do I print a return label?", "orders/returns.md"},
      {"standard shipping time", "orders/shipping.md"},
      {"I forgot my password", "account/passwords.md"},
      {"the reset link expired", "account/passwords.md"},
      {"are boots covered by a warranty?", "warranty.txt"},
      {"defective jacket after a year", "warranty.txt"},
      {"what goes in the shift log at closing time", "store-handbook.md"},
      {"fitting rooms checklist", "store-handbook.md"},
  };
  for (const auto& [q, want] : questions) {
    CAPTURE(std::string(q));
    auto hits = (*index)->search(q, 3);
    REQUIRE(hits.has_value());
    REQUIRE_FALSE(hits->empty());
    CHECK((*hits)[0].doc_id == want);
  }
  // The miss: "delivery" is a word of the handbook's Deliveries section, and the shipping page says
  // "shipping" (a synonym only an embedding would see).
  auto miss = (*index)->search("How fast is express delivery?", 3);
  REQUIRE(miss.has_value());
  CHECK((*miss)[0].doc_id == "store-handbook.md");
}
