// The sealed container grading's Python work runs in (checks.py, golden replay on a fresh tool
// server): forgectl's Python image, no network, no capabilities, bounded; its work runs as execs.
#pragma once

#include <cstdint>
#include <string>

#include "engine/containers.h"
#include "stack/labels.h"

namespace forge::trial {

struct PythonContainer {
  stack::StackLabels labels;  // the trial's stack: teardown, the leak audit and down --orphans find it
  std::string role;           // io.forgectl.role: "grader", "golden"
  std::string name_part;      // the name is <stack>-<name_part>-<random>: "checks", "golden"
  std::string user;           // "uid:gid" the container's processes run as
  std::int64_t memory = 1LL << 30;
};

engine::ContainerSpec python_container_spec(const PythonContainer& p);

}  // namespace forge::trial
