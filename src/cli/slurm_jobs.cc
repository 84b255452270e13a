// The batch scripts, sbatch's and squeue's output, and shard progress for `forgectl slurm`.
#include "cli/slurm_jobs.h"

#include <cctype>
#include <filesystem>

#include "core/limits.h"
#include "results/run_json.h"
#include "results/trial_record.h"
#include "sweep/shard.h"

namespace forge::cli::slurm {

namespace fs = std::filesystem;

namespace {

// A job name from DIR's last component: Slurm shows it in squeue, so it says which sweep.
std::string job_name(const std::string& out) {
  std::string base = fs::path(out).filename().string(), name;
  for (char c : base) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  if (name.size() > 40) name.resize(40);
  return "forgectl-" + (name.empty() ? std::string("sweep") : name);
}

std::string quoted_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += " " + shell_quote(w);
  return out;
}

}  // namespace

std::string files_dir(const std::string& out) { return out + "/slurm"; }
std::string merged_dir(const std::string& out) { return out + "/merged"; }

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shard_script(const SubmitSpec& spec) {
  std::string n = std::to_string(spec.shards);
  std::vector<std::string> run{"run"};
  run.insert(run.end(), spec.run_args.begin(), spec.run_args.end());
  for (const char* w :
       {"--out", spec.out.c_str(), "--shard", "auto", "--resume", "--build-images", "--progress", "plain"})
    run.push_back(w);
  return "#!/bin/sh\n"
         "# Written by forgectl slurm submit (docs/scale.md): one shard of the sweep in\n"
         "# " +
         spec.out +
         " per array task. Each runs on its node's own Docker daemon, builds the images\n"
         "# its node lacks (once per node, under a lock), and resumes where it stopped when Slurm requeues it.\n"
         "#SBATCH --job-name=" +
         job_name(spec.out) +
         "\n"
         "#SBATCH --array=0-" +
         std::to_string(spec.shards - 1) +
         "\n"
         "#SBATCH --requeue\n"
         "#SBATCH --cpus-per-task=" +
         std::to_string(spec.cpus_per_shard) +
         "\n"
         "#SBATCH --open-mode=append\n"
         "#SBATCH --output=" +
         files_dir(spec.out) +
         "/logs/shard-%a.out\n"
         "# Shard i of " +
         n + " writes to " + spec.out + "/shards/<i>-of-" + n +
         ".\n"
         "exec " +
         shell_quote(spec.forgectl) + quoted_words(run) + "\n";
}

std::string merge_script(const SubmitSpec& spec) {
  std::vector<std::string> merge{"merge", "--out", merged_dir(spec.out)};
  for (int i = 0; i < spec.shards; ++i) merge.push_back(sweep::shard_dir(spec.out, {i, spec.shards}));
  return "#!/bin/sh\n"
         "# Written by forgectl slurm submit (docs/scale.md): merges the shards of the sweep in\n"
         "# " +
         spec.out +
         " once every task of the array has ended (afterany). A shard that is missing\n"
         "# or unfinished is named and nothing is merged: finish it, then run this again.\n"
         "#SBATCH --job-name=" +
         job_name(spec.out) +
         "-merge\n"
         "#SBATCH --cpus-per-task=1\n"
         "#SBATCH --open-mode=append\n"
         "#SBATCH --output=" +
         files_dir(spec.out) +
         "/logs/merge.out\n"
         "exec " +
         shell_quote(spec.forgectl) + quoted_words(merge) + "\n";
}

Result<std::string> parse_job_id(std::string_view sbatch_output) {
  std::string_view s = sbatch_output;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  std::string_view id = s.substr(0, s.find(';'));
  if (id.empty() || id.size() > 20 || id.find_first_not_of("0123456789") != std::string_view::npos)
    return fail(Errc::kIo, "sbatch --parsable printed '" + std::string(s.substr(0, 200)) + "', not a job id");
  return std::string(id);
}

std::map<std::string, QueuedJob> parse_squeue(std::string_view text) {
  std::map<std::string, QueuedJob> jobs;
  std::size_t lines = 0;
  while (!text.empty() && lines++ < limits::kMaxSlurmQueueLines) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::vector<std::string> f;
    std::size_t from = 0;
    for (std::size_t bar; (bar = line.find('|', from)) != std::string_view::npos; from = bar + 1)
      f.emplace_back(line.substr(from, bar - from));
    f.emplace_back(line.substr(from));
    if (f.size() != 4 || f[0].empty()) continue;
    jobs[f[0]] = {f[0], f[1], f[2], f[3]};
  }
  return jobs;
}

Result<ShardProgress> read_shard(const std::string& dir) {
  ShardProgress p;
  std::error_code ec;
  std::string run_path = dir + "/run.json", jsonl = dir + "/trials.jsonl";
  if (!fs::exists(run_path, ec)) return p;
  auto run = results::RunJson::read(run_path);
  if (!run) return run.fail();
  p.started = true;
  p.status = run->status;
  p.started_at = run->started_at;
  p.planned = run->summary ? run->summary->planned : run->planned;
  if (!fs::exists(jsonl, ec)) return p;
  auto log = results::read_trials_jsonl(jsonl);
  if (!log) return log.fail();
  for (const auto& t : log->trials) {
    ++p.done;
    p.graded += t.graded();
    p.passed += t.graded() && t.binary_pass;
    p.infra_errors += t.outcome == results::Outcome::kInfraError;
    p.cost_usd += t.cost_usd;
    p.cost_partial = p.cost_partial || !t.cost_known;
  }
  return p;
}

}  // namespace forge::cli::slurm
