// Network endpoints: create, inspect, list, connect, disconnect, remove.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/client.h"

namespace forge::engine {

struct IpamConfig {
  std::string subnet;   // "10.213.4.0/28"
  std::string gateway;  // "10.213.4.1"; empty lets the daemon choose
};

struct NetworkSpec {
  std::string name;
  std::string driver = "bridge";
  bool internal = false;
  bool attachable = false;
  bool enable_ipv6 = false;
  std::optional<IpamConfig> ipam;             // explicit subnet; unset = the daemon's pools
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> options;  // driver options, e.g. com.docker.network.bridge.name
};
// Creates with CheckDuplicate (a second create of the name is a kConflict); returns the Id.
Result<std::string> create_network(Client& c, const NetworkSpec& spec);

struct NetworkEndpoint {
  std::string name;          // container name
  std::string ipv4_address;  // "10.213.4.2/28"
};

struct NetworkInfo {
  std::string id, name, driver;
  bool internal = false;
  std::vector<IpamConfig> ipam;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> options;
  std::map<std::string, NetworkEndpoint> containers;  // container id → endpoint (inspect only)
};
Result<NetworkInfo> inspect_network(Client& c, std::string_view id_or_name);
// Lists networks matching `filters` (e.g. {"label": ["io.forgectl.stack=x"]}); `containers` is
// empty in list results (the daemon fills it only on inspect).
Result<std::vector<NetworkInfo>> list_networks(Client& c, const Filters& filters = {});
Status connect_network(Client& c, std::string_view network, std::string_view container,
                       const std::vector<std::string>& aliases = {});
Status disconnect_network(Client& c, std::string_view network, std::string_view container, bool force = false);
Status remove_network(Client& c, std::string_view id);

}  // namespace forge::engine
