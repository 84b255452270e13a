// Container endpoints.
#include "engine/containers.h"

#include "core/strings.h"
#include "engine/errors.h"
#include "engine/stdcopy.h"

namespace forge::engine {

namespace {

std::int64_t nanos(Millis m) { return static_cast<std::int64_t>(m.count()) * 1000000; }

void write_host(json::Writer& w, const HostSpec& h) {
  w.key("HostConfig").begin_object();
  w.field("CapDrop", h.cap_drop).field("CapAdd", h.cap_add).field("SecurityOpt", h.security_opt);
  if (h.pids_limit) w.field("PidsLimit", h.pids_limit);
  if (h.memory) w.field("Memory", h.memory);
  if (h.memory_swap) w.field("MemorySwap", h.memory_swap);
  if (h.nano_cpus) w.field("NanoCpus", h.nano_cpus);
  w.field("ReadonlyRootfs", h.readonly_rootfs).field("Tmpfs", h.tmpfs).field("Init", h.init);
  if (!h.network_mode.empty()) w.field("NetworkMode", h.network_mode);
  if (!h.runtime.empty()) w.field("Runtime", h.runtime);
  w.field("Binds", h.binds);
  w.key("Ulimits").begin_array();
  for (const auto& u : h.ulimits) w.begin_object().field("Name", u.name).field("Soft", u.soft).field("Hard", u.hard).end_object();
  w.end_array();
  if (!h.dns.empty()) w.field("Dns", h.dns);
  if (!h.dns_options.empty()) w.field("DnsOptions", h.dns_options);
  if (!h.dns_search.empty()) w.field("DnsSearch", h.dns_search);
  if (!h.extra_hosts.empty()) w.field("ExtraHosts", h.extra_hosts);
  if (!h.mounts.empty()) {
    w.key("Mounts").begin_array();
    for (const auto& m : h.mounts) {
      w.begin_object().field("Type", "volume").field("Target", m.target).field("ReadOnly", m.read_only);
      if (!m.source.empty()) w.field("Source", m.source);
      w.key("VolumeOptions").begin_object().field("NoCopy", m.no_copy);
      if (!m.labels.empty()) w.field("Labels", m.labels);
      if (!m.driver.empty() || !m.driver_options.empty()) {
        w.key("DriverConfig").begin_object();
        if (!m.driver.empty()) w.field("Name", m.driver);
        w.field("Options", m.driver_options).end_object();
      }
      w.end_object().end_object();
    }
    w.end_array();
  }
  if (!h.storage_opt.empty()) w.field("StorageOpt", h.storage_opt);
  w.key("RestartPolicy").begin_object().field("Name", "no").end_object();
  w.end_object();
}

std::vector<VolumeMount> parse_mounts(const json::Value& h) {
  std::vector<VolumeMount> out;
  const json::Value* arr = json::get_array(h, "Mounts");
  if (!arr) return out;
  for (const auto& m : arr->GetArray()) {
    if (json::get_string(m, "Type") != "volume") continue;
    VolumeMount v;
    v.source = json::get_string(m, "Source");
    v.target = json::get_string(m, "Target");
    v.read_only = json::get_bool(m, "ReadOnly");
    if (const json::Value* o = json::get_object(m, "VolumeOptions")) {
      v.no_copy = json::get_bool(*o, "NoCopy");
      v.labels = json::get_string_map(*o, "Labels");
      if (const json::Value* d = json::get_object(*o, "DriverConfig")) {
        v.driver = json::get_string(*d, "Name");
        v.driver_options = json::get_string_map(*d, "Options");
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

HostSpec parse_host(const json::Value& h) {
  HostSpec s;
  s.cap_drop = json::get_strings(h, "CapDrop");
  s.cap_add = json::get_strings(h, "CapAdd");
  s.security_opt = json::get_strings(h, "SecurityOpt");
  s.pids_limit = json::get_int(h, "PidsLimit");
  s.memory = json::get_int(h, "Memory");
  s.memory_swap = json::get_int(h, "MemorySwap");
  s.nano_cpus = json::get_int(h, "NanoCpus");
  s.readonly_rootfs = json::get_bool(h, "ReadonlyRootfs");
  s.tmpfs = json::get_string_map(h, "Tmpfs");
  s.init = json::get_bool(h, "Init");
  s.network_mode = json::get_string(h, "NetworkMode");
  s.binds = json::get_strings(h, "Binds");
  if (auto* ul = json::get_array(h, "Ulimits"))
    for (const auto& u : ul->GetArray())
      s.ulimits.push_back({json::get_string(u, "Name"), json::get_int(u, "Soft"), json::get_int(u, "Hard")});
  s.dns = json::get_strings(h, "Dns");
  s.dns_options = json::get_strings(h, "DnsOptions");
  s.dns_search = json::get_strings(h, "DnsSearch");
  s.extra_hosts = json::get_strings(h, "ExtraHosts");
  s.mounts = parse_mounts(h);
  s.storage_opt = json::get_string_map(h, "StorageOpt");
  s.runtime = json::get_string(h, "Runtime");
  return s;
}

std::string container_path(std::string_view id, std::string_view tail = {}) {
  return "/containers/" + url_encode(id) + std::string(tail);
}

}  // namespace

std::string container_create_body(const ContainerSpec& s) {
  json::Writer w;
  w.begin_object().field("Image", s.image);
  if (s.cmd) w.field("Cmd", *s.cmd);
  if (s.entrypoint) w.field("Entrypoint", *s.entrypoint);
  w.field("Env", s.env);
  if (!s.user.empty()) w.field("User", s.user);
  if (!s.workdir.empty()) w.field("WorkingDir", s.workdir);
  if (!s.hostname.empty()) w.field("Hostname", s.hostname);
  w.field("Labels", s.labels);
  if (!s.stop_signal.empty()) w.field("StopSignal", s.stop_signal);
  if (s.stop_timeout) w.field("StopTimeout", *s.stop_timeout);
  if (s.open_stdin) w.field("OpenStdin", true);
  if (!s.volumes.empty()) {
    w.key("Volumes").begin_object();
    for (const auto& v : s.volumes) w.key(v).begin_object().end_object();
    w.end_object();
  }
  if (s.healthcheck) {
    const auto& hc = *s.healthcheck;
    w.key("Healthcheck").begin_object().field("Test", hc.test);
    w.field("Interval", nanos(hc.interval)).field("Timeout", nanos(hc.timeout));
    w.field("StartPeriod", nanos(hc.start_period)).field("Retries", hc.retries).end_object();
  }
  HostSpec host = s.host;
  // NetworkMode and the single EndpointsConfig key must agree, or the daemon silently uses the latter.
  if (!s.network.empty()) host.network_mode = s.network;
  write_host(w, host);
  if (!s.network.empty()) {
    w.key("NetworkingConfig").begin_object().key("EndpointsConfig").begin_object();
    w.key(s.network).begin_object();
    if (!s.aliases.empty()) w.field("Aliases", s.aliases);
    if (!s.ipv4_address.empty()) w.key("IPAMConfig").begin_object().field("IPv4Address", s.ipv4_address).end_object();
    w.end_object().end_object().end_object();
  }
  w.end_object();
  return w.take();
}

Result<CreatedContainer> create_container(Client& c, const ContainerSpec& s) {
  std::string path = "/containers/create";
  if (!s.name.empty()) path += "?name=" + url_encode(s.name);
  auto resp = c.expect({201}, Method::kPost, path, container_create_body(s));
  std::string what = "creating container '" + (s.name.empty() ? s.image : s.name) + "'";
  if (!resp) return resp.fail_with(what);
  auto doc = json::parse(resp->body, "container create response");
  if (!doc) return doc.fail_with(what);
  return CreatedContainer{json::get_string(*doc, "Id"), json::get_strings(*doc, "Warnings")};
}

Status start_container(Client& c, std::string_view id) {
  auto resp = c.expect({204, 304}, Method::kPost, container_path(id, "/start"));
  if (!resp) return resp.fail_with("starting container '" + std::string(id) + "'");
  return {};
}

Status pause_container(Client& c, std::string_view id) {
  auto resp = c.expect({204}, Method::kPost, container_path(id, "/pause"));
  if (!resp) return resp.fail_with("pausing container '" + std::string(id) + "'");
  return {};
}

Status unpause_container(Client& c, std::string_view id) {
  auto resp = c.expect({204}, Method::kPost, container_path(id, "/unpause"));
  if (!resp) return resp.fail_with("unpausing container '" + std::string(id) + "'");
  return {};
}

Status stop_container(Client& c, std::string_view id, int timeout_s) {
  // The daemon waits up to t seconds before SIGKILL: give the HTTP call that long and more.
  auto resp = c.expect({204, 304}, Method::kPost, container_path(id, "/stop?t=" + std::to_string(timeout_s)), {},
                       Millis((timeout_s + 30) * 1000L));
  if (!resp) return resp.fail_with("stopping container '" + std::string(id) + "'");
  return {};
}

Status kill_container(Client& c, std::string_view id, std::string_view signal) {
  auto resp = c.expect({204}, Method::kPost, container_path(id, "/kill?signal=" + url_encode(signal)));
  if (!resp) return resp.fail_with("killing container '" + std::string(id) + "'");
  return {};
}

Result<int> wait_container(Client& c, std::string_view id, WaitCondition cond, Millis timeout) {
  const char* name = cond == WaitCondition::kNextExit ? "next-exit" : cond == WaitCondition::kRemoved ? "removed" : "not-running";
  auto resp = c.expect({200}, Method::kPost, container_path(id, std::string("/wait?condition=") + name), {}, timeout);
  if (!resp) return resp.fail_with("waiting for container '" + std::string(id) + "'");
  auto doc = json::parse(resp->body, "wait response");
  if (!doc) return doc.fail();
  if (auto* err = json::get_object(*doc, "Error"); err && !json::get_string(*err, "Message").empty())
    return fail(Errc::kServer, "waiting for container '" + std::string(id) + "': " + json::get_string(*err, "Message"));
  return static_cast<int>(json::get_int(*doc, "StatusCode", -1));
}

Status remove_container(Client& c, std::string_view id, RemoveMode mode, bool missing_ok) {
  std::string q = mode == RemoveMode::kForce ? "?force=1&v=1" : "?v=1";
  auto resp = c.request(Method::kDelete, container_path(id, q));
  std::string what = "removing container '" + std::string(id) + "'";
  if (!resp) return resp.fail_with(what);
  if (resp->status == 204 || resp->status == 200) return {};
  if (resp->status == 404 && missing_ok) return {};
  // "removal … is already in progress": someone else (AutoRemove, another teardown) is doing it.
  if (resp->status == 409 && daemon_message(resp->body).find("already in progress") != std::string::npos && missing_ok)
    return {};
  return fail(error_from_status(resp->status, resp->body, "DELETE /containers").with_context(what));
}

Result<ContainerInfo> inspect_container(Client& c, std::string_view id) {
  auto doc = c.get_json(container_path(id, "/json"));
  if (!doc) return doc.fail_with("inspecting container '" + std::string(id) + "'");
  const auto& d = *doc;
  ContainerInfo i;
  i.id = json::get_string(d, "Id");
  i.name = json::get_string(d, "Name");
  if (!i.name.empty() && i.name.front() == '/') i.name.erase(0, 1);
  i.image = json::get_string(d, "Image");
  if (auto* st = json::get_object(d, "State")) {
    i.state.status = json::get_string(*st, "Status");
    i.state.running = json::get_bool(*st, "Running");
    i.state.oom_killed = json::get_bool(*st, "OOMKilled");
    i.state.pid = static_cast<int>(json::get_int(*st, "Pid"));
    i.state.exit_code = static_cast<int>(json::get_int(*st, "ExitCode"));
    i.state.error = json::get_string(*st, "Error");
    i.state.started_at = json::get_string(*st, "StartedAt");
    i.state.finished_at = json::get_string(*st, "FinishedAt");
    if (auto* h = json::get_object(*st, "Health")) i.state.health = json::get_string(*h, "Status");
  }
  if (auto* cfg = json::get_object(d, "Config")) {
    i.labels = json::get_string_map(*cfg, "Labels");
    i.env = json::get_strings(*cfg, "Env");
    i.user = json::get_string(*cfg, "User");
    i.workdir = json::get_string(*cfg, "WorkingDir");
    i.config_image = json::get_string(*cfg, "Image");
  }
  if (auto* h = json::get_object(d, "HostConfig")) i.host = parse_host(*h);
  if (auto* ms = json::get_array(d, "Mounts"))
    for (const auto& m : ms->GetArray())
      i.mounts.push_back({json::get_string(m, "Type"), json::get_string(m, "Name"), json::get_string(m, "Source"),
                          json::get_string(m, "Destination"), json::get_string(m, "Driver"), json::get_bool(m, "RW")});
  if (auto* ns = json::get_object(d, "NetworkSettings"))
    if (auto* nets = json::get_object(*ns, "Networks"))
      for (const auto& m : nets->GetObject())
        i.networks[m.name.GetString()] = {json::get_string(m.value, "NetworkID"), json::get_string(m.value, "IPAddress"),
                                          json::get_string(m.value, "Gateway"), json::get_strings(m.value, "Aliases")};
  return i;
}

const MountPoint* find_mount(const ContainerInfo& info, std::string_view destination) {
  for (const auto& m : info.mounts)
    if (m.destination == destination) return &m;
  return nullptr;
}

Result<ContainerSize> container_size(Client& c, std::string_view id) {
  auto doc = c.get_json(container_path(id, "/json?size=1"));
  if (!doc) return doc.fail_with("reading the disk use of container '" + std::string(id) + "'");
  return ContainerSize{json::get_int(*doc, "SizeRw"), json::get_int(*doc, "SizeRootFs")};
}

Result<std::vector<ContainerSummary>> list_containers(Client& c, const Filters& filters) {
  auto doc = c.get_json("/containers/json?all=1&filters=" + encode_filters(filters));
  if (!doc) return doc.fail_with("listing containers");
  std::vector<ContainerSummary> out;
  if (doc->IsArray())
    for (const auto& v : doc->GetArray()) {
      out.push_back({json::get_string(v, "Id"), json::get_strings(v, "Names"), json::get_string(v, "Image"),
                     json::get_string(v, "State"), json::get_string(v, "Status"), json::get_int(v, "Created"),
                     json::get_string_map(v, "Labels"), {}});
      if (auto* ns = json::get_object(v, "NetworkSettings"))
        if (auto* nets = json::get_object(*ns, "Networks"))
          for (const auto& m : nets->GetObject()) out.back().networks.emplace_back(m.name.GetString());
    }
  return out;
}

Result<Logs> container_logs(Client& c, std::string_view id, std::optional<int> tail, bool with_stdout) {
  std::string q = with_stdout ? "/logs?stdout=1&stderr=1" : "/logs?stdout=0&stderr=1";
  if (tail) q += "&tail=" + std::to_string(*tail);
  auto resp = c.expect({200}, Method::kGet, container_path(id, q));
  if (!resp) return resp.fail_with("reading logs of container '" + std::string(id) + "'");
  Logs logs;
  StdcopyDemuxer demux;
  auto st = demux.feed(resp->body, [&](StdStream s, std::string_view data) {
    (s == StdStream::kStderr ? logs.err : logs.out).append(data);
  });
  if (!st) return st.fail_with("reading logs of container '" + std::string(id) + "'");
  return logs;
}

}  // namespace forge::engine
