// A trial's grader made ahead of its grade phase, like the warm pool's sandboxes (docs/grading.md,
// "Made ahead"): one piece for the three kinds — a task's test scripts, checks.py and a Harbor
// verifier. It is still a fresh container for this one trial, made while its agent runs (or waits
// for its turn) with nothing of any agent's in it; the grade phase takes it and pays only for
// copying the trial's evidence in and running. One never taken is removed with its network.
#pragma once

#include <functional>
#include <future>
#include <optional>
#include <string>
#include <utility>

#include "core/clock.h"
#include "core/result.h"
#include "engine/client.h"
#include "trial/verifier_network.h"

namespace forge::trial {

struct AheadGrader {
  std::string id;                          // the grader container, started, empty of anyone's files
  std::optional<VerifierNetwork> network;  // a Harbor verifier's own network, brought up for it
};

// Removes the grader and its network; a problem is returned as text (teardown goes on regardless).
std::string remove_ahead_grader(engine::Client& c, const AheadGrader& g);

class GraderAhead {
 public:
  using Make = std::function<Result<AheadGrader>()>;

  // `make` on a thread of its own; at most once.
  void start(Make make);
  bool started() const { return future_.valid(); }

  struct Taken {
    Result<AheadGrader> grader;  // or why none was made
    Millis took{0};              // how long the making took
  };
  // Waits for the making to end and hands the grader over (the taker removes it); nullopt when
  // none was started or it was taken already.
  std::optional<Taken> take();

  // A grader never taken (the trial ended before grading): waited for and removed.
  void discard(engine::Client& c);

 private:
  std::future<std::pair<Result<AheadGrader>, Millis>> future_;
};

}  // namespace forge::trial
