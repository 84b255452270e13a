// The command line's conventions: completion scripts generated from the app, unknown verbs with a
// suggestion, parse errors prefixed, usage and help exits, and where the daemon is (-H over
// DOCKER_HOST over the docker context) with a fake HOME.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "cli/app.h"
#include "core/sha256.h"
#include "engine/docker_host.h"

using namespace forge;
namespace fs = std::filesystem;

namespace {

struct Cli {
  std::ostringstream out, err;
  cli::Context ctx;
  cli::App app{ctx};
  explicit Cli(HostSettings h = HostSettings::defaults()) : ctx(out, err, std::move(h)) {}
  int run(std::vector<const char*> args) {
    args.insert(args.begin(), "forgectl");
    return app.run(static_cast<int>(args.size()), args.data(), out, err);
  }
};

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

struct FakeHome {
  fs::path dir;
  FakeHome() {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("forgectl-home-" + std::to_string(rd()));
    fs::create_directories(dir / ".docker");
  }
  ~FakeHome() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void context(const std::string& name, const std::string& host) const {
    fs::path meta = dir / ".docker" / "contexts" / "meta" / sha256_hex(name);
    fs::create_directories(meta);
    std::ofstream(meta / "meta.json") << R"({"Name":")" << name << R"(","Metadata":{},"Endpoints":{"docker":{"Host":")"
                                      << host << R"(","SkipTLSVerify":false}}})";
  }
  void current(const std::string& name) const {
    std::ofstream(dir / ".docker" / "config.json") << R"({"auths":{},"currentContext":")" << name << R"("})";
  }
};

}  // namespace

TEST_CASE("completion bash: every verb and its options, from the app itself") {
  Cli c;
  CHECK(c.run({"completion", "bash"}) == 0);
  std::string s = c.out.str();
  CHECK(s.find("complete -o default -o bashdefault -F _forgectl forgectl") != std::string::npos);
  for (const char* verb : {"run", "report", "show", "merge", "version", "completion", "doctor", "images", "validate"})
    CHECK_MESSAGE(s.find("    '" + std::string(verb) + "') words=") != std::string::npos, verb);
  CHECK(s.find("'run') words='-h --help --config --agent --trials --concurrency --out") != std::string::npos);
  CHECK(s.find("'images') words='build ls -h --help'") != std::string::npos);
  CHECK(s.find("'show') words='-h --help --agent --compare --json'") != std::string::npos);
  CHECK(s.find("-H|--host) ((i++));;") != std::string::npos);  // -H's value is not a verb

  Cli z;
  CHECK(z.run({"completion", "zsh"}) == 0);
  CHECK(z.out.str().rfind("#compdef forgectl", 0) == 0);
  Cli f;
  CHECK(f.run({"completion", "fish"}) == 0);
  CHECK(f.out.str().find("complete -c forgectl -n '__fish_seen_subcommand_from run' -l trials -r") !=
        std::string::npos);
  Cli bad;
  CHECK(bad.run({"completion", "tcsh"}) == 2);
  CHECK(bad.err.str().rfind("forgectl: error: ", 0) == 0);
}

TEST_CASE("an unknown verb says so, with a did-you-mean") {
  Cli c;
  CHECK(c.run({"rnu", "tasks/"}) == 2);
  CHECK(c.err.str() ==
        "forgectl: error: unknown command 'rnu'; did you mean 'run'? (forgectl help lists the commands)\n");
  Cli p;
  CHECK(p.run({"-H", "unix:///x.sock", "rep", "DIR"}) == 2);
  CHECK(p.err.str().find("did you mean 'report'?") != std::string::npos);
  Cli none;
  CHECK(none.run({"zzzzzz"}) == 2);
  CHECK(none.err.str().find("did you mean") == std::string::npos);
}

TEST_CASE("usage: bare forgectl exits 2 with the usage on stderr; help and --help exit 0 on stdout") {
  Cli bare;
  CHECK(bare.run({}) == 2);
  CHECK(bare.err.str().find("Usage: forgectl") != std::string::npos);
  CHECK(bare.out.str().empty());
  Cli help;
  CHECK(help.run({"help"}) == 0);
  CHECK(help.out.str().find("Subcommands:") != std::string::npos);
  Cli verb;
  CHECK(verb.run({"help", "run"}) == 0);
  CHECK(verb.out.str().find("Usage: forgectl run") != std::string::npos);
  CHECK(verb.out.str().find("--concurrency") != std::string::npos);
  Cli flag;
  CHECK(flag.run({"show", "--help"}) == 0);
  CHECK(flag.out.str().find("Usage: forgectl show") != std::string::npos);
  Cli v;
  CHECK(v.run({"--version"}) == 0);
  CHECK(v.out.str() == std::string("forgectl ") + cli::forgectl_version() + "\n");
}

TEST_CASE("parse errors carry the forgectl: error: prefix and exit 2") {
  Cli c;
  CHECK(c.run({"run", "--trials"}) == 2);
  CHECK(c.err.str().rfind("forgectl: error: --trials", 0) == 0);
  CHECK(c.err.str().find("forgectl help run") != std::string::npos);
  Cli d;
  CHECK(d.run({"report", "--compare", "a"}) == 2);
  CHECK(d.err.str().rfind("forgectl: error: ", 0) == 0);
  Cli e;
  CHECK(e.run({"show"}) == 2);
  CHECK(e.err.str().rfind("forgectl: error: ", 0) == 0);
}

TEST_CASE("DOCKER_CONTEXT and config.json's currentContext; DOCKER_HOST wins over them, -H over both") {
  FakeHome home;
  home.context("remote", "tcp://10.9.8.7:2375");
  home.context("other", "unix:///run/other.sock");
  std::string h = home.dir.string();

  auto from = [](std::map<std::string, std::string> vars) {
    return engine::docker_host_from_env(env_of(std::move(vars)));
  };
  auto ctx_host = from({{"HOME", h}, {"DOCKER_CONTEXT", "remote"}});
  REQUIRE_MESSAGE(ctx_host.has_value(), (ctx_host ? "" : ctx_host.error().what()));
  CHECK(ctx_host->describe() == "tcp://10.9.8.7:2375");

  home.current("other");  // `docker context use other`
  auto used = from({{"HOME", h}});
  REQUIRE(used.has_value());
  CHECK(used->describe() == "unix:///run/other.sock");
  CHECK(from({{"HOME", h}, {"DOCKER_CONTEXT", "remote"}})->describe() == "tcp://10.9.8.7:2375");  // the variable first
  CHECK(from({{"HOME", h}, {"DOCKER_CONTEXT", "default"}})->describe() == "unix:///var/run/docker.sock");
  CHECK(from({{"HOME", h}, {"DOCKER_CONTEXT", "remote"}, {"DOCKER_HOST", "unix:///env.sock"}})->describe() ==
        "unix:///env.sock");

  auto unknown = from({{"HOME", h}, {"DOCKER_CONTEXT", "nope"}});
  REQUIRE(!unknown.has_value());
  CHECK(unknown.error().what().find("docker context 'nope' does not exist") != std::string::npos);
  CHECK(from({})->describe() == "unix:///var/run/docker.sock");  // no HOME, no context: the default

  HostSettings s =
      HostSettings::from(env_of({{"HOME", h}, {"DOCKER_CONTEXT", "remote"}, {"DOCKER_HOST", "unix:///env.sock"}}));
  CHECK(s.docker_context == "remote");
  CHECK(s.home == h);
  Cli c(s);
  CHECK(c.ctx.docker_host()->describe() == "unix:///env.sock");
  c.ctx.host_flag = "unix:///flag.sock";
  CHECK(c.ctx.docker_host()->describe() == "unix:///flag.sock");
}

TEST_CASE("a socket this user cannot open is named, with what to do") {
  if (::geteuid() == 0) {
    // root opens any socket: check the message on a path that cannot be opened by anyone else.
    engine::DockerHost h;
    h.socket_path = "/nonexistent/docker.sock";
    CHECK(engine::check_socket_access(h).has_value());  // missing is not "permission denied"
    return;
  }
  engine::DockerHost h;
  h.socket_path = "/etc/shadow";
  auto st = engine::check_socket_access(h);
  REQUIRE(!st.has_value());
  CHECK(st.error().what() == "permission denied on /etc/shadow: run as root or add the user to the docker group");
}
