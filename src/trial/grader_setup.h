// The grader container's parts: who is who (the agent A, the verifier T), the files each owns, and
// where forgectl's helper comes from. Kept apart from run_grader so each piece is tested alone.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/confined_dir.h"
#include "engine/client.h"

namespace forge::trial {

// The agent's uid and gid (its workspace copy, its programs) and the verifier's (the tests, the
// reward). Neither is 0; A's processes cannot read, write or signal what belongs to T.
inline constexpr unsigned kAgentUid = 1000, kAgentGid = 1000;
inline constexpr unsigned kVerifierUid = 2000, kVerifierGid = 2000;
inline constexpr const char* kAgentUser = "1000:1000";
inline constexpr const char* kVerifierUser = "2000:2000";

inline constexpr const char* kTestsDir = "/tests";              // T only, 0700
inline constexpr const char* kVerifierLogs = "/logs/verifier";  // T only, 0700: the reward's channel
inline constexpr const char* kAsAgentSocket = "/tmp/forgectl-as-agent/sock";
// The verifier's HOME in the grader: T only, 0700, made before the container starts, at the top
// level (root's /, which the agent's programs cannot write) and off-limits to artifacts.
inline constexpr const char* kVerifierHome = "/forgectl-verifier-home";

// The tar (to unpack at "/") of the task's `dir` as /tests: every entry owned by T, directories
// 0700, files 0700 when executable and 0600 otherwise — set in the headers, as the container
// has no CAP_CHOWN. Read through `task` (no link leads out), within the tests/ limits.
// `uid`/`gid`: a verifier other than T (a Harbor task's numeric [verifier] user); `top` where
// the tree goes ("tests" for /tests).
Result<std::string> tests_tar(const ConfinedDir& task, const std::string& dir, unsigned uid = kVerifierUid,
                              unsigned gid = kVerifierGid, const std::string& top = "tests");

// The tar (to unpack at "/") of /logs (root, 0755) and /logs/verifier (T, or `uid`, 0700).
Result<std::string> verifier_logs_tar(unsigned uid = kVerifierUid, unsigned gid = kVerifierGid);

// The tar (to unpack at "/") of kVerifierHome (T, or `uid`, 0700), empty.
Result<std::string> verifier_home_tar(unsigned uid = kVerifierUid, unsigned gid = kVerifierGid);

// The workspace copy's entry cap: as many as grading's own scan examines (WorkspaceLimits).
inline constexpr std::size_t kMaxWorkspaceEntries = 200000;

// Copies `workspace` of `runner` to the same path in `grader`, streamed in bounded memory and
// rewritten on the way: every entry owned by A, setuid/setgid bits, extended attributes and
// device nodes dropped.
// Files declaring more than `limit` bytes in all (0: none), or more than kMaxWorkspaceEntries
// entries, stop the copy: kExceeded, the agent's doing. `tail` (a tar of ours) is appended to the
// same archive as it is, so it is unpacked last, beside the workspace.
Status copy_workspace(engine::Client& c, const std::string& runner, const std::string& workspace,
                      const std::string& grader, std::uint64_t limit,
                      std::string_view tail = {});

// A workspace given as a tar (the local executor's sandbox: entries "<base>/…"), put into the
// grader owned by the agent's uid, setuid/setgid bits stripped.
Status put_workspace_tar(engine::Client& c, const std::string& workspace, const std::string& grader,
                         const std::string& tar);

// The helper's path in the grader: forgectl's own, from the read-only helper volume the stack
// layer fills and verifies (stack/helper_volume.h), mounted at /.forgectl.
inline constexpr const char* kGraderHelper = "/.forgectl/exec";

// The reward file's text as a value: nullopt when it holds nothing but white space; its last
// line must be a number, else kProtocol (the tests wrote something that is no reward). A number
// out of any range ("1e999" is infinite) comes back as it is: the caller checks [0, 1].
Result<std::optional<double>> parse_reward(std::string_view text);

}  // namespace forge::trial
