// The grader container: the workspace copy as the agent's, the tests and the reward directory as
// the verifier's, the tests run as the verifier with the agent's programs behind the as-agent
// service, and the reward read only after every process in the container is dead.
#include <algorithm>
#include <future>
#include <thread>

#include "core/confined_dir.h"
#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/system.h"
#include "engine/tar.h"
#include "manifest/project.h"
#include "stack/helper_volume.h"
#include "stack/labels.h"
#include "trial/grader_setup.h"
#include "trial/grading_sources.h"
#include "trial/verifier_network.h"
#include "trial/verifier_run.h"

namespace forge::trial {

namespace {

constexpr std::size_t kRewardMax = 64 * 1024;
constexpr std::size_t kOutputCap = 1u << 20;
constexpr std::int64_t kDefaultMemory = 2LL << 30;
// Past the helper's own deadline: ours only backs it up.
constexpr Millis kDeadlineGrace{10000};
// On the as-agent server's command line, for --kill-token: it alone of the grader's root
// processes dies before a file is read in place (the verifier's uid cannot signal root).
constexpr const char* kAsAgentServerToken = "forgectl-as-agent-server";

engine::ContainerSpec grader_spec(const VerifierRun& v, const std::string& helper_volume, std::int64_t nano_cpus) {
  const GraderSpec& g = v.where;
  engine::ContainerSpec spec;
  spec.name = g.labels.stack + "-grader-" + random_hex(3);
  spec.image = g.image;
  spec.cmd = std::vector<std::string>{"sleep", "2147483647"};  // the tests run as execs
  spec.user = "0:0";  // the as-agent server starts as root, whatever the image's USER
  spec.workdir = g.workspace;
  spec.labels = g.labels.for_object("grader");
  // The workspace is exactly the agent's copy: no copy-up of the image's own workdir into the
  // volume, so a file the agent deleted stays deleted.
  engine::VolumeMount work;
  work.target = g.workspace;
  work.no_copy = true;
  work.labels = g.labels.for_object("volume");
  spec.host.mounts.push_back(std::move(work));
  // Tests judge the files, not the network, unless the task asks for a verifier network.
  if (v.network.empty()) {
    spec.host.network_mode = "none";
  } else {
    spec.network = v.network;
    spec.host.dns_options = v.dns_options;
    spec.host.dns = v.dns;
  }
  spec.host.cap_drop = {"ALL"};
  // Only to become A and T (docs/helper-protocol.md): root here cannot chown, read others' files
  // or signal their processes; no exec but the as-agent server's runs as root.
  spec.host.cap_add = {"SETUID", "SETGID"};
  spec.host.security_opt = {"no-new-privileges:true"};
  spec.host.pids_limit = 512;
  spec.host.memory = spec.host.memory_swap = v.memory > 0 ? v.memory : kDefaultMemory;
  spec.host.nano_cpus = nano_cpus;
  spec.host.init = true;
  // A /tmp that T can write (the as-agent socket lives there) whatever the image holds.
  spec.host.tmpfs = {{"/tmp", "rw,nosuid,nodev,size=512m,mode=1777"}};
  // forgectl's helper from its read-only volume (verified, never the image's own): T runs it to
  // reach the as-agent service and can neither change nor replace it.
  spec.host.mounts.push_back(stack::helper_mount(helper_volume));
  return spec;
}

std::string agent_prefix(const std::string& workspace) {
  return std::string(kGraderHelper) + " --as-agent " + kAsAgentSocket + " --cwd " + workspace + " --";
}

// The as-agent server, as root, detached: it lives until the container is killed.
Status start_as_agent_server(engine::Client& c, const std::string& id, long long timeout_ms,
                             const VerifierIdentity& as) {
  engine::ExecCreateSpec spec;
  spec.cmd = {kGraderHelper,
              "--as-agent-server",
              kAsAgentSocket,
              "--as",
              kAgentUser,
              "--allow-uid",
              std::to_string(as.uid),
              "--timeout-ms",
              std::to_string(timeout_ms),
              "--token",
              kAsAgentServerToken};
  spec.user = "0:0";
  spec.workdir = "/";
  auto exec = engine::exec_create(c, id, spec);
  if (!exec) return exec.fail_with("starting the as-agent service");
  auto started = c.expect({200}, engine::Method::kPost, "/exec/" + *exec + "/start", R"({"Detach":true,"Tty":false})");
  if (!started) return started.fail_with("starting the as-agent service");
  // T asks A to run the helper's --version: the socket, the drop to A and exec as A all work.
  engine::ExecOptions probe;
  probe.cmd = {kGraderHelper, "--as-agent", kAsAgentSocket, "--cwd", "/", "--", kGraderHelper, "--version"};
  probe.user = as.user();
  probe.workdir = "/";
  probe.timeout = Millis(20000);
  auto r = engine::exec_run(c, id, probe);
  if (!r) return r.fail_with("checking the as-agent service");
  if (r->exit_code != 0 || r->out.find("forgectl-exec") == std::string::npos) {
    std::string why = trim(r->err.substr(0, 400));
    if (auto ins = engine::exec_inspect(c, *exec); ins && !ins->running && ins->exit_code)
      why += (why.empty() ? "" : "; ") + std::string("the server exited with ") + std::to_string(*ins->exit_code);
    return fail(Errc::kIo, "the grader's as-agent service does not work (exit code " + std::to_string(r->exit_code) +
                               (why.empty() ? ")" : "): " + why));
  }
  return {};
}

// The tests' exec, as T, under the helper's deadline; they start in the workspace copy, or fail
// (the agent's doing) when the agent left it closed to T.
engine::ExecOptions tests_exec(const VerifierRun& v) {
  const GraderSpec& g = v.where;
  const long long timeout_ms = static_cast<long long>(v.timeout_s * 1000);
  engine::ExecOptions o;
  o.cmd = {kGraderHelper,
           "--as",
           v.as.user(),
           "--timeout-ms",
           std::to_string(timeout_ms),
           "--",
           "sh",
           "-c",
           "cd -- \"$1\" || exit 1; shift; exec sh -c \"$1\"",
           "sh",
           g.workspace,
           v.command};
  o.env = v.env;
  // A HOME the tests can write (tools installed to ~/.local, caches), not the daemon's "/" for a
  // uid without a passwd entry; a HOME of the task's own env wins.
  if (std::none_of(o.env.begin(), o.env.end(), [](const std::string& e) { return e.rfind("HOME=", 0) == 0; }))
    o.env.push_back(std::string("HOME=") + kVerifierHome);
  o.env.push_back("FORGECTL_AS_AGENT=" + agent_prefix(g.workspace));
  o.user = v.as.user();
  o.workdir = "/";
  o.timeout = Millis(timeout_ms) + kDeadlineGrace;
  o.output_cap = kOutputCap;
  o.cancel = g.cancel;
  return o;
}

// What the tests' exec `r` tells, the tests having exited with `exit_code`.
Result<grading::TestRun> test_run_of(engine::ExecResult& r, const VerifierRun& v, int exit_code) {
  const long long timeout_ms = static_cast<long long>(v.timeout_s * 1000);
  if (r.cancelled) return fail(Errc::kCancelled, "running the tests: interrupted");
  if (exit_code == 125 && r.err.find("forgectl-exec: cannot drop privileges") != std::string::npos)
    return fail(Errc::kIo, "running the tests: " + trim(r.err.substr(0, 400)));
  grading::TestRun run;
  const auto note = r.err.rfind("forgectl-exec: timed out after");
  const bool helper_deadline =
      exit_code == engine::kHelperTimeoutExit && note != std::string::npos && r.elapsed >= Millis(timeout_ms);
  run.timed_out = r.timed_out || helper_deadline;
  if (helper_deadline) r.err.erase(note);  // the helper's note is not the tests' output
  run.exit_code = run.timed_out ? -1 : exit_code;
  run.output = r.out + r.err;
  return run;
}

Result<grading::TestRun> run_tests_as_verifier(engine::Client& c, const std::string& id, const VerifierRun& v) {
  auto r = engine::exec_run(c, id, tests_exec(v));
  if (!r) return r.fail_with("running the tests");
  return test_run_of(*r, v, r->exit_code);
}

// Every process in the grader dies before its files are read: nothing can write the reward after.
// True when the OOM killer had ended one of them (the daemon's State.OOMKilled).
Result<bool> kill_everything(engine::Client& c, const std::string& id) {
  if (auto st = engine::stop_container(c, id, 0); !st) return st.fail_with("stopping the grader");
  auto info = engine::inspect_container(c, id);
  if (!info) return info.fail_with("stopping the grader");
  if (info->state.running) return fail(Errc::kIo, "stopping the grader: it is still running");
  return info->state.oom_killed;
}

// The daemon refuses NanoCpus above the host's CPUs: a task asking more gets all of them.
Result<std::int64_t> fit_cpus(engine::Client& c, std::int64_t nano_cpus) {
  if (nano_cpus <= 0) return nano_cpus;
  auto info = engine::info(c);
  if (!info) return info.fail_with("reading the host's CPU count");
  const std::int64_t host = static_cast<std::int64_t>(info->ncpu) * 1000000000LL;
  return host > 0 ? std::min(nano_cpus, host) : nano_cpus;
}

// A small file, through the archive API of the stopped grader: nullopt when it is missing; an
// error when it is not a regular file or larger than `max`.
Result<std::optional<std::string>> read_small_file(engine::Client& c, const std::string& id, const std::string& path,
                                                   std::size_t max) {
  std::optional<std::string> text;
  auto st = engine::read_archive(c, id, path, [&](const engine::TarSource& source) -> Status {
    Status bad;
    auto want = [&](const engine::TarHeader& h) -> engine::TarKeep {
      if (text || h.type != engine::EntryType::kFile || !h.hardlink.empty()) {
        bad = fail(Errc::kProtocol, "it is not a regular file");
        return {0, true};
      }
      if (h.size > max) {
        bad = fail(Errc::kProtocol,
                   "it is " + std::to_string(h.size) + " bytes; at most " + std::to_string(max) + " are read");
        return {0, true};
      }
      text.emplace();
      return {max, false};
    };
    auto got = [&](const engine::TarHeader&, std::string data) -> Status {
      *text = std::move(data);
      return {};
    };
    if (auto r = engine::read_tar_stream(source, want, got); !r) return r;
    return bad;
  });
  if (!st && st.error().code == Errc::kNotFound) return std::optional<std::string>();
  if (!st && st.error().code == Errc::kProtocol) return st.fail();
  if (!st) return fail(Errc::kIo, st.error().what());
  if (!text) return fail(Errc::kProtocol, "the archive holds no file");
  return text;
}

// The tests' exec made root's: the tests run as before (their output all on stderr), then, with
// their exit code on stdout's first line, the as-agent server dies (a command it was starting
// dies with it: PR_SET_PDEATHSIG, or its check of the server's pid), then every process of the
// verifier's uid (none is left to ask for a command as the agent), then every one of the agent's;
// only root's init, `sleep` and this exec remain. The file is then read as the verifier onto
// stdout, which nothing else in the grader could reach: exit 4 when it is missing, 3 when it is
// no regular file (or a directory on its way is closed to the verifier), 5 (its size on stdout)
// when it is larger than the limit.
constexpr const char* kTestsThenRead = R"(H=$1 T=$2 A=$3 tok=$4 f=$5 max=$6; shift 6
"$@" 1>&2
echo "$?"
"$H" --kill-token "$tok" >/dev/null || exit 90
"$H" --as "$T" --kill-all >/dev/null || exit 91
"$H" --as "$A" --kill-all >/dev/null || exit 92
exec "$H" --as "$T" -- sh -c '
set -f
f=$1 max=$2 d=
for part in $(echo "${1%/*}" | tr / " "); do
  d=$d/$part
  [ -d "$d" ] && [ -x "$d" ] || exit 3
done
[ -L "$f" ] && exit 3
[ -e "$f" ] || exit 4
[ -f "$f" ] && [ -r "$f" ] || exit 3
n=$(wc -c < "$f") || exit 3
[ "$n" -le "$max" ] || { echo "$n"; exit 5; }
exec cat -- "$f"' sh "$f" "$max")";

// The file as kTestsThenRead's exit code and stdout (past the first line) give it, with
// read_small_file's answers: nullopt when it is missing, a kProtocol error when it is not a
// regular file or larger than `max`.
Result<std::optional<std::string>> file_read_in_place(int exit_code, std::string text, const std::string& err,
                                                      std::size_t max) {
  switch (exit_code) {
    case 0:
      if (text.size() > max) break;
      return std::optional<std::string>(std::move(text));
    case 3:
      return fail(Errc::kProtocol, "it is not a regular file the verifier can read");
    case 4:
      return std::optional<std::string>();
    case 5:
      return fail(Errc::kProtocol,
                  "it is " + trim(text.substr(0, 24)) + " bytes; at most " + std::to_string(max) + " are read");
    default:
      break;
  }
  return fail(Errc::kIo, "stopping the grader's processes: exit code " + std::to_string(exit_code) +
                             (err.empty() ? "" : ": " + trim(err.substr(err.size() > 400 ? err.size() - 400 : 0))));
}

bool ended_on_its_own(const grading::TestRun& run) {
  return !run.timed_out && run.exit_code >= 0 && !(run.exit_code > 128 && run.exit_code <= 128 + 64);
}

}  // namespace

Result<std::string> collect_tree(engine::Client& c, const std::string& id, const std::string& path,
                                 std::uint64_t max_bytes) {
  std::string out;
  auto st = engine::read_archive(c, id, path, [&](const engine::TarSource& source) -> Status {
    engine::TarWriter tar;
    std::uint64_t total = 0;
    auto want = [&](const engine::TarHeader& h) -> engine::TarKeep {
      const bool keep = h.type == engine::EntryType::kFile && h.hardlink.empty() && total + h.size <= max_bytes;
      if (keep) total += h.size;
      return {keep ? static_cast<std::size_t>(h.size) + 1 : 0, false};  // + 1: empty files too
    };
    auto got = [&](const engine::TarHeader& h, std::string data) -> Status { return tar.add_file(h.path, data, 0644); };
    if (auto r = engine::read_tar_stream(source, want, got); !r) return r;
    auto bytes = tar.finish();
    if (!bytes) return bytes.fail();
    out = std::move(*bytes);
    return {};
  });
  if (!st && st.error().code != Errc::kNotFound) return fail(Errc::kIo, "reading " + path + ": " + st.error().what());
  return out;
}

// What is the verifier's (the tests, /logs, its HOME), as one archive to unpack at "/"; `mark`
// (a path under "/", root's, empty) its very last entry when given.
Result<std::string> verifier_files_tar(const VerifierRun& v, const std::string& mark = "") {
  auto logs = verifier_logs_tar(v.as.uid, v.as.gid);
  if (!logs) return logs.fail();
  auto home = verifier_home_tar(v.as.uid, v.as.gid);
  if (!home) return home.fail();
  std::vector<std::string> tars = v.verifier_tars;
  tars.push_back(std::move(*logs));
  tars.push_back(std::move(*home));
  if (!mark.empty()) {
    engine::TarWriter m;
    if (auto st = m.add_file(mark.substr(1), "", 0600); !st) return st.fail();
    auto bytes = m.finish();
    if (!bytes) return bytes.fail();
    tars.push_back(std::move(*bytes));
  }
  auto all = engine::concat_tars(tars);  // one extraction: the grade phase pays for each
  if (!all) return all.fail_with("assembling the verifier's files");
  return all;
}

// The verifier's files into the grader: after everything of the agent's, so none of its entries
// can stand in for them.
Status put_verifier_files(engine::Client& c, const std::string& id, const VerifierRun& v) {
  auto all = verifier_files_tar(v);
  if (!all) return all.fail();
  return engine::put_archive(c, id, "/", std::move(*all));
}

// Whether the workspace, copied from the runner, and the verifier's files go in as one archive.
bool one_archive(const VerifierRun& v) {
  const GraderSpec& g = v.where;
  return g.workspace_tar.empty() && v.agent_tars.empty() && g.workspace.rfind('/') == 0;
}

// The agent's files, then the verifier's over them. A workspace straight under "/" copied from the
// runner takes the verifier's files as its archive's last entries: one extraction in the daemon
// (~0.1-0.2 s each here) where there were two, with the same order; `mark` after them all.
Status put_evidence(engine::Client& c, const std::string& id, const VerifierRun& v, const std::string& mark = "") {
  const GraderSpec& g = v.where;
  const bool one = one_archive(v);
  std::string verifier;
  if (one) {
    auto all = verifier_files_tar(v, mark);
    if (!all) return all.fail();
    verifier = std::move(*all);
  }
  Status copied = g.workspace_tar.empty() ? copy_workspace(c, g.runner, g.workspace, id, g.workspace_limit, verifier)
                                          : put_workspace_tar(c, g.workspace, id, g.workspace_tar);
  if (!copied) return copied.fail_with("copying the workspace");
  if (one) return {};
  for (const auto& tar : v.agent_tars)
    if (auto st = engine::put_archive(c, id, "/", tar); !st) return st.fail_with("copying the artifacts");
  return put_verifier_files(c, id, v);
}

// The grader created, empty.
Result<std::string> create_verifier(engine::Client& c, const VerifierRun& v) {
  const GraderSpec& g = v.where;
  auto volume = stack::ensure_helper_volume(c, g.host, g.image);
  if (!volume) return volume.fail();
  auto cpus = fit_cpus(c, v.nano_cpus);
  if (!cpus) return cpus.fail();
  auto created = engine::create_container(c, grader_spec(v, *volume, *cpus));
  if (!created) return created.fail();
  return created->id;
}

// Whether nothing the agent's files go to can overlap what is the verifier's: then the verifier's
// may go in first, ahead of the trial's grade phase.
bool verifier_files_first(const VerifierRun& v) {
  if (!v.agent_tars.empty()) return false;
  const std::string& w = v.where.workspace;
  for (const char* p : {"/tests", "/logs", kVerifierHome})
    if (w == p || w.rfind(std::string(p) + "/", 0) == 0) return false;
  return w.size() > 1 && w[0] == '/';
}

Result<std::string> prepare_verifier(engine::Client& c, const VerifierRun& v) {
  const std::string what = "preparing the grader ahead";
  if (!verifier_files_first(v))
    return fail(Errc::kUnsupported, what + ": the agent's files could overlap the verifier's");
  auto id = create_verifier(c, v);
  if (!id) return id.fail_with(what);
  ScopeGuard remove([&] { (void)engine::remove_container(c, *id, engine::RemoveMode::kForce); });
  // Empty: the verifier's files go in at grading, over the agent's (put_evidence), as into a
  // grader made then; a copy here as well would be one more archive PUT for the daemon.
  if (auto st = engine::start_container(c, *id); !st) return st.fail_with(what);
  // Its timeout bounds each command the tests have run as the agent, not its own life.
  if (auto st = start_as_agent_server(c, *id, static_cast<long long>(v.timeout_s * 1000), v.as); !st)
    return st.fail_with(what);
  remove.dismiss();
  return id;
}

namespace {

// Before kTestsThenRead, as root: waits until `mark` exists (the evidence archive's last entry:
// everything of the agent's and the verifier's is in place), then runs the rest.
constexpr const char* kAfterMark = R"(m=$1; shift
while [ ! -e "$m" ]; do sleep 0.02 2>/dev/null || sleep 1; done
exec "$@")";

// The tests and the verdict in one exec, the grader not stopped (kTestsThenRead); with a `mark`,
// started before the evidence is in and waiting for it (kAfterMark).
Result<VerifierResult> test_and_read_in_place(engine::Client& c, const std::string& id, const VerifierRun& v,
                                              const std::string& mark = "") {
  if (v.read_files.size() > 1 || v.collect_logs)
    return fail(Errc::kInvalid, "reading in place: one file at most, and no logs");
  const std::string path = v.read_files.empty() ? std::string("/") : v.read_files.front();
  engine::ExecOptions o = tests_exec(v);
  std::vector<std::string> cmd = {"sh",        "-c",       kTestsThenRead,      "sh", kGraderHelper,
                                  v.as.user(), kAgentUser, kAsAgentServerToken, path, std::to_string(v.max_file_bytes)};
  cmd.insert(cmd.end(), o.cmd.begin(), o.cmd.end());
  if (!mark.empty()) cmd.insert(cmd.begin(), {"sh", "-c", kAfterMark, "sh", mark});
  o.cmd = std::move(cmd);
  o.user = "0:0";
  auto r = engine::exec_run(c, id, o);
  if (!r) return r.fail_with("running the tests");
  // The tests' exit code, or nothing when the exec did not get past them (our deadline, SIGINT).
  std::string out = std::move(r->out);
  r->out.clear();
  const auto eol = out.find('\n');
  int code = -1;
  const bool got_code =
      !r->timed_out && eol != std::string::npos && eol > 0 && eol <= 4 && out.find_first_not_of("0123456789") == eol;
  if (got_code) code = std::stoi(out.substr(0, eol));
  auto run = test_run_of(*r, v, code);
  if (!run) return run.fail();
  VerifierResult res;
  res.run = std::move(*run);
  if (!got_code) {
    // Nothing was killed in the grader: stopped whole, as for any other verifier.
    if (auto oom = kill_everything(c, id); !oom) return oom.fail();
    if (!res.run.timed_out)
      return fail(Errc::kIo, "running the tests: the grader's exec ended without their exit code (exit code " +
                                 std::to_string(r->exit_code) + ")");
    return res;
  }
  res.ended_on_its_own = ended_on_its_own(res.run);
  auto text = file_read_in_place(r->exit_code, out.substr(eol + 1), r->err, v.max_file_bytes);
  if (!text && text.error().code != Errc::kProtocol) return text.fail_with("reading '" + path + "'");
  if (!res.ended_on_its_own || v.read_files.empty()) return res;
  if (!text)
    res.unreadable[path] = text.error().what();
  else
    res.files[path] = std::move(*text);
  return res;
}

// A grader made ahead (running, its as-agent service up): the tests' exec is made and started
// while the evidence goes in, and waits for the archive's last entry, a name of this grade's
// own that nothing of the agent's can take (its entries are all under the workspace). The
// exec's start (a runc exec: ~0.05-0.15 s here) is no longer paid after the copy. A copy that
// fails kills the grader, and with it the waiting exec.
Result<VerifierResult> copy_beside_tests(engine::Client& c, const std::string& id, const VerifierRun& v) {
  const std::string mark = "/.forgectl-evidence-" + random_hex(8);
  auto tests = std::async(std::launch::async, [&] { return test_and_read_in_place(c, id, v, mark); });
  auto copied = put_evidence(c, id, v, mark);
  if (!copied) {
    (void)engine::kill_container(c, id);
    (void)tests.wait();
    return copied.fail();
  }
  return tests.get();
}

}  // namespace

Result<VerifierResult> run_verifier(engine::Client& c, const VerifierRun& v, const std::string& ahead) {
  std::string id = ahead;
  // One made ahead holds the verifier's files already: when the agent's (a Harbor task's artifacts
  // outside the workspace) could overlap them, it is no place for them; a fresh one is made.
  if (!id.empty() && !verifier_files_first(v)) {
    (void)engine::remove_container(c, id, engine::RemoveMode::kForce);
    id.clear();
  }
  const bool made_ahead = !id.empty();
  if (!made_ahead) {
    auto created = create_verifier(c, v);
    if (!created) return created.fail();
    id = *created;
  }
  ScopeGuard remove([&] { (void)engine::remove_container(c, id, engine::RemoveMode::kForce); });
  if (v.where.leave_to_teardown) remove.dismiss();

  // The agent's files go into the grader only now, whether it was made now or ahead (started then,
  // empty, running nothing but its init, `sleep` and the as-agent server); the verifier's after
  // them: whatever the agent's entries did, the tests and /logs are the verifier's as the task gave them.
  if (made_ahead && v.read_in_place && one_archive(v)) return copy_beside_tests(c, id, v);
  if (auto st = put_evidence(c, id, v); !st) return st.fail();
  if (!made_ahead) {
    if (auto st = engine::start_container(c, id); !st) return st.fail();
    if (auto st = start_as_agent_server(c, id, static_cast<long long>(v.timeout_s * 1000), v.as); !st) return st.fail();
  }

  if (v.read_in_place) return test_and_read_in_place(c, id, v);
  auto run = run_tests_as_verifier(c, id, v);
  if (!run) return run.fail();
  auto oom = kill_everything(c, id);
  if (!oom) return oom.fail();
  VerifierResult out;
  out.run = std::move(*run);
  out.oom_killed = *oom;
  out.ended_on_its_own = ended_on_its_own(out.run);
  // What the tests wrote counts only from tests that ended on their own; a killed or late one is no verdict.
  if (out.ended_on_its_own)
    for (const auto& path : v.read_files) {
      auto text = read_small_file(c, id, path, v.max_file_bytes);
      if (!text && text.error().code == Errc::kProtocol) {  // what the tests (or a program they ran) left
        out.unreadable[path] = text.error().what();
        continue;
      }
      if (!text) return text.fail_with("reading '" + path + "'");
      out.files[path] = std::move(*text);
    }
  if (v.collect_logs) {
    auto tar = collect_tree(c, id, kVerifierLogs);
    if (!tar) return tar.fail();
    out.logs_tar = std::move(*tar);
  }
  return out;
}

namespace {

// The verifier of a task's test scripts (custom_checks): its command, deadline, tests and reward file.
Result<VerifierRun> test_script_verifier(const GraderSpec& g, const manifest::TaskConfig& task) {
  const auto& cfg = task.grading.custom_checks;
  VerifierRun v;
  v.where = g;
  if (!cfg.image.empty()) v.where.image = cfg.image;
  v.command = cfg.command;
  v.timeout_s = cfg.timeout_s;
  // The tests are read before anything is created: a link out of the task refuses the grader.
  if (!cfg.dir.empty()) {
    auto dir = manifest::open_task_files(task.dir);  // custom_checks.dir may be a project's ("../../checks")
    if (!dir) return dir.fail();
    auto bytes = tests_tar(*dir, cfg.dir);
    if (!bytes) return bytes.fail();
    v.verifier_tars.push_back(std::move(*bytes));
  }
  if (!cfg.reward_file.empty()) v.read_files.push_back(cfg.reward_file);
  if (const VerifierNetwork* n = g.network) {  // network_policy's grade (docs/environment.md)
    v.network = n->network;
    v.env.insert(v.env.end(), n->env.begin(), n->env.end());
    v.dns_options = n->dns_options;
    v.dns = n->dns;
  }
  v.read_in_place = true;  // no OOM flag is wanted here: the stop and the GET archive are saved
  return v;
}

}  // namespace

Result<std::string> prepare_grader(engine::Client& c, const GraderSpec& g, const manifest::TaskConfig& task) {
  auto v = test_script_verifier(g, task);
  if (!v) return v.fail_with("preparing the grader ahead");
  return prepare_verifier(c, *v);
}

Result<grading::TestRun> run_grader(engine::Client& c, const GraderSpec& g, const manifest::TaskConfig& task,
                                    const std::string& ahead) {
  const auto& cfg = task.grading.custom_checks;
  const std::string what = "running the task's tests";
  auto v = test_script_verifier(g, task);
  if (!v) return v.fail_with(what);
  auto r = run_verifier(c, *v, ahead);
  if (!r) return r.fail_with(what);
  grading::TestRun run = std::move(r->run);
  // The reward file is in a directory the tests (and any program of the agent's they run) write:
  // one spoiled there is the tests' verdict gone bad, scored 0, not the grader failing.
  if (auto it = r->unreadable.find(cfg.reward_file); it != r->unreadable.end()) {
    run.reward_spoiled = it->second;
  } else if (auto f = r->files.find(cfg.reward_file); f != r->files.end() && f->second) {
    auto reward = parse_reward(*f->second);
    if (reward)
      run.reward = *reward;
    else
      run.reward_spoiled = reward.error().what();
  }
  return run;
}

Result<grading::TestRun> run_grader_on(engine::Client& c, GraderSpec spec, const manifest::TaskConfig& task,
                                       const std::string& workspace_tar) {
  spec.workspace_tar = workspace_tar;
  return run_grader(c, spec, task);
}

}  // namespace forge::trial
