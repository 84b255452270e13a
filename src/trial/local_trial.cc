// The local executor's trial: its sandbox directory, tools, evidence and teardown.
#include "trial/local_trial.h"

#include <signal.h>

#include <filesystem>
#include <mutex>

#include "core/strings.h"
#include "engine/tar.h"
#include "helper/kill_token.h"
#include "helper/ops.h"
#include "policy/topology.h"
#include "stack/teardown.h"
#include "tools/local_guard.h"
#include "tools/toolbox.h"
#include "trial/grading_sources.h"
#include "trial/json_db_use.h"
#include "trial/sandbox_prep.h"
#include "trial/trial_setup.h"

namespace forge::trial {

namespace fs = std::filesystem;

namespace {

// Grading reads the whole sandbox into memory once; an agent that filled it past these gets an
// error (an infra error of the grader) rather than an out-of-memory forgectl.
constexpr std::size_t kMaxSandboxEntries = 100000;
constexpr std::int64_t kMaxSandboxBytes = 1LL << 30;
constexpr int kMaxSandboxDepth = 64;

// Every command of a local trial carries FORGECTL_LOCAL_TRIAL=<random> in its environment, so its
// teardown finds what the agent left running on the host (`setsid cmd &` escapes the process
// group that each call kills at its end), as removing a container would.
constexpr const char* kTrialMarkVar = "FORGECTL_LOCAL_TRIAL";
constexpr int kKillRounds = 3;

// SIGKILLs every process carrying `mark`, again while new ones appear (children mid-fork).
void kill_marked(const std::string& mark) {
  for (int round = 0; round < kKillRounds; ++round) {
    auto pids = helper::env_holders(mark);
    if (pids.empty()) return;
    for (pid_t p : pids) ::kill(p, SIGKILL);
  }
}

// A task id as one directory name: letters, digits, '_', '-' and '.', never "." or "..".
std::string dir_name(const std::string& id) {
  std::string out;
  for (char c : id) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ? c : '-';
  if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');
  return out;
}

// The sandbox as grading sees it, read once through the same confined operations the file tools
// use (a symlink the agent left is never followed out): its files, and a tar of it for the grader.
class SandboxSnapshot {
 public:
  SandboxSnapshot(std::shared_ptr<tools::Sandbox> sb, std::string host_dir, std::string workspace)
      : sb_(std::move(sb)),
        host_dir_(std::move(host_dir)),
        workspace_(std::move(workspace)),
        base_(fs::path(workspace_).filename().string()) {}

  // The files for path_glob checks.
  Result<std::shared_ptr<WorkspaceFiles>> files() {
    std::lock_guard lock(mu_);
    if (auto st = load(); !st) return st.fail();
    return files_;
  }
  // The workspace as the archive API would give it: entries under "<base>/".
  Result<std::string> tar() {
    std::lock_guard lock(mu_);
    if (auto st = load(); !st) return st.fail();
    return tar_;
  }

 private:
  Status load() {
    if (loaded_) return {};
    std::string what = "reading the local sandbox " + host_dir_ + " for grading";
    engine::TarWriter tar;
    if (auto st = tar.add_directory(base_, 0755); !st) return st.fail_with(what);
    std::vector<grading::WorkspaceFile> files;
    if (auto st = walk("", 0, tar, files); !st) return st.fail_with(what);
    auto bytes = tar.finish();
    if (!bytes) return bytes.fail_with(what);
    tar_ = std::move(*bytes);
    files_ = std::make_shared<WorkspaceFiles>(workspace_, std::move(files));
    loaded_ = true;
    return {};
  }

  Status walk(const std::string& rel, int depth, engine::TarWriter& tar, std::vector<grading::WorkspaceFile>& files) {
    if (depth > kMaxSandboxDepth)
      return fail(Errc::kIo, "directories nest deeper than " + std::to_string(kMaxSandboxDepth));
    auto entries = sb_->list_dir(rel);
    if (!entries) return entries.fail();
    for (const auto& e : *entries) {
      if (++entries_ > kMaxSandboxEntries)
        return fail(Errc::kIo, "the sandbox holds more than " + std::to_string(kMaxSandboxEntries) + " entries");
      std::string path = rel.empty() ? e.name : rel + "/" + e.name;
      std::string in_tar = base_ + "/" + path;
      if (e.kind == tools::EntryKind::kDirectory) {
        if (auto st = tar.add_directory(in_tar, e.mode & 07777); !st) return st;
        if (auto st = walk(path, depth + 1, tar, files); !st) return st;
      } else if (e.kind == tools::EntryKind::kSymlink) {
        std::error_code ec;  // the link itself, as a link: never followed
        fs::path target = fs::read_symlink(fs::path(host_dir_) / path, ec);
        if (!ec)
          if (auto st = tar.add_symlink(in_tar, target.string()); !st) return st;
      } else if (e.kind == tools::EntryKind::kFile) {
        std::string content;
        if (auto st = read_whole(path, content); !st) return st;
        if (auto st = tar.add_file(in_tar, content, e.mode & 07777); !st) return st;
        files.push_back({workspace_ + "/" + path, std::move(content)});
      }
    }
    return {};
  }

  Status read_whole(const std::string& rel, std::string& out) {
    for (;;) {
      auto chunk = sb_->read_file(rel, static_cast<std::int64_t>(out.size()), helper::kMaxReadLimit);
      if (!chunk) return chunk.fail();
      if (bytes_ + static_cast<std::int64_t>(chunk->data.size()) > kMaxSandboxBytes)
        return fail(Errc::kIo, "the sandbox holds more than " + std::to_string(kMaxSandboxBytes >> 20) + " MiB");
      bytes_ += static_cast<std::int64_t>(chunk->data.size());
      out += chunk->data;
      if (chunk->data.empty() || static_cast<std::int64_t>(out.size()) >= chunk->size) return {};
    }
  }

  std::shared_ptr<tools::Sandbox> sb_;
  std::string host_dir_, workspace_, base_;
  std::mutex mu_;
  bool loaded_ = false;
  std::size_t entries_ = 0;
  std::int64_t bytes_ = 0;
  std::shared_ptr<WorkspaceFiles> files_;
  std::string tar_;
};

}  // namespace

bool runs_locally(const manifest::TaskConfig& task) {
  return task.environment.tools.executor == manifest::ExecutorKind::kLocal;
}

std::vector<Problem> check_local(const manifest::TaskConfig& t) {
  std::vector<Problem> out;
  const auto& env = t.environment;
  const auto& m = env.manifest;
  auto add = [&](const std::string& where, const std::string& why) {
    out.push_back({where, "task " + t.task_id + " cannot run on the local executor: " + why});
  };
  std::string at_env = location(m.where, t.path), at_tools = location(env.tools.where, t.path);
  if (!m.compose_file.empty()) {
    std::string names;
    for (const auto& s : env.compose.services) names += (names.empty() ? "" : ", ") + s.name;
    add(m.compose_file, "its compose file declares services (" + names + "), which run only in containers");
  } else if (m.stack == "full") {
    add(at_env, "the built-in stack 'full' (json-db, mock-web, rag) runs only in containers");
  }
  const auto setup = manifest::phase_policy(m, manifest::Phase::kSetup);
  if (m.network_policy != manifest::NetworkPolicy::kNoInternet || setup != manifest::NetworkPolicy::kNoInternet)
    add(at_env, std::string("network_policy ") +
                    manifest::policy_name(setup != manifest::NetworkPolicy::kNoInternet ? setup : m.network_policy) +
                    " is enforced only around a container stack; on the host, commands use the host's network");
  if (m.grade_network_policy != manifest::NetworkPolicy::kNoInternet)
    add(at_env, std::string("network_policy grade: ") + manifest::policy_name(m.grade_network_policy) +
                    " is a network of the grader's own, which forgectl brings up beside a container trial's stack");
  if (env.tools.mcp_server)
    add(at_tools, "tools.agent.mcp_server runs in a runner container, and a local trial has none");
  if (!t.initial_state.mock_web_base_url.empty())
    add(t.path, "initial_state.mock_web needs the mock-web service (a local trial starts no services)");
  if (!t.initial_state.rag_corpus_dir.empty())
    add(t.path, "initial_state.rag needs the rag service (a local trial starts no services)");
  // The built-in core stack's json-db is not started for a local trial (json_db_use.h).
  for (const auto& use : json_db_uses(t)) {
    if (env.tools.mcp_server && use.what.starts_with("tools.agent.mcp_server")) continue;  // refused above
    std::string why = use.what + ", which needs the json-db service (a local trial starts no services)";
    if (use.what.starts_with("state_checks.jsonpaths")) why += "; path_glob checks read the sandbox's files";
    add(use.where, why);
  }
  return out;
}

bool local_needs_engine(const manifest::TaskConfig& task) { return task.grading.custom_checks.present; }

std::vector<std::string> local_leftovers(const std::string& local_root) {
  std::vector<std::string> out;
  std::error_code ec;
  if (local_root.empty() || !fs::is_directory(local_root, ec)) return out;
  for (const auto& task : fs::directory_iterator(local_root, ec)) {
    for (const auto& trial : fs::directory_iterator(task.path(), ec))
      out.push_back("local sandbox " + trial.path().string());
    fs::remove(task.path(), ec);  // only when empty: trials remove their own directories, not these
  }
  fs::remove(local_root, ec);
  return out;
}

void clear_local_root(const std::string& local_root) {
  std::error_code ec;
  if (!local_root.empty()) fs::remove_all(local_root, ec);
}

Result<std::unique_ptr<LocalTrial>> LocalTrial::start(const manifest::TaskConfig& task, int index, int attempt,
                                                      const TrialEnv& env) {
  if (env.local_root.empty()) return fail(Errc::kInvalid, "the local executor needs a run directory for its sandboxes");
  std::unique_ptr<LocalTrial> t(new LocalTrial(task, env));
  t->root_ =
      (fs::path(env.local_root) / dir_name(task.task_id) / (std::to_string(index) + "-" + std::to_string(attempt)))
          .string();
  t->work_ = t->root_ + "/work";
  auto vars = tools::local_environment(t->work_, task.environment.manifest.runner.env_passthrough, env.host.env);
  if (!vars) return vars.fail_with("task " + task.task_id);
  t->mark_ = std::string(kTrialMarkVar) + "=" + random_hex(12);
  vars->push_back(t->mark_);
  std::error_code ec;
  fs::remove_all(t->root_, ec);  // a killed process's leftover: every trial starts fresh
  fs::create_directories(t->work_, ec);
  if (!ec) fs::permissions(t->root_, fs::perms::owner_all, ec);  // what the agent writes is the user's alone
  if (ec) return fail(Errc::kIo, "creating the local sandbox " + t->work_ + ": " + ec.message());
  auto sb = tools::LocalSandbox::open(t->work_, std::move(*vars));
  if (!sb) {
    fs::remove_all(t->root_, ec);
    return sb.fail();
  }
  t->sandbox_ = std::move(*sb);
  t->warning_ = env.local_warning ? env.local_warning
                                  : std::make_shared<tools::LocalWarning>(env.log, env.host.require_container);

  const auto& runner = task.environment.manifest.runner;
  t->stack_.name = stack::new_stack_name(task.task_id);
  t->stack_.plan.name = t->stack_.name;
  // No stack on a daemon, but a grader container may be: it carries the owner labels all the same.
  t->stack_.labels = stack::StackLabels::owned_here(
      t->stack_.name, env.run_id, manifest::policy_name(task.environment.manifest.network_policy),
      task.environment.source, trial_lease(env), stack::OwnerMode::kAttached);
  t->stack_.plan.runner.key = policy::kRunnerKey;
  t->stack_.plan.runner.workdir = runner.workdir.empty() ? policy::kDefaultWorkdir : runner.workdir;
  t->stack_.plan.runner.image = runner.image.empty() ? policy::kDefaultRunnerImage : runner.image;
  return t;
}

std::optional<Fault> LocalTrial::setup(TrialResult& r) {
  auto files = read_initial_files(task_, stack_.plan.runner.workdir);
  if (!files) return classify(files.error(), results::InfraKind::kHost);
  for (const auto& f : *files) {
    if (auto st = sandbox_->write_file(f.rel, f.content, false); !st)
      return classify(st.error().with_context("copying the task's files into " + work_), results::InfraKind::kHost);
    r.initial_files[f.to] = f.content;
  }
  return std::nullopt;
}

Result<tools::StackTools> LocalTrial::open_tools(const tools::OpenOptions& o) {
  tools::StackTools t;
  t.stack = stack_.name;
  t.env = task_.environment;
  t.sandbox = tools::guard_local(sandbox_, warning_);
  tools::BuiltinOptions b;
  b.sandbox = t.sandbox;  // no proxy and no database: a local trial has no services
  auto exec = tools::make_toolbox({t.env.tools, b, {}, o.log, o.on_record});
  if (!exec) return exec.fail_with("opening the local executor's tools in " + work_);
  t.executor = std::move(*exec);
  return t;
}

void LocalTrial::use_sandbox(grading::Evidence& ev, engine::Client& docker) {
  auto snap = std::make_shared<SandboxSnapshot>(sandbox_, work_, stack_.plan.runner.workdir);
  ev.files = [snap](const std::string& glob) -> Result<std::vector<grading::WorkspaceFile>> {
    auto files = snap->files();
    if (!files) return files.fail();
    return (*files)->match(glob);
  };
  ev.run_tests = [this, snap, &docker]() -> Result<grading::TestRun> {
    auto tar = snap->tar();
    if (!tar) return tar.fail_with("running the task's tests");
    grader_used_ = true;
    GraderSpec gs{stack_.labels, "", stack_.plan.runner.workdir, stack_.plan.runner.image};
    gs.host = env_.host;
    return run_grader_on(docker, gs, task_, *tar);
  };
}

void LocalTrial::down(engine::Client& docker, Logger* log) {
  std::string who = "trial " + task_.task_id + ": teardown: ";
  kill_marked(mark_);
  if (grader_used_) {
    auto rep = stack::remove_stack(docker, stack_.name);
    if (!rep.clean() && log) log->warn(who + rep.errors.front());
  }
  if (env_.keep_local) return;
  std::error_code ec;
  fs::remove_all(root_, ec);
  if (ec && log) log->warn(who + "removing the local sandbox " + root_ + ": " + ec.message());
}

}  // namespace forge::trial
