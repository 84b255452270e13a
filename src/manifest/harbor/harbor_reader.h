// Readers for the tables of a Harbor task.toml, shared by harbor_config.cc and harbor_sections.cc.
// Internal to src/manifest (names toml++ through toml_reader.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "manifest/harbor/harbor_task.h"
#include "manifest/harbor/toml_reader.h"

namespace forge::manifest {

// Counts a task.toml may hold; more is an error.
inline constexpr std::size_t kMaxSteps = 100;
inline constexpr std::size_t kMaxListItems = 256;  // env entries, hosts, artifacts, keywords, …
inline constexpr std::size_t kMaxMcpServers = 32;

// The whole task.toml into `t` (everything but the files it names).
void read_task_config(TomlReader& r, const toml::table& doc, HarborTask& t);

// Each reads one table into `into`, assigning only what the table sets, so a step's table can be
// read over a copy of the task's. `table` names it in messages ("steps[1].agent").
void read_agent(TomlReader& r, const TomlField& f, std::string_view table, AgentConfig& into);
void read_verifier(TomlReader& r, const TomlField& f, std::string_view table, VerifierConfig& into);
// `verifier_env`: [verifier.environment], where image and agent-only keys are refused or have no effect.
void read_environment(TomlReader& r, const TomlField& f, std::string_view table, EnvironmentConfig& into,
                      bool verifier_env = false);
std::optional<HealthcheckConfig> read_healthcheck(TomlReader& r, const TomlField& f, std::string_view table);
std::vector<EnvEntry> read_env(TomlReader& r, const TomlField& f, std::string_view table);
std::vector<Artifact> read_artifacts(TomlReader& r, const TomlField& f, std::string_view table);

// network_mode / allowed_hosts (/ allow_internet on a baseline) of one table, collected while its
// entries are read and resolved once all are seen.
struct NetworkKeys {
  std::optional<TomlField> mode, hosts, allow_internet;
  bool take(const TomlField& e);  // true when `e` is one of them
};
// nullopt when the table sets no policy; a baseline without one is public.
std::optional<HarborNetwork> read_network(TomlReader& r, const NetworkKeys& keys, std::string_view table);

// A seconds value: a positive number of at most 30 days.
std::optional<double> read_seconds(TomlReader& r, const TomlField& f, std::string_view table);

}  // namespace forge::manifest
