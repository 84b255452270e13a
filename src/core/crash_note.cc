// The fatal-signal handler behind CrashNote.
#include "core/crash_note.h"

#include <unistd.h>

#include <atomic>
#include <cstring>

namespace forge {

namespace {

// A signal handler gets no argument of ours: the one live note is reachable here alone (set and
// cleared by CrashNote, read only by the handler).
std::atomic<const std::string*> g_note{nullptr};

constexpr std::size_t kStackBytes = 64 * 1024;

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    case SIGABRT:
      return "SIGABRT";
  }
  return "a fatal signal";
}

void write_all(const char* s, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Async-signal-safe: write(2) and _exit(2) only.
void on_fatal(int sig) {
  if (const std::string* note = g_note.load()) {
    write_all(note->data(), note->size());
    write_all(" (", 2);
    const char* name = signal_name(sig);
    write_all(name, std::strlen(name));
    write_all(")\n", 2);
  }
  ::_exit(1);
}

}  // namespace

CrashNote::CrashNote(std::string message) : text_("forgectl: error: " + std::move(message)) {
  stack_ = std::make_unique<char[]>(kStackBytes);
  stack_t ss{};
  ss.ss_sp = stack_.get();
  ss.ss_size = kStackBytes;
  ::sigaltstack(&ss, &old_stack_);
  g_note.store(&text_);
  struct sigaction sa {};
  sa.sa_handler = on_fatal;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
}

CrashNote::~CrashNote() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  g_note.store(nullptr);
  ::sigaltstack(&old_stack_, nullptr);
}

}  // namespace forge
