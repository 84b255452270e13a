// custom_checks: scoring a test run by its reward file or exit code.
#include "grading/test_scripts.h"

#include <cmath>

namespace forge::grading {

namespace {

// The end of the output says why a test failed; the start is usually set-up noise.
constexpr std::size_t kOutputTail = 400;
// Linux numbers its signals 1..64 (SIGRTMAX).
constexpr int kMaxSignal = 64;

std::string tail(const std::string& output) {
  if (output.size() <= kOutputTail) return output;
  std::size_t from = output.size() - kOutputTail;
  // Step forward off UTF-8 continuation bytes so the tail starts on a whole character.
  while (from < output.size() && (static_cast<unsigned char>(output[from]) & 0xC0) == 0x80) ++from;
  return "…" + output.substr(from);
}

// Why the run did not end on its own, or "" when it did.
std::string not_on_its_own(const manifest::TestScripts& config, const TestRun& run) {
  if (run.timed_out) return "timed out after " + format_score(config.timeout_s) + " s";
  if (run.exit_code < 0) return "killed: the test process ended without an exit code";
  if (auto sig = signal_from_exit_code(run.exit_code))
    return "killed by signal " + std::to_string(*sig) + " (exit code " + std::to_string(run.exit_code) + ")";
  return "";
}

}  // namespace

std::optional<int> signal_from_exit_code(int exit_code) {
  if (exit_code > 128 && exit_code <= 128 + kMaxSignal) return exit_code - 128;
  return std::nullopt;
}

Result<ComponentResult> run_test_scripts(const manifest::TestScripts& config, Evidence& evidence) {
  if (!evidence.run_tests)
    return fail(Errc::kUnsupported, "no grader container is available to run " + quote(config.command));
  auto run = evidence.run_tests();
  if (!run) return run.fail_with("the tests could not run");

  ComponentResult out;
  auto failed = [&](const std::string& why) {
    out.score = 0;
    out.reasons.push_back("custom_checks: FAIL: " + why + "; output: " + quote(tail(run->output), 500));
    return out;
  };
  // A reward the script wrote before it was killed is not its verdict: the verdict is the exit.
  if (std::string why = not_on_its_own(config, *run); !why.empty()) {
    if (run->reward)
      why += "; the reward " + format_score(*run->reward) + " from " + quote(config.reward_file) + " does not count";
    return failed(why);
  }

  if (!run->reward_spoiled.empty())
    return failed("the reward file " + quote(config.reward_file) + " gave no value: " + run->reward_spoiled);
  if (run->reward) {
    // Only the tests write the reward file (the agent's programs cannot): outside [0, 1] it is
    // the task's error, neither clamped to a pass nor scored.
    if (auto st = check_score(*run->reward, "the reward in " + quote(config.reward_file)); !st) return st.fail();
    out.score = *run->reward;
    out.reasons.push_back("custom_checks: reward " + format_score(out.score) + " from " + quote(config.reward_file) +
                          ", exit code " + std::to_string(run->exit_code));
    return out;
  }
  std::string note;
  if (!config.reward_file.empty()) note = " (no value in reward file " + quote(config.reward_file) + ")";
  if (run->exit_code == 0) {
    out.score = 1;
    out.reasons.push_back("custom_checks: PASS: exit code 0" + note);
    return out;
  }
  return failed("exit code " + std::to_string(run->exit_code) + note);
}

}  // namespace forge::grading
