// forgectl: evaluates untrusted LLM agents inside Docker. main() builds the context and dispatches.
#include <cstdlib>
#include <exception>
#include <iostream>

#include "cli/verbs.h"

int main(int argc, char** argv) {
  using namespace forge;
  const char* level = std::getenv("FORGECTL_LOG");
  cli::Context ctx(std::cout, std::cerr, Logger::parse_level(level ? level : "", LogLevel::kInfo));

  CLI::App app{"forgectl: run untrusted LLM agents in hardened Docker sandboxes and grade them", "forgectl"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "forgectl 0.1.0");
  app.add_option("-H,--host", ctx.host_flag, "Docker daemon (unix:///path or tcp://host:port); default $DOCKER_HOST");

  int rc = cli::kExitOk;
  cli::add_doctor(app, ctx, &rc);
  cli::add_images(app, ctx, &rc);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitUsage;
  } catch (const std::exception& e) {  // the one last-resort catch
    std::cerr << "forgectl: internal error: " << e.what() << '\n';
    return cli::kExitFailure;
  }
  return rc;
}
