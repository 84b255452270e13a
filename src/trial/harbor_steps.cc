// A multi-step Harbor task's per-step parts: workdir/ and setup.sh before the step's agent, and
// the per-key mean of the steps' rewards.
#include "trial/harbor_steps.h"

#include <filesystem>

#include "core/confined_dir.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/exec.h"
#include "engine/tar.h"
#include "manifest/task_dir.h"
#include "trial/grader_setup.h"

namespace forge::trial {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxSetupScript = std::size_t{4} << 20;  // the loader's limit for scripts

std::string rel_to(const manifest::HarborTask& t, const std::string& abs) {
  return fs::path(abs).lexically_relative(t.dir).generic_string();
}

// Runs the script given on stdin from a temporary file (so a command of it reading stdin reads
// /dev/null, not the script's rest), with bash when there is one, and removes the file after.
constexpr const char* kSetupCommand =
    "t=$(mktemp) || exit 125; cat > \"$t\" || exit 125; "
    "if command -v bash >/dev/null 2>&1; then bash \"$t\" </dev/null; else sh \"$t\" </dev/null; fi; "
    "rc=$?; rm -f \"$t\"; exit $rc";

// Clears, as the agent, what the agent left where the workdir puts something of another kind: the
// daemon refuses a directory over a file or a link (an infra error the agent could cause at will)
// and must never write through a link. Lines "d <path>" / "f <path>" on stdin, parents first.
constexpr const char* kClearCommand =
    "while IFS= read -r e; do t=${e%% *}; p=${e#* }; "
    "if [ -L \"$p\" ]; then rm -f -- \"$p\"; "
    "elif [ \"$t\" = d ] && [ -e \"$p\" ] && [ ! -d \"$p\" ]; then rm -f -- \"$p\"; "
    "elif [ \"$t\" = f ] && [ -d \"$p\" ]; then rm -rf -- \"$p\"; fi; done; exit 0";

}  // namespace

Status put_harbor_step_workdir(engine::Client& c, const std::string& runner, const manifest::HarborTask& task,
                               const manifest::StepConfig& step, const std::string& workspace, unsigned uid,
                               unsigned gid) {
  if (step.workdir_dir.empty()) return {};
  const std::string what = "copying steps/" + step.name + "/workdir into the workspace";
  auto dir = ConfinedDir::open(task.dir);
  if (!dir) return dir.fail_with(what);
  engine::TarWriter tar;
  std::size_t entries = 0;
  std::string paths;  // kClearCommand's input
  // setup.sh is run, not given: it never lands in the workspace.
  auto skip = [](const std::string& rel, EntryKind kind) { return rel == "setup.sh" && kind != EntryKind::kDirectory; };
  auto st = dir->walk(rel_to(task, step.workdir_dir), manifest::kTestsLimits, skip, [&](const TreeEntry& e) -> Status {
    engine::TarEntry t;
    t.path = e.rel;
    t.uid = uid;
    t.gid = gid;
    ++entries;
    if (e.rel.find('\n') != std::string::npos)
      return fail(Errc::kInvalid, "steps/" + step.name + "/workdir: a file name holds a newline");
    paths += std::string(e.kind == EntryKind::kDirectory ? "d " : "f ") + e.rel + "\n";
    if (e.kind == EntryKind::kDirectory) {
      t.type = engine::EntryType::kDirectory;
      t.mode = 0755;
      return tar.add_entry(t);
    }
    t.mode = (e.mode & 0111) ? 0755 : 0644;
    return tar.add_fd(t, e.fd);
  });
  if (!st) return st.fail_with(what);
  auto bytes = tar.finish();
  if (!bytes) return bytes.fail_with(what);
  if (entries == 0) return {};
  engine::ExecOptions o;
  o.cmd = {"sh", "-c", kClearCommand};
  o.user = std::to_string(uid) + ":" + std::to_string(gid);
  o.workdir = workspace;
  o.stdin_data = std::move(paths);
  o.timeout = Millis(60000);
  o.output_cap = 4096;
  o.helper = kGraderHelper;
  auto cleared = engine::exec_run(c, runner, o);
  if (!cleared) return cleared.fail_with(what);
  if (auto put = engine::put_archive(c, runner, workspace, std::move(*bytes)); !put) return put.fail_with(what);
  return {};
}

Status run_harbor_step_setup(engine::Client& c, const std::string& runner, const manifest::HarborTask& task,
                             const manifest::StepConfig& step, const std::string& workspace, unsigned uid,
                             unsigned gid, const std::atomic<int>* interrupted, Millis timeout) {
  if (step.setup_script.empty()) return {};
  const std::string what = "step '" + step.name + "': steps/" + step.name + "/workdir/setup.sh";
  auto dir = ConfinedDir::open(task.dir);
  if (!dir) return dir.fail_with(what);
  auto script = dir->read(rel_to(task, step.setup_script), kMaxSetupScript);
  if (!script) return script.fail_with(what);
  return run_setup_script(c, runner, std::move(*script), what, "before the step's agent", workspace, uid, gid,
                          interrupted, timeout);
}

Status run_setup_script(engine::Client& c, const std::string& runner, std::string script, const std::string& what,
                        const std::string& before, const std::string& workspace, unsigned uid, unsigned gid,
                        const std::atomic<int>* interrupted, Millis timeout, const std::vector<std::string>& env) {
  engine::ExecOptions o;
  o.cmd = {"sh", "-c", kSetupCommand};
  o.env = env;
  o.user = std::to_string(uid) + ":" + std::to_string(gid);
  o.workdir = workspace;
  o.stdin_data = std::move(script);
  o.timeout = timeout;
  o.output_cap = 64 * 1024;
  o.helper = kGraderHelper;  // the runner's too: forgectl's helper volume at /.forgectl
  o.cancel = interrupted;
  auto r = engine::exec_run(c, runner, o);
  if (!r) return r.fail_with(what);
  if (r->cancelled) return fail(Errc::kCancelled, what + ": interrupted");
  if (!r->timed_out && r->exit_code == 0) return {};
  std::string out = trim(r->out + r->err);
  if (out.size() > 2048) out.resize(2048);
  return fail(Errc::kUnavailable,
              what + (r->timed_out ? " timed out after " + std::to_string(timeout.count() / 1000) + " s"
                                   : " failed (exit code " + std::to_string(r->exit_code) + ")") +
                  " " + before + ": the task's environment, not the agent" + (out.empty() ? "" : ": " + out));
}

Status stop_user_processes(engine::Client& c, const std::string& runner, const std::string& user) {
  engine::ExecOptions o;
  o.cmd = {kGraderHelper, "--kill-all"};
  o.user = user;
  o.timeout = Millis(20000);
  auto r = engine::exec_run(c, runner, o);
  if (!r) return r.fail_with("stopping the processes of " + user);
  if (r->exit_code != 0)
    return fail(Errc::kProtocol, "stopping the processes of " + user + ": the helper exited " +
                                     std::to_string(r->exit_code) + (r->err.empty() ? "" : ": " + r->err.substr(0, 200)));
  return {};
}

std::map<std::string, double> mean_step_rewards(const std::vector<std::map<std::string, double>>& steps) {
  std::map<std::string, double> sum;
  for (const auto& m : steps)
    for (const auto& [k, v] : m) sum[k] += v;
  for (auto& [k, v] : sum) v /= static_cast<double>(steps.size());
  return sum;
}

}  // namespace forge::trial
