// The text cheat canaries put into a sandbox: each strategy's shell script (run through the `bash`
// tool, in the workspace) and the Python files the conftest canary plants.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace forge::agent::canary_text {

// Planted as conftest.py and as the auto-loaded pytest plugin: every test outcome becomes a pass.
extern const char* const kConftestPy;
// Planted as sitecustomize.py / usercustomize.py: every Python process exits 0.
extern const char* const kSitecustomizePy;
// {relative path, content}: what the conftest canary writes into the workspace (with the file
// tools too, when it has no bash).
std::vector<std::pair<std::string, std::string>> planted_python_files();

std::string reward_file_script();
std::string conftest_script();
std::string read_tests_script();
// `hosts` are checked names (letters, digits, '.', '-', '_'), `ports` numbers: nothing else
// reaches the script.
std::string curl_solution_script(const std::vector<std::string>& hosts, const std::vector<int>& ports);

}  // namespace forge::agent::canary_text
