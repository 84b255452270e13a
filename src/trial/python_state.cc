// Grading state from a Python tool server: the agent's, read once, and golden replay on a fresh one.
#include "trial/python_state.h"

#include <algorithm>

#include "core/sha256.h"
#include "core/state_hash.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/images.h"
#include "grading/replay.h"
#include "manifest/python_server.h"
#include "stack/local_images.h"
#include "tools/python_server.h"
#include "tools/schema.h"
#include "trial/python_container.h"

namespace forge::trial {

namespace {

constexpr const char* kGoldenDir = "/srv/forgectl-golden";

// Where the golden server runs: no network, no capabilities, the server's uid, bounded.
engine::ContainerSpec golden_spec(const PythonServerGolden& g) {
  return python_container_spec({g.labels, "golden", "golden", manifest::kServerUser, 1LL << 30});
}

class PythonGoldenState final : public grading::GoldenState {
 public:
  PythonGoldenState(engine::Client& c, std::string container, std::unique_ptr<tools::McpSession> s,
                    const PythonServerGolden& g)
      : c_(c), container_(std::move(container)), session_(std::move(s)), g_(g) {}
  ~PythonGoldenState() override {
    session_.reset();
    (void)engine::remove_container(c_, container_, engine::RemoveMode::kForce);
  }
  PythonGoldenState(const PythonGoldenState&) = delete;
  PythonGoldenState& operator=(const PythonGoldenState&) = delete;

  Status apply(const std::string& tool, const std::string& arguments_json) override {
    if (++applied_ > g_.limits.max_actions)
      return fail(Errc::kUnsupported, "more than " + std::to_string(g_.limits.max_actions) + " golden actions");
    if (tools::is_internal_state_tool(tool))
      return fail(Errc::kUnsupported, "tool '" + tools::printable(tool) + "' is the server's internal state tool");
    if (arguments_json.size() > g_.limits.max_argument_bytes)
      return fail(Errc::kUnsupported,
                  "the arguments have more than " + std::to_string(g_.limits.max_argument_bytes) + " bytes");
    auto args = json::parse(arguments_json.empty() ? "{}" : arguments_json, "golden action arguments");
    if (!args) return fail(Errc::kInvalid, args.error().message);
    if (!args->IsObject()) return fail(Errc::kInvalid, "the arguments are not a JSON object");
    auto r = session_->call_tool(tool, *args, Deadline::in(g_.call_timeout));
    if (r) return {};
    // The tool saying no (isError) is a refusal, as the agent would have seen it; a server that
    // stops answering is no verdict.
    if (r.error().code == Errc::kServer) return fail(Errc::kInvalid, r.error().message);
    return r.fail();
  }

  Result<std::string> stable_hash() override {
    auto s = stable_state_json();
    if (!s) return s.fail();
    return sha256_hex(*s);
  }
  Result<std::string> stable_state_json() override {
    if (stable_.empty()) {
      auto state = tools::server_state(*session_, Deadline::in(g_.call_timeout));
      if (!state) return state.fail_with("the golden server");
      auto s = python_stable_json(*state, g_.unstable_fields);
      if (!s) return s.fail();
      stable_ = std::move(*s);
    }
    return stable_;
  }

 private:
  engine::Client& c_;
  std::string container_;
  std::unique_ptr<tools::McpSession> session_;
  const PythonServerGolden& g_;
  std::size_t applied_ = 0;
  std::string stable_;
};

}  // namespace

Result<std::string> python_stable_json(const std::string& state_json, const std::vector<std::string>& unstable) {
  auto doc = json::parse(state_json, "the Python server's state");
  if (!doc) return doc.fail();
  return python_json(stable_state(*doc, unstable));
}

Result<std::string> PythonStateStore::stable_hash() {
  auto s = stable_state_json();
  if (!s) return s.fail();
  return sha256_hex(*s);
}

Result<std::string> PythonStateStore::stable_state_json() {
  return python_stable_json(final_, golden_.unstable_fields);
}

namespace {

// A fresh container and server from the image and the task's files, seeded with `seed` (empty:
// the server keeps what its script loaded).
Result<std::unique_ptr<PythonGoldenState>> start_golden(const PythonServerGolden& g, const std::string& seed) {
  engine::Client& c = *g.docker;
  const std::string what = "starting a fresh Python server for golden replay";
  auto made = engine::create_container(c, golden_spec(g));
  if (!made) return made.fail_with(what);
  const std::string id = made->id;
  bool keep = false;
  struct Remove {
    engine::Client& c;
    const std::string& id;
    bool& keep;
    ~Remove() {
      if (!keep) (void)engine::remove_container(c, id, engine::RemoveMode::kForce);
    }
  } remove{c, id, keep};
  // The rootfs is the image's, the agent never ran here: the task's files come from the task dir.
  auto tar = tools::python_server_tar(g.server, std::string(kGoldenDir).substr(1));
  if (!tar) return tar.fail_with(what);
  if (auto st = engine::put_archive(c, id, "/", std::move(*tar)); !st) return st.fail_with(what);
  if (auto st = engine::start_container(c, id); !st) return st.fail_with(what);
  auto session = tools::start_python_server(c, id, g.server, kGoldenDir, Deadline::in(g.start_timeout));
  if (!session) return session.fail_with(what);
  if (!seed.empty())
    if (auto st = tools::set_server_state(**session, seed, Deadline::in(g.call_timeout)); !st) return st.fail_with(what);
  keep = true;
  return std::make_unique<PythonGoldenState>(c, id, std::move(*session), g);
}

// The run's golden state: each golden action's recorded outcome, the state they came to.
class CachedGoldenState final : public grading::GoldenState {
 public:
  explicit CachedGoldenState(std::shared_ptr<const GoldenEntry> e) : e_(std::move(e)) {}
  Status apply(const std::string& tool, const std::string&) override {
    const auto& steps = e_->replay.steps;
    if (next_ >= steps.size() || steps[next_].tool != tool)
      return fail(Errc::kUnsupported, "golden action " + std::to_string(next_ + 1) + " is not the one computed once");
    const auto& s = steps[next_++];
    if (!s.refusal.empty()) return fail(Errc::kInvalid, s.refusal);
    return {};
  }
  Result<std::string> stable_hash() override { return e_->replay.hash; }
  Result<std::string> stable_state_json() override { return e_->replay.state_json; }

 private:
  std::shared_ptr<const GoldenEntry> e_;
  std::size_t next_ = 0;
};

std::vector<std::string> golden_tools(const manifest::HashCheck& hash) {
  std::vector<std::string> out;
  for (const auto& a : hash.golden_actions) out.push_back(a.name);
  return out;
}

}  // namespace

Result<std::string> python_golden_key(const PythonServerGolden& g) {
  Sha256 h;
  auto put = [&h](std::string_view s) {
    h.update(std::to_string(s.size()) + ":");
    h.update(s);
  };
  put("forgectl golden state 1");
  put(g.task_id);
  put(g.server.script);
  for (const auto& c : g.server.command) put(c);
  auto tar = tools::python_server_tar(g.server, "server");
  if (!tar) return tar.fail_with("the golden state's content key");
  put(sha256_hex(*tar));
  auto image = engine::inspect_image(*g.docker, manifest::kPythonImage);
  if (!image) return image.fail_with("the golden state's content key");
  auto content = image->labels.find(stack::kContentLabel);
  put(content != image->labels.end() && !content->second.empty() ? "content:" + content->second : image->id);
  put(g.task_initial_state);
  for (const auto& u : g.unstable_fields) put(u);
  if (g.hash)
    for (const auto& a : g.hash->golden_actions) {
      put(a.name);
      put(a.arguments_json);
    }
  return h.hex_digest();
}

Result<GoldenReplay> replay_golden_from_task(const PythonServerGolden& g) {
  auto golden = start_golden(g, g.task_initial_state);
  if (!golden) return golden.fail();
  GoldenReplay out;
  const auto& actions = g.hash->golden_actions;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const auto& a = actions[i];
    auto r = (*golden)->apply(a.name, a.arguments_json);
    if (!r && !grading::golden_action_refused(r.error().code))
      return r.fail_with("replaying golden action " + std::to_string(i + 1));
    out.steps.push_back({a.name, r ? std::string() : r.error().what()});
  }
  auto s = (*golden)->stable_state_json();
  if (!s) return s.fail_with("hashing the golden state");
  out.state_json = std::move(*s);
  out.hash = sha256_hex(out.state_json);
  return out;
}

std::unique_ptr<grading::GoldenState> PythonStateStore::from_cache() {
  if (!golden_.cache || !golden_.hash || !golden_.use) return nullptr;
  auto key = python_golden_key(golden_);
  if (!key) return nullptr;  // the trial replays its own, as without the cache
  PythonServerGolden from_task = golden_;
  from_task.cache = nullptr;
  from_task.use = nullptr;
  auto got = golden_.cache->get(golden_.task_id, *key, golden_tools(*golden_.hash),
                                [&from_task] { return replay_golden_from_task(from_task); });
  golden_.use->key = *key;
  if (!got) return nullptr;
  golden_.use->replays += got->replays;
  if (!got->entry->deterministic) return nullptr;
  golden_.use->source = to_string(got->source);
  return std::make_unique<CachedGoldenState>(got->entry);
}

Result<std::unique_ptr<grading::GoldenState>> PythonStateStore::golden_from_initial() {
  if (auto cached = from_cache()) return cached;
  if (golden_.use) {
    golden_.use->source = to_string(GoldenSource::kOwn);
    ++golden_.use->replays;
  }
  auto made = start_golden(golden_, golden_.initial_state);
  if (!made) return made.fail();
  return std::unique_ptr<grading::GoldenState>(std::move(*made));
}

Status check_server_golden_actions(const manifest::HashCheck& hash, const std::vector<std::string>& tools,
                                   const GoldenLimits& limits) {
  if (!hash.enabled) return {};
  const std::size_t n = hash.golden_actions.size();
  if (n > limits.max_actions)
    return fail(Errc::kInvalid, "state_checks.hash has " + std::to_string(n) +
                                    " golden actions; forgectl replays at most " + std::to_string(limits.max_actions));
  for (std::size_t i = 0; i < n; ++i) {
    const auto& a = hash.golden_actions[i];
    const std::string which = "golden action " + std::to_string(i + 1) + "/" + std::to_string(n);
    if (std::find(tools.begin(), tools.end(), a.name) == tools.end())
      return fail(Errc::kUnsupported, which + " names tool '" + tools::printable(a.name) +
                                          "', which the task's Python server does not offer");
    if (a.arguments_json.size() > limits.max_argument_bytes)
      return fail(Errc::kInvalid, which + " (" + tools::printable(a.name) + "): its arguments have " +
                                      std::to_string(a.arguments_json.size()) + " bytes; at most " +
                                      std::to_string(limits.max_argument_bytes));
  }
  return {};
}

}  // namespace forge::trial
