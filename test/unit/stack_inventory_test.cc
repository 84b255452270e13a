// Stack ownership from every object's labels, the orphan decision, and what a trial's objects carry.
#include <doctest/doctest.h>

#include <ctime>
#include <memory>

#include "engine/client.h"
#include "stack/inventory.h"
#include "stack/labels.h"
#include "stack/specs.h"
#include "stack/teardown.h"
#include "support/fake_transport.h"
#include "trial/python_container.h"

using namespace forge;
using namespace forge::stack;
using forge::test::FakeTransport;

namespace {

const std::time_t kNow = 1700000000;

ProcessIdentity dead_owner() { return {ProcessIdentity::current().host, 999999, 5}; }  // no such pid here
ProcessIdentity elsewhere() { return {"another-host-entirely", 42, 7}; }

StackLabels labels_of(const ProcessIdentity& owner, OwnerMode mode, std::time_t lease = kNow + 3600) {
  return {"fg-t-abc", "run1", "no_internet", "/tasks/t/task.yaml", owner, lease, mode};
}

engine::ContainerSummary container(std::map<std::string, std::string> labels, std::string state = "running") {
  engine::ContainerSummary c;
  c.id = "c" + std::to_string(labels.size());
  c.state = std::move(state);
  c.labels = std::move(labels);
  return c;
}

// The stack as list_stacks folds it from these containers, in this order.
StackObjects stack_of(const std::vector<engine::ContainerSummary>& cs) {
  std::map<std::string, StackObjects> m;
  for (const auto& c : cs)
    if (auto* s = add_object(m, c.labels)) s->containers.push_back(c);
  REQUIRE(m.size() == 1);
  return m.begin()->second;
}

}  // namespace

TEST_CASE("inventory: an object without owner labels listed first no longer hides a dead sweep's ownership") {
  auto l = labels_of(dead_owner(), OwnerMode::kAttached);
  // What forgectl before every object carried the owner made for golden replay: stack, role, run.
  auto bare = container({{kLabelStack, l.stack}, {kLabelRole, "golden"}, {kLabelRun, l.run}});
  auto runner = container(l.for_object("runner"));
  for (const auto& order : {std::vector{bare, runner}, std::vector{runner, bare}}) {
    auto s = stack_of(order);
    CHECK(orphan_reason(s, kNow) == OrphanReason::kOwnerGone);
    REQUIRE(s.ownership.shown_owner().has_value());
    CHECK(s.ownership.shown_owner()->pid == 999999);
    CHECK(s.labels.at(kLabelPolicy) == "no_internet");  // from whichever object has it
    CHECK(s.labels.at(kLabelMode) == "attached");
  }
}

TEST_CASE("inventory: any object with a live owner keeps the stack, even past its lease") {
  auto dead = labels_of(dead_owner(), OwnerMode::kAttached, kNow - 10);
  auto live = labels_of(ProcessIdentity::current(), OwnerMode::kAttached, kNow - 10);
  auto s = stack_of({container(dead.for_object("runner")), container(live.for_object("grader"))});
  CHECK(orphan_reason(s, kNow) == OrphanReason::kNone);
  CHECK(s.ownership.shown_owner()->pid == ProcessIdentity::current().pid);
  CHECK(s.ownership.owners.size() == 2);
}

TEST_CASE("inventory: the orphan reasons of dead, foreign and missing owners") {
  SUBCASE("a dead detached owner with a running runner: a finished up, kept within its lease") {
    auto l = labels_of(dead_owner(), OwnerMode::kDetached);
    CHECK(orphan_reason(stack_of({container(l.for_object("runner"))}), kNow) == OrphanReason::kNone);
    CHECK(orphan_reason(stack_of({container(l.for_object("runner"), "created")}), kNow) == OrphanReason::kUnfinished);
    auto expired = labels_of(dead_owner(), OwnerMode::kDetached, kNow - 1);
    CHECK(orphan_reason(stack_of({container(expired.for_object("runner"))}), kNow) == OrphanReason::kLeaseExpired);
  }
  SUBCASE("an owner on another host: only the lease tells") {
    auto l = labels_of(elsewhere(), OwnerMode::kAttached);
    CHECK(orphan_reason(stack_of({container(l.for_object("runner"))}), kNow) == OrphanReason::kNone);
    auto expired = labels_of(elsewhere(), OwnerMode::kAttached, kNow - 1);
    CHECK(orphan_reason(stack_of({container(expired.for_object("runner"))}), kNow) == OrphanReason::kLeaseExpired);
  }
  SUBCASE("no object names an owner or a lease: reported as unowned, which down --orphans does not remove") {
    auto s = stack_of({container({{kLabelStack, "fg-hand-made"}, {kLabelRole, "grader"}})});
    CHECK(orphan_reason(s, kNow) == OrphanReason::kUnowned);
    CHECK_FALSE(is_orphan(OrphanReason::kUnowned));
    CHECK_FALSE(s.ownership.shown_owner().has_value());
    // A lease without an owner: left to the lease.
    auto leased = stack_of({container({{kLabelStack, "fg-hand-made"}, {kLabelLease, std::to_string(kNow + 60)}})});
    CHECK(orphan_reason(leased, kNow) == OrphanReason::kNone);
    CHECK(orphan_reason(leased, kNow + 61) == OrphanReason::kLeaseExpired);
  }
}

TEST_CASE("inventory: list_stacks folds containers, networks and volumes of one stack") {
  auto fake = std::make_shared<FakeTransport>();
  auto l = labels_of(dead_owner(), OwnerMode::kAttached);
  fake->on(
      engine::Method::kGet, "/containers/json", 200,
      R"([{"Id":"g1","State":"running","Created":100,"Labels":{"io.forgectl.stack":"fg-t-abc","io.forgectl.role":"golden"}}])");
  fake->on(engine::Method::kGet, "/networks", 200, "[]");
  fake->on(
      engine::Method::kGet, "/volumes", 200,
      R"({"Volumes":[{"Name":"v1","Driver":"local","Labels":{"io.forgectl.stack":"fg-t-abc","io.forgectl.owner":")" +
          l.owner.str() + R"(","io.forgectl.mode":"attached","io.forgectl.lease":")" + std::to_string(l.lease_expires) +
          R"("}}]})");
  engine::Client c(fake);
  auto stacks = list_stacks(c);
  REQUIRE(stacks.has_value());
  REQUIRE(stacks->count("fg-t-abc") == 1);
  const auto& s = stacks->at("fg-t-abc");
  CHECK(s.containers.size() == 1);
  CHECK(s.volumes.size() == 1);
  CHECK(s.created == 100);
  CHECK(orphan_reason(s, kNow) == OrphanReason::kOwnerGone);  // the volume names the owner
  REQUIRE(fake->sent("/volumes").size() == 1);
  CHECK(fake->sent("/volumes")[0].target.find("io.forgectl.stack") != std::string::npos);
}

// Docker 20.10's libnetwork deadlocks when two containers leave one network at once (teardown.h).
TEST_CASE("teardown: containers on a network are removed one after another; those on none side by side") {
  auto fake = std::make_shared<FakeTransport>();
  fake->on(engine::Method::kGet, "/containers/json", 200,
           R"([{"Id":"runner","NetworkSettings":{"Networks":{"fg-t-internal":{},"fg-t-edge":{}}}},)"
           R"({"Id":"grader","NetworkSettings":{"Networks":{"none":{}}}},)"
           R"({"Id":"db","NetworkSettings":{"Networks":{"fg-t-internal":{}}}},)"
           R"({"Id":"dns","NetworkSettings":{"Networks":{}}},)"
           R"({"Id":"probe"}])");
  engine::Client c(fake);
  auto cs = engine::list_containers(c);
  REQUIRE(cs.has_value());
  REQUIRE(cs->size() == 5);
  CHECK((*cs)[0].networks == std::vector<std::string>{"fg-t-internal", "fg-t-edge"});
  CHECK((*cs)[1].networks == std::vector<std::string>{"none"});
  auto groups = removal_groups(*cs);
  REQUIRE(groups.size() == 4);
  CHECK(groups[0] == std::vector<std::string>{"runner", "db"});  // one at a time
  CHECK(groups[1] == std::vector<std::string>{"grader"});
  CHECK(groups[2] == std::vector<std::string>{"dns"});  // shares another's namespace: no endpoint
  CHECK(groups[3] == std::vector<std::string>{"probe"});
  CHECK(removal_groups({}).empty());
}

TEST_CASE("labels: every container and volume of a trial names the owner, mode, run and lease") {
  auto l = labels_of(ProcessIdentity::current(), OwnerMode::kAttached);
  auto check = [&](const std::map<std::string, std::string>& got, const std::string& role) {
    CAPTURE(role);
    for (const char* k : {kLabelStack, kLabelRun, kLabelOwner, kLabelMode, kLabelLease, kLabelPolicy, kLabelSource})
      CHECK_MESSAGE(got.count(k) == 1, k);
    CHECK(got.at(kLabelOwner) == l.owner.str());
    CHECK(got.at(kLabelMode) == "attached");
    CHECK(got.at(kLabelRole) == role);
  };
  auto golden = trial::python_container_spec({l, "golden", "golden", "3000:3000", 1LL << 30});
  check(golden.labels, "golden");
  CHECK(golden.name.rfind("fg-t-abc-golden-", 0) == 0);

  policy::ContainerPlan runner;
  runner.key = "runner";
  runner.role = policy::Role::kRunner;
  policy::MountSpec work{"/work", "", false, "size=16m"};
  runner.hardening.mounts.push_back(work);
  auto spec = container_spec(runner, l, {});
  check(spec.labels, "runner");
  REQUIRE(spec.host.mounts.size() == 1);
  check(spec.host.mounts[0].labels, "volume");
}
