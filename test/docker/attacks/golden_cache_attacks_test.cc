// Red-team attack on the golden cache, against the real daemon: whoever can write the run directory
// rewrites DIR/golden/<key>.json so that the expected state is the untouched initial state — the
// state a do-nothing agent leaves — with a matching hash and a checksum recomputed without the
// host's key. On --resume the file must be detected and the golden state computed again, so the
// noop agent still fails. The control: the honest file is reused on --resume, with no replay.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/json.h"
#include "core/sha256.h"
#include "results/trial_record.h"
#include "support/process.h"
#include "support/run_files.h"
#include "support/stack_env.h"
#include "trial/python_state.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

const results::TrialRecord& find(const std::vector<results::TrialRecord>& rs, const std::string& agent, int index) {
  for (const auto& r : rs)
    if (r.agent == agent && r.trial_index == index) return r;
  FAIL("no trial " << agent << " " << index);
  return rs.front();
}

// The cache file rewritten: the expected state is `forged` (with its own hash), the checksum a
// plain SHA-256 of the new entry (the attacker has no host key).
void forge_cache_file(const std::string& path, const std::string& forged) {
  auto doc = json_file(path);
  auto entry = json::parse(json::get_string(doc, "entry"), "entry");
  REQUIRE(entry.has_value());
  json::Writer w;
  w.begin_object();
  for (auto m = entry->MemberBegin(); m != entry->MemberEnd(); ++m) {
    std::string k = m->name.GetString();
    if (k == "state") w.field(k, forged);
    else if (k == "state_hash") w.field(k, sha256_hex(forged));
    else w.key(k).raw_value(json::to_string(m->value));
  }
  std::string body = w.end_object().take();
  json::Writer f;
  f.begin_object().field("format", 1).field("hmac", sha256_hex(body)).field("entry", body).end_object();
  std::ofstream(path) << f.take();
}

}  // namespace

TEST_CASE("attacks: a golden cache file rewritten in the run dir is detected on --resume; the honest one is reused") {
  TempDir dir;
  std::string task = copy_example_task("library-loans", dir.path() + "/tasks/library-loans");
  std::string out = dir.path() + "/run";
  auto first = forgectl_run({"run", task, "--agent", "oracle", "--agent", "noop", "--trials", "1", "--out", out});
  REQUIRE_MESSAGE(first.code == 0, first.text());
  auto rs = trials_of(out);
  const std::string key = find(rs, "oracle", 0).golden_key;
  REQUIRE(key.size() == 64);
  const std::string cache = out + "/golden/" + key + ".json";
  REQUIRE(fs::exists(cache));

  // The control: --resume with one more trial each reuses the honest file, replaying nothing.
  auto control = forgectl_run({"run", "--resume", "--out", out, "--trials", "2"});
  REQUIRE_MESSAGE(control.code == 0, control.text());
  CHECK(control.err.find("not trusted") == std::string::npos);
  rs = trials_of(out);
  for (const char* agent : {"oracle", "noop"}) {
    const auto& r = find(rs, agent, 1);
    CHECK(r.golden_source == "reused");
    CHECK(r.golden_replays == 0);
    CHECK(r.golden_key == key);
    CHECK(r.binary_pass == (std::string(agent) == "oracle"));
  }

  // The attack: the expected state becomes the untouched initial state, which is exactly what the
  // noop agent left (its hash is the "agent" hash its grade reported), so a trusted forgery would
  // pass it.
  auto initial = trial::python_stable_json(slurp(task + "/fixtures/db.json"), {});
  REQUIRE(initial.has_value());
  const std::string forged_hash = sha256_hex(*initial);
  REQUIRE_MESSAGE(all_files(out + "/trials").find("agent " + forged_hash.substr(0, 12)) != std::string::npos,
                  "the forged state is not the noop agent's: the attack would prove nothing");
  forge_cache_file(cache, *initial);

  auto attacked = forgectl_run({"run", "--resume", "--out", out, "--trials", "3"});
  REQUIRE_MESSAGE(attacked.code == 0, attacked.text());
  CHECK_MESSAGE(attacked.err.find(cache + " is not trusted") != std::string::npos, attacked.text());
  rs = trials_of(out);
  const auto& noop = find(rs, "noop", 2);
  CHECK_FALSE(noop.binary_pass);
  CHECK(noop.components.at("state_checks") < 1);
  CHECK(find(rs, "oracle", 2).binary_pass);
  // Computed again from the task (one of the two trials did, the other reused that), and the
  // file rewritten with the true state.
  CHECK(find(rs, "oracle", 2).golden_replays + noop.golden_replays == 2);
  CHECK(slurp(cache).find(forged_hash) == std::string::npos);
}
