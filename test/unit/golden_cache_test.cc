// The golden cache without Docker: one computation (two replays) per key shared by every caller,
// its file read back by a later run only under the host's key, a changed or foreign file refused,
// and two replays that differ kept as not deterministic with one warning naming the field.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/sha256.h"
#include "support/stack_env.h"
#include "trial/golden_cache.h"

using namespace forge;
using namespace forge::trial;
namespace fs = std::filesystem;

namespace {

const std::string kSecret(64, 'a');
const std::vector<std::string> kTools = {"checkout"};

GoldenReplay replay_of(const std::string& state) {
  return GoldenReplay{{{"checkout", ""}}, state, sha256_hex(state)};
}

GoldenEntry entry_of(const std::string& state) {
  GoldenEntry e;
  e.task_id = "t";
  e.key = std::string(64, 'b');
  e.replay = replay_of(state);
  return e;
}

}  // namespace

TEST_CASE("golden cache: computed once with two replays, then reused; a later run reads the file back") {
  forge::test::TempDir dir;
  std::ostringstream log_text;
  Logger log{log_text, LogLevel::kInfo};
  std::atomic<int> calls{0};
  auto replay = [&calls]() -> Result<GoldenReplay> {
    ++calls;
    return replay_of(R"({"loans":[{"id":"L-2"}]})");
  };
  const std::string key(64, 'c');
  GoldenCache cache(dir.path(), kSecret, &log);
  auto a = cache.get("t", key, kTools, replay);
  REQUIRE(a.has_value());
  CHECK(a->source == GoldenSource::kComputed);
  CHECK(a->replays == 2);
  CHECK(a->entry->deterministic);
  auto b = cache.get("t", key, kTools, replay);
  REQUIRE(b.has_value());
  CHECK(b->source == GoldenSource::kReused);
  CHECK(b->replays == 0);
  CHECK(calls == 2);

  GoldenCache later(dir.path(), kSecret, &log);  // --resume: a new process, the same run dir
  auto c = later.get("t", key, kTools, replay);
  REQUIRE(c.has_value());
  CHECK(c->source == GoldenSource::kReused);
  CHECK(c->entry->replay.hash == a->entry->replay.hash);
  CHECK(calls == 2);

  GoldenCache elsewhere(dir.path(), std::string(64, 'd'), &log);  // another host's key: computed again
  auto d = elsewhere.get("t", key, kTools, replay);
  REQUIRE(d.has_value());
  CHECK(d->source == GoldenSource::kComputed);
  CHECK(calls == 4);
  CHECK(log_text.str().find("is not trusted (its HMAC does not match") != std::string::npos);
}

TEST_CASE("golden cache: two replays that differ are kept as not deterministic, warned once with the field") {
  forge::test::TempDir dir;
  std::ostringstream log_text;
  Logger log{log_text, LogLevel::kInfo};
  std::atomic<int> calls{0};
  auto replay = [&calls]() -> Result<GoldenReplay> {
    int n = ++calls;
    return replay_of(R"({"clock":[{"id":"c","at":)" + std::to_string(n) + "}]}");
  };
  GoldenCache cache(dir.path(), kSecret, &log);
  auto a = cache.get("clocky", std::string(64, 'e'), kTools, replay);
  REQUIRE(a.has_value());
  CHECK_FALSE(a->entry->deterministic);
  CHECK(a->entry->differing.find("clock.at") != std::string::npos);
  auto b = cache.get("clocky", std::string(64, 'e'), kTools, replay);
  REQUIRE(b.has_value());
  CHECK_FALSE(b->entry->deterministic);
  CHECK(calls == 2);
  const std::string text = log_text.str();
  const std::string warning = "golden replay of task 'clocky' is not deterministic";
  REQUIRE(text.find(warning) != std::string::npos);
  CHECK(text.find(warning, text.find(warning) + 1) == std::string::npos);
}

TEST_CASE("golden cache: a replay that fails keeps nothing; the next caller computes again") {
  forge::test::TempDir dir;
  std::ostringstream log_text;
  Logger log{log_text, LogLevel::kInfo};
  int calls = 0;
  GoldenCache cache(dir.path(), kSecret, &log);
  auto bad = cache.get("t", std::string(64, 'f'), kTools, [&]() -> Result<GoldenReplay> {
    ++calls;
    return fail(Errc::kUnavailable, "the daemon went away");
  });
  CHECK_FALSE(bad.has_value());
  auto good = cache.get("t", std::string(64, 'f'), kTools, [&]() -> Result<GoldenReplay> { return replay_of("{}"); });
  REQUIRE(good.has_value());
  CHECK(good->source == GoldenSource::kComputed);
}

TEST_CASE("golden cache files: only an unchanged file of this key, these actions and this host's key is trusted") {
  const std::string key(64, 'b');
  const std::string text = golden_file_text(entry_of(R"({"a":[1]})"), kSecret);
  CHECK(parse_golden_file(text, key, kTools, kSecret).has_value());
  auto why = [&](const std::string& t, const std::string& k, const std::vector<std::string>& tools,
                 const std::string& secret) {
    auto r = parse_golden_file(t, k, tools, secret);
    return r ? std::string("trusted") : r.error().what();
  };
  CHECK(why(text, key, kTools, std::string(64, '0')).find("HMAC does not match") != std::string::npos);
  CHECK(why(text, key, kTools, "").find("no key") != std::string::npos);
  CHECK(why(text, std::string(64, '9'), kTools, kSecret).find("content key") != std::string::npos);
  CHECK(why(text, key, {"other"}, kSecret).find("golden actions") != std::string::npos);
  // Another state with its own hash, signed with a key the attacker chose: refused all the same.
  CHECK(why(golden_file_text(entry_of(R"({"a":[]})"), "guess"), key, kTools, kSecret).find("HMAC") != std::string::npos);
  // A state that does not hash to the recorded hash, even under the right key.
  auto e = entry_of(R"({"a":[1]})");
  e.replay.state_json = R"({"a":[2]})";
  CHECK(why(golden_file_text(e, kSecret), key, kTools, kSecret).find("does not hash") != std::string::npos);
}

TEST_CASE("golden cache key: made once in the state dir, 0600, the same on every later call") {
  forge::test::TempDir dir;
  auto a = golden_cache_secret(dir.path() + "/state");
  REQUIRE(a.has_value());
  CHECK(a->size() == 64);
  auto b = golden_cache_secret(dir.path() + "/state");
  REQUIRE(b.has_value());
  CHECK(*a == *b);
  CHECK((fs::status(dir.path() + "/state/golden-cache.key").permissions() & fs::perms::others_read) == fs::perms::none);
}
