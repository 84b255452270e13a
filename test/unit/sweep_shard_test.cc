// Shards: "i/N" parsing, and a partition of the trial matrix that is exact, balanced and stable.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "results/outcome.h"
#include "trial/agent_choice.h"
#include "sweep/shard.h"

using namespace forge;
using namespace forge::sweep;
using namespace forge::results;
using namespace forge::trial;

namespace {

std::string parse_error(const std::string& text) {
  auto s = parse_shard(text);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().code == Errc::kInvalid);
  return s.error().what();
}

struct Trial {
  std::string task, agent;
  int index;
};

// 50 tasks × 3 agents × 4 trials.
std::vector<Trial> matrix() {
  std::vector<Trial> out;
  for (int t = 0; t < 50; ++t)
    for (const char* a : {"oracle", "llm:gpt", "llm:claude"})
      for (int i = 0; i < 4; ++i) out.push_back({"task_" + std::to_string(t), a, i});
  return out;
}

}  // namespace

TEST_CASE("parse_shard: i/N, 0-based") {
  auto s = parse_shard("1/4");
  REQUIRE(s.has_value());
  CHECK(s->index == 1);
  CHECK(s->count == 4);
  CHECK(to_string(*s) == "1/4");
  CHECK(parse_shard("0/1").has_value());
  CHECK(parse_shard("99/100").has_value());
}

TEST_CASE("parse_shard: clear errors") {
  CHECK(parse_error("3/3") == "--shard '3/3': the index must be below the count (0-based: 0/3, 1/3, 2/3)");
  CHECK(parse_error("12/10").find("0/10 … 9/10") != std::string::npos);
  CHECK(parse_error("0/0") == "--shard '0/0': the count must be at least 1");
  for (const char* bad : {"3", "", "/4", "1/", "a/4", "1/4x", " 1/4", "1/4 ", "-1/4", "+1/4", "1/-4", "1//4", "1/4/5",
                          "1.0/4", "99999999999/4"})
    CHECK_MESSAGE(parse_error(bad).find("not i/N") != std::string::npos, bad);
}

TEST_CASE("in_shard: every trial is in exactly one shard, for N = 1..7") {
  auto trials = matrix();
  REQUIRE(trials.size() == 600);
  for (int n = 1; n <= 7; ++n) {
    std::vector<int> per_shard(static_cast<std::size_t>(n));
    for (const auto& t : trials) {
      int owners = 0;
      for (int i = 0; i < n; ++i)
        if (in_shard(Shard{i, n}, t.task, t.agent, t.index)) {
          ++owners;
          ++per_shard[static_cast<std::size_t>(i)];
        }
      CHECK_MESSAGE(owners == 1, t.task, " ", t.agent, " ", t.index, " N=", n);
    }
    if (n == 4)
      for (int c : per_shard) {
        CHECK(c >= 100);
        CHECK(c <= 200);
      }
  }
}

TEST_CASE("in_shard: the split depends on the trial alone, not on the order or the other tasks") {
  auto trials = matrix();
  std::map<std::string, int> first;  // trial → shard of 5
  auto shard_of = [](const Trial& t) {
    for (int i = 0; i < 5; ++i)
      if (in_shard(Shard{i, 5}, t.task, t.agent, t.index)) return i;
    return -1;
  };
  for (const auto& t : trials) first[t.task + "|" + t.agent + "|" + std::to_string(t.index)] = shard_of(t);
  std::mt19937 rng(7);
  std::shuffle(trials.begin(), trials.end(), rng);
  trials.push_back({"task_new", "oracle", 0});  // adding a task moves no other trial
  for (const auto& t : trials) {
    auto it = first.find(t.task + "|" + t.agent + "|" + std::to_string(t.index));
    if (it != first.end()) CHECK(shard_of(t) == it->second);
  }
  CHECK(in_shard(Shard{}, "any", "agent", 3));  // the default shard is the whole matrix
}

TEST_CASE("shard auto: the Slurm array task's shard, from the array's variables") {
  auto slurm = [](std::string id, std::string count, std::string min, std::string max) {
    HostSettings::Slurm s;
    s.array_task_id = id, s.array_task_count = count, s.array_task_min = min, s.array_task_max = max;
    return shard_from_slurm(s);
  };
  auto ok = slurm("1", "4", "0", "3");
  REQUIRE(ok.has_value());
  CHECK(to_string(*ok) == "1/4");
  auto offset = slurm("3", "4", "1", "4");  // --array=1-4: the index counts from the array's first
  REQUIRE(offset.has_value());
  CHECK(to_string(*offset) == "2/4");
  CHECK(shard_dir("/shared/sweep/", *ok) == "/shared/sweep/shards/1-of-4");

  auto error = [](const Result<Shard>& r) {
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::kInvalid);
    return r.error().what();
  };
  CHECK(
      error(slurm("", "", "", "")) ==
      "--shard auto: not in a Slurm array job (SLURM_ARRAY_TASK_ID is not set); submit with forgectl slurm submit, or "
      "give --shard i/N");
  CHECK(error(slurm("2", "2", "0", "2")) ==
        "--shard auto: the array's indexes are not contiguous (SLURM_ARRAY_TASK_MIN 0, MAX 2, COUNT 2): submit it with "
        "--array=0-1");
  CHECK(error(slurm("1", "", "0", "1")).find("SLURM_ARRAY_TASK_COUNT is '', not a number") != std::string::npos);
  CHECK(error(slurm("x", "2", "0", "1")).find("SLURM_ARRAY_TASK_ID is 'x'") != std::string::npos);
  CHECK(error(slurm("5", "2", "0", "1")).find("SLURM_ARRAY_TASK_ID 5 is outside the array") != std::string::npos);
}

TEST_CASE("shard auto: HostSettings reads Slurm's variables in main, not deep in a layer") {
  std::map<std::string, std::string> vars{{"SLURM_ARRAY_TASK_ID", "1"},  {"SLURM_ARRAY_TASK_COUNT", "2"},
                                          {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "1"},
                                          {"SLURM_ARRAY_JOB_ID", "77"},  {"SLURMD_NODENAME", "n3"}};
  auto h = HostSettings::from([&](const char* n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
  CHECK(h.slurm.array_task_id == "1");
  CHECK(h.slurm.array_job_id == "77");
  CHECK(h.slurm.node == "n3");
  auto s = shard_from_slurm(h.slurm);
  REQUIRE(s.has_value());
  CHECK(to_string(*s) == "1/2");
  CHECK(HostSettings::defaults().slurm.array_task_id.empty());
}
