// Shards: parsing "i/N" and the hash that assigns each trial to one shard.
#include "sweep/shard.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "core/sha256.h"

namespace forge::sweep {

namespace {

// A non-negative decimal int made of digits only (no sign, no spaces); -1 for anything else.
int parse_count(std::string_view s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return -1;
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return -1;
  return v;
}

std::string valid_examples(int count) {
  if (count <= 4) {
    std::string out;
    for (int i = 0; i < count; ++i) out += (i ? ", " : "") + std::to_string(i) + "/" + std::to_string(count);
    return out;
  }
  std::string n = std::to_string(count);
  return "0/" + n + " … " + std::to_string(count - 1) + "/" + n;
}

}  // namespace

Result<Shard> parse_shard(std::string_view text) {
  std::string quoted = "--shard '" + std::string(text) + "'";
  std::size_t slash = text.find('/');
  if (slash == std::string_view::npos)
    return fail(Errc::kInvalid, quoted + ": not i/N (the 0-based shard index, a slash, the shard count: 0/4)");
  int index = parse_count(text.substr(0, slash));
  int count = parse_count(text.substr(slash + 1));
  if (index < 0 || count < 0)
    return fail(Errc::kInvalid, quoted + ": not i/N (the 0-based shard index, a slash, the shard count: 0/4)");
  if (count < 1) return fail(Errc::kInvalid, quoted + ": the count must be at least 1");
  if (index >= count)
    return fail(Errc::kInvalid,
                quoted + ": the index must be below the count (0-based: " + valid_examples(count) + ")");
  return Shard{index, count};
}

bool in_shard(const Shard& s, const std::string& task_id, const std::string& agent, int trial_index) {
  if (s.count <= 1) return true;
  Sha256 h;
  h.update(task_id);
  h.update("\x1f");
  h.update(agent);
  h.update("\x1f");
  h.update(std::to_string(trial_index));
  auto d = h.digest();
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[static_cast<std::size_t>(i)];
  return v % static_cast<std::uint64_t>(s.count) == static_cast<std::uint64_t>(s.index);
}

std::string to_string(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

Result<Shard> shard_from_slurm(const HostSettings::Slurm& slurm) {
  if (slurm.array_task_id.empty())
    return fail(Errc::kInvalid,
                "--shard auto: not in a Slurm array job (SLURM_ARRAY_TASK_ID is not set); submit with forgectl slurm "
                "submit, or give --shard i/N");
  struct Var {
    const char* name;
    const std::string& text;
    int value = -1;
  };
  Var id{"SLURM_ARRAY_TASK_ID", slurm.array_task_id}, count{"SLURM_ARRAY_TASK_COUNT", slurm.array_task_count},
      min{"SLURM_ARRAY_TASK_MIN", slurm.array_task_min}, max{"SLURM_ARRAY_TASK_MAX", slurm.array_task_max};
  for (Var* v : {&id, &count, &min, &max}) {
    v->value = parse_count(v->text);
    if (v->value < 0)
      return fail(Errc::kInvalid, std::string("--shard auto: ") + v->name + " is '" + v->text +
                                      "', not a number (is this an array job?)");
  }
  std::string vars = "SLURM_ARRAY_TASK_MIN " + min.text + ", MAX " + max.text + ", COUNT " + count.text;
  if (count.value < 1 || max.value < min.value || max.value - min.value + 1 != count.value)
    return fail(Errc::kInvalid, "--shard auto: the array's indexes are not contiguous (" + vars +
                                    "): submit it with --array=0-" + std::to_string(std::max(count.value, 1) - 1));
  if (id.value < min.value || id.value > max.value)
    return fail(Errc::kInvalid,
                "--shard auto: SLURM_ARRAY_TASK_ID " + id.text + " is outside the array (" + vars + ")");
  return Shard{id.value - min.value, count.value};
}

std::string shard_dir(const std::string& out, const Shard& s) {
  std::string base = out;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base + "/shards/" + std::to_string(s.index) + "-of-" + std::to_string(s.count);
}

}  // namespace forge::sweep
