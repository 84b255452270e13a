// A fork's services replaced by their set-up images, volumes seeded.
#include "stack/service_swap.h"

#include <algorithm>
#include <set>

#include "engine/archive.h"
#include "engine/containers.h"
#include "engine/networks.h"
#include "stack/container_create.h"
#include "stack/readiness.h"

namespace forge::stack {

namespace {

const policy::ContainerPlan* find_service(const policy::StackPlan& plan, const std::string& key) {
  for (const auto& s : plan.services)
    if (s.key == key) return &s;
  return nullptr;
}

Status swap_one(engine::Client& c, UpResult& up, const ServiceSwap& s, const SwapOptions& o) {
  const std::string who = "service '" + s.key + "'";
  const auto* planned = find_service(up.plan, s.key);
  auto old = up.containers.find(s.key);
  if (!planned || old == up.containers.end()) return fail(Errc::kNotFound, who + " is not in the stack");
  policy::ContainerPlan p = *planned;
  p.image = s.image;
  if (auto st = engine::remove_container(c, old->second); !st) return st.fail_with("removing " + who);
  up.containers.erase(old);
  std::map<std::string, std::string> net_names;
  for (const auto& n : up.plan.networks) net_names[n.key] = n.name;
  auto id = create_verified(c, p, up.labels, net_names, {});
  if (!id) return id.fail();
  up.containers[s.key] = *id;  // the stack's teardown removes it by label either way
  for (const auto& v : s.volumes)
    if (auto st = engine::put_archive(c, *id, v.target, v.tar); !st)
      return st.fail_with(who + ": seeding its volume " + v.target);
  for (std::size_t i = 1; i < p.networks.size(); ++i)
    if (auto st = engine::connect_network(c, net_names.at(p.networks[i].network_key), *id, p.networks[i].aliases); !st)
      return st.fail_with(who);
  if (auto st = engine::start_container(c, *id); !st) return st.fail_with(who);
  if (p.healthcheck && !p.healthcheck->disable) {
    Millis probe = p.healthcheck->timeout.count() > 0 ? p.healthcheck->timeout : Millis(30000);
    if (auto st =
            wait_healthy(c, *id, s.key, Deadline::in(o.health_timeout), o.interrupted, &p.healthcheck->test, probe);
        !st)
      return st;
  }
  return {};
}

}  // namespace

std::vector<ServiceSwap> in_dependency_order(const policy::StackPlan& plan, std::vector<ServiceSwap> swaps) {
  std::set<std::string> pending;
  for (const auto& s : swaps) pending.insert(s.key);
  std::vector<ServiceSwap> out;
  while (!swaps.empty()) {
    // The first whose swapped dependencies are all placed; a cycle (refused by the compose reader) keeps its order.
    auto ready = std::find_if(swaps.begin(), swaps.end(), [&](const ServiceSwap& s) {
      const auto* p = find_service(plan, s.key);
      if (!p) return true;
      return std::none_of(p->depends_on.begin(), p->depends_on.end(),
                          [&](const auto& d) { return d.first != s.key && pending.count(d.first); });
    });
    if (ready == swaps.end()) ready = swaps.begin();
    pending.erase(ready->key);
    out.push_back(std::move(*ready));
    swaps.erase(ready);
  }
  return out;
}

Status swap_services(engine::Client& c, UpResult& up, std::vector<ServiceSwap> swaps, const SwapOptions& o) {
  for (const auto& s : in_dependency_order(up.plan, std::move(swaps))) {
    if (o.interrupted && o.interrupted->load() > 0) return fail(Errc::kCancelled, "interrupted");
    if (auto st = swap_one(c, up, s, o); !st) return st.fail_with("forking service '" + s.key + "'");
  }
  return {};
}

}  // namespace forge::stack
