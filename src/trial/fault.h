// What ends a trial before it is graded, and the one rule that turns an error into it.
#pragma once

#include <string>

#include "core/result.h"
#include "results/outcome.h"

namespace forge::trial {

struct Fault {
  results::Outcome outcome = results::Outcome::kInfraError;
  results::InfraKind kind = results::InfraKind::kNone;
  std::string message;
  bool interrupted = false;  // SIGINT/SIGTERM: no outcome at all; the trial is left for --resume

  static Fault infra(results::InfraKind k, std::string msg) { return {results::Outcome::kInfraError, k, std::move(msg)}; }
  static Fault setup(std::string msg) { return {results::Outcome::kSetupError, results::InfraKind::kNone, std::move(msg)}; }
  // The model's own failure found outside grading (it destroyed its sandbox): graded, score 0.
  static Fault model(std::string msg) { return {results::Outcome::kGraded, results::InfraKind::kNone, std::move(msg)}; }
  static Fault interruption() { return {results::Outcome::kInfraError, results::InfraKind::kNone, "interrupted", true}; }
};

// kCancelled → interrupted; kExceeded (the agent left more than a limit allows) → the model's failure; kBroken (the
// sandbox's own helper cannot run) → infra (sandbox), whatever `kind` says; a transient or
// daemon-side failure (unavailable, timeout, 5xx, I/O, conflict, a response we cannot read) → infra of `kind`; anything
// deterministic (invalid input, not found, unsupported, forbidden, refused by the daemon) → setup error: the same input
// would fail the same way on every retry. docs/errors.md states these rules.
Fault classify(const Error& e, results::InfraKind kind);
// The same, for errors met once the sandbox exists: an object the daemon no longer has (404) was
// removed under the trial, which is not the task's doing.
Fault classify_running(const Error& e, results::InfraKind kind);

}  // namespace forge::trial
