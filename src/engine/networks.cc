// Network endpoints.
#include "engine/networks.h"

#include "core/strings.h"

namespace forge::engine {

Result<std::string> create_network(Client& c, const NetworkSpec& s) {
  json::Writer w;
  w.begin_object()
      .field("Name", s.name)
      .field("CheckDuplicate", true)
      .field("Driver", s.driver)
      .field("Internal", s.internal)
      .field("Attachable", s.attachable)
      .field("EnableIPv6", s.enable_ipv6);
  if (s.ipam) {
    w.key("IPAM").begin_object().field("Driver", "default").key("Config").begin_array().begin_object();
    w.field("Subnet", s.ipam->subnet);
    if (!s.ipam->gateway.empty()) w.field("Gateway", s.ipam->gateway);
    w.end_object().end_array().end_object();
  }
  w.field("Labels", s.labels).field("Options", s.options).end_object();
  auto resp = c.expect({201}, Method::kPost, "/networks/create", w.take());
  if (!resp) return resp.fail_with("creating network '" + s.name + "'");
  auto doc = json::parse(resp->body, "network create response");
  if (!doc) return doc.fail();
  return json::get_string(*doc, "Id");
}

static NetworkInfo parse_network(const json::Value& v) {
  NetworkInfo n;
  n.id = json::get_string(v, "Id");
  n.name = json::get_string(v, "Name");
  n.driver = json::get_string(v, "Driver");
  n.internal = json::get_bool(v, "Internal");
  n.labels = json::get_string_map(v, "Labels");
  n.options = json::get_string_map(v, "Options");
  if (auto* ipam = json::get_object(v, "IPAM"))
    if (auto* cfg = json::get_array(*ipam, "Config"))
      for (const auto& e : cfg->GetArray()) n.ipam.push_back({json::get_string(e, "Subnet"), json::get_string(e, "Gateway")});
  if (auto* cs = json::get_object(v, "Containers"))
    for (const auto& m : cs->GetObject())
      n.containers[m.name.GetString()] = {json::get_string(m.value, "Name"), json::get_string(m.value, "IPv4Address")};
  return n;
}

Result<NetworkInfo> inspect_network(Client& c, std::string_view id) {
  auto doc = c.get_json("/networks/" + url_encode(id));
  if (!doc) return doc.fail_with("inspecting network '" + std::string(id) + "'");
  return parse_network(*doc);
}

Result<std::vector<NetworkInfo>> list_networks(Client& c, const Filters& filters) {
  auto doc = c.get_json("/networks?filters=" + encode_filters(filters));
  if (!doc) return doc.fail_with("listing networks");
  std::vector<NetworkInfo> out;
  if (doc->IsArray())
    for (const auto& v : doc->GetArray()) out.push_back(parse_network(v));
  return out;
}

Status connect_network(Client& c, std::string_view network, std::string_view container,
                       const std::vector<std::string>& aliases) {
  json::Writer w;
  w.begin_object().field("Container", container).key("EndpointConfig").begin_object();
  if (!aliases.empty()) w.field("Aliases", aliases);
  w.end_object().end_object();
  auto resp = c.expect({200}, Method::kPost, "/networks/" + url_encode(network) + "/connect", w.take());
  if (!resp)
    return resp.fail_with("connecting container '" + std::string(container) + "' to network '" + std::string(network) + "'");
  return {};
}

Status disconnect_network(Client& c, std::string_view network, std::string_view container, bool force) {
  json::Writer w;
  w.begin_object().field("Container", container).field("Force", force).end_object();
  auto resp = c.expect({200}, Method::kPost, "/networks/" + url_encode(network) + "/disconnect", w.take());
  if (!resp)
    return resp.fail_with("disconnecting container '" + std::string(container) + "' from network '" +
                          std::string(network) + "'");
  return {};
}

Status remove_network(Client& c, std::string_view id) {
  auto resp = c.expect({204, 200}, Method::kDelete, "/networks/" + url_encode(id));
  if (!resp) return resp.fail_with("removing network '" + std::string(id) + "'");
  return {};
}

}  // namespace forge::engine
