// Shared state of the docker suite: one client, the runner image, a label on everything created.
#pragma once

#include <string>

#include "core/host_settings.h"
#include "engine/client.h"

namespace forge::test {

struct DockerEnv {
  engine::Client* client = nullptr;
  std::string runner_image;  // id of forgectl/runner:local, built by the suite's main
  std::string services_image;  // id of forgectl/services:local, built by the suite's main
  std::string python_image;    // id of forgectl/python:local, built by the suite's main
  std::string run_label;     // "io.forgectl.test=<random>": on every object the suite creates
  std::string run_value;
  // The suite's process reads the environment once (FORGECTL_EXEC_HELPER is set by meson), as main() does.
  HostSettings host = HostSettings::from(process_env());
};

// Set up by test/docker/main.cc before any test runs.
DockerEnv& docker_env();

// Labels for an object of this test run, plus `extra`.
std::map<std::string, std::string> test_labels(std::map<std::string, std::string> extra = {});

// A /28 from 10.213.0.0/16 not used by any network on the daemon (tests create their own subnets).
std::string free_test_subnet();

}  // namespace forge::test
