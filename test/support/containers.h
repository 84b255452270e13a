// RAII containers and networks for the docker suite: removed when the test ends, pass or fail.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "engine/containers.h"
#include "engine/networks.h"
#include "stack/labels.h"
#include "support/docker_env.h"
#include "support/process.h"

namespace forge::test {

// A runner-image container, created and started; force-removed at scope exit.
class TestContainer {
 public:
  explicit TestContainer(engine::ContainerSpec spec, bool start = true) {
    auto& env = docker_env();
    if (spec.image.empty()) spec.image = env.runner_image;
    if (!spec.cmd) spec.cmd = std::vector<std::string>{"sleep", "3600"};
    for (auto& [k, v] : test_labels()) spec.labels.emplace(k, v);
    spec.host.init = true;  // sleep as pid 1 would ignore SIGTERM
    auto created = engine::create_container(*env.client, spec);
    REQUIRE_MESSAGE(created.has_value(), (created ? "" : created.error().what()));
    id = created->id;
    if (start) {
      auto st = engine::start_container(*env.client, id);
      REQUIRE_MESSAGE(st.has_value(), (st ? "" : st.error().what()));
    }
  }
  ~TestContainer() { (void)engine::remove_container(*docker_env().client, id); }
  TestContainer(const TestContainer&) = delete;
  TestContainer& operator=(const TestContainer&) = delete;
  std::string id;
};

class TestNetwork {
 public:
  explicit TestNetwork(engine::NetworkSpec spec) {
    for (auto& [k, v] : test_labels()) spec.labels.emplace(k, v);
    auto created = engine::create_network(*docker_env().client, spec);
    REQUIRE_MESSAGE(created.has_value(), (created ? "" : created.error().what()));
    id = *created;
  }
  ~TestNetwork() { (void)engine::remove_network(*docker_env().client, id); }
  TestNetwork(const TestNetwork&) = delete;
  TestNetwork& operator=(const TestNetwork&) = delete;
  std::string id;
};

// REQUIRE that a Result holds a value, printing the error otherwise; returns the value.
template <typename T>
T& must(Result<T>& r) {
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return *r;
}
inline void must(const Status& s) { REQUIRE_MESSAGE(s.has_value(), (s ? "" : s.error().what())); }

inline engine::Filters by_label(const std::string& key, const std::string& value) {
  return {{"label", {key + "=" + value}}};
}

// A killed run's containers are still there (nothing removed them: the owner died); after
// `forgectl down --orphans` none of its containers or networks is.
inline void check_orphans_then_down_removes_all(engine::Client& c, const std::string& run_id) {
  auto before = engine::list_containers(c, by_label(stack::kLabelRun, run_id));
  REQUIRE(before.has_value());
  CHECK(before->size() >= 2);
  auto down = forgectl_run({"down", "--orphans"});
  CHECK_MESSAGE(down.code == 0, down.text());
  auto after = engine::list_containers(c, by_label(stack::kLabelRun, run_id));
  REQUIRE(after.has_value());
  CHECK(after->empty());
  auto nets = engine::list_networks(c, by_label(stack::kLabelRun, run_id));
  REQUIRE(nets.has_value());
  CHECK(nets->empty());
}

}  // namespace forge::test
