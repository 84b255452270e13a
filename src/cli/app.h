// The forgectl command line as one app (every verb registered), and the conventions around
// parsing it: usage, unknown verbs with a suggestion, errors with the "forgectl: error:" prefix.
// CLI11 stays inside app.cc (cli/command.h says why).
#pragma once

#include <iosfwd>
#include <memory>

#include "cli/context.h"

namespace CLI {
class App;
}  // namespace CLI

namespace forge::cli {

// meson's project version, compiled into app.cc.
const char* forgectl_version();

class App {
 public:
  // Registers every verb (the description, -H, --version, the verbs' subcommands); each verb's
  // callback acts on `ctx`.
  explicit App(Context& ctx);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Parses and runs; returns the exit code (docs/errors.md): bare `forgectl` prints the usage to
  // `err` and exits 2; `forgectl help [VERB]` and --help print it to `out` and exit 0; an unknown
  // verb is "unknown command 'rnu'; did you mean 'run'?"; every parse error is
  // "forgectl: error: …" on `err`, exit 2.
  int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

 private:
  std::unique_ptr<CLI::App> app_;
  int rc_ = kExitOk;
};

}  // namespace forge::cli
