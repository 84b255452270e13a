// run.json's writer and reader.
#include "results/run_json.h"

#include "core/files.h"
#include "core/json.h"

namespace forge::results {

namespace {

void write_invocation(json::Writer& w, const RunInvocation& inv) {
  w.key("invocation")
      .begin_object()
      .field("task_paths", inv.task_paths)
      .field("agents", inv.agents)
      .field("trials", inv.trials)
      .field("concurrency", inv.concurrency)
      .field("config", inv.config)
      .field("shard", inv.shard)
      .field("docker_hosts", inv.docker_hosts)
      .field("executor", inv.executor.empty() ? "container" : inv.executor)
      .field("keep_local", inv.keep_local)
      .field("allow_local", inv.allow_local)
      .field("env_passthrough", inv.env_passthrough)
      .field("harbor_verifier", inv.harbor_verifier.empty() ? "separate" : inv.harbor_verifier);
  if (inv.no_golden_cache) w.field("no_golden_cache", true);
  if (!inv.runtime.empty()) w.field("runtime", inv.runtime);
  if (inv.max_infra_rate) w.key("max_infra_rate").num(*inv.max_infra_rate);
  if (inv.canary) w.field("canary", true);
  if (inv.no_fork) w.field("no_fork", true);
  if (inv.keep_snapshots) w.field("keep_snapshots", true);
  if (!inv.max_up_rate.empty()) w.field("max_up_rate", inv.max_up_rate);
  w.key("limits").begin_object();
  for (const auto& [k, v] : inv.limits) w.field(k, v);
  w.end_object().end_object();
}

void write_summary(json::Writer& w, const RunSummaryJson& s) {
  w.key("summary")
      .begin_object()
      .field("planned", s.planned)
      .field("finished", s.finished)
      .field("graded", s.graded)
      .field("passed", s.passed)
      .field("infra_errors", s.infra_errors)
      .field("interrupted", s.interrupted)
      .field("concurrency_used", s.concurrency_used)
      .key("cost_usd")
      .num(s.cost_usd)
      .field("stopped", s.stopped)
      .field("valid", s.valid);
  if (s.valid)
    w.key("invalid_reason").null();
  else
    w.field("invalid_reason", s.invalid_reason);
  w.end_object();
}

void write_phase(json::Writer& w, const char* key, const PhaseNetwork& p) {
  w.key(key).begin_object().field("policy", p.policy);
  if (!p.allowlist.empty()) w.field("allowlist", p.allowlist);
  w.end_object();
}

void write_networks(json::Writer& w, const std::map<std::string, TaskNetworks>& nets) {
  w.key("network_policy").begin_object();
  for (const auto& [task, n] : nets) {
    w.key(task).begin_object();
    write_phase(w, "setup", n.setup);
    write_phase(w, "agent", n.agent);
    write_phase(w, "grade", n.grade);
    w.end_object();
  }
  w.end_object();
}

void write_probe(json::Writer& w, const std::vector<ProbeRecord>& probes) {
  w.key("egress_probe").begin_array();
  for (const auto& p : probes) {
    w.begin_object().field("policy", p.policy).field("engine", p.engine).field("passed", p.passed);
    w.field("took_ms", p.took_ms);
    if (!p.error.empty()) w.field("error", p.error);
    w.key("checks").begin_array();
    for (const auto& c : p.checks)
      w.begin_object().field("name", c.name).field("passed", c.passed).field("observed", c.observed).end_object();
    w.end_array().end_object();
  }
  w.end_array();
}

PhaseNetwork read_phase(const json::Value& task, const char* key) {
  PhaseNetwork p;
  if (const json::Value* v = json::get_object(task, key)) {
    p.policy = json::get_string(*v, "policy");
    p.allowlist = json::get_strings(*v, "allowlist");
  }
  return p;
}

void write_merged(json::Writer& w, const RunJson& r) {
  w.field("merged_at", r.merged_at).key("merged_from").begin_array();
  for (const auto& s : r.merged_from) {
    w.begin_object().field("path", s.path).field("run_id", s.run_id);
    if (s.shard.empty()) w.key("shard").null();
    else w.field("shard", s.shard);
    if (!s.config_hash.empty()) w.field("config_hash", s.config_hash);
    w.field("trials", s.trials).end_object();
  }
  w.end_array();
}

// A number member, or nullopt when absent or not a number.
std::optional<double> number_of(const json::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsNumber()) return std::nullopt;
  return it->value.GetDouble();
}

RunInvocation read_invocation(const json::Value& d) {
  RunInvocation inv;
  const json::Value* v = json::get_object(d, "invocation");
  if (!v) return inv;
  inv.task_paths = json::get_strings(*v, "task_paths");
  inv.agents = json::get_strings(*v, "agents");
  inv.docker_hosts = json::get_strings(*v, "docker_hosts");
  inv.config = json::get_string(*v, "config");
  inv.shard = json::get_string(*v, "shard");
  inv.trials = static_cast<int>(json::get_int(*v, "trials"));
  inv.concurrency = static_cast<int>(json::get_int(*v, "concurrency"));
  inv.executor = json::get_string(*v, "executor");
  inv.keep_local = json::get_bool(*v, "keep_local");
  inv.allow_local = json::get_bool(*v, "allow_local");
  inv.no_golden_cache = json::get_bool(*v, "no_golden_cache");
  inv.env_passthrough = json::get_strings(*v, "env_passthrough");
  inv.harbor_verifier = json::get_string(*v, "harbor_verifier");
  inv.runtime = json::get_string(*v, "runtime");
  inv.max_infra_rate = number_of(*v, "max_infra_rate");
  inv.canary = json::get_bool(*v, "canary");
  inv.no_fork = json::get_bool(*v, "no_fork");
  inv.keep_snapshots = json::get_bool(*v, "keep_snapshots");
  inv.max_up_rate = json::get_string(*v, "max_up_rate");
  if (const json::Value* l = json::get_object(*v, "limits"))
    for (const auto& m : l->GetObject())
      if (m.value.IsInt()) inv.limits[std::string(m.name.GetString(), m.name.GetStringLength())] = m.value.GetInt();
  return inv;
}

std::optional<RunSummaryJson> read_summary(const json::Value& d) {
  const json::Value* v = json::get_object(d, "summary");
  if (!v) return std::nullopt;
  RunSummaryJson s;
  auto i = [&](const char* k) { return static_cast<int>(json::get_int(*v, k)); };
  s.planned = i("planned");
  s.finished = v->HasMember("finished") ? i("finished") : i("trials");  // a merged run.json says "trials"
  s.graded = i("graded");
  s.passed = i("passed");
  s.infra_errors = i("infra_errors");
  s.interrupted = i("interrupted");
  s.concurrency_used = i("concurrency_used");
  s.cost_usd = json::get_double(*v, "cost_usd");
  s.stopped = json::get_string(*v, "stopped");
  s.valid = json::get_bool(*v, "valid", true);
  s.invalid_reason = json::get_string(*v, "invalid_reason");
  return s;
}

}  // namespace

std::string RunJson::to_json() const {
  json::Writer w;
  w.begin_object().field("run_id", run_id).field("forgectl_version", forgectl_version).field("status", status);
  if (!started_at.empty()) w.field("started_at", started_at);
  if (!finished_at.empty()) w.field("finished_at", finished_at);
  if (!config_hash.empty()) w.field("config_hash", config_hash);
  w.field("agents", agents);
  if (status == "merged") {
    write_merged(w, *this);
  } else {
    if (planned >= 0) w.field("planned", planned);
    w.field("trials_per_task", trials_per_task).field("concurrency", concurrency).field("shard", shard)
        .field("docker_engine", docker_engine).field("executor", executor.empty() ? "container" : executor)
        .field("engines", engines).field("images", images);
    write_invocation(w, invocation);
    w.key("models").begin_object();
    for (const auto& [k, m] : models)
      w.key(k).begin_object().field("provider", m.provider).field("name", m.name).field("base_url", m.base_url)
          .key("temperature").num(m.temperature).end_object();
    w.end_object().key("limits").begin_object();
    for (const auto& [k, v] : limits) w.key(k).num(v);
    w.end_object();
  }
  if (max_infra_rate) w.key("max_infra_rate").num(*max_infra_rate);
  if (!networks.empty()) write_networks(w, networks);
  if (!egress_probe.empty()) write_probe(w, egress_probe);
  if (summary) write_summary(w, *summary);
  if (leaks) w.key("leak_audit").begin_object().field("clean", leaks->empty()).field("left", *leaks).end_object();
  w.end_object();
  return w.take();
}

Result<RunJson> RunJson::parse(std::string_view text, std::string_view path) {
  auto d = json::parse(text, path);
  if (!d) return d.fail();
  if (!d->IsObject()) return fail(Errc::kInvalid, std::string(path) + ": not a JSON object");
  RunJson r;
  r.run_id = json::get_string(*d, "run_id");
  r.forgectl_version = json::get_string(*d, "forgectl_version");
  r.started_at = json::get_string(*d, "started_at");
  r.finished_at = json::get_string(*d, "finished_at");
  r.status = json::get_string(*d, "status");
  r.config_hash = json::get_string(*d, "config_hash");
  r.agents = json::get_strings(*d, "agents");
  if (r.agents.empty() && d->HasMember("agent")) r.agents = {json::get_string(*d, "agent")};
  r.planned = static_cast<int>(json::get_int(*d, "planned", -1));
  r.trials_per_task = static_cast<int>(json::get_int(*d, "trials_per_task"));
  r.concurrency = static_cast<int>(json::get_int(*d, "concurrency"));
  r.shard = json::get_string(*d, "shard");
  r.docker_engine = json::get_string(*d, "docker_engine");
  r.executor = json::get_string(*d, "executor");
  r.engines = json::get_strings(*d, "engines");
  r.images = json::get_string_map(*d, "images");
  r.invocation = read_invocation(*d);
  if (const json::Value* m = json::get_object(*d, "models"))
    for (const auto& e : m->GetObject())
      r.models[std::string(e.name.GetString(), e.name.GetStringLength())] =
          RunModel{json::get_string(e.value, "provider"), json::get_string(e.value, "name"),
                   json::get_string(e.value, "base_url"), json::get_double(e.value, "temperature")};
  if (const json::Value* l = json::get_object(*d, "limits"))
    for (const auto& e : l->GetObject())
      if (e.value.IsNumber()) r.limits[std::string(e.name.GetString(), e.name.GetStringLength())] = e.value.GetDouble();
  r.max_infra_rate = number_of(*d, "max_infra_rate");
  if (const json::Value* n = json::get_object(*d, "network_policy"))
    for (const auto& e : n->GetObject())
      if (e.value.IsObject())
        r.networks[std::string(e.name.GetString(), e.name.GetStringLength())] =
            TaskNetworks{read_phase(e.value, "setup"), read_phase(e.value, "agent"), read_phase(e.value, "grade")};
  if (const json::Value* probes = json::get_array(*d, "egress_probe"))
    for (const auto& p : probes->GetArray()) {
      if (!p.IsObject()) continue;
      ProbeRecord rec{json::get_string(p, "policy"), json::get_string(p, "engine"), json::get_bool(p, "passed"), {},
                      json::get_string(p, "error"), json::get_int(p, "took_ms")};
      if (const json::Value* checks = json::get_array(p, "checks"))
        for (const auto& c : checks->GetArray())
          if (c.IsObject())
            rec.checks.push_back({json::get_string(c, "name"), json::get_bool(c, "passed"), json::get_string(c, "observed")});
      r.egress_probe.push_back(std::move(rec));
    }
  r.summary = read_summary(*d);
  if (const json::Value* a = json::get_object(*d, "leak_audit")) r.leaks = json::get_strings(*a, "left");
  r.merged_at = json::get_string(*d, "merged_at");
  if (const json::Value* m = json::get_array(*d, "merged_from"))
    for (const auto& s : m->GetArray())
      if (s.IsObject())
        r.merged_from.push_back({json::get_string(s, "path"), json::get_string(s, "run_id"), json::get_string(s, "shard"),
                                 json::get_string(s, "config_hash"), static_cast<int>(json::get_int(s, "trials"))});
  return r;
}

Result<RunJson> RunJson::read(const std::string& path) {
  auto text = read_text(path);
  if (!text) return text.fail();
  return parse(*text, path);
}

}  // namespace forge::results
