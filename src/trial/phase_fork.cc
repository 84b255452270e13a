// The setup phase forked (snapshot.h, docs/sweeps.md "Forks"): the first trial of a task with a
// setup_script takes a snapshot of what setup left, before any agent process runs; every later
// one starts from it, its starting workspace hashed and compared with the snapshot's.
#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/confined_dir.h"
#include "core/json.h"
#include "core/process_identity.h"
#include "core/sha256.h"
#include "engine/images.h"
#include "engine/system.h"
#include "manifest/python_server.h"
#include "stack/labels.h"
#include "tools/python_server.h"
#include "trial/service_capture.h"
#include "trial/snapshot.h"
#include "trial/trial_run.h"
#include "trial/trial_setup.h"

namespace forge::trial {

using results::InfraKind;

// A task with a setup_script that has not opted out (setup_fork: false), in a container run with
// forks on. A Harbor task's setup is its own (steps, healthchecks) and is never forked.
bool TrialRun::forks() const {
  const auto& m = task_.environment.manifest;
  return env_.snapshots && !task_.harbor && !m.setup_script.empty() && m.setup_fork && fork_unsafe_because(task_).empty();
}

// --keep-snapshots: the SHA-256 of everything the set-up state follows from — the task's files, its
// setup_script (which may sit outside the task directory in a project), a Python server's tree,
// the ids of the images that run or hold the state and the engine's version (a kept image lives on one daemon). "" (the snapshot is
// not kept, as without the flag) when keeping is off or a part cannot be read.
std::string TrialRun::snapshot_content_key() {
  const auto& keeping = env_.snapshots->keeping();
  if (!keeping.keep || !keeping.task_hash) return "";
  Sha256 h;
  auto put = [&h](std::string_view s) {
    h.update(std::to_string(s.size()) + ":");
    h.update(s);
  };
  auto warn = [this](const Error& e) {
    note("WARN", "trial", "set-up snapshot not kept: " + e.what());
    return std::string();
  };
  put("forgectl snapshot 2");  // 2: the compose services' images and volumes are held too
  auto task = keeping.task_hash(task_.dir);
  if (!task) return warn(task.error());
  put(*task);
  const std::filesystem::path script(task_.environment.manifest.setup_script);
  auto dir = ConfinedDir::open(script.parent_path().string());
  auto body = dir ? dir->read(script.filename().string(), std::size_t{4} << 20) : Result<std::string>(dir.fail());
  if (!body) return warn(body.error());
  put(*body);
  if (python_server()) {
    auto tar = tools::python_server_tar(*task_.environment.tools.mcp_server, "server");
    if (!tar) return warn(tar.error());
    put(sha256_hex(*tar));
  }
  // The images whose code reads or holds the set-up state: the runner's, each service's (json-db's
  // namespace comes from one; another's set-up image is committed from it), the Python server's.
  std::vector<std::string> images{up_->plan.runner.image};
  for (const auto& svc : up_->plan.services) images.push_back(svc.image);
  if (python_server()) images.push_back(manifest::kPythonImage);
  for (const auto& name : images) {
    auto image = engine::inspect_image(docker_, name);
    if (!image) return warn(image.error());
    put(image->id);
  }
  auto engine = engine::version(docker_);
  if (!engine) return warn(engine.error());
  put(engine->version + " " + engine->api_version + " " + engine->os + "/" + engine->arch);
  return h.hex_digest();
}

// The compose services setup may have changed, swapped for containers of their set-up images with
// their volumes seeded (stack::swap_services), before json-db, the tools or any agent process use
// the stack. A snapshot that lacks one of the task's services is refused (infra, sandbox).
Step TrialRun::fork_services(std::vector<stack::ServiceSwap> services) {
  for (const auto& key : captured_services(task_))
    if (std::none_of(services.begin(), services.end(), [&](const auto& s) { return s.key == key; }))
      return Fault::infra(InfraKind::kSandbox, "the snapshot holds no set-up state of service '" + key +
                                                   "'; give the task setup_fork: false");
  if (services.empty()) return std::nullopt;
  stack::SwapOptions o;
  o.interrupted = env_.interrupted;
  if (auto st = stack::swap_services(docker_, *up_, std::move(services), o); !st)
    return classify_running(st.error().with_context("forking the set-up services"), InfraKind::kSandbox);
  return std::nullopt;
}

// The fork: the workspace, json-db's namespace and the task's compose services as setup left them
// in the snapshot's trial; forgectl's services' per-trial state (mock-web's pages, rag's index) as
// in any trial; then the agent's network, as after a setup.
Step TrialRun::fork_setup(const ForkState& f) {
  auto held = fork_snapshot(docker_, f.image_id, runner_, workspace(), up_->labels.for_object("snapshot"));
  if (!held) return classify_running(held.error().with_context("forking the set-up state"), InfraKind::kDaemon);
  if (auto s = fork_services(held->services)) return s;
  const std::string& db_body = held->db_init_body;
  fork_server_state_ = held->server_state;  // seeded into this trial's server once it starts (seed_server)
  if (auto it = up_->containers.find("json-db"); it != up_->containers.end()) {
    db_ = std::make_unique<DbClient>(db_transport(it->second), control_token_, trial_id_);
    db_init_body_ = db_init_body(task_.initial_state);  // golden replay starts from the task's fixtures, as unforked
    if (auto st = db_->init(db_body.empty() ? db_init_body_ : db_body); !st)
      return classify_running(st.error().with_context("initialising the trial's json-db namespace from the snapshot"),
                              InfraKind::kSandbox);
  }
  r_.initial_files = f.kept ? held->initial_files : f.initial_files;
  if (auto s = setup_services()) return s;
  auto hash = hash_workspace(docker_, runner_, workspace());
  if (!hash) return classify_running(hash.error().with_context("hashing the forked workspace"), InfraKind::kDaemon);
  if (*hash != f.workspace_sha256)
    return Fault::infra(InfraKind::kSandbox, "the forked workspace (sha256 " + *hash + ") differs from snapshot " +
                                                 f.image_id + "'s (" + f.workspace_sha256 +
                                                 "); give the task setup_fork: false");
  r_.snapshot_source = f.kept ? "kept" : "forked";
  r_.snapshot_image = f.image_id;
  r_.workspace_sha256 = *hash;
  note("INFO", "trial", std::string("setup forked from ") + (f.kept ? "kept " : "") + "snapshot " + f.image_id);
  return enter_agent_network();
}

// Right after setup_script, before any agent process (a Python server's task: once its server is
// seeded, still before the agent): the workspace, json-db's namespace and the server's state into
// a snapshot image. A snapshot that cannot be taken leaves this trial as it is and every later one
// running setup itself.
void TrialRun::take_setup_snapshot(const std::string& server_state) {
  auto& lease = snapshot_lease_;
  SnapshotSource s;
  s.runner = runner_;
  s.workspace = workspace();
  s.runner_image = up_->plan.runner.image;
  s.server_state = server_state;
  s.initial_files = r_.initial_files;
  s.repo = "forgectl-snapshot";
  s.tag = lease.tag();
  s.labels = {{stack::kLabelSnapshot, env_.snapshots->run_id()},
              {stack::kLabelOwner, ProcessIdentity::current().str()},
              {stack::kLabelSource, task_.path}};
  if (!lease.content_key().empty()) s.labels[stack::kLabelSnapshotKey] = lease.content_key();
  if (db_) {
    auto state = db_->state_json();
    if (!state) {
      note("WARN", "trial", "setup not forked: reading json-db's set-up state: " + state.error().what());
      return lease.refuse();
    }
    json::Writer w;
    w.begin_object().key("tables").raw_value(*state).field("unstable_fields", task_.initial_state.unstable_fields).end_object();
    s.db_init_body = w.take();
  }
  if (auto keys = captured_services(task_); !keys.empty()) {
    auto services = capture_services(docker_, *up_, keys, {s.repo, s.tag, s.labels, kMaxSnapshotBytes});
    if (!services) {
      note("WARN", "trial", "setup not forked: " + services.error().what());
      return lease.refuse();
    }
    s.services = std::move(*services);
  }
  std::vector<std::string> service_images;
  for (const auto& svc : s.services) service_images.push_back(svc.image);
  auto snap = take_snapshot(docker_, s);
  if (!snap) {
    for (const auto& image : service_images) (void)engine::remove_image(docker_, image, true);
    note("WARN", "trial", "setup not forked: " + snap.error().what());
    return lease.refuse();
  }
  ForkState state{snap->image_id, snap->workspace_sha256, r_.initial_files, server_state};
  state.service_images = std::move(service_images);
  lease.publish(std::move(state));
  r_.snapshot_source = "taken";
  r_.snapshot_image = snap->image_id;
  r_.workspace_sha256 = snap->workspace_sha256;
  note("INFO", "trial", "set-up state snapshotted as " + snap->image_id);
}

}  // namespace forge::trial
