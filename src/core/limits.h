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
// What forgectl keeps of tool arguments it refused (too large, too deep, not JSON, a key twice):
// their first KiB, enough to see what the model sent, beside the reason stating size and depth.
// Never the whole text, which every record, page and report would otherwise carry.
inline constexpr std::size_t kMaxRefusedArgumentsExcerpt = 1 * kKiB;
// A tool name or call id as a model sent it: tool names are at most 64 characters (OpenAI's
// rule), so anything longer names no tool and is kept cut to this many bytes.
inline constexpr std::size_t kMaxToolNameBytes = 256;

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

// ---- The built-in services (forgectl serve; the rest of their limits: src/services/limits.h) ----

// One request's body: json-db's fixtures and a rag corpus's index request are the largest.
inline constexpr std::size_t kMaxServiceRequestBytes = 32 * kMiB;

// ---- MCP servers (stdio in the runner, HTTP from a service of the stack; docs/tools.md) ----

// One JSON-RPC message from a server: a line on stdio, an SSE event's data, a JSON reply body.
// A tool result the model reads is far smaller; the executor's output cap applies after this.
inline constexpr std::size_t kMaxMcpMessageBytes = 4 * kMiB;
// Messages (notifications, logs, others' replies) read while waiting for one reply before the
// server is taken to be misbehaving.
inline constexpr int kMaxMcpMessagesPerReply = 1000;
// One HTTP reply's body, all its SSE events together (streamable HTTP's stream replies).
inline constexpr std::size_t kMaxMcpReplyBytes = 16 * kMiB;
// An SSE server's event stream over a trial, all of it: it stays open while the agent works.
inline constexpr std::size_t kMaxMcpStreamBytes = 256 * kMiB;
// One HTTP reply's headers together.
inline constexpr std::size_t kMaxMcpHeaderBytes = 64 * kKiB;

// ---- The rag service's knowledge base (initial_state.rag.corpus_dir, search_kb; docs/services.md) ----

// Documents (.md and .txt files) in one corpus. Tolokaforge's knowledge bases hold tens of files;
// two thousand leaves room and still indexes in about a second.
inline constexpr std::size_t kMaxRagDocuments = 2000;
// All documents of one corpus together. The index lives in the rag service's memory (FTS5 about
// doubles it), and the corpus travels in one request, well under the services' 32 MiB body limit.
inline constexpr std::size_t kMaxRagCorpusBytes = 16 * kMiB;
// A passage: a longer document is cut into passages of at most this many bytes at paragraph
// breaks, and a result's text is one passage, so a result is bounded however long its file.
inline constexpr std::size_t kMaxRagPassageBytes = 2 * kKiB;
// A document's title as results show it (its first heading or line, cut at a character boundary).
inline constexpr std::size_t kMaxRagTitleBytes = 200;
// One search query: a question is a sentence, not a document.
inline constexpr std::size_t kMaxRagQueryBytes = 1 * kKiB;
// Distinct words one query searches for; each is a term of the BM25 sum.
inline constexpr std::size_t kMaxRagQueryTerms = 64;
// Results one search returns (search_kb's top_k at most).
inline constexpr int kMaxRagTopK = 20;
// Indexes one rag service holds at once (a stack serves one trial; the rest is headroom).
inline constexpr std::size_t kMaxRagIndexes = 4;

// ---- Regular expressions (grading.yaml disallow_regex) ----

// One pattern's text. Tolokaforge's patterns are a line long.
inline constexpr std::size_t kMaxRegexPatternBytes = 4 * kKiB;
// Memory RE2 may use for one compiled pattern (its DFA cache included): a pattern that needs
// more is refused at load time instead of degrading at grading time.
inline constexpr std::int64_t kMaxRegexProgramBytes = 8 * static_cast<std::int64_t>(kMiB);

// ---- Egress rules (grading.yaml's `egress` block; docs/grading.md "egress") ----

// Entries of one egress list (forbid_hosts, forbid_paths): a task names a few upstreams, not a
// blocklist of the internet; each is checked against every ledger entry.
inline constexpr std::size_t kMaxEgressPatterns = 64;
// One forbid_paths glob (a host pattern is a DNS name: at most 253 characters plus `*.`).
inline constexpr std::size_t kMaxEgressPathPatternBytes = 512;

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

// ---- Trial records (trials.jsonl, as read back by report, show, merge and --resume) ----

// A score or reward is a number in [0, 1]; these bound a record's other numbers. Per trial: at
// most this many dollars, seconds (the run's duration and each phase's), and tokens, turns or
// tool calls. Summed over kMaxPlannedTrials records every total stays finite and exact enough
// (10^18 < 2^63), so no aggregate can overflow, whatever a line says.
inline constexpr double kMaxRecordAmount = 1e12;

// ---- Screenshots (the browser tool's `screenshot`; docs/tools.md) ----

// Per trial: the browser refuses more, and a trial's directory keeps at most this many
// (screenshots/001.png, …); any past it are dropped and counted in the record.
inline constexpr int kMaxScreenshots = 20;
// One screenshot's PNG: a viewport is well under a MiB; a larger one is refused, not kept.
inline constexpr std::size_t kMaxScreenshotBytes = 3 * kMiB;

}  // namespace forge::limits
