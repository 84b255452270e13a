// API version negotiation, DOCKER_HOST parsing, and the doctor's version and address-pool judgements.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli/doctor_checks.h"
#include "engine/client.h"
#include "engine/docker_host.h"
#include "engine/system.h"
#include "support/fake_transport.h"

using namespace forge;
using namespace forge::engine;
using forge::test::FakeTransport;

namespace {

struct Fx {
  std::shared_ptr<FakeTransport> fake = std::make_shared<FakeTransport>();
  Client c{fake};
  explicit Fx(const std::string& server_api) {
    fake->on(Method::kHead, "/_ping", 200, "",
             {{"api-version", server_api}, {"ostype", "linux"}, {"server", "Docker/20.10.24+dfsg1 (linux)"}});
  }
};

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("negotiation pins 1.41 against a 1.41 daemon and later calls use /v1.41") {
  Fx f("1.41");
  REQUIRE(f.c.negotiate());
  CHECK(f.c.api_version() == "1.41");
  CHECK(f.c.server_api_version() == "1.41");
  REQUIRE(f.fake->requests.size() == 1);
  CHECK(f.fake->requests[0].method == Method::kHead);
  CHECK(f.fake->requests[0].target == "/_ping");
  f.fake->on(Method::kGet, "/version", 200, R"({"Version":"20.10.24+dfsg1","ApiVersion":"1.41"})");
  REQUIRE(version(f.c));
  CHECK(f.fake->requests.back().target == "/v1.41/version");
}

TEST_CASE("a newer daemon still gets the pinned 1.41") {
  Fx f("1.43");
  REQUIRE(f.c.negotiate());
  CHECK(f.c.api_version() == "1.41");
  CHECK(f.c.server_api_version() == "1.43");
}

TEST_CASE("a daemon below 1.41 is refused with a message naming 1.41") {
  Fx f("1.40");
  auto st = f.c.negotiate();
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::kUnsupported);
  CHECK(st.error().what().find("1.41") != std::string::npos);
  CHECK(st.error().what().find("1.40") != std::string::npos);
}

TEST_CASE("versions compare numerically, not as text") {
  CHECK(compare_api_versions("1.9", "1.41") < 0);
  CHECK(compare_api_versions("1.41", "1.41") == 0);
  CHECK(compare_api_versions("1.100", "1.41") > 0);
  CHECK(compare_api_versions("2.0", "1.45") > 0);
  Fx f("1.100");
  REQUIRE(f.c.negotiate());
  CHECK(f.c.api_version() == "1.41");
}

TEST_CASE("DOCKER_API_VERSION override") {
  SUBCASE("1.43 against a 1.43 daemon is used") {
    Fx f("1.43");
    REQUIRE(f.c.negotiate("1.43"));
    CHECK(f.c.api_version() == "1.43");
  }
  SUBCASE("1.40 is below what forgectl supports") {
    Fx f("1.43");
    auto st = f.c.negotiate("1.40");
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kUnsupported);
    CHECK(st.error().what().find("1.41") != std::string::npos);
  }
  SUBCASE("newer than the daemon is refused") {
    Fx f("1.41");
    auto st = f.c.negotiate("1.43");
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::kUnsupported);
  }
  SUBCASE("not a version") {
    Fx f("1.43");
    for (const char* bad : {"abc", "1", "1.", ".41", "v1.41", "1.4x"}) {
      CAPTURE(bad);
      auto st = f.c.negotiate(bad);
      REQUIRE_FALSE(st);
      CHECK(st.error().code == Errc::kInvalid);
    }
  }
}

TEST_CASE("a daemon without an Api-Version header is asked through GET /version") {
  auto fake = std::make_shared<FakeTransport>();
  fake->on(Method::kHead, "/_ping", 200);
  fake->on(Method::kGet, "/version", 200, R"({"Version":"20.10.24+dfsg1","ApiVersion":"1.41","MinAPIVersion":"1.12"})");
  Client c(fake);
  REQUIRE(c.negotiate());
  CHECK(c.server_api_version() == "1.41");
}

TEST_CASE("a daemon that cannot be reached fails negotiation with the transport's error") {
  auto fake = std::make_shared<FakeTransport>();
  fake->on_error(Method::kHead, "/_ping", make_error(Errc::kUnavailable, "cannot connect to unix:///var/run/docker.sock"));
  Client c(fake);
  auto st = c.negotiate();
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::kUnavailable);
}

TEST_CASE("parse_docker_host: unix sockets") {
  auto h = parse_docker_host("unix:///run/user/1000/docker.sock", env_of({}));
  REQUIRE(h);
  CHECK(h->kind == DockerHost::Kind::kUnix);
  CHECK(h->socket_path == "/run/user/1000/docker.sock");
  CHECK(h->describe() == "unix:///run/user/1000/docker.sock");

  auto rel = parse_docker_host("unix://docker.sock", env_of({}));
  REQUIRE_FALSE(rel);
  CHECK(rel.error().code == Errc::kInvalid);
}

TEST_CASE("parse_docker_host: tcp with TLS takes certs from DOCKER_CERT_PATH and port 2376") {
  auto h = parse_docker_host("tcp://10.0.0.5", env_of({{"DOCKER_TLS_VERIFY", "1"}, {"DOCKER_CERT_PATH", "/etc/forge/certs"}}));
  REQUIRE(h);
  CHECK(h->kind == DockerHost::Kind::kTcp);
  CHECK(h->address == "10.0.0.5:2376");
  CHECK(h->tls);
  CHECK(h->ca_file == "/etc/forge/certs/ca.pem");
  CHECK(h->cert_file == "/etc/forge/certs/cert.pem");
  CHECK(h->key_file == "/etc/forge/certs/key.pem");
  CHECK(h->describe() == "tcp://10.0.0.5:2376 (tls)");
}

TEST_CASE("parse_docker_host: tcp without TLS uses port 2375; an explicit port is kept") {
  auto h = parse_docker_host("tcp://docker.internal", env_of({{"HOME", "/home/u"}}));
  REQUIRE(h);
  CHECK(h->address == "docker.internal:2375");
  CHECK_FALSE(h->tls);
  auto empty_tls = parse_docker_host("tcp://docker.internal", env_of({{"DOCKER_TLS_VERIFY", ""}}));
  REQUIRE(empty_tls);
  CHECK_FALSE(empty_tls->tls);  // the docker CLI treats an empty DOCKER_TLS_VERIFY as unset
  auto port = parse_docker_host("tcp://10.0.0.5:12375/", env_of({{"DOCKER_TLS_VERIFY", "1"}, {"HOME", "/home/u"}}));
  REQUIRE(port);
  CHECK(port->address == "10.0.0.5:12375");
  CHECK(port->ca_file == "/home/u/.docker/ca.pem");  // DOCKER_CERT_PATH unset: ~/.docker
}

TEST_CASE("parse_docker_host: ssh is unsupported, garbage is invalid") {
  auto ssh = parse_docker_host("ssh://me@build-box", env_of({}));
  REQUIRE_FALSE(ssh);
  CHECK(ssh.error().code == Errc::kUnsupported);
  for (const char* bad : {"garbage", "tcp://", "tcp:///"}) {
    CAPTURE(bad);
    auto r = parse_docker_host(bad, env_of({}));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::kInvalid);
  }
}

TEST_CASE("docker_host_from_env") {
  auto def = docker_host_from_env(env_of({}));
  REQUIRE(def);
  CHECK(def->kind == DockerHost::Kind::kUnix);
  CHECK(def->socket_path == "/var/run/docker.sock");
  CHECK(def->api_version.empty());

  auto pinned = docker_host_from_env(env_of({{"DOCKER_API_VERSION", "1.43"}}));
  REQUIRE(pinned);
  CHECK(pinned->api_version == "1.43");

  auto tcp = docker_host_from_env(env_of({{"DOCKER_HOST", "tcp://10.0.0.5:2376"}, {"DOCKER_TLS_VERIFY", "1"},
                                          {"DOCKER_CERT_PATH", "/certs"}, {"DOCKER_API_VERSION", "1.41"}}));
  REQUIRE(tcp);
  CHECK(tcp->kind == DockerHost::Kind::kTcp);
  CHECK(tcp->tls);
  CHECK(tcp->key_file == "/certs/key.pem");
  CHECK(tcp->api_version == "1.41");

  auto ssh = docker_host_from_env(env_of({{"DOCKER_HOST", "ssh://me@build-box"}}));
  REQUIRE_FALSE(ssh);
  CHECK(ssh.error().code == Errc::kUnsupported);
  CHECK(ssh.error().what().find("DOCKER_HOST") != std::string::npos);

  auto junk = docker_host_from_env(env_of({{"DOCKER_HOST", "garbage"}}));
  REQUIRE_FALSE(junk);
  CHECK(junk.error().code == Errc::kInvalid);
}

TEST_CASE("doctor: fs.protected_symlinks = 0 is a warning; 1 and 2 are not") {
  auto w = cli::protected_symlinks_warning("0\n");
  REQUIRE(w.has_value());
  CHECK(w->find("fs.protected_symlinks=1") != std::string::npos);
  CHECK_FALSE(cli::protected_symlinks_warning("1\n"));
  CHECK_FALSE(cli::protected_symlinks_warning("2\n"));
  CHECK_FALSE(cli::protected_symlinks_warning(""));
}

TEST_CASE("CVE-2024-29018 warning by engine version") {
  struct V {
    const char* version;
    bool warns;
  };
  const V cases[] = {{"20.10.24+dfsg1", true}, {"23.0.10", true}, {"23.0.11", false}, {"24.0.7", true},
                     {"25.0.4", true},         {"25.0.5", false}, {"26.1.0", false}, {"27.3.1", false}};
  for (const auto& v : cases) {
    CAPTURE(v.version);
    auto w = cli::cve_2024_29018_warning(v.version);
    CHECK(w.has_value() == v.warns);
    if (w) {
      CHECK(w->find("CVE-2024-29018") != std::string::npos);
      CHECK(w->find(v.version) != std::string::npos);
    }
  }
}

TEST_CASE("default address pool capacity") {
  CHECK(cli::default_pool_capacity({}) == 31);
  CHECK(cli::default_pool_capacity({{"10.10.0.0/16", 24}}) == 256);
  CHECK(cli::default_pool_capacity({{"10.10.0.0/16", 24}, {"172.30.0.0/16", 16}}) == 257);
}

TEST_CASE("tcp hosts get the default port, IPv6 literals included; TLS without a cert dir is refused") {
  auto env = [](std::map<std::string, std::string> m) {
    return [m](const char* k) -> std::optional<std::string> {
      auto it = m.find(k);
      if (it == m.end()) return std::nullopt;
      return it->second;
    };
  };
  auto v6 = forge::engine::parse_docker_host("tcp://[::1]", env({{"HOME", "/root"}}));
  REQUIRE(v6.has_value());
  CHECK(v6->address == "[::1]:2375");
  auto v6port = forge::engine::parse_docker_host("tcp://[::1]:1234", env({{"HOME", "/root"}}));
  REQUIRE(v6port.has_value());
  CHECK(v6port->address == "[::1]:1234");
  auto nodir = forge::engine::parse_docker_host("tcp://h", env({{"DOCKER_TLS_VERIFY", "1"}}));
  REQUIRE_FALSE(nodir.has_value());
  CHECK(nodir.error().code == forge::Errc::kInvalid);
  CHECK(nodir.error().what().find("DOCKER_CERT_PATH") != std::string::npos);
}
