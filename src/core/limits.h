// Every size, count and depth forgectl enforces on its inputs, in one place (RULES: each has a limit).
#pragma once

#include <cstddef>
#include <cstdint>

namespace forge::limits {

inline constexpr std::size_t kKiB = 1024;
inline constexpr std::size_t kMiB = 1024 * kKiB;

// ---- JSON ----

// Arrays and objects nested deeper than this are refused by every parse (json::parse) and every
// walk (writers, hashing, JSONPath, redaction, diff, schema checks). Real documents (task states,
// tool arguments, API responses) stay under 20; 128 leaves room and costs a few KiB of stack at most.
inline constexpr int kMaxJsonDepth = 128;
// One JSON document from outside forgectl: a file, an HTTP body, a daemon or LLM response. The
// libcurl clients already cap bodies at this size; json::parse refuses anything larger too.
inline constexpr std::size_t kMaxJsonBytes = 64 * kMiB;
// The arguments of one tool call, as the model wrote them. Tolokaforge's tools take a path or a
// command; a megabyte is a whole file written by write_file.
inline constexpr std::size_t kMaxToolArgumentsBytes = 4 * kMiB;
// JSON a model writes that forgectl then walks (tool arguments, judge answers, output schemas):
// shallower than kMaxJsonDepth because a model has no reason to nest deeply (docs/tools.md).
inline constexpr int kMaxModelJsonDepth = 64;

// ---- YAML (task.yaml, grading.yaml, compose files, run configs) ----

// One YAML file. Task packs' YAML is a few KiB; data belongs in json_db files.
inline constexpr std::size_t kMaxYamlBytes = 4 * kMiB;
// Nesting of mappings and sequences, counted with aliases expanded.
inline constexpr int kMaxYamlDepth = 64;
// Aliases (*name) in one file: compose files share a few blocks this way, never hundreds.
inline constexpr std::size_t kMaxYamlAliases = 1000;
// Nodes with every alias expanded: what a conversion to JSON or a walk would visit. Stops the
// "billion laughs" (nine levels of ten aliases each expand to 10^9 nodes from 90 aliases).
inline constexpr std::size_t kMaxYamlExpandedNodes = 1000000;
// `<<` merges inside merged mappings: anchors could otherwise make them cyclic.
inline constexpr int kMaxYamlMergeDepth = 16;

// ---- Files a task directory supplies (fixtures, json_db files, prompts, copied files, scripts) ----

// One file named by a task: a json_db fixture, a system prompt, a file copied to the agent, a
// solution script, a compose file, every file under custom_checks or tests/.
inline constexpr std::uintmax_t kMaxTaskFileBytes = 64 * kMiB;
// All files one task names, added up (its YAML, fixtures, copies, checks, tests).
inline constexpr std::uintmax_t kMaxTaskBytes = 256 * kMiB;
// Files under the directories a task names (custom_checks.dir, tests/, rag corpus), together.
inline constexpr std::size_t kMaxTaskFiles = 10000;

// ---- Regular expressions (grading.yaml disallow_regex) ----

// One pattern's text. Tolokaforge's patterns are a line long.
inline constexpr std::size_t kMaxRegexPatternBytes = 4 * kKiB;
// Memory RE2 may use for one compiled pattern (its DFA cache included): a pattern that needs
// more is refused at load time instead of degrading at grading time.
inline constexpr std::int64_t kMaxRegexProgramBytes = 8 * static_cast<std::int64_t>(kMiB);

// ---- Run sizes (checked where a run is planned: the CLI's `run` and the sweep's plan) ----

// Trials of one task for one model/agent (`--trials`).
inline constexpr int kMaxTrialsPerTask = 1000;
// Trials one run may plan: tasks × models × agents × trials. trials.jsonl, state.sqlite3 and the
// report stay usable at this size.
inline constexpr std::size_t kMaxPlannedTrials = 1000000;
// Trials at once (`--concurrency`). Each is a stack of containers and a /28 from a /16 pool
// (4096 subnets); the subnet admission lowers this further to what the pool and daemon allow.
inline constexpr int kMaxConcurrency = 256;
// Shards of one `forgectl slurm submit` (`--shards`): an array job of that many tasks (Slurm's own
// MaxArraySize defaults to 1001), and the merge job's command line names every shard's directory.
inline constexpr int kMaxSlurmShards = 4096;
// Lines of squeue output one `forgectl slurm status` reads (a job per shard, and the merge job).
inline constexpr std::size_t kMaxSlurmQueueLines = 100000;

}  // namespace forge::limits
