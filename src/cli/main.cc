// forgectl: evaluates untrusted LLM agents inside Docker. main() builds the context and dispatches.
#include <malloc.h>
#include <signal.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <thread>

#include "cli/app.h"

namespace {

// SIGINT/SIGTERM are taken by one thread with sigwait (blocked everywhere else), so every other
// thread sees them only as the context's counter and cleans up in its own time.
void watch_signals(forge::cli::Context& ctx) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([&ctx, set] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      int n = ++ctx.interrupted;
      // Verbs that create nothing have nothing to clean up: stop at once.
      if (!ctx.handles_interrupts) std::_Exit(forge::cli::kExitInterrupted);
      if (n == 1) ctx.log.warn("interrupted: stopping and removing what was created (again to hurry)");
      else ctx.log.warn("hurrying: forcing removal without waiting");
    }
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace forge;
  // A sweep runs a thread per trial in flight; glibc gives each thread that allocates its own arena
  // (up to 8 per core), each keeping freed memory. Two arenas keep RSS flat in the concurrency,
  // and the threads spend their time waiting on sockets, not contending for malloc.
  mallopt(M_ARENA_MAX, 2);
  cli::Context ctx(std::cout, std::cerr, HostSettings::from(process_env()));
  watch_signals(ctx);
  ctx.command_line.assign(argv, argv + argc);

  cli::App app(ctx);
  try {
    return app.run(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {  // the one last-resort catch
    std::cerr << "forgectl: internal error: " << e.what() << '\n';
    return cli::kExitFailure;
  }
}
