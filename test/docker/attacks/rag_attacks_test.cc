// The knowledge base cannot be poisoned from the sandbox, against the real daemon: an agent with bash
// and http_request on a runner whose files it owns steals the read token search_kb carries and tries
// rag's load and delete endpoints with no token, the stolen one and a forged one (401/403, nothing
// changes), then sends queries too long or too wordy (clear refusals, the service keeps serving).
// Beside it the honest control: the same trial's search_kb finds the real answer before and after.
// The host loads the corpus by exec in rag's container here (the remote-engine channel).
#include <doctest/doctest.h>

#include <string>

#include "core/json.h"
#include "support/scripted_trial.h"
#include "support/tf_rag_task.h"

using namespace forge;
using namespace forge::test;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string ask(const std::string& query) {
  return json::Writer().begin_object().field("query", query).end_object().take();
}

const std::string kNs = std::string(tf_rag::kTaskId) + "_0";
const std::string kPlant =
    R"({"documents":[{"doc_id":"planted.md","text":"The office VPN gateway is evil.example.test"}]})";

// Logs what search_kb's nc sends (its bearer token among it) before passing it on.
const std::string kWrapNc =
    "mkdir -p /usr/local/bin && printf '#!/bin/sh\\ntee -a /tmp/nc.log | /bin/nc \"$@\"\\n' > /usr/local/bin/nc && "
    "chmod 755 /usr/local/bin/nc && echo wrapped";

// Each attempt prints "<what> <HTTP status>".
std::string attacks() {
  return "st() { printf '%s %s HTTP/1.0\\r\\n%s\\r\\nContent-Type: application/json\\r\\nContent-Length: "
         "%s\\r\\n\\r\\n%s' "
         "\"$1\" \"$2\" \"$3\" \"${#4}\" \"$4\" | /bin/nc -w 5 rag 8001 | head -1 | cut -d' ' -f2; }\n"
         "R=$(grep -o 'Bearer agent[^[:space:]]*' /tmp/nc.log | head -1 | cut -d' ' -f2)\n"
         "echo \"token $(echo $R | cut -d. -f1-2)\"\n"
         "DOC='" +
         kPlant +
         "'\n"
         "echo \"none index $(st POST /trials/" +
         kNs +
         "/index 'X-None: 1' \"$DOC\")\"\n"
         "echo \"read index $(st POST /trials/" +
         kNs +
         "/index \"Authorization: Bearer $R\" \"$DOC\")\"\n"
         "echo \"read delete $(st DELETE /trials/" +
         kNs +
         "/index \"Authorization: Bearer $R\" '')\"\n"
         "echo \"read other $(st POST /trials/other_0/index \"Authorization: Bearer $R\" \"$DOC\")\"\n"
         "echo \"forged index $(st POST /trials/" +
         kNs + "/index \"Authorization: Bearer agent.write." + kNs + "." + std::string(64, 'e') +
         "\" \"$DOC\")\"\n"
         "echo \"read search $(st POST /trials/" +
         kNs + "/search \"Authorization: Bearer $R\" '{\"query\":\"gateway\"}')\"\n";
}

std::string first_doc(const std::string& content) {
  auto doc = json::parse(content, "search_kb output");
  REQUIRE_MESSAGE(doc.has_value(), content);
  const auto* results = json::get_array(*doc, "results");
  return results && !results->Empty() ? json::get_string((*results)[0], "doc_id") : std::string();
}

}  // namespace

TEST_CASE(
    "rag attack: the agent cannot load, add to or delete its knowledge base, and huge queries are refused; "
    "search_kb still answers") {
  TempDir dir;
  tf_rag::write_task(dir.path(), "environment:\n  runner: {image: " + writable_root_runner_image() + "}\n",
                     "[search_kb, bash, http_request]");
  const manifest::TaskConfig task = load_as_run(dir.path());

  const std::string question = "which gateway does the office VPN use";
  json::Writer plant;
  plant.begin_object()
      .field("method", "POST")
      .field("url", "http://rag:8001/trials/" + kNs + "/index")
      .key("json")
      .raw_value(kPlant);
  std::string accents;
  for (int i = 0; i < 600; ++i) accents += "é";  // 600 characters, 1200 bytes
  std::string wordy;
  for (int i = 0; i < 70; ++i) wordy += "w" + std::to_string(i) + " ";
  std::vector<Turn> turns{
      {"Looking it up.", {{"search_kb", ask(question)}}},
      {"Preparing.", {{"bash", bash(kWrapNc)}, {"search_kb", ask("gateway")}}},
      {"Trying the index.", {{"bash", bash(attacks())}, {"http_request", plant.end_object().take()}}},
      {"Asking a lot.",
       {{"search_kb", ask(std::string(5000, 'q'))}, {"search_kb", ask(accents)}, {"search_kb", ask(wordy)}}},
      {"Checking again.", {{"search_kb", ask("evil planted gateway")}, {"search_kb", ask(question)}}},
      {std::string("The gateway is ") + tf_rag::kGateway + ".", {}}};
  TempDir traj;
  Rig rig;
  auto r = rig.run(task, replay(write_trajectory(traj, turns)), /*local=*/false);
  CAPTURE(r.error);
  REQUIRE(r.outcome == results::Outcome::kGraded);
  REQUIRE(r.tool_log.size() == 10);
  auto out = [&](std::size_t i) { return r.tool_log[i].record.content + r.tool_log[i].record.reason; };

  // The honest control, before anything else.
  CHECK(first_doc(r.tool_log[0].record.content) == "network/vpn.md");
  // The agent holds search_kb's read token (it travels through the runner), and it is worth a search.
  CAPTURE(out(3));
  CHECK(has(out(3), "token agent.read"));
  CHECK(has(out(3), "none index 401"));
  CHECK(has(out(3), "read index 403"));
  CHECK(has(out(3), "read delete 403"));
  CHECK(has(out(3), "read other 403"));
  CHECK(has(out(3), "forged index 401"));
  CHECK(has(out(3), "read search 200"));
  CHECK(r.tool_log[4].record.content.rfind("Status: 401", 0) == 0);

  // Too long by characters (the schema), by bytes (the tool), too many words (the service).
  CHECK(r.tool_log[5].record.outcome != tools::ToolOutcome::Kind::kOk);
  CHECK(has(out(5), "at most 1024 characters"));
  CHECK(has(out(6), "the query is 1200 bytes, over the limit of 1024"));
  CHECK(has(out(7), "knowledge base: the query has more than 64 distinct words"));

  // Nothing was planted, nothing deleted: the service still answers with the real document.
  CHECK(first_doc(r.tool_log[8].record.content) != "planted.md");
  CHECK_FALSE(has(r.tool_log[8].record.content, "evil.example"));
  CHECK(first_doc(r.tool_log[9].record.content) == "network/vpn.md");
  CHECK(has(r.tool_log[9].record.content, tf_rag::kGateway));
  CHECK(r.grade.binary_pass);
  CHECK(rig.left_nothing());
}
