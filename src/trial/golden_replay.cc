// Golden replay on the host: the replayers of the built-ins, and the golden namespace's state.
#include "trial/golden_replay.h"

#include <algorithm>

#include "core/sha256.h"
#include "tools/builtin_tools.h"
#include "tools/schema.h"

namespace forge::trial {

namespace {

// The json-db limit on a trial id (services/json_db.h: check_name).
constexpr std::size_t kMaxNamespaceChars = 256;

// db_update: the agent's tool sends its arguments, checked against its schema, as the body of
// POST /trials/{ns}/update; this sends the same body to the golden namespace.
class DbUpdateReplayer final : public GoldenReplayer {
 public:
  explicit DbUpdateReplayer(tools::CompiledSchema schema) : schema_(std::move(schema)) {}

  Status apply(DbClient& golden, const json::Value& args) override {
    if (auto st = schema_.validate(args); !st) return fail(Errc::kInvalid, "db_update arguments: " + st.error().message);
    const std::string path = trial_path(golden.ns()) + "/update";
    auto reply = golden.exchange("POST", path, json::to_string(args));
    if (!reply) return reply.fail();
    if (reply->status >= 200 && reply->status < 300) return {};
    Error e = DbClient::reply_error("POST", path, *reply);
    // What json-db says no to (400, 404, 409, 413: refusal codes), it says no to the agent's
    // db_update too: the tool refusing. So is a golden state that outgrows json-db's allowance
    // (507), since nothing but the golden actions writes this namespace. 401, 403 and 5xx keep
    // their codes: json-db or forgectl failing, not the tool.
    if (reply->status == 507) e.code = Errc::kInvalid;
    return fail(std::move(e));
  }

 private:
  tools::CompiledSchema schema_;
};

// A tool that only reads: replaying it changes nothing.
class ReadOnlyReplayer final : public GoldenReplayer {
 public:
  Status apply(DbClient&, const json::Value&) override { return {}; }
};

// The golden namespace, dropped when grading is done with it.
class DbGoldenState final : public grading::GoldenState {
 public:
  DbGoldenState(DbClient golden, const GoldenReplayers& replayers, GoldenLimits limits)
      : golden_(std::move(golden)), replayers_(replayers), limits_(limits) {}
  ~DbGoldenState() override {
    try {
      (void)golden_.drop();  // json-db goes with the stack anyway; this only frees its memory sooner
    } catch (...) {
    }
  }
  DbGoldenState(const DbGoldenState&) = delete;
  DbGoldenState& operator=(const DbGoldenState&) = delete;

  Status apply(const std::string& tool, const std::string& arguments_json) override {
    // check_golden_actions ran before grading; these hold whoever calls.
    if (++applied_ > limits_.max_actions)
      return fail(Errc::kUnsupported, "more than " + std::to_string(limits_.max_actions) + " golden actions");
    GoldenReplayer* r = replayers_.find(tool);
    if (!r) return fail(Errc::kUnsupported, "tool '" + tools::printable(tool) + "' cannot be replayed on the host");
    if (arguments_json.size() > limits_.max_argument_bytes)
      return fail(Errc::kUnsupported, "the arguments have more than " + std::to_string(limits_.max_argument_bytes) +
                                          " bytes");
    auto args = json::parse(arguments_json.empty() ? "{}" : arguments_json, "golden action arguments");
    if (!args) return fail(Errc::kInvalid, args.error().message);
    if (!args->IsObject()) return fail(Errc::kInvalid, "the arguments are not a JSON object");
    if (json::nested_deeper_than(*args, limits::kMaxModelJsonDepth))
      return fail(Errc::kInvalid, "the arguments nest deeper than " + std::to_string(limits::kMaxModelJsonDepth) + " levels");
    return r->apply(golden_, *args);
  }

  Result<std::string> stable_hash() override {
    if (auto st = read(); !st) return st.fail();
    return stable_->hash;
  }
  Result<std::string> stable_state_json() override {
    if (auto st = read(); !st) return st.fail();
    return stable_->data_json;
  }

 private:
  // Read once, after the last action: the hash and the diff come from the same reply.
  Status read() {
    if (stable_) return {};
    auto s = golden_.stable_state();
    if (!s) return s.fail();
    stable_ = std::move(*s);
    return {};
  }

  DbClient golden_;
  const GoldenReplayers& replayers_;
  GoldenLimits limits_;
  std::size_t applied_ = 0;
  std::optional<DbClient::Stable> stable_;
};

}  // namespace

void GoldenReplayers::add(std::string tool, std::shared_ptr<GoldenReplayer> replayer) {
  by_name_[std::move(tool)] = std::move(replayer);
}

void GoldenReplayers::remove(std::string_view tool) {
  if (auto it = by_name_.find(tool); it != by_name_.end()) by_name_.erase(it);
}

GoldenReplayer* GoldenReplayers::find(std::string_view tool) const {
  auto it = by_name_.find(tool);
  return it == by_name_.end() ? nullptr : it->second.get();
}

std::vector<std::string> GoldenReplayers::names() const {
  std::vector<std::string> out;
  for (const auto& [name, r] : by_name_) out.push_back(name);
  return out;
}

GoldenReplayers builtin_golden_replayers() {
  GoldenReplayers out;
  auto spec = tools::db_update_spec();
  auto schema = tools::CompiledSchema::compile(spec.parameters, spec.name);
  // The schema is a constant of this binary, compiled by every executor too: it always compiles.
  if (schema) out.add(spec.name, std::make_shared<DbUpdateReplayer>(std::move(*schema)));
  auto read_only = std::make_shared<ReadOnlyReplayer>();
  for (const char* name : {"db_query", "read_file", "list_dir", "grep_workspace", "calculator", "search_kb"})
    out.add(name, read_only);
  return out;
}

Status check_golden_actions(const manifest::HashCheck& hash, const GoldenReplayers& replayers,
                            const GoldenLimits& limits) {
  if (!hash.enabled) return {};
  const std::size_t n = hash.golden_actions.size();
  if (n > limits.max_actions)
    return fail(Errc::kInvalid, "state_checks.hash has " + std::to_string(n) + " golden actions; forgectl replays at most " +
                                    std::to_string(limits.max_actions));
  std::string known;
  for (const auto& name : replayers.names()) known += (known.empty() ? "" : ", ") + name;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& a = hash.golden_actions[i];
    std::string which = "golden action " + std::to_string(i + 1) + "/" + std::to_string(n);
    if (!replayers.find(a.name))
      return fail(Errc::kUnsupported,
                  which + " names tool '" + tools::printable(a.name) +
                      "', which forgectl cannot replay on the host (it replays: " + known +
                      "); golden replay never runs a tool in the agent's sandbox, and MCP tools have no host-side "
                      "replayer yet");
    if (a.arguments_json.size() > limits.max_argument_bytes)
      return fail(Errc::kInvalid, which + " (" + tools::printable(a.name) + "): its arguments have " +
                                      std::to_string(a.arguments_json.size()) + " bytes; at most " +
                                      std::to_string(limits.max_argument_bytes));
  }
  return {};
}

std::string golden_namespace(const std::string& ns) {
  std::string name = ns + "__golden";
  if (name.size() <= kMaxNamespaceChars) return name;
  return "golden_" + sha256_hex(ns).substr(0, 32);
}

Status DbStateStore::read_stable() {
  if (stable_) return {};
  auto s = agent_.stable_state();
  if (!s) return s.fail();
  stable_ = std::move(*s);
  return {};
}

Result<std::string> DbStateStore::stable_hash() {
  if (auto st = read_stable(); !st) return st.fail();
  return stable_->hash;
}

Result<std::string> DbStateStore::stable_state_json() {
  if (auto st = read_stable(); !st) return st.fail();
  return stable_->data_json;
}

Result<std::unique_ptr<grading::GoldenState>> DbStateStore::golden_from_initial() {
  DbClient golden = agent_.in_namespace(golden_namespace(agent_.ns()));
  auto st = golden.init(init_body_);
  if (!st && st.error().code == Errc::kConflict) {
    // Only the control token creates namespaces: a leftover is forgectl's own, from an earlier grade.
    if (auto dropped = golden.drop(); !dropped) return dropped.fail_with("dropping a leftover golden namespace");
    st = golden.init(init_body_);
  }
  if (!st) return st.fail();
  return std::unique_ptr<grading::GoldenState>(new DbGoldenState(std::move(golden), replayers_, limits_));
}

}  // namespace forge::trial
