// The compose subset: a full file's values, refused keys with file:line, all errors at once,
// cycles, references, env precedence, healthchecks, networks.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "manifest/compose_parse.h"
#include "support/manifest_helpers.h"
#include "support/paths.h"

using namespace forge;
using namespace forge::manifest;
using forge::test::has;
using forge::test::only;
using forge::test::TempFiles;

namespace {

std::string data(const std::string& rel) { return forge::test::test_data_dir() + "/manifest/" + rel; }

Diagnostics parse_errors(std::string_view text, const std::string& path = "compose.yaml") {
  Diagnostics diags;
  (void)parse_compose(text, path, diags);
  return diags;
}

}  // namespace

TEST_CASE("manifest: a full compose file parses into the expected values") {
  auto file = load_compose(data("compose_full/compose.yaml"));
  REQUIRE_MESSAGE(file, (file ? "" : file.error().message));
  REQUIRE(file->services.size() == 3);
  CHECK(file->path == data("compose_full/compose.yaml"));

  const ComposeService& db = file->services[0];
  CHECK(db.name == "db");
  CHECK(db.where.line == 9);
  CHECK(db.image == "postgres:16");
  CHECK(db.read_only);  // from the `<<: *common` merge
  CHECK(db.tmpfs == std::map<std::string, std::string>{{"/tmp", ""}});
  CHECK(db.environment == std::vector<std::string>{"POSTGRES_PASSWORD=example", "PORT=5432", "DEBUG=true"});
  REQUIRE(db.healthcheck);
  CHECK(db.healthcheck->test == std::vector<std::string>{"CMD-SHELL", "pg_isready -U postgres"});
  CHECK(db.healthcheck->interval == Millis(90'000));
  CHECK(db.healthcheck->timeout == Millis(500));
  CHECK(db.healthcheck->start_period == Millis(2'000));
  CHECK(db.healthcheck->retries == 5);
  CHECK(db.networks == std::map<std::string, std::vector<std::string>>{{"backend", {"database", "pg"}}});
  CHECK(db.mem_limit == 512LL * 1024 * 1024);
  CHECK(db.cpus == doctest::Approx(1.5));
  CHECK(db.pids_limit == 128);
  CHECK(db.cap_drop == std::vector<std::string>{"ALL"});
  CHECK(db.cap_add == std::vector<std::string>{"CHOWN", "SETUID"});
  CHECK(db.labels == std::map<std::string, std::string>{{"com.example.role", "db"}});
  CHECK(db.expose == std::vector<std::string>{"5432", "5433/tcp"});
  CHECK(db.depends_on.empty());

  const ComposeService& web = file->services[1];
  CHECK(web.image.empty());
  REQUIRE(web.build);
  CHECK(web.build->context == data("compose_full/web"));
  CHECK(web.build->dockerfile == "Dockerfile.dev");
  CHECK(web.build->args == std::map<std::string, std::string>{{"VERSION", "1.2"}});
  CHECK(web.command == std::vector<std::string>{"python", "-m", "http.server", "8080", "--bind", "0.0.0.0", "a b"});
  CHECK(web.entrypoint == std::vector<std::string>{"/bin/sh", "-c"});
  // env_file entries in order (web.env overriding base.env), then `environment` overriding both.
  CHECK(web.environment == std::vector<std::string>{"SHARED=web", "FROM_ENV=environment", "QUOTED=hello world",
                                                    "EXPORTED=yes", "EMPTY=", "PRICE=$5"});
  CHECK(web.working_dir == "/srv");
  CHECK(web.user == "1000:1000");
  CHECK(web.depends_on == std::map<std::string, DependCondition>{{"db", DependCondition::kHealthy}});
  CHECK(web.networks == std::map<std::string, std::vector<std::string>>{{"backend", {}}, {"default", {}}});
  CHECK(web.labels == std::map<std::string, std::string>{{"tier", "front"}, {"flag", ""}});
  CHECK(web.tmpfs == std::map<std::string, std::string>{{"/run", "size=64m"}});
  CHECK(web.mem_limit == 1024LL * 1024 * 1024);
  CHECK_FALSE(web.read_only);
  REQUIRE(web.healthcheck);
  CHECK(web.healthcheck->test == std::vector<std::string>{"CMD", "true"});

  const ComposeService& worker = file->services[2];
  CHECK(worker.command == std::vector<std::string>{});
  CHECK(worker.depends_on ==
        std::map<std::string, DependCondition>{{"db", DependCondition::kStarted}, {"web", DependCondition::kStarted}});
  REQUIRE(worker.healthcheck);
  CHECK(worker.healthcheck->disable);
  CHECK(worker.networks.empty());

  REQUIRE(file->networks.size() == 2);
  CHECK(file->networks.at("backend").internal);
  CHECK(file->networks.at("backend").where.line == 66);
  CHECK_FALSE(file->networks.at("frontend").internal);
  CHECK(file->find("web") == &file->services[1]);
  CHECK(file->find("nope") == nullptr);
}

TEST_CASE("manifest: every refused service key is reported with file:line, service and hint") {
  struct Refused {
    const char* key;
    const char* hint;  // part of the hint
  };
  const Refused refused[] = {
      {"ports", "remove ports"},
      {"privileged", "never runs privileged"},
      {"network_mode", "use networks"},
      {"volumes", "use tmpfs"},
      {"devices", "devices never enter"},
      {"pid", "own namespaces"},
      {"ipc", "own namespaces"},
      {"security_opt", "no-new-privileges"},
      {"userns_mode", "own namespaces"},
      {"restart", "manages lifecycles"},
      {"container_name", "names are forgectl's"},
      {"hostname", "names are forgectl's"},
      {"extra_hosts", "name resolution"},
      {"dns", "name resolution"},
      {"sysctls", "kernel parameters"},
      {"ulimits", "pids_limit"},
      {"links", "depends_on"},
      {"external_links", "outside its stack"},
      {"deploy", "mem_limit, cpus"},
      {"profiles", "every service"},
      {"cap_add 'SYS_ADMIN'", "close to root"},
      {"cap_add 'ALL'", "every capability"},
      {"cap_add 'NET_RAW'", "spoofed"},
      {"cap_add 'NET_ADMIN'", "firewall"},
      {"cap_add 'SYS_PTRACE'", "other processes"},
  };
  const std::string path = data("forbidden.yaml");
  Diagnostics diags;
  (void)load_compose(path, diags);
  INFO(diags.to_error().message);
  REQUIRE(diags.size() == std::size(refused));
  for (std::size_t i = 0; i < std::size(refused); ++i) {
    const Diagnostic& d = diags.items()[i];
    CAPTURE(refused[i].key);
    CHECK(d.file == path);
    CHECK(d.line == static_cast<int>(5 + 3 * i));  // the fixture's layout: one service per 3 lines
    CHECK(has(d.message, "service 's" + std::to_string(i) + "'"));
    CHECK(has(d.message, refused[i].key));
    CHECK(has(d.hint, refused[i].hint));
  }
  // The formatted form users see.
  CHECK(diags.items()[0].format() == path +
                                         ":5:5: service 's0': unsupported key 'ports' "
                                         "(hint: services are reached by name on the task network; remove ports)");
}

TEST_CASE("manifest: harmless capabilities may be added, unknown ones are named") {
  CHECK(parse_errors("services:\n  a:\n    image: x\n    cap_add: [NET_BIND_SERVICE, KILL, CAP_SETGID]\n").empty());
  auto diags = parse_errors("services:\n  a:\n    image: x\n    cap_add: [FLY]\n    cap_drop: [ALL, NOPE]\n");
  CHECK(only(diags, "'FLY' in 'cap_add' is not a Linux capability").line == 4);
  CHECK(only(diags, "'NOPE' in 'cap_drop'").line == 5);
}

TEST_CASE("manifest: x-forgectl marks an upstream and is read strictly; other x- keys are ignored") {
  Diagnostics diags;
  auto c = parse_compose("services:\n  a:\n    image: x\n    x-forgectl: {upstream: true}\n    x-notes: anything\n"
                         "  b:\n    image: x\n",
                         "compose.yaml", diags);
  CHECK(diags.empty());
  REQUIRE(c.services.size() == 2);
  CHECK(c.services[0].upstream);
  CHECK_FALSE(c.services[1].upstream);
  auto bad = parse_errors("services:\n  a:\n    image: x\n    x-forgectl: {upstreem: true}\n  b:\n    image: x\n"
                          "    x-forgectl: {upstream: yes}\n");
  CHECK(only(bad, "unsupported key 'upstreem'").hint == "did you mean 'upstream'?");
  CHECK(only(bad, "yes").line == 7);
}

TEST_CASE("manifest: refused and unknown top-level compose keys") {
  auto diags = parse_errors(
      "services:\n  a:\n    image: x\nvolumes:\n  data: {}\nsecrets: {}\nconfigs: {}\nnetwork:\n  n: {}\nx-anything: "
      "1\n");
  CHECK(diags.size() == 4);
  CHECK(has(only(diags, "'volumes'").hint, "use tmpfs"));
  CHECK(has(only(diags, "'secrets'").hint, "secrets never enter"));
  CHECK(only(diags, "'configs'").line == 7);
  Diagnostic typo = only(diags, "unsupported key 'network'");
  CHECK(typo.line == 8);
  CHECK(typo.hint == "did you mean 'networks'?");
}

TEST_CASE("manifest: all errors of a compose file are reported, not only the first") {
  const std::string path = data("three_errors.yaml");
  Diagnostics diags;
  (void)load_compose(path, diags);
  REQUIRE(diags.size() == 3);
  CHECK(diags.items()[0].line == 4);
  CHECK(has(diags.items()[0].message, "'ports'"));
  CHECK(diags.items()[1].line == 5);
  CHECK(has(diags.items()[1].message, "'mem_limit': 'lots' is not a size"));
  CHECK(diags.items()[2].line == 6);
  CHECK(diags.items()[2].message == "service 'api': unsupported key 'depend_on'");
  CHECK(diags.items()[2].hint == "did you mean 'depends_on'?");

  auto result = load_compose(path);
  REQUIRE_FALSE(result);
  CHECK(result.error().code == Errc::kInvalid);
  const std::string& text = result.error().message;
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);  // one line per diagnostic
  CHECK(has(text, path + ":6:5: service 'api': unsupported key 'depend_on' (hint: did you mean 'depends_on'?)"));
}

TEST_CASE("manifest: dependency cycles are rejected with file:line") {
  SUBCASE("a -> b -> a") {
    const std::string path = data("cycle.yaml");
    Diagnostics diags;
    (void)load_compose(path, diags);
    REQUIRE(diags.size() == 1);
    CHECK(diags.items()[0].format() ==
          path + ":2:3: dependency cycle: a -> b -> a (hint: remove one of the depends_on entries)");
  }
  SUBCASE("a service depending on itself") {
    const std::string path = data("self_cycle.yaml");
    Diagnostics diags;
    (void)load_compose(path, diags);
    REQUIRE(diags.size() == 1);
    CHECK(diags.items()[0].file == path);
    CHECK(diags.items()[0].line == 4);
    CHECK(diags.items()[0].message == "dependency cycle: loop -> loop");
  }
  SUBCASE("a longer cycle is named from the service that comes first in the file") {
    auto diags = parse_errors(
        "services:\n"
        "  x:\n    image: i\n    depends_on: [z]\n"
        "  y:\n    image: i\n    depends_on: [x]\n"
        "  z:\n    image: i\n    depends_on: [y]\n");
    CHECK(only(diags, "dependency cycle").message == "dependency cycle: x -> z -> y -> x");
    CHECK(only(diags, "dependency cycle").line == 2);
  }
  SUBCASE("a diamond is not a cycle") {
    CHECK(parse_errors("services:\n"
                       "  a:\n    image: i\n    depends_on: [b, c]\n"
                       "  b:\n    image: i\n    depends_on: [d]\n"
                       "  c:\n    image: i\n    depends_on: [d]\n"
                       "  d:\n    image: i\n")
              .empty());
  }
}

TEST_CASE("manifest: depends_on an unknown service, or on health without a healthcheck") {
  auto diags = parse_errors(
      "services:\n"
      "  web:\n"
      "    image: x\n"
      "    depends_on:\n"
      "      databse:\n"
      "        condition: service_started\n"
      "      cache:\n"
      "        condition: service_healthy\n"
      "      quiet:\n"
      "        condition: service_healthy\n"
      "      checked:\n"
      "        condition: service_healthy\n"
      "  database:\n    image: x\n"
      "  cache:\n    image: x\n"
      "  quiet:\n    image: x\n    healthcheck:\n      disable: true\n"
      "  checked:\n    image: x\n    healthcheck:\n      test: [\"CMD\", \"true\"]\n");
  REQUIRE(diags.size() == 3);
  Diagnostic unknown = only(diags, "unknown service 'databse'");
  CHECK(unknown.line == 5);
  CHECK(unknown.message == "service 'web': depends on unknown service 'databse'");
  CHECK(unknown.hint == "did you mean 'database'?");
  Diagnostic cache = only(diags, "'cache' being healthy");
  CHECK(cache.line == 7);
  CHECK(has(cache.message, "'cache' has no healthcheck"));
  CHECK(only(diags, "'quiet' being healthy").line == 9);

  auto list_form = parse_errors("services:\n  web:\n    image: x\n    depends_on: [db, nope]\n  db:\n    image: x\n");
  CHECK(only(list_form, "unknown service 'nope'").line == 4);
  CHECK(only(list_form, "unknown service 'nope'").column == 22);

  auto completed = parse_errors(
      "services:\n  a:\n    image: x\n    depends_on:\n      b: {condition: service_completed_successfully}\n"
      "  b:\n    image: x\n");
  CHECK(has(only(completed, "service_completed_successfully").hint, "long-lived"));
}

TEST_CASE("manifest: environment lists, maps and env files; host values are refused") {
  auto diags = parse_errors(
      "services:\n"
      "  a:\n    image: x\n    environment: [\"OK=1\", \"FROM_HOST\"]\n"
      "  b:\n    image: x\n    environment:\n      SET: 1\n      UNSET:\n"
      "  c:\n    image: x\n    env_file: missing.env\n"
      "  d:\n    image: x\n    environment: [\"A=1\", \"A=2\"]\n",
      data("inline/compose.yaml"));
  REQUIRE(diags.size() == 4);
  Diagnostic from_host = only(diags, "'FROM_HOST' has no value");
  CHECK(from_host.line == 4);
  CHECK(from_host.hint == "values from the host environment are not passed; use environment.runner.env_passthrough");
  CHECK(only(diags, "'UNSET' has no value").line == 9);
  Diagnostic missing = only(diags, "env_file 'missing.env'");
  CHECK(missing.line == 12);
  CHECK(has(missing.message, "does not exist"));
  CHECK(only(diags, "'A' is given twice").line == 15);
}

TEST_CASE("manifest: a malformed env file line is reported at the env file's own line, never quoted") {
  TempFiles t("forgectl-envfile-");
  t.write("good.env", "A=1\n");
  const std::string bad = t.write("bad.env", "# comment\nhunter2-not-a-pair\nB=2\n");
  auto diags =
      parse_errors("services:\n  a:\n    image: x\n    env_file: [good.env, bad.env]\n", t.file("compose.yaml"));
  REQUIRE(diags.size() == 1);
  const Diagnostic& d = diags.items()[0];
  CHECK(d.file == bad);
  CHECK(d.line == 2);
  CHECK(has(d.message, "expected KEY=VALUE"));
  CHECK_FALSE(has(diags.to_error().message, "hunter2"));  // an env file holds secrets
}

TEST_CASE("manifest: env_file is read beneath the compose file's directory only") {
  TempFiles outside("forgectl-envfile-out-");
  const std::string secret = outside.write(".env", "API_KEY=sk-fake-0123456789\nnot a pair: sk-fake-line\n");
  TempFiles t("forgectl-envfile-");
  std::filesystem::create_symlink(secret, t.file("linked.env"));
  std::filesystem::create_symlink(outside.dir(), t.file("outdir"));
  auto diags = parse_errors("services:\n  a:\n    image: x\n    env_file:\n      - " + secret + "\n      - ../" +
                                std::filesystem::path(outside.dir()).filename().string() +
                                "/.env"
                                "\n      - linked.env\n      - outdir/.env\n",
                            t.file("compose.yaml"));
  const std::string text = diags.to_error().message;
  INFO(text);
  CHECK(diags.size() == 4);
  CHECK(has(text, ":5:9: service 'a': env_file '" + secret + "' must be a path inside the compose file's directory"));
  CHECK(has(text, ":6:9: service 'a': env_file '../"));
  CHECK(has(text,
            ":7:9: service 'a': env_file 'linked.env': 'linked.env' leads outside the compose file's directory "
            "(a symlink to '" +
                secret + "')"));
  CHECK(has(text, ":8:9: service 'a': env_file 'outdir/.env': 'outdir/.env' leads outside"));
  CHECK_FALSE(has(text, "sk-fake"));
}

TEST_CASE("manifest: a YAML syntax error is reported with its line") {
  auto diags = parse_errors("services:\n  a:\n    image: x\n    command: [sh, -c\n  b:\n", "broken.yaml");
  REQUIRE(diags.size() == 1);
  CHECK(diags.items()[0].file == "broken.yaml");
  CHECK(diags.items()[0].line == 5);
  CHECK(has(diags.items()[0].message, "YAML syntax error"));

  auto tabs = parse_errors("services:\n  a:\n    image: x\n   bad: indentation\n");
  REQUIRE(tabs.size() == 1);
  CHECK(tabs.items()[0].line == 4);
}

TEST_CASE("manifest: networks must be declared, and their dangerous options are refused") {
  auto diags = parse_errors(
      "services:\n"
      "  a:\n    image: x\n    networks: [backend, backnd]\n"
      "  b:\n    image: x\n    networks:\n      backend:\n        ipv4_address: 10.0.0.5\n"
      "networks:\n"
      "  backend:\n"
      "  outside:\n    external: true\n"
      "  custom:\n    driver: macvlan\n    ipam: {}\n");
  REQUIRE(diags.size() == 5);
  Diagnostic undeclared = only(diags, "network 'backnd' is not declared");
  CHECK(undeclared.line == 4);
  CHECK(undeclared.hint == "did you mean 'backend'?");
  CHECK(has(only(diags, "'ipv4_address'").hint, "own pool"));
  CHECK(has(only(diags, "'external'").hint, "creates every network itself"));
  CHECK(only(diags, "driver' must be bridge").line == 15);
  CHECK(only(diags, "'ipam'").line == 16);
}

TEST_CASE("manifest: service and label names, images, builds and host interpolation") {
  SUBCASE("a service needs an image or a build, and a valid name") {
    auto diags = parse_errors("services:\n  Web:\n    image: x\n  empty:\n    command: [true]\n");
    CHECK(only(diags, "service 'Web': the name is not valid").line == 2);
    CHECK(only(diags, "needs 'image' or 'build'").line == 4);
  }
  SUBCASE("io.forgectl. labels are reserved") {
    auto diags = parse_errors("services:\n  a:\n    image: x\n    labels:\n      io.forgectl.owner: me\n");
    Diagnostic d = only(diags, "'io.forgectl.owner' is reserved");
    CHECK(d.line == 5);
  }
  SUBCASE("build contexts must exist inside the compose file's directory") {
    const std::string path = data("compose_full/compose.yaml");
    auto diags = parse_errors(
        "services:\n"
        "  a:\n    build: ../task_env\n"
        "  b:\n    build: ./nowhere\n"
        "  c:\n    build: {context: web, dockerfile: ../../cycle.yaml}\n"
        "  d:\n    build: {context: web}\n",
        path);
    CHECK(only(diags, "outside the compose file's directory").line == 3);
    CHECK(only(diags, "'./nowhere' is not a directory").line == 5);
    CHECK(only(diags, "outside the build context").line == 7);
    CHECK(only(diags, "'Dockerfile' does not exist").line == 9);
  }
  SUBCASE("host variables are not interpolated; $$ is a literal $") {
    auto diags = parse_errors("services:\n  a:\n    image: \"app:${TAG}\"\n    command: echo $$HOME\n");
    Diagnostic d = only(diags, "host variables are not interpolated");
    CHECK(d.line == 3);
    CHECK(has(d.hint, "$$"));
    auto ok = parse_compose("services:\n  a:\n    image: x\n    command: echo $$HOME $1\n", "c.yaml");
    REQUIRE(ok);
    CHECK(*ok->services[0].command == std::vector<std::string>{"echo", "$HOME", "$1"});
  }
  SUBCASE("a key given twice is reported") {
    auto diags = parse_errors("services:\n  a:\n    image: x\n    image: y\n");
    CHECK(only(diags, "'image' is given twice").line == 4);
  }
  SUBCASE("wrong types name the key and what was found") {
    auto diags = parse_errors("services:\n  a:\n    image: [x]\n    read_only: yes\n    pids_limit: many\n");
    CHECK(only(diags, "'image' must be a string, got a list").line == 3);
    CHECK(only(diags, "'read_only' must be true or false, got 'yes'").line == 4);
    CHECK(only(diags, "'pids_limit' must be an integer, got 'many'").line == 5);
  }
  SUBCASE("a file without services") {
    CHECK(has(only(parse_errors(""), "empty").hint, "stack: none"));
    CHECK(parse_errors("version: '3'\n").size() == 1);
    CHECK(parse_errors("services: {}\n").size() == 1);
  }
}

TEST_CASE("manifest: healthcheck test forms") {
  auto ok = parse_compose(
      "services:\n"
      "  a:\n    image: x\n    healthcheck: {test: [\"CMD-SHELL\", \"curl -f localhost\"]}\n"
      "  b:\n    image: x\n    healthcheck: {test: [\"NONE\"]}\n",
      "c.yaml");
  REQUIRE(ok);
  CHECK(ok->services[0].healthcheck->test == std::vector<std::string>{"CMD-SHELL", "curl -f localhost"});
  CHECK(ok->services[1].healthcheck->disable);

  auto diags = parse_errors(
      "services:\n  a:\n    image: x\n    healthcheck:\n      test: [\"RUN\", \"x\"]\n      retries: -1\n"
      "      start_interval: 1s\n");
  CHECK(only(diags, "'test' must be").line == 5);
  CHECK(only(diags, "'retries' must not be negative").line == 6);
  CHECK(only(diags, "unsupported key 'start_interval'").line == 7);
}
