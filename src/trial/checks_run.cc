// checks.py in a fresh container of the Python image, as the verifier, with no network.
#include "trial/checks_run.h"

#include <filesystem>
#include <map>
#include <string_view>

#include "core/confined_dir.h"
#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/tar.h"
#include "manifest/python_server.h"
#include "manifest/task_dir.h"
#include "tools/python_server.h"
#include "trial/grader_setup.h"
#include "trial/python_container.h"

namespace forge::trial {

namespace fs = std::filesystem;

namespace {

constexpr const char* kChecksDir = "forgectl-checks";      // the task's Python tree, T's, 0700
constexpr const char* kInputsDir = "forgectl-checks-in";   // the evidence, T's, 0700
constexpr const char* kOutputDir = "forgectl-checks-out";  // the result file, T's, 0700
constexpr const char* kHomeDir = "forgectl-checks-home";   // the driver's HOME, T's, 0700
constexpr std::size_t kResultMax = 16u << 20;
constexpr Millis kDeadlineGrace{15000};

engine::ContainerSpec checks_spec(const stack::StackLabels& labels) {
  auto spec = python_container_spec({labels, "grader", "checks", kVerifierUser, 2LL << 30});
  spec.host.tmpfs = {{"/tmp", "rw,nosuid,nodev,size=256m,mode=1777"}};
  return spec;
}

engine::TarEntry verifier_entry(std::string path, bool dir, unsigned mode) {
  engine::TarEntry e;
  e.path = std::move(path);
  e.type = dir ? engine::EntryType::kDirectory : engine::EntryType::kFile;
  e.mode = mode;
  e.uid = kVerifierUid;
  e.gid = kVerifierGid;
  return e;
}

// The tree holding checks.py and its imports, and the empty directories of the evidence, the
// result and the driver's HOME, all T's: what the grader holds before it is this trial's.
Result<std::string> checks_tar(const manifest::TestScripts& cfg) {
  auto root = ConfinedDir::open(cfg.checks_root, "the checks' directory");
  if (!root) return root.fail();
  engine::TarWriter tar;
  if (auto st = tar.add_entry(verifier_entry(std::string(kChecksDir) + "/", true, 0700)); !st) return st.fail();
  auto st = root->walk(
      "", manifest::kTestsLimits,
      [](const std::string& rel, EntryKind k) {
        const std::string name = fs::path(rel).filename().string();
        return k == EntryKind::kDirectory && (name == "__pycache__" || name == ".git");
      },
      [&](const TreeEntry& e) -> Status {
        auto meta =
            verifier_entry((fs::path(kChecksDir) / e.rel).generic_string(), e.kind == EntryKind::kDirectory, 0700);
        if (e.kind == EntryKind::kDirectory) return tar.add_entry(meta);
        meta.mode = e.mode & 0700;
        return tar.add_fd(meta, e.fd);
      });
  if (!st) return st.fail();
  for (const char* d : {kInputsDir, kOutputDir, kHomeDir})
    if (auto s = tar.add_entry(verifier_entry(std::string(d) + "/", true, 0700)); !s) return s.fail();
  return tar.finish();
}

// The trial's evidence files, T's, into the inputs directory checks_tar made.
Result<std::string> evidence_tar(const ChecksInputs& in) {
  engine::TarWriter tar;
  const std::pair<const char*, const std::string*> files[] = {{"transcript.json", &in.transcript_json},
                                                              {"initial.json", &in.initial_state_json},
                                                              {"final.json", &in.final_state_json}};
  for (const auto& [name, text] : files) {
    auto meta = verifier_entry(std::string(kInputsDir) + "/" + name, false, 0600);
    meta.content = *text;
    if (auto s = tar.add_entry(meta); !s) return s.fail();
  }
  return tar.finish();
}

Result<std::string> read_result(engine::Client& c, const std::string& id, const std::string& path) {
  std::optional<std::string> text;
  Status bad;
  auto st = engine::read_archive(c, id, path, [&](const engine::TarSource& source) -> Status {
    auto want = [&](const engine::TarHeader& h) -> engine::TarKeep {
      if (text || h.type != engine::EntryType::kFile || !h.hardlink.empty()) {
        bad = fail(Errc::kProtocol, "it is not a regular file");
        return {0, true};
      }
      if (h.size > kResultMax) {
        bad = fail(Errc::kProtocol,
                   "it is " + std::to_string(h.size) + " bytes, more than " + std::to_string(kResultMax));
        return {0, true};
      }
      text.emplace();
      return {kResultMax, false};
    };
    auto got = [&](const engine::TarHeader&, std::string data) -> Status {
      *text = std::move(data);
      return {};
    };
    if (auto r = engine::read_tar_stream(source, want, got); !r) return r;
    return bad;
  });
  if (!st) return st.fail();
  if (!text) return fail(Errc::kProtocol, "the archive holds no file");
  return std::move(*text);
}

}  // namespace

std::string checks_transcript_json(const std::vector<ChatMessage>& messages) {
  // Each call carries its real status and result, from the tool message answering it: a check
  // must never take a refused or failed call for a successful one (the driver's default when a
  // call says nothing is "success"). A call nothing answered never ran: "error", no result.
  std::map<std::string_view, const ChatMessage*> answers;
  for (const auto& m : messages)
    if (m.role == ChatMessage::Role::kTool && !m.tool_call_id.empty()) answers.emplace(m.tool_call_id, &m);
  auto status = [](bool error) { return error ? "error" : "success"; };
  json::Writer w;
  w.begin_object().key("messages").begin_array();
  for (const auto& m : messages) {
    w.begin_object().field("role", role_name(m.role)).field("content", m.content);
    if (!m.tool_calls.empty()) {
      w.key("tool_calls").begin_array();
      for (const auto& tc : m.tool_calls) {
        w.begin_object()
            .field("id", tc.id)
            .field("type", "function")
            .key("function")
            .begin_object()
            .field("name", tc.name)
            .field("arguments", tc.arguments)
            .end_object();
        auto answer = tc.id.empty() ? answers.end() : answers.find(tc.id);
        if (answer == answers.end()) {
          w.field("status", "error");
        } else {
          w.field("status", status(answer->second->tool_error)).field("result", answer->second->content);
        }
        w.end_object();
      }
      w.end_array();
    }
    if (!m.tool_call_id.empty()) w.field("tool_call_id", m.tool_call_id);
    if (!m.name.empty()) w.field("name", m.name);
    if (m.role == ChatMessage::Role::kTool) w.field("status", status(m.tool_error));
    w.end_object();
  }
  w.end_array().end_object();
  return w.take();
}

Result<std::string> prepare_python_checks(engine::Client& c, const manifest::TaskConfig& task,
                                          const stack::StackLabels& labels) {
  // Read before anything is created: a link out of the tree refuses the checks.
  auto tar = checks_tar(task.grading.custom_checks);
  if (!tar) return tar.fail();
  auto created = engine::create_container(c, checks_spec(labels));
  if (!created) return created.fail();
  ScopeGuard remove([&] { (void)engine::remove_container(c, created->id, engine::RemoveMode::kForce); });
  if (auto st = engine::put_archive(c, created->id, "/", std::move(*tar)); !st) return st.fail();
  if (auto st = engine::start_container(c, created->id); !st) return st.fail();
  remove.dismiss();
  return created->id;
}

Result<std::string> run_python_checks_container(engine::Client& c, const manifest::TaskConfig& task,
                                                const ChecksInputs& in, const std::string& ahead) {
  const auto& cfg = task.grading.custom_checks;
  const std::string what = "running the task's checks (" + cfg.checks_file + ")";
  std::string id = ahead;
  if (id.empty()) {
    auto made = prepare_python_checks(c, task, in.labels);
    if (!made) return made.fail_with(what);
    id = *made;
  }
  ScopeGuard remove([&] { (void)engine::remove_container(c, id, engine::RemoveMode::kForce); });
  // The trial's evidence goes in only now, whether the grader was made now or ahead.
  auto evidence = evidence_tar(in);
  if (!evidence) return evidence.fail_with(what);
  if (auto st = engine::put_archive(c, id, "/", std::move(*evidence)); !st) return st.fail_with(what);

  const fs::path base = fs::path("/") / kChecksDir;
  const fs::path task_dir = base / fs::path(task.dir).lexically_normal().lexically_relative(cfg.checks_root);
  const std::string in_dir = std::string("/") + kInputsDir + "/";
  const std::string result = std::string("/") + kOutputDir + "/result.json";
  engine::ExecOptions o;
  // Isolated as every Python forgectl starts (tools/python_server.h): the checks' own tree is on
  // sys.path because the driver puts it there, never because it is the working directory.
  o.cmd = {std::begin(tools::kIsolatedPython), std::end(tools::kIsolatedPython)};
  o.cmd.insert(o.cmd.end(),
               {"-m", "forgectl_checks.run", "--checks", (task_dir / cfg.checks_file).lexically_normal().string(),
                "--task-dir", task_dir.lexically_normal().string(), "--transcript", in_dir + "transcript.json",
                "--initial-state", in_dir + "initial.json", "--final-state", in_dir + "final.json", "--out", result,
                "--interface-version", cfg.interface_version, "--timeout", std::to_string(cfg.timeout_s)});
  for (const auto& rel : cfg.relative_imports) {
    o.cmd.push_back("--relative-import");
    o.cmd.push_back(rel);
  }
  if (!cfg.fail_on_error) o.cmd.push_back("--no-fail-on-error");
  o.env = {std::string("HOME=/") + kHomeDir, std::string("PATH=") + tools::kSystemPath,
           "LD_PRELOAD=", "LD_LIBRARY_PATH="};
  o.user = kVerifierUser;
  o.workdir = task_dir.lexically_normal().string();
  o.timeout = Millis(static_cast<long long>(cfg.timeout_s * 1000)) + kDeadlineGrace;
  o.output_cap = 1u << 20;
  auto r = engine::exec_run(c, id, o);
  if (!r) return r.fail_with(what);
  // Nothing runs when the file is read: the checks cannot rewrite it after the driver is done.
  if (auto st = engine::stop_container(c, id, 0); !st) return st.fail_with(what);
  if (r->timed_out || r->exit_code != 0)
    return fail(Errc::kIo, what + ": the driver " +
                               (r->timed_out ? std::string("did not finish in time")
                                             : "exited with " + std::to_string(r->exit_code)) +
                               ": " + trim(r->err.substr(0, 600)));
  auto text = read_result(c, id, result);
  if (!text) return text.fail_with(what + ": reading " + result);
  return text;
}

}  // namespace forge::trial
