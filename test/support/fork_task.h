// A task whose setup_script takes its time and leaves a file no second run of it reproduces
// (a nanosecond timestamp), with a json-db row from its fixtures; its oracle plants files where an
// agent can write and records whether an earlier trial's plant was there (docs/sweeps.md "Forks").
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace forge::test {

// `extra_env`: more lines under environment: ("  setup_fork: false\n"); `plant`: the oracle plants
// (a hostile agent) or only checks (an honest one); `then`: more of its shell command ("; sleep 60").
inline std::string write_fork_task(const std::filesystem::path& dir, int setup_s, const std::string& extra_env = "",
                                   bool plant = true, const std::string& then = "") {
  namespace fs = std::filesystem;
  fs::create_directories(dir / "fixtures");
  const std::string check = "if [ -e planted.txt ] || [ -e /tmp/planted.txt ] || ! grep -q set-up setup.txt || "
                            "[ ! -e empty ] || [ \\\"$(cat link)$(cat hard)\\\" != mademade ]; "
                            "then echo LEAKED > status.txt; else echo CLEAN > status.txt; fi";
  const std::string planting = plant ? "; echo planted > planted.txt; echo planted > /tmp/planted.txt; "
                                       "echo tampered > setup.txt; rm -rf made"
                                     : "";
  std::ofstream(dir / "task.yaml")
      << "task_id: " << dir.filename().string()
      << "\nname: fork probe\ncategory: test\ndescription: \"Set up once, fork many.\"\n"
         "initial_user_message: \"Go.\"\n"
         "initial_state:\n  json_db: fixtures/db.json\n"
         "tools:\n  agent: {enabled: [bash]}\n  user: {enabled: []}\n"
         "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
         "grading: grading.yaml\n"
         "solution:\n  tool_calls:\n    - {name: bash, arguments: {command: \""
      << check << planting << then
      << "\"}}\n"
         "environment:\n  network_policy: no_internet\n  setup_script: setup.sh\n"
      << extra_env;
  std::ofstream(dir / "setup.sh") << "sleep " << setup_s
                                  << "\necho set-up $(date +%s%N) > setup.txt\nmkdir -p made && echo made > made/x\n"
                                     ": > empty\nln -s made/x link\nln made/x hard\nchmod 0750 made\n";
  std::ofstream(dir / "fixtures" / "db.json") << R"({"notes": [{"id": 1, "text": "from-setup"}]})";
  std::ofstream(dir / "grading.yaml")
      << "combine: {method: weighted, pass_threshold: 0.99}\n"
         "state_checks:\n  jsonpaths:\n"
         "    - {path: \"$.db.notes[0].text\", equals: \"from-setup\"}\n"
         "    - {path_glob: \"/env/fs/agent-visible/status.txt\", contains_ci: \"CLEAN\"}\n";
  return dir.string();
}

// A task with Tolokaforge's Python tool server and a setup_script (a nanosecond timestamp into
// setup.txt). The server's state gets a mark of its own start ("BOOT-<ns>"), which no second
// server reproduces: a fork's server shows the snapshot's mark only when seeded from it. Its
// oracle adds one note; grading passes when the notes are exactly that one (an earlier trial's
// note would make two).
inline std::string write_python_fork_task(const std::filesystem::path& dir, const std::string& extra_env = "") {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::ofstream(dir / "mcp_server.py") << R"PY(import time
from typing import Annotated

from pydantic import Field

from tolokaforge.core.tools_interface import create_server

mcp, registry, TOOLS = create_server(__file__, "notes")
mcp.on_start(lambda: registry._state().update(boot="BOOT-%d" % time.time_ns(), notes=[]))


@registry.tool("Add a note.")
def add_note(data: dict, text: Annotated[str, Field(description="The note")]) -> dict:
    data["notes"].append(text)
    return {"notes": data["notes"], "boot": data["boot"]}


if __name__ == "__main__":
    mcp.run(transport="stdio")
)PY";
  std::ofstream(dir / "task.yaml")
      << "task_id: " << dir.filename().string()
      << "\nname: python fork probe\ncategory: test\ndescription: \"Set up once, fork many, with a server.\"\n"
         "initial_user_message: \"Go.\"\n"
         "tools:\n  agent:\n    enabled: [add_note]\n    mcp_server: mcp_server.py\n  user: {enabled: []}\n"
         "user_simulator:\n  mode: scripted\n  scripted_flow:\n    - {default: \"Thanks. ###STOP###\"}\n"
         "grading: grading.yaml\n"
         "solution:\n  tool_calls:\n    - {name: add_note, arguments: {text: by-agent}}\n"
         // forgectl/python's user by number: setup runs as the workspace's owner (workspace_owner).
         "environment:\n  network_policy: no_internet\n  setup_script: setup.sh\n  runner: {user: \"1000:1000\"}\n"
      << extra_env;
  std::ofstream(dir / "setup.sh") << "sleep 1\necho set-up $(date +%s%N) > setup.txt\n";
  std::ofstream(dir / "grading.yaml") << "combine: {method: weighted, pass_threshold: 0.99}\n"
                                         "state_checks:\n  jsonpaths:\n"
                                         "    - {path: \"$.db.notes\", equals: [by-agent]}\n";
  return dir.string();
}

}  // namespace forge::test
