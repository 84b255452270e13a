// `forgectl slurm submit TASKS... --shards N --out DIR [--config RUN.yaml] [--agent A]... [--trials N]
// [--concurrency K] [--forgectl PATH] [--dry-run] [--json] [-- SBATCH_ARGS...]` and
// `forgectl slurm status DIR [--json]`: a sweep as a Slurm array of shards and a merge job that
// waits for them (docs/scale.md).
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/run_models.h"
#include "cli/slurm_jobs.h"
#include "cli/verbs.h"
#include "core/files.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "manifest/run_config_parse.h"
#include "sweep/progress.h"
#include "sweep/shard.h"
#include "sweep/task_set.h"

namespace forge::cli {

namespace {

namespace fs = std::filesystem;

struct SubmitArgs {
  std::vector<std::string> tasks, agents, sbatch_args;
  std::string out, config, forgectl;
  int shards = 0, trials = 0, concurrency = 0;
  bool dry_run = false, json = false;
};

// CLI11 gives the words after `--` to the TASKS positional too (it fills positionals in order):
// they are the sbatch arguments, found in the command line as typed.
Status split_sbatch_args(SubmitArgs& a, const std::vector<std::string>& command_line) {
  auto submit = std::find(command_line.begin(), command_line.end(), "submit");
  auto dashes = std::find(submit, command_line.end(), "--");
  a.sbatch_args.clear();
  if (dashes == command_line.end()) return {};
  a.sbatch_args.assign(dashes + 1, command_line.end());
  if (a.sbatch_args.size() > a.tasks.size()) return fail(Errc::kInvalid, "the words after -- were not all read");
  a.tasks.resize(a.tasks.size() - a.sbatch_args.size());
  // The scripts set these; given again, they would split the sweep differently or lose its logs.
  for (const auto& w : a.sbatch_args)
    for (const char* own : {"--array", "-a", "--dependency", "-d", "--output", "-o", "--wrap", "--parsable"})
      if (w == own || starts_with(w, std::string(own) + "=") || (own[1] != '-' && starts_with(w, own) && w.size() > 2))
        return fail(Errc::kInvalid, "sbatch argument '" + w +
                                        "': forgectl slurm submit sets the array, the dependency and the logs itself");
  return {};
}

Status check_args(SubmitArgs& a) {
  if (a.tasks.empty()) return fail(Errc::kInvalid, "no tasks: give TASKS... before --");
  if (a.shards < 1 || a.shards > limits::kMaxSlurmShards)
    return fail(Errc::kInvalid,
                "--shards " + std::to_string(a.shards) + ": from 1 to " + std::to_string(limits::kMaxSlurmShards));
  if (a.trials < 0 || a.concurrency < 0) return fail(Errc::kInvalid, "--trials and --concurrency must be positive");
  a.out = fs::absolute(a.out).lexically_normal().string();
  while (a.out.size() > 1 && a.out.back() == '/') a.out.pop_back();
  // #SBATCH lines take no quoting, and Slurm expands % in --output.
  if (a.out.find_first_of(" \t\n\r%'\"\\") != std::string::npos)
    return fail(Errc::kInvalid,
                "--out '" + a.out + "': a Slurm job's paths cannot hold spaces, quotes, backslashes or %");
  for (auto& t : a.tasks) t = fs::absolute(t).lexically_normal().string();
  if (!a.config.empty()) a.config = fs::absolute(a.config).lexically_normal().string();
  std::error_code ec;
  if (fs::exists(slurm::merged_dir(a.out), ec) && !fs::is_empty(slurm::merged_dir(a.out), ec))
    return fail(Errc::kConflict, slurm::merged_dir(a.out) + " already holds a merged run: give a new --out");
  return {};
}

// Every task loads and passes the run's preflight checks before anything is queued: a typo must
// not cost N shards a place in the queue each (the same loader as `forgectl validate`).
Status check_tasks(Context& ctx, SubmitArgs& a) {
  manifest::RunConfig cfg;
  if (!a.config.empty()) {
    auto c = manifest::load_run_config(a.config);
    if (!c) return c.fail();
    cfg = std::move(*c);
  }
  if (a.agents.empty() && !cfg.models.count("agent"))
    return fail(Errc::kInvalid,
                "no agent: give --agent oracle|replay:FILE|noop|llm:MODEL, or models.agent in the run config");
  trial::PreflightInput in;
  in.run = &cfg;
  for (const auto& spec : a.agents.empty() ? std::vector<std::string>{"llm"} : a.agents) {
    auto c = parse_agent(spec, cfg);
    if (!c) return c.fail();
    in.agents.push_back(*c);
  }
  auto set = sweep::load_task_set(a.tasks, cfg.tasks_glob, in);
  if (!set.ok()) return fail(Errc::kInvalid, set.report() + "(nothing was submitted)");
  for (const auto& w : set.warnings()) ctx.log.warn(w.where.empty() ? w.message : w.where + ": " + w.message);
  return {};
}

Result<slurm::SubmitSpec> make_spec(const SubmitArgs& a) {
  slurm::SubmitSpec spec;
  spec.forgectl = a.forgectl;
  if (spec.forgectl.empty()) {
    std::error_code ec;
    spec.forgectl = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) return fail(Errc::kIo, "cannot resolve /proc/self/exe: " + ec.message() + "; give --forgectl PATH");
  }
  spec.forgectl = fs::absolute(spec.forgectl).lexically_normal().string();
  spec.out = a.out;
  spec.shards = a.shards;
  spec.cpus_per_shard = std::max(a.concurrency, 1);
  spec.run_args = a.tasks;
  if (!a.config.empty()) spec.run_args.insert(spec.run_args.end(), {"--config", a.config});
  for (const auto& ag : a.agents) spec.run_args.insert(spec.run_args.end(), {"--agent", ag});
  if (a.trials) spec.run_args.insert(spec.run_args.end(), {"--trials", std::to_string(a.trials)});
  if (a.concurrency) spec.run_args.insert(spec.run_args.end(), {"--concurrency", std::to_string(a.concurrency)});
  return spec;
}

Result<std::string> sbatch(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_process(argv);
  if (!r) return r.fail_with("running sbatch (is Slurm's client, slurm-client, installed?)");
  if (r->exit_code != 0)
    return fail(Errc::kUnavailable, "sbatch exited " + std::to_string(r->exit_code) + ": " + trim(r->err + r->out));
  return slurm::parse_job_id(r->out);
}

Status write_script(const std::string& path, const std::string& text) {
  if (auto st = write_file_atomic(path, text); !st) return st;
  ::chmod(path.c_str(), 0755);
  return {};
}

struct Submitted {
  std::string array_job, merge_job;
};

Result<Submitted> submit(const SubmitArgs& a, const slurm::SubmitSpec& spec) {
  std::string dir = slurm::files_dir(a.out), shard_path = dir + "/shard.sbatch", merge_path = dir + "/merge.sbatch";
  for (const auto& d : {dir + "/logs", a.out + "/shards"}) {  // Slurm does not create the directory of --output
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) return fail(Errc::kIo, "cannot create " + d + ": " + ec.message());
  }
  if (auto st = write_script(shard_path, slurm::shard_script(spec)); !st) return st.fail();
  if (auto st = write_script(merge_path, slurm::merge_script(spec)); !st) return st.fail();
  std::vector<std::string> array_args = a.sbatch_args;
  array_args.push_back(shard_path);
  auto array_job = sbatch(array_args);
  if (!array_job) return array_job.fail_with("submitting the shards");
  std::vector<std::string> merge_args{"--dependency=afterany:" + *array_job};
  merge_args.insert(merge_args.end(), a.sbatch_args.begin(), a.sbatch_args.end());
  merge_args.push_back(merge_path);
  auto merge_job = sbatch(merge_args);
  if (!merge_job) {
    // An array whose merge never comes would look like a sweep in progress forever.
    (void)run_process({"scancel", *array_job});
    return merge_job.fail_with("submitting the merge job (the shards' job " + *array_job + " was cancelled)");
  }
  json::Writer w;
  w.begin_object().field("array_job", *array_job).field("merge_job", *merge_job).field("shards", a.shards);
  w.field("out", a.out).field("forgectl", spec.forgectl).field("sbatch_args", a.sbatch_args);
  w.field("submitted_at", iso_now()).end_object();
  if (auto st = write_file_atomic(dir + "/submit.json", w.take() + "\n"); !st) return st.fail();
  return Submitted{*array_job, *merge_job};
}

int submit_verb(Context& ctx, SubmitArgs& a) {
  if (auto st = split_sbatch_args(a, ctx.command_line); !st) return ctx.report(st.error());
  if (auto st = check_args(a); !st) return ctx.report(st.error());
  if (auto st = check_tasks(ctx, a); !st) return ctx.report(st.error());
  auto spec = make_spec(a);
  if (!spec) return ctx.report(spec.error());
  std::string dir = slurm::files_dir(a.out);
  if (a.dry_run) {
    std::string extra;
    for (const auto& s : a.sbatch_args) extra += " " + slurm::shell_quote(s);
    ctx.out << "# " << dir << "/shard.sbatch\n"
            << slurm::shard_script(*spec) << "\n# " << dir << "/merge.sbatch\n"
            << slurm::merge_script(*spec) << "\n# submitted with:\nsbatch --parsable" << extra << ' ' << dir
            << "/shard.sbatch\nsbatch --parsable --dependency=afterany:ARRAY_JOB_ID" << extra << ' ' << dir
            << "/merge.sbatch\n";
    return kExitOk;
  }
  auto done = submit(a, *spec);
  if (!done) return ctx.report(done.error());
  if (a.json) {
    json::Writer w;
    w.begin_object().field("array_job", done->array_job).field("merge_job", done->merge_job).field("shards", a.shards);
    w.field("out", a.out).field("merged", slurm::merged_dir(a.out)).end_object();
    ctx.out << w.take() << '\n';
    return kExitOk;
  }
  ctx.out << "submitted " << a.shards << " shard(s) as job " << done->array_job << " (array 0-" << a.shards - 1
          << ") and their merge as job " << done->merge_job << " (after every shard has ended)\n"
          << "scripts: " << dir << "/shard.sbatch, " << dir << "/merge.sbatch; logs: " << dir << "/logs/\n"
          << "merged run: " << slurm::merged_dir(a.out) << "; follow it with: forgectl slurm status " << a.out << '\n';
  return kExitOk;
}

// ---- status ----

struct Submission {
  std::string array_job, merge_job;
  int shards = 0;
};

Result<Submission> read_submission(const std::string& out) {
  std::string path = slurm::files_dir(out) + "/submit.json";
  auto text = read_text(path, limits::kMaxJsonBytes);
  if (!text)
    return fail(Errc::kNotFound, path + " is missing: " + out + " was not submitted with forgectl slurm submit");
  auto d = json::parse(*text, path);
  if (!d) return d.fail();
  Submission s{json::get_string(*d, "array_job"), json::get_string(*d, "merge_job"),
               static_cast<int>(json::get_int(*d, "shards"))};
  if (s.array_job.empty() || s.shards < 1 || s.shards > limits::kMaxSlurmShards)
    return fail(Errc::kInvalid,
                path + ": needs array_job and shards (1 to " + std::to_string(limits::kMaxSlurmShards) + ")");
  return s;
}

// Jobs as squeue has them, else (gone from the queue) as sacct remembers them; neither answering
// leaves the state unknown, which the shard's own run directory then stands in for.
std::map<std::string, slurm::QueuedJob> job_states(const Submission& s) {
  std::map<std::string, slurm::QueuedJob> jobs;
  for (const auto& id : {s.array_job, s.merge_job}) {
    if (id.empty()) continue;
    auto q = run_process({"squeue", "-h", "-r", "-t", "all", "-j", id, "-o", "%i|%T|%r|%N"});
    if (q && q->exit_code == 0) jobs.merge(slurm::parse_squeue(q->out));
  }
  if (jobs.empty()) {
    auto a = run_process(
        {"sacct", "-n", "-P", "-X", "-j", s.array_job + "," + s.merge_job, "-o", "JobID,State,Reason,NodeList"});
    if (a && a->exit_code == 0) jobs = slurm::parse_squeue(a->out);
  }
  return jobs;
}

std::time_t parse_iso(const std::string& s) {
  std::tm tm{};
  if (s.empty() || !strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return 0;
  return timegm(&tm);
}

struct Row {
  std::string shard, job, state, node, trials, infra, run;
};

int status_verb(Context& ctx, const std::string& out_arg, bool as_json) {
  std::string out = fs::absolute(out_arg).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  auto sub = read_submission(out);
  if (!sub) return ctx.report(sub.error());
  auto jobs = job_states(*sub);
  sweep::Totals totals;
  std::vector<Row> rows;
  int not_started = 0;
  std::time_t first_start = 0;
  json::Writer w;
  w.begin_object().field("out", out).field("array_job", sub->array_job).field("merge_job", sub->merge_job);
  w.key("shards").begin_array();
  for (int i = 0; i < sub->shards; ++i) {
    std::string dir = sweep::shard_dir(out, {i, sub->shards});
    auto p = slurm::read_shard(dir);
    if (!p) return ctx.report(p.error());
    std::string id = sub->array_job + "_" + std::to_string(i);
    auto job = jobs.count(id) ? jobs.at(id) : slurm::QueuedJob{id, "", "", ""};
    if (!p->started) ++not_started;
    totals.done += static_cast<std::size_t>(p->done);
    totals.total += static_cast<std::size_t>(std::max(p->planned, p->done));
    totals.graded += static_cast<std::size_t>(p->graded);
    totals.passed += static_cast<std::size_t>(p->passed);
    totals.infra += static_cast<std::size_t>(p->infra_errors);
    totals.cost_usd += p->cost_usd;
    totals.cost_partial = totals.cost_partial || p->cost_partial;
    if (std::time_t t = parse_iso(p->started_at); t && (!first_start || t < first_start)) first_start = t;
    std::string planned = p->planned >= 0 ? std::to_string(p->planned) : "?";
    rows.push_back({std::to_string(i) + "/" + std::to_string(sub->shards), id, job.state.empty() ? "?" : job.state,
                    job.node.empty() || job.node == "(null)" ? "-" : job.node, std::to_string(p->done) + "/" + planned,
                    std::to_string(p->infra_errors), p->started ? p->status : "not started"});
    w.begin_object()
        .field("shard", rows.back().shard)
        .field("job", id)
        .field("state", job.state)
        .field("node", job.node);
    w.field("dir", dir)
        .field("run_status", p->started ? p->status : "")
        .field("done", p->done)
        .field("planned", p->planned);
    w.field("graded", p->graded).field("passed", p->passed).field("infra_errors", p->infra_errors).end_object();
  }
  w.end_array();
  auto merge = jobs.count(sub->merge_job) ? jobs.at(sub->merge_job) : slurm::QueuedJob{sub->merge_job, "", "", ""};
  std::error_code ec;
  bool merged = fs::exists(slurm::merged_dir(out) + "/trials.jsonl", ec);
  std::string eta = "—";
  if (not_started == 0 && totals.done >= totals.total) {
    eta = "0s";
  } else if (totals.done > 0 && first_start && not_started == 0) {
    double per = static_cast<double>(std::time(nullptr) - first_start) / static_cast<double>(totals.done);
    eta = sweep::human_duration(per * static_cast<double>(totals.total - totals.done));
  }
  std::string line = sweep::totals_line(totals, eta);
  if (as_json) {
    w.key("merge")
        .begin_object()
        .field("job", sub->merge_job)
        .field("state", merge.state)
        .field("reason", merge.reason);
    w.field("merged", merged).field("dir", slurm::merged_dir(out)).end_object();
    w.field("not_started", not_started).field("totals", line).end_object();
    ctx.out << w.take() << '\n';
    return kExitOk;
  }
  std::vector<Row> table{{"shard", "job", "state", "node", "trials", "infra", "run"}};
  table.insert(table.end(), rows.begin(), rows.end());
  std::vector<std::size_t> width(6, 0);
  for (const auto& r : table) {
    std::size_t i = 0;
    for (const auto* f : {&r.shard, &r.job, &r.state, &r.node, &r.trials, &r.infra})
      width[i] = std::max(width[i], f->size()), ++i;
  }
  for (const auto& r : table) {
    std::size_t i = 0;
    for (const auto* f : {&r.shard, &r.job, &r.state, &r.node, &r.trials, &r.infra})
      ctx.out << *f << std::string(width[i++] - f->size() + 2, ' ');
    ctx.out << r.run << '\n';
  }
  ctx.out << "merge  " << sub->merge_job << "  " << (merge.state.empty() ? "?" : merge.state)
          << (merge.reason.empty() || merge.reason == "None" ? "" : " (" + merge.reason + ")") << "  "
          << (merged ? "merged into " + slurm::merged_dir(out) : "not merged yet") << '\n';
  ctx.out << line;
  if (not_started) ctx.out << " (" << not_started << " shard(s) not started: their trials are not counted yet)";
  ctx.out << '\n';
  return kExitOk;
}

}  // namespace

void add_slurm(Command app, Context& ctx, int* rc) {
  auto group = app.subcommand("slurm", "Run a sweep as a Slurm array of shards, merged when they end (docs/scale.md)");
  group.require_subcommand();

  auto a = std::make_shared<SubmitArgs>();
  auto submit_cmd = group.subcommand("submit", "Submit the shards (an array job) and their merge job with sbatch");
  submit_cmd.option("tasks", a->tasks, "task directories, task.yaml files, or directories of tasks").required();
  // Declared so that CLI11 reads the words after `--` in this subcommand (it hands `--` to the
  // parent once no positional wants more); TASKS takes them all, split_sbatch_args sorts them out.
  submit_cmd.option("sbatch_args", a->sbatch_args, "after --: sbatch's own arguments, for both jobs");
  submit_cmd.option("--shards", a->shards, "shards: tasks of the array job, each a forgectl run --shard auto")
      .required();
  submit_cmd.option("--out", a->out, "the sweep's directory, on a filesystem every node shares").required();
  submit_cmd.option("--config", a->config, "run config (Tolokaforge's format): models, limits, budget");
  submit_cmd.option("--agent", a->agents, "as forgectl run --agent (repeat for a matrix)").one_value_each();
  submit_cmd.option("--trials", a->trials, "trials per task and agent (default: orchestrator.repeats, else 1)");
  submit_cmd.option("--concurrency", a->concurrency, "trials at once in each shard (and its --cpus-per-task)");
  submit_cmd.option("--forgectl", a->forgectl,
                    "the forgectl binary the nodes run (default: this one; on the shared filesystem)");
  submit_cmd.flag("--dry-run", a->dry_run, "print the batch scripts and the sbatch commands; submit nothing");
  submit_cmd.flag("--json", a->json, "print the job ids as one JSON document");
  submit_cmd.on_run([&ctx, rc, a] { *rc = submit_verb(ctx, *a); });

  auto dir = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto status_cmd =
      group.subcommand("status", "Per shard: its job's state, trials done of planned, infra errors; the totals");
  status_cmd.option("dir", *dir, "the --out DIR of forgectl slurm submit").required();
  status_cmd.flag("--json", *as_json, "print one JSON document");
  status_cmd.on_run([&ctx, rc, dir, as_json] { *rc = status_verb(ctx, *dir, *as_json); });
}

}  // namespace forge::cli
