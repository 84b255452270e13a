// Events against the real daemon: a labelled container's start is seen through a label filter.
#include <doctest/doctest.h>

#include <ctime>
#include <future>

#include "core/strings.h"
#include "engine/system.h"
#include "support/containers.h"

using namespace forge;
using namespace forge::test;

TEST_CASE("the events stream sees a labelled container start, and nothing unlabelled") {
  auto& c = *docker_env().client;
  std::string mark = random_hex(4);
  std::int64_t since = std::time(nullptr) - 1;

  engine::ContainerSpec other;  // not carrying the mark: must not show up
  other.host.network_mode = "none";
  TestContainer noise(other);

  engine::ContainerSpec s;
  s.host.network_mode = "none";
  s.labels = {{"io.forgectl.mark", mark}};
  TestContainer box(s);

  std::vector<engine::Event> seen;
  engine::EventQuery q;
  q.filters = {{"label", {"io.forgectl.mark=" + mark}}, {"type", {"container"}}};
  q.since = since;
  q.timeout = Millis(15000);
  auto st = engine::events(c, q, [&](const engine::Event& e) {
    seen.push_back(e);
    return e.action != "start";
  });
  must(st);
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.back().action == "start");
  CHECK(seen.back().id == box.id);
  CHECK(seen.back().attributes.at("io.forgectl.mark") == mark);
  for (const auto& e : seen) CHECK(e.id == box.id);
}

TEST_CASE("ping, version and info describe the daemon") {
  auto& c = *docker_env().client;
  auto p = engine::ping(c);
  must(p);
  CHECK(engine::compare_api_versions(p->api_version, engine::kMinApiVersion) >= 0);
  auto v = engine::version(c);
  must(v);
  CHECK_FALSE(v->version.empty());
  CHECK(v->api_version == p->api_version);
  auto i = engine::info(c);
  must(i);
  CHECK_FALSE(i->storage_driver.empty());
  CHECK((i->cgroup_version == "1" || i->cgroup_version == "2"));
}
