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

}  // namespace forge::test
