// System endpoints: ping, version, info, events.
#include "engine/system.h"

#include "engine/errors.h"

namespace forge::engine {

Result<PingInfo> ping(Client& c) {
  auto resp = c.expect({200}, Method::kGet, "/_ping", {}, Millis(10000));
  if (!resp) return resp.fail();
  return PingInfo{resp->header("api-version"), resp->header("ostype"), resp->header("server")};
}

Result<VersionInfo> version(Client& c) {
  auto doc = c.get_json("/version");
  if (!doc) return doc.fail();
  VersionInfo v;
  v.version = json::get_string(*doc, "Version");
  v.api_version = json::get_string(*doc, "ApiVersion");
  v.min_api_version = json::get_string(*doc, "MinAPIVersion");
  v.os = json::get_string(*doc, "Os");
  v.arch = json::get_string(*doc, "Arch");
  v.kernel_version = json::get_string(*doc, "KernelVersion");
  if (auto* comps = json::get_array(*doc, "Components"))
    for (const auto& comp : comps->GetArray()) v.components[json::get_string(comp, "Name")] = json::get_string(comp, "Version");
  return v;
}

Result<SystemInfo> info(Client& c) {
  auto doc = c.get_json("/info");
  if (!doc) return doc.fail();
  const auto& d = *doc;
  SystemInfo i;
  i.server_version = json::get_string(d, "ServerVersion");
  i.storage_driver = json::get_string(d, "Driver");
  if (const json::Value* ds = json::get_array(d, "DriverStatus"))
    for (const auto& pair : ds->GetArray())
      if (pair.IsArray() && pair.Size() == 2 && pair[0].IsString() && pair[1].IsString())
        i.driver_status[pair[0].GetString()] = pair[1].GetString();
  i.cgroup_driver = json::get_string(d, "CgroupDriver");
  i.cgroup_version = json::get_string(d, "CgroupVersion", "1");
  i.kernel_version = json::get_string(d, "KernelVersion");
  i.operating_system = json::get_string(d, "OperatingSystem");
  i.docker_root_dir = json::get_string(d, "DockerRootDir");
  i.ncpu = static_cast<int>(json::get_int(d, "NCPU"));
  i.mem_total = json::get_int(d, "MemTotal");
  i.containers = static_cast<int>(json::get_int(d, "Containers"));
  i.containers_running = static_cast<int>(json::get_int(d, "ContainersRunning"));
  i.images = static_cast<int>(json::get_int(d, "Images"));
  i.security_options = json::get_strings(d, "SecurityOptions");
  i.warnings = json::get_strings(d, "Warnings");
  if (auto* rts = json::get_object(d, "Runtimes"))
    for (const auto& m : rts->GetObject())
      if (m.value.IsObject())
        i.runtimes[m.name.GetString()] = {json::get_string(m.value, "path"), json::get_strings(m.value, "runtimeArgs")};
  i.default_runtime = json::get_string(d, "DefaultRuntime", "runc");
  if (auto* pools = json::get_array(d, "DefaultAddressPools"))
    for (const auto& p : pools->GetArray())
      i.default_address_pools.push_back({json::get_string(p, "Base"), static_cast<int>(json::get_int(p, "Size"))});
  return i;
}

Result<bool> EventParser::feed(std::string_view bytes, const std::function<bool(const Event&)>& on_event) {
  pending_.append(bytes);
  std::size_t start = 0, nl;
  while ((nl = pending_.find('\n', start)) != std::string::npos) {
    std::string_view line(pending_.data() + start, nl - start);
    start = nl + 1;
    if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
    auto doc = json::parse(line, "event stream");
    if (!doc) return doc.fail();
    Event e;
    e.type = json::get_string(*doc, "Type");
    e.action = json::get_string(*doc, "Action");
    e.time_nano = json::get_int(*doc, "timeNano");
    if (auto* actor = json::get_object(*doc, "Actor")) {
      e.id = json::get_string(*actor, "ID");
      e.attributes = json::get_string_map(*actor, "Attributes");
    }
    if (!on_event(e)) {
      pending_.erase(0, start);
      return false;
    }
  }
  pending_.erase(0, start);
  return true;
}

Status events(Client& c, const EventQuery& q, const std::function<bool(const Event&)>& on_event) {
  std::string path = "/events?filters=" + encode_filters(q.filters);
  if (q.since) path += "&since=" + std::to_string(*q.since);
  if (q.until) path += "&until=" + std::to_string(*q.until);
  EventParser parser;
  std::optional<Error> parse_error;
  auto sink = [&](std::string_view chunk) {
    auto more = parser.feed(chunk, on_event);
    if (!more) {
      parse_error = more.error();
      return false;
    }
    return *more;
  };
  auto resp = c.transport().stream(Request{Method::kGet, c.versioned(path), {}, {}, q.timeout}, sink);
  if (parse_error) return fail(*parse_error);
  if (!resp) {
    if (resp.error().code == Errc::kTimeout && q.timeout.count() > 0) return {};
    return resp.fail_with("watching events");
  }
  if (resp->status != 200) return fail(error_from_status(resp->status, resp->body, "GET /events"));
  return {};
}

}  // namespace forge::engine
