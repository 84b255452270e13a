// up_stack's on_planned hook (what a trial's grader made ahead starts from): called once, with
// the stack's labels and final plan, before any object of the stack exists; what it makes under
// those labels goes when the stack goes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/strings.h"
#include "engine/containers.h"
#include "manifest/environment_parse.h"
#include "stack/labels.h"
#include "stack/teardown.h"
#include "stack/up.h"
#include "support/containers.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;

TEST_CASE("stack up: on_planned is called once before the stack's first object, and what it made goes with the stack") {
  auto& c = *docker_env().client;
  TempDir dir;
  const std::string path = dir.path() + "/planned.yaml";
  std::ofstream(path) << "network_policy: no_internet\nstack: none\n";
  auto env = manifest::load_environment(path);
  must(env);

  stack::UpOptions opts;
  opts.host = docker_env().host;
  opts.run_id = "planned-" + docker_env().run_value + "-" + random_hex(3);
  int calls = 0;
  std::string seen_stack, seen_image, made;
  std::size_t existing = 99;
  opts.on_planned = [&](const stack::StackLabels& labels, const policy::StackPlan& plan) {
    ++calls;
    seen_stack = labels.stack;
    seen_image = plan.runner.image;
    auto listed = engine::list_containers(c, {{"label", {std::string(stack::kLabelStack) + "=" + labels.stack}}});
    if (listed) existing = listed->size();
    engine::ContainerSpec spec;  // what a grader made ahead is to the stack: its labels, its image
    spec.name = labels.stack + "-planned";
    spec.image = plan.runner.image;
    spec.cmd = std::vector<std::string>{"sleep", "3600"};
    spec.labels = labels.for_object("grader");
    spec.host.network_mode = "none";
    if (auto created = engine::create_container(c, spec)) made = created->id;
  };
  auto up = stack::up_stack(c, *env, opts);
  REQUIRE_MESSAGE(up.has_value(), (up ? "" : up.error().what()));
  CHECK(calls == 1);
  CHECK(seen_stack == up->name);
  CHECK(seen_image == up->plan.runner.image);
  CHECK(existing == 0);  // not even the runner yet
  REQUIRE_FALSE(made.empty());
  CHECK(engine::inspect_container(c, made).has_value());

  auto down = stack::remove_stack(c, up->name);
  CHECK(down.clean());
  auto gone = engine::inspect_container(c, made);
  CHECK_FALSE(gone.has_value());
  if (gone) (void)engine::remove_container(c, made, engine::RemoveMode::kForce);
}
