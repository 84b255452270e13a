// Stack teardown by label.
#include "stack/teardown.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

#include "core/parallel.h"
#include "engine/containers.h"
#include "engine/networks.h"
#include "engine/volumes.h"
#include "stack/host_firewall.h"
#include "stack/labels.h"

namespace forge::stack {

std::vector<std::vector<std::string>> removal_groups(const std::vector<engine::ContainerSummary>& containers) {
  std::vector<std::vector<std::string>> groups(1);
  for (const auto& s : containers) {
    const bool networked =
        std::any_of(s.networks.begin(), s.networks.end(), [](const std::string& n) { return n != "none" && n != "host"; });
    if (networked)
      groups.front().push_back(s.id);
    else
      groups.push_back({s.id});
  }
  if (groups.front().empty()) groups.erase(groups.begin());
  return groups;
}

TeardownReport remove_stack(engine::Client& c, const std::string& stack) {
  TeardownReport rep;
  std::mutex mu;
  engine::Filters f{{"label", {std::string(kLabelStack) + "=" + stack}}};
  auto note = [&](const std::string& e) {
    std::lock_guard lock(mu);
    rep.errors.push_back(e);
  };

  std::set<std::string> removed;  // by the first pass: a second one removes only what appeared since
  auto remove_containers = [&]() -> bool {
    auto containers = engine::list_containers(c, f);
    if (!containers) {
      note(containers.error().what());
      return false;
    }
    std::erase_if(*containers, [&](const engine::ContainerSummary& s) { return removed.count(s.id) > 0; });
    for (const auto& s : *containers) removed.insert(s.id);
    const auto groups = removal_groups(*containers);
    parallel_for(groups.size(), [&](std::size_t g) {
      for (const auto& id : groups[g]) {
        auto st = engine::remove_container(c, id);
        if (!st) {
          note(st.error().what());
          continue;
        }
        std::lock_guard lock(mu);
        ++rep.containers;
      }
    });
    return true;
  };
  if (!remove_containers()) return rep;

  auto networks = engine::list_networks(c, f);
  if (!networks) note(networks.error().what());
  parallel_for(networks ? networks->size() : 0, [&](std::size_t i) {
    const auto& n = (*networks)[i];
    auto st = engine::remove_network(c, n.id);
    if (!st && st.error().code == Errc::kForbidden) {
      // Something foreign (or a container created after our list) still holds an endpoint.
      if (auto info = engine::inspect_network(c, n.id))
        for (const auto& [cid, ep] : info->containers) (void)engine::disconnect_network(c, n.id, cid, true);
      for (int attempt = 0; attempt < 5 && !st; ++attempt) {
        std::this_thread::sleep_for(Millis(100 << attempt));
        st = engine::remove_network(c, n.id);
      }
    }
    if (!st && st.error().code != Errc::kNotFound) return note(st.error().what());
    if (auto b = n.labels.find(kLabelBridge); b != n.labels.end())
      if (auto fw = reopen_host(b->second, stack); !fw) note(fw.error().what());
    std::lock_guard lock(mu);
    ++rep.networks;
  });
  // A create the daemon finished after the first list (its client, an `up`, killed mid-way) left a
  // container that the network removal only disconnected: a second look takes it.
  (void)remove_containers();

  // Anonymous workspace volumes go with their containers (v=1); any left by an interrupted
  // create carry the stack's label. forgectl's shared helper volume carries none and stays.
  if (auto volumes = engine::list_volumes(c, f)) {
    for (const auto& v : *volumes) {
      // In use: a container of the stack that someone else is removing right now ("already in
      // progress" counted as removed above) still holds it for a moment.
      auto st = engine::remove_volume(c, v.name);
      for (int attempt = 0; attempt < 5 && !st && st.error().code == Errc::kConflict; ++attempt) {
        std::this_thread::sleep_for(Millis(100 << attempt));
        st = engine::remove_volume(c, v.name);
      }
      if (!st) {
        note(st.error().what());
        continue;
      }
      ++rep.volumes;
    }
  } else {
    note(volumes.error().what());
  }
  return rep;
}

}  // namespace forge::stack
