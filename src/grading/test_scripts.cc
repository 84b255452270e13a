// custom_checks: scoring a test run by its reward file or exit code.
#include "grading/test_scripts.h"

#include <cmath>

namespace forge::grading {

namespace {

// The end of the output says why a test failed; the start is usually set-up noise.
constexpr std::size_t kOutputTail = 400;

std::string tail(const std::string& output) {
  if (output.size() <= kOutputTail) return output;
  std::size_t from = output.size() - kOutputTail;
  // Step forward off UTF-8 continuation bytes so the tail starts on a whole character.
  while (from < output.size() && (static_cast<unsigned char>(output[from]) & 0xC0) == 0x80) ++from;
  return "…" + output.substr(from);
}

}  // namespace

ComponentResult run_test_scripts(const manifest::TestScripts& config, Evidence& evidence) {
  ComponentResult out;
  auto failed = [&](const std::string& why) {
    out.score = 0;
    out.reasons.push_back("custom_checks: FAIL: " + why);
    return out;
  };
  if (!evidence.run_tests) return failed("no grader container is available to run " + quote(config.command));
  auto run = evidence.run_tests();
  if (!run) return failed("the tests could not run: " + run.error().what());
  if (run->timed_out)
    return failed("timed out after " + format_score(config.timeout_s) + " s; output: " + quote(tail(run->output), 500));

  if (run->reward) {
    const double raw = *run->reward;
    if (!std::isfinite(raw)) return failed("the reward file holds " + format_score(raw) + ", not a finite number");
    out.score = clamp01(raw);
    std::string line = "custom_checks: reward " + format_score(out.score);
    if (raw != out.score) line += " (clamped from " + format_score(raw) + ")";
    out.reasons.push_back(line + " from " + quote(config.reward_file) + ", exit code " + std::to_string(run->exit_code));
    return out;
  }
  std::string note;
  if (!config.reward_file.empty()) note = " (no value in reward file " + quote(config.reward_file) + ")";
  if (run->exit_code == 0) {
    out.score = 1;
    out.reasons.push_back("custom_checks: PASS: exit code 0" + note);
    return out;
  }
  return failed("exit code " + std::to_string(run->exit_code) + note + "; output: " + quote(tail(run->output), 500));
}

}  // namespace forge::grading
