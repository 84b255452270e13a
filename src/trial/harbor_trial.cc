// Harbor's runtime contract on forgectl's containers: /logs, the oracle's /solution, and the
// verifier as a fresh grader with its reward files read after the kill.
#include "trial/harbor_trial.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/confined_dir.h"
#include "core/json.h"
#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/tar.h"
#include "grading/component.h"
#include "manifest/harbor/harbor_load.h"
#include "manifest/harbor/pytest_output.h"
#include "policy/topology.h"
#include "stack/labels.h"
#include "trial/grader_setup.h"
#include "trial/verifier_network.h"
#include "trial/verifier_run.h"

namespace forge::trial {

namespace {

namespace fs = std::filesystem;

constexpr const char* kRewardTxt = "/logs/verifier/reward.txt";
constexpr const char* kRewardJson = "/logs/verifier/reward.json";
constexpr std::size_t kMaxRewardKeys = 256;

engine::TarEntry entry(std::string path, engine::EntryType type, unsigned mode, unsigned uid, unsigned gid) {
  engine::TarEntry e;
  e.path = std::move(path);
  e.type = type;
  e.mode = mode;
  e.uid = uid;
  e.gid = gid;
  return e;
}

// `abs` (a path the loader checked to lie in the task) relative to the task directory.
std::string rel_to(const manifest::HarborTask& t, const std::string& abs) {
  return fs::path(abs).lexically_relative(t.dir).generic_string();
}

// One file of the task as the only entry `path` of a tar, owned by uid:gid, executable.
Result<std::string> one_file_tar(const ConfinedDir& dir, const std::string& rel, const std::string& path, unsigned uid,
                                 unsigned gid) {
  auto text = dir.read(rel, std::size_t{1} << 20);
  if (!text) return text.fail();
  engine::TarWriter tar;
  auto e = entry(path, engine::EntryType::kFile, 0700, uid, gid);
  e.content = std::move(*text);
  if (auto st = tar.add_entry(e); !st) return st.fail();
  return tar.finish();
}

// `name`'s uid and gid in a passwd file's text; nullopt when it has no such line.
std::optional<AgentIds> passwd_ids(std::string_view passwd, const std::string& name) {
  std::size_t at = 0;
  while (at < passwd.size()) {
    std::size_t nl = passwd.find('\n', at);
    std::string_view line = passwd.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? passwd.size() : nl + 1;
    // name:password:uid:gid:…
    std::vector<std::string_view> f;
    std::size_t from = 0;
    while (f.size() < 4) {
      std::size_t colon = line.find(':', from);
      f.push_back(line.substr(from, colon == std::string_view::npos ? std::string_view::npos : colon - from));
      if (colon == std::string_view::npos) break;
      from = colon + 1;
    }
    if (f.size() < 4 || f[0] != name) continue;
    unsigned uid = 0, gid = 0;
    if (!policy::parse_user_ids(std::string(f[2]) + ":" + std::string(f[3]), uid, gid)) return std::nullopt;
    return AgentIds{uid, gid};
  }
  return std::nullopt;
}

// /etc/passwd of a container of `image`, created for the purpose and removed unstarted.
Result<std::string> image_passwd(engine::Client& c, const GraderSpec& where) {
  engine::ContainerSpec spec;
  spec.image = where.image;
  spec.cmd = std::vector<std::string>{"true"};
  spec.labels = where.labels.for_object("probe");
  spec.host.network_mode = "none";
  auto created = engine::create_container(c, spec);
  if (!created) return created.fail_with("reading the image's /etc/passwd");
  ScopeGuard remove([&] { (void)engine::remove_container(c, created->id, engine::RemoveMode::kForce); });
  auto tar = collect_tree(c, created->id, "/etc/passwd", std::uint64_t{1} << 20);
  if (!tar) return tar.fail_with("reading the image's /etc/passwd");
  auto entries = engine::read_tar(*tar);
  if (!entries) return entries.fail_with("reading the image's /etc/passwd");
  if (entries->size() != 1)
    return fail(Errc::kInvalid, "the image's /etc/passwd is not a regular file of at most 1 MiB");
  return std::move(entries->front().content);
}

}  // namespace

Status check_verifier_ids(unsigned uid, unsigned gid, const std::string& what) {
  const std::string ids = std::to_string(uid) + ":" + std::to_string(gid);
  if (uid == 0 || gid == 0)
    return fail(Errc::kInvalid, what + " is root (" + ids +
                                    "): forgectl runs the tests as an unprivileged verifier, "
                                    "never as root; leave it unset (uid 2000) or give another uid");
  if (uid > 2147483647 || gid > 2147483647)
    return fail(Errc::kInvalid, what + " (" + ids + ") is past 2147483647, the largest uid and gid Docker runs as");
  if (uid == kAgentUid || gid == kAgentGid)
    return fail(Errc::kInvalid, what + " (" + ids + ") shares the agent's uid or gid " + std::to_string(kAgentUid) +
                                    ", which owns the workspace copy and runs the agent's programs in the verifier's "
                                    "container: what the agent left could act as the verifier and write its reward; "
                                    "leave it unset (uid 2000) or give another uid");
  return {};
}

Result<VerifierIdentity> harbor_verifier_identity(engine::Client& c, const GraderSpec& where,
                                                  const manifest::HarborTask& task, const manifest::StepConfig* step) {
  const std::string& user = step ? step->verifier.user : task.verifier.user;
  VerifierIdentity as;
  if (user.empty()) return as;
  const std::string what = task.config_path + ": " +
                           (step ? "[steps.verifier] of step '" + step->name + "'" : "[verifier]") + ".user = \"" +
                           user + "\"";
  unsigned uid = 0, gid = 0;
  if (user == "root") {
    uid = gid = 0;
  } else if (!policy::parse_user_ids(user, uid, gid)) {
    if (user.find(':') != std::string::npos)
      return fail(Errc::kInvalid, what + ": give a uid, \"uid:gid\" or a user name of the image");
    auto passwd = image_passwd(c, where);
    if (!passwd) return passwd.fail_with(what);
    auto ids = passwd_ids(*passwd, user);
    if (!ids) return fail(Errc::kInvalid, what + ": the image's /etc/passwd has no user '" + user + "'");
    uid = ids->uid, gid = ids->gid;
  }
  if (auto st = check_verifier_ids(uid, gid, what); !st) return st.fail();
  as.uid = uid, as.gid = gid;
  return as;
}

Result<AgentIds> runner_ids(engine::Client& c, const std::string& runner, const std::string& user) {
  engine::ExecOptions o;
  o.cmd = {"sh", "-c", "id -u && id -g"};
  o.user = user;
  o.timeout = Millis(20000);
  o.output_cap = 256;
  auto r = engine::exec_run(c, runner, o);
  if (!r) return r.fail_with("asking the runner which uid it runs as");
  unsigned ids[2] = {0, 0};
  std::size_t at = 0;
  for (int i = 0; i < 2; ++i) {
    std::size_t nl = r->out.find('\n', at);
    const std::string word = r->out.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    char* end = nullptr;
    const unsigned long v = std::strtoul(word.c_str(), &end, 10);
    if (r->exit_code != 0 || word.empty() || *end != '\0' || v > 0x7fffffffUL)
      return fail(Errc::kProtocol, "the runner's 'id -u && id -g' did not give two ids (exit code " +
                                       std::to_string(r->exit_code) + ")");
    ids[i] = static_cast<unsigned>(v);
    at = nl == std::string::npos ? r->out.size() : nl + 1;
  }
  return AgentIds{ids[0], ids[1]};
}

Status put_harbor_logs(engine::Client& c, const std::string& runner, unsigned uid, unsigned gid) {
  engine::TarWriter tar;
  if (auto st = tar.add_entry(entry("logs", engine::EntryType::kDirectory, 0755, 0, 0)); !st) return st;
  for (const char* d : {"logs/agent", "logs/artifacts"})
    if (auto st = tar.add_entry(entry(d, engine::EntryType::kDirectory, 0755, uid, gid)); !st) return st;
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail();
  if (auto st = engine::put_archive(c, runner, "/", std::move(*bytes)); !st)
    return st.fail_with("creating /logs in the runner");
  return {};
}

Result<HarborEnv> resolve_harbor_env(const manifest::HarborTask& task, const std::vector<std::string>& passthrough,
                                     const EnvLookup& host) {
  auto allowed = [&](const std::string& name) {
    return std::find(passthrough.begin(), passthrough.end(), name) != passthrough.end();
  };
  auto lookup = [&](const std::string& name) { return host ? host(name.c_str()) : std::nullopt; };
  HarborEnv out;
  auto env = manifest::resolve_env(task.environment.env, allowed, lookup);
  if (!env) return env.fail_with(task.config_path + ": [environment].env");
  auto ver = manifest::resolve_env(task.verifier.env, allowed, lookup);
  if (!ver) return ver.fail_with(task.config_path + ": [verifier].env");
  auto sol = manifest::resolve_env(task.solution_env, allowed, lookup);
  if (!sol) return sol.fail_with(task.config_path + ": [solution].env");
  out.environment = std::move(*env);
  out.verifier = std::move(*ver);
  out.solution = std::move(*sol);
  if (const auto& ve = task.verifier.environment) {
    auto e = manifest::resolve_env(ve->env, allowed, lookup);
    if (!e) return e.fail_with(task.config_path + ": [verifier.environment].env");
    out.verifier_environment = std::move(*e);
  }
  for (const auto& step : task.steps) {
    auto e = manifest::resolve_env(step.verifier.env, allowed, lookup);
    if (!e) return e.fail_with(task.config_path + ": [steps.verifier].env of step '" + step.name + "'");
    out.steps.push_back(std::move(*e));
    std::optional<std::vector<std::string>> own;
    if (const auto& ve = step.verifier.environment) {
      auto v = manifest::resolve_env(ve->env, allowed, lookup);
      if (!v) return v.fail_with(task.config_path + ": [steps.verifier.environment].env of step '" + step.name + "'");
      own = std::move(*v);
    }
    out.steps_environment.push_back(std::move(own));
  }
  return out;
}

std::vector<std::string> harbor_verifier_env(const HarborEnv& env, std::optional<std::size_t> step) {
  const auto& own = step ? env.steps_environment.at(*step) : env.verifier_environment;
  const auto& base = own ? *own : env.environment;
  const auto& over = step ? env.steps.at(*step) : env.verifier;
  std::vector<std::string> out;
  std::map<std::string, std::size_t> at;  // name -> its place in `out`
  for (const auto* list : {&base, &over})
    for (const auto& kv : *list) {
      const std::string name = kv.substr(0, kv.find('='));
      if (auto it = at.find(name); it != at.end()) {
        out[it->second] = kv;
        continue;
      }
      at.emplace(name, out.size());
      out.push_back(kv);
    }
  return out;
}

VerifierLimits harbor_verifier_limits(const manifest::HarborTask& task, const manifest::StepConfig* step) {
  const auto& ve = step ? step->verifier.environment : task.verifier.environment;
  VerifierLimits out;
  if (!ve) return out;
  out.cpus = ve->cpus.value_or(0);
  out.memory_mb = ve->memory_mb.value_or(0);
  return out;
}

Status put_harbor_solution(engine::Client& c, const std::string& runner, const manifest::HarborTask& task, unsigned uid,
                           unsigned gid, const std::vector<std::string>& env) {
  const std::string what = "copying the solution to /solution";
  auto dir = ConfinedDir::open(task.dir);
  if (!dir) return dir.fail_with(what);
  Result<std::string> bytes =
      task.format == manifest::HarborFormat::kHarbor
          ? tests_tar(*dir, rel_to(task, task.files.solution_dir), uid, gid, "solution")
          : one_file_tar(*dir, rel_to(task, task.files.solution_script), "solution/solution.sh", uid, gid);
  if (!bytes) return bytes.fail_with(what);
  if (task.format == manifest::HarborFormat::kTerminalBench1) {
    // The directory first: one_file_tar holds the file alone.
    engine::TarWriter top;
    if (auto st = top.add_entry(entry("solution", engine::EntryType::kDirectory, 0700, uid, gid)); !st) return st;
    auto t = top.finish();
    if (!t) return t.fail();
    if (auto st = engine::put_archive(c, runner, "/", std::move(*t)); !st) return st.fail_with(what);
  }
  if (auto st = engine::put_archive(c, runner, "/", std::move(*bytes)); !st) return st.fail_with(what);
  if (!env.empty()) {
    // K='v' lines, each ' written as '\'' : the shell reads the value back byte for byte.
    std::string text;
    for (const auto& kv : env) {
      const auto eq = kv.find('=');
      std::string quoted;
      for (char ch : kv.substr(eq + 1)) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      text += kv.substr(0, eq) + "='" + quoted + "'\n";
    }
    engine::TarWriter tar;
    auto e = entry(std::string(kSolutionEnvFile).substr(1), engine::EntryType::kFile, 0600, uid, gid);
    e.content = std::move(text);
    if (auto st = tar.add_entry(e); !st) return st.fail_with(what);
    auto t = tar.finish();
    if (!t) return t.fail_with(what);
    if (auto st = engine::put_archive(c, runner, "/", std::move(*t)); !st) return st.fail_with(what);
  }
  return {};
}

Status put_harbor_step_solution(engine::Client& c, const std::string& runner, const manifest::HarborTask& task,
                                const manifest::StepConfig& step, unsigned uid, unsigned gid,
                                const std::vector<std::string>& env, const AgentIds* owner) {
  engine::ExecOptions o;
  // Globs, not find -delete: busybox's find has no -delete. An unmatched glob stays literal; rm -f skips it.
  o.cmd = {"sh", "-c", "if [ -d /solution ]; then cd /solution && rm -rf -- * .[!.]* ..?*; fi"};
  o.user = owner ? std::to_string(owner->uid) + ":" + std::to_string(owner->gid)
                 : std::to_string(uid) + ":" + std::to_string(gid);
  o.timeout = Millis(20000);
  o.output_cap = 4096;
  auto r = engine::exec_run(c, runner, o);
  if (!r) return r.fail_with("emptying /solution before step '" + step.name + "'");
  if (r->exit_code != 0)
    return fail(Errc::kProtocol, "emptying /solution before step '" + step.name + "': exit code " +
                                     std::to_string(r->exit_code) + ": " + r->err.substr(0, 200));
  if (step.solution_script.empty()) return {};
  manifest::HarborTask t;  // put_harbor_solution reads only these
  t.format = task.format;
  t.dir = task.dir;
  t.files.solution_dir = fs::path(step.solution_script).parent_path().string();
  t.files.solution_script = step.solution_script;
  return put_harbor_solution(c, runner, t, uid, gid, env);
}

Result<std::vector<std::string>> collect_harbor_logs(engine::Client& c, const std::string& runner) {
  std::vector<std::string> out;
  for (const char* d : {"/logs/agent", "/logs/artifacts"}) {
    auto tar = collect_tree(c, runner, d);
    if (!tar) return tar.fail();
    if (!tar->empty()) out.push_back(std::move(*tar));
  }
  return out;
}

Result<std::map<std::string, double>> parse_reward_json(std::string_view text) {
  auto doc = json::parse(text, "reward.json", 64 * 1024);
  if (!doc) return doc.fail();
  if (!doc->IsObject()) return fail(Errc::kProtocol, "reward.json is not an object of names to numbers");
  std::map<std::string, double> out;
  for (const auto& m : doc->GetObject()) {
    const std::string name(m.name.GetString(), m.name.GetStringLength());
    if (out.size() >= kMaxRewardKeys)
      return fail(Errc::kProtocol, "reward.json has more than " + std::to_string(kMaxRewardKeys) + " keys");
    double v = 0;
    if (m.value.IsBool())
      v = m.value.GetBool() ? 1 : 0;
    else if (m.value.IsNumber())
      v = m.value.GetDouble();
    else
      return fail(Errc::kProtocol, "reward.json: '" + name + "' is not a number");
    // A number Harbor would take but forgectl does not: the task's error (kInvalid), not a spoiled file.
    if (auto st = grading::check_score(v, "reward.json: '" + name + "'"); !st) return st.fail();
    if (!out.emplace(name, v).second) return fail(Errc::kProtocol, "reward.json: '" + name + "' is given twice");
  }
  if (out.empty()) return fail(Errc::kProtocol, "reward.json holds no reward");
  return out;
}

Result<double> harbor_score(const std::map<std::string, double>& rewards) {
  if (auto it = rewards.find("reward"); it != rewards.end()) return it->second;
  if (rewards.size() == 1) return rewards.begin()->second;
  std::string keys;
  for (const auto& [k, v] : rewards) keys += (keys.empty() ? "" : ", ") + k;
  return fail(Errc::kInvalid, "reward.json has several keys (" + keys + ") and no 'reward': no single score to take");
}

namespace {

// What either verifier puts in and runs: tests/ (a step's over the task's) at /tests as the
// verifier, TB1's run-tests.sh beside them, the command, the env and the timeout.
Status verifier_inputs(const manifest::HarborTask& task, const HarborVerifierOptions& o, VerifierRun& v) {
  const std::string what = "running the task's verifier";
  const bool tb1 = task.format == manifest::HarborFormat::kTerminalBench1;
  v.timeout_s = o.step ? o.step->verifier.timeout_sec : task.verifier.timeout_sec;
  v.as = o.as;
  if (auto st = check_verifier_ids(v.as.uid, v.as.gid, "the verifier's user"); !st) return st.fail();
  // Read before anything is created: a link out of the task refuses the verifier.
  auto dir = ConfinedDir::open(task.dir);
  if (!dir) return dir.fail_with(what);
  std::vector<std::string> trees = {task.files.tests_dir};
  if (o.step) trees.push_back(o.step->tests_dir);  // uploaded after the task's: its files win (Harbor's order)
  for (const auto& tree : trees) {
    if (tree.empty()) continue;
    auto tests = tests_tar(*dir, rel_to(task, tree), v.as.uid, v.as.gid);
    if (!tests) return tests.fail_with(what);
    v.verifier_tars.push_back(std::move(*tests));
  }
  const std::string& test_script = o.step ? o.step->test_script : task.files.test_script;
  const std::string script = fs::path(test_script).filename().string();
  if (tb1) {
    // run-tests.sh sits beside tests/ in the task; Terminal-Bench copies it into /tests.
    auto s = one_file_tar(*dir, rel_to(task, task.files.test_script), "tests/" + script, v.as.uid, v.as.gid);
    if (!s) return s.fail_with(what);
    v.verifier_tars.push_back(std::move(*s));
  }
  // Harbor runs the script with bash; an image without bash (busybox) gets sh.
  v.command = "if command -v bash >/dev/null 2>&1; then exec bash /tests/" + script + "; else exec sh /tests/" +
              script + "; fi";
  v.env = {"TEST_DIR=/tests", "T_BENCH_TEST_DIR=/tests"};
  v.env.insert(v.env.end(), o.env.begin(), o.env.end());
  if (!tb1) v.read_files = {kRewardTxt, kRewardJson};
  v.collect_logs = true;
  return {};
}

// The verdict from what the tests left: a timed-out or killed verifier scores 0; TB1 is read from
// pytest's output; Harbor's reward.txt first, else reward.json, else 0.
// `memory_mb`: the verifier's own memory limit ([verifier.environment]), 0 for forgectl's default.
Result<HarborVerdict> verdict_of(const manifest::HarborTask& task, VerifierResult&& r, double timeout_s,
                                 std::int64_t memory_mb = 0) {
  HarborVerdict out;
  out.run = std::move(r.run);
  out.verifier_logs = std::move(r.logs_tar);
  grading::Grade& g = out.grade;
  auto set_score = [&](double s, std::string reason) {
    g.score = s;
    g.binary_pass = s >= 1.0;
    g.reasons.push_back(std::move(reason));
  };
  // Out of memory: the limit is the task's, but what filled it may be the agent's programs the tests
  // ran, so it is the trial's 0 with the reason (as a spoiled reward file is), never a retried
  // infra error. Tests that survive it and write a reward are scored as usual.
  const std::string limit = memory_mb > 0 ? "[verifier.environment] memory_mb = " + std::to_string(memory_mb) + " MiB"
                                          : "forgectl's verifier limit of 2048 MiB";
  if (!r.ended_on_its_own && r.oom_killed && !out.run.timed_out) {
    set_score(0, "the verifier ran out of memory (" + limit +
                     ") and the out-of-memory killer ended the tests (exit code " + std::to_string(out.run.exit_code) +
                     "): reward 0");
    return out;
  }
  if (!r.ended_on_its_own) {
    set_score(0, out.run.timed_out ? "the verifier timed out after " + std::to_string(timeout_s) + " s: reward 0"
                                   : "the verifier was killed: reward 0");
    return out;
  }
  if (r.oom_killed)
    g.reasons.push_back("the out-of-memory killer ended a process of the verifier (" + limit +
                        "); the tests went on and wrote their verdict");
  if (task.format == manifest::HarborFormat::kTerminalBench1) {
    auto rep = manifest::parse_pytest_output(out.run.output);
    g.components["reward"] = rep.reward;
    out.rewards["reward"] = rep.reward;
    set_score(rep.reward, rep.resolved ? "pytest: resolved" : "pytest: " + rep.reason);
    return out;
  }
  // Every reward file is the verdict of the tests' processes, and Harbor's tests run the agent's
  // programs with their rights (docs/harbor.md): one that is no regular file, too large or not a
  // number is the trial's 0 with the reason, never a grader error the agent could buy a retry with.
  auto zero = [&](const std::string& reason) {
    set_score(0, reason + ": reward 0");
    return out;
  };
  if (auto it = r.unreadable.find(kRewardTxt); it != r.unreadable.end())
    return zero(std::string(kRewardTxt) + " cannot be read (" + it->second + ")");
  const auto& txt = r.files[kRewardTxt];
  if (txt) {  // Harbor reads reward.txt first
    auto reward = parse_reward(*txt);
    if (!reward) return zero(std::string(kRewardTxt) + ": " + reward.error().what());
    // A number outside [0, 1] is no reward the task may give: its error, the value named.
    if (*reward)
      if (auto st = grading::check_score(**reward, "the reward in " + std::string(kRewardTxt)); !st)
        return fail(st.error().with_context("the task's verifier"));
    if (*reward) {
      g.components["reward"] = **reward;
      out.rewards["reward"] = **reward;
      set_score(**reward, "reward.txt: " + std::to_string(**reward));
      return out;
    }
  }
  if (auto it = r.unreadable.find(kRewardJson); it != r.unreadable.end())
    return zero(std::string(kRewardJson) + " cannot be read (" + it->second + ")");
  const auto& js = r.files[kRewardJson];
  if (js) {
    auto rewards = parse_reward_json(*js);
    if (!rewards && rewards.error().code == Errc::kInvalid)
      return fail(rewards.error().with_context("the task's verifier"));
    if (!rewards) return zero(rewards.error().what());
    for (const auto& [k, val] : *rewards) g.components["reward." + k] = val;
    out.rewards = *rewards;
    auto score = harbor_score(*rewards);
    if (!score) return zero(score.error().what());
    set_score(*score, "reward.json: " + std::to_string(*score));
    return out;
  }
  set_score(0, "the verifier wrote no reward (exit code " + std::to_string(out.run.exit_code) + "): reward 0");
  return out;
}

}  // namespace

namespace {

// The separate verifier as run_verifier takes it: the same for the grader made ahead and the run.
Result<VerifierRun> separate_verifier(const GraderSpec& where, const manifest::HarborTask& task,
                                      const HarborVerifierOptions& o) {
  VerifierRun v;
  v.where = where;
  v.agent_tars = o.artifact_tars;
  if (auto st = verifier_inputs(task, o, v); !st) return st.fail();
  const VerifierLimits limits = harbor_verifier_limits(task, o.step);
  v.memory = limits.memory_mb << 20;
  v.nano_cpus = limits.cpus * 1000000000LL;
  if (o.network) {
    v.network = o.network->network;
    v.dns_options = o.network->dns_options;
    v.dns = o.network->dns;
    v.env.insert(v.env.end(), o.network->env.begin(), o.network->env.end());
  }
  return v;
}

}  // namespace

Result<HarborVerdict> run_harbor_verifier(engine::Client& c, const GraderSpec& where, const manifest::HarborTask& task,
                                          const HarborVerifierOptions& o) {
  auto v = separate_verifier(where, task, o);
  if (!v) {
    // A grader made ahead is this call's to remove, used or not.
    if (!o.ahead.empty()) (void)engine::remove_container(c, o.ahead, engine::RemoveMode::kForce);
    return v.fail();
  }
  auto r = run_verifier(c, *v, o.ahead);
  if (!r) return r.fail_with("running the task's verifier");
  return verdict_of(task, std::move(*r), v->timeout_s, harbor_verifier_limits(task, o.step).memory_mb);
}

Result<std::string> prepare_harbor_verifier(engine::Client& c, const GraderSpec& where,
                                            const manifest::HarborTask& task, const HarborVerifierOptions& o) {
  if (!o.artifact_tars.empty() || !o.ahead.empty())
    return fail(Errc::kInvalid, "a grader made ahead holds no artifacts");
  auto v = separate_verifier(where, task, o);
  if (!v) return v.fail_with("preparing the verifier ahead");
  return prepare_verifier(c, *v);
}

Result<HarborVerdict> run_harbor_shared_verifier(engine::Client& c, const GraderSpec& where,
                                                 const manifest::HarborTask& task, const HarborVerifierOptions& o) {
  const std::string what = "running the task's verifier in the agent's container (shared)";
  VerifierRun v;
  if (auto st = verifier_inputs(task, o, v); !st) return st.fail();
  const std::string helper = std::string(policy::kHelperDir) + "/exec";
  auto exec = [&](std::vector<std::string> cmd, const std::string& user, Millis timeout,
                  std::vector<std::string> env = {}) {
    engine::ExecOptions e;
    e.cmd = std::move(cmd);
    e.env = std::move(env);
    e.user = user;
    e.workdir = "/";
    e.timeout = timeout;
    e.helper = helper;
    e.cancel = where.cancel;
    e.output_cap = 64 * 1024;
    return engine::exec_run(c, where.runner, e);
  };
  // The agent cannot create either under a root-owned / and /logs; one it could (an image making
  // / writable) would hold what the agent put there: no verdict from it.
  auto probe = exec({"sh", "-c",
                     "for p in /tests /logs/verifier " + std::string(kVerifierHome) +
                         "; do if test -e \"$p\" || test -L \"$p\"; then exit 0; fi; done; exit 1"},
                    "", Millis(20000));
  if (!probe) return probe.fail_with(what);
  if (probe->exit_code == 0) {
    HarborVerdict out;
    out.grade.reasons.push_back("/tests, /logs/verifier or " + std::string(kVerifierHome) +
                                " existed in the agent's container before the tests were copied in (shared verifier): "
                                "reward 0");
    return out;
  }
  auto logs = verifier_logs_tar(v.as.uid, v.as.gid);
  if (!logs) return logs.fail_with(what);
  if (auto st = engine::put_archive(c, where.runner, "/", std::move(*logs)); !st) return st.fail_with(what);
  auto home = verifier_home_tar(v.as.uid, v.as.gid);
  if (!home) return home.fail_with(what);
  if (auto st = engine::put_archive(c, where.runner, "/", std::move(*home)); !st) return st.fail_with(what);
  // The same HOME as the separate verifier's; a HOME of the task's env wins.
  if (std::none_of(v.env.begin(), v.env.end(), [](const std::string& e) { return e.rfind("HOME=", 0) == 0; }))
    v.env.push_back(std::string("HOME=") + kVerifierHome);
  for (auto& tar : v.verifier_tars)
    if (auto st = engine::put_archive(c, where.runner, "/", std::move(tar)); !st) return st.fail_with(what);
  auto ran = exec({"sh", "-c", "cd -- \"$1\" || exit 1; shift; exec sh -c \"$1\"", "sh", where.workspace, v.command},
                  v.as.user(), Millis(static_cast<long long>(v.timeout_s * 1000)), v.env);
  if (!ran) return ran.fail_with(what);
  if (ran->cancelled) return fail(Errc::kCancelled, what + ": interrupted");
  // Nothing the tests started writes the reward after the verdict is read.
  auto killed = exec({helper, "--kill-all"}, v.as.user(), Millis(20000));
  if (!killed) return killed.fail_with(what + ": stopping the verifier's processes");
  VerifierResult r;
  r.run.exit_code = ran->exit_code;
  r.run.timed_out = ran->timed_out;
  r.run.output = ran->out + ran->err;
  r.ended_on_its_own = !r.run.timed_out && r.run.exit_code >= 0 && !(r.run.exit_code > 128 && r.run.exit_code <= 192);
  auto tree = collect_tree(c, where.runner, kVerifierLogs, std::uint64_t{16} << 20);
  if (!tree) return tree.fail_with(what);
  if (r.ended_on_its_own && task.format == manifest::HarborFormat::kHarbor) {
    r.files[kRewardTxt] = std::nullopt;
    r.files[kRewardJson] = std::nullopt;
    if (!tree->empty()) {
      auto entries = engine::read_tar(*tree);
      if (!entries) return entries.fail_with(what);
      for (auto& e : *entries) {
        const std::string p = "/logs/" + e.path;
        if ((p == kRewardTxt || p == kRewardJson) && e.content.size() <= v.max_file_bytes)
          r.files[p] = std::move(e.content);
      }
    }
  }
  r.logs_tar = std::move(*tree);
  if (o.step) {
    // A next step's agent runs in this runner: neither this step's tests nor its reward stay, and
    // the next verification's check (no /tests, no /logs/verifier) holds again. Emptied as the
    // verifier, who owns everything in them (0700: nobody else could add to them); the empty
    // directories removed as root, who owns / and /logs (no capability needed for that).
    const std::string home = kVerifierHome;
    auto emptied = exec({"sh", "-c",
                         "chmod -R u+rwX /tests /logs/verifier " + home +
                             " 2>/dev/null; cd /tests && rm -rf -- * .[!.]* ..?* && "
                             "cd /logs/verifier && rm -rf -- * .[!.]* ..?* && cd " +
                             home + " && rm -rf -- * .[!.]* ..?*"},
                        v.as.user(), Millis(60000));
    if (!emptied) return emptied.fail_with(what + ": emptying /tests and /logs/verifier");
    engine::ExecOptions rm;
    rm.cmd = {"rmdir", "/tests", "/logs/verifier", kVerifierHome};
    rm.user = "0:0";
    rm.workdir = "/";
    rm.timeout = Millis(20000);
    rm.output_cap = 4096;
    auto removed = engine::exec_run(c, where.runner, rm);
    if (!removed) return removed.fail_with(what + ": removing /tests and /logs/verifier");
    if (emptied->exit_code != 0 || removed->exit_code != 0)
      return fail(Errc::kIo, what + ": /tests and /logs/verifier could not be removed before the next step (" +
                                 trim((emptied->err + removed->err).substr(0, 300)) + ")");
  }
  return verdict_of(task, std::move(r), v.timeout_s);
}

}  // namespace forge::trial
