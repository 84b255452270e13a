// A last word for a crash: while a CrashNote lives, a fatal signal on its thread prints what is
// safe and what to do, and ends the process with exit code 1 instead of dying by the signal.
#pragma once

#include <csignal>
#include <memory>
#include <string>

namespace forge {

// For work done after the results are safely recorded (a run's reports): a crash there must not
// look like the loss of the whole run. SIGSEGV (a stack overflow included: the handler runs on
// a stack of its own), SIGBUS, SIGILL, SIGFPE and SIGABRT write "forgectl: error: <message>
// (<signal>)" to stderr and _exit(1). One at a time per process; the previous dispositions come
// back when it ends. Meant for the thread that creates it: only that thread gets the spare stack.
class CrashNote {
 public:
  explicit CrashNote(std::string message);
  ~CrashNote();
  CrashNote(const CrashNote&) = delete;
  CrashNote& operator=(const CrashNote&) = delete;

 private:
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  std::string text_;  // the whole line, written as it is by the handler
  std::unique_ptr<char[]> stack_;
  stack_t old_stack_{};
  struct sigaction old_[std::size(kSignals)]{};
};

}  // namespace forge
