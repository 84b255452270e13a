// Network policies against the real daemon: what a stack's containers can and cannot reach.
// "The internet" is a container of the test's own on a network of its own.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>

#include "engine/exec.h"
#include "support/containers.h"
#include "support/packet_capture.h"
#include "support/stack_env.h"

using namespace forge;
using namespace forge::test;

namespace {

constexpr const char* kHttpd = "mkdir -p /tmp/w && echo %s > /tmp/w/index.html && exec httpd -f -p %s -h /tmp/w";

std::vector<std::string> httpd(const std::string& body, const std::string& port) {
  char buf[256];
  std::snprintf(buf, sizeof buf, kHttpd, body.c_str(), port.c_str());
  return {"sh", "-c", buf};
}

// busybox time's "real\t0m 0.01s" → 0.01; a large number when there is none.
double seconds_of_time(const std::string& out) {
  auto at = out.find("real");
  auto m = out.find("m ", at);
  if (at == std::string::npos || m == std::string::npos) return 1e9;
  return std::atof(out.c_str() + m + 2) + 60 * std::atof(out.c_str() + at + 5);
}

// Runs `script` in a container through sh; returns stdout.
std::string sh(const std::string& id, const std::string& script, Millis timeout = Millis(20000)) {
  engine::ExecOptions o{{"sh", "-c", script}};
  o.timeout = timeout;
  auto r = engine::exec_run(*docker_env().client, id, o);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return r->out;
}

// An HTTP GET of `path` at host:port with nc (busybox-static's wget crashes on Debian 12).
std::string http_get(const std::string& id, const std::string& host, const std::string& port, Millis timeout = Millis(20000)) {
  return sh(id, "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 2 " + host + " " + port + " | tail -n 1", timeout);
}

// The "internet": an HTTP server on a plain bridge network the test made, reachable by its IP.
struct FakeInternet {
  FakeInternet()
      : net([] {
          engine::NetworkSpec s{"forgectl-test-inet-" + random_hex(4)};
          s.ipam = engine::IpamConfig{free_test_subnet(), ""};
          return s;
        }()),
        box([this] {
          engine::ContainerSpec s;
          s.network = net.id;
          s.cmd = httpd("hello-internet", "80");
          return s;
        }()) {
    auto info = engine::inspect_container(*docker_env().client, box.id);
    REQUIRE(info.has_value());
    ip = info->networks.begin()->second.ip_address;
    REQUIRE_FALSE(ip.empty());
  }
  TestNetwork net;
  TestContainer box;
  std::string ip;
};

// A TCP server on all of the host's addresses, counting connections.
class HostListener {
 public:
  HostListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
    REQUIRE(::listen(fd_, 16) == 0);
    thread_ = std::thread([this] {
      for (;;) {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        ++accepted;
        (void)!::write(c, "host-reached\n", 13);
        ::close(c);
      }
    });
  }
  ~HostListener() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  int port = 0;
  std::atomic<int> accepted{0};

 private:
  int fd_ = -1;
  std::thread thread_;
};

std::string gateway_of(const stack::UpResult& r, const std::string& key) {
  for (const auto& n : r.plan.networks)
    if (n.key == key) return n.subnet.gateway();
  FAIL("no network " << key);
  return {};
}

const char* kNoInternetCompose = R"(services:
  web:
    image: forgectl/runner:local
    command: ["sh", "-c", "mkdir -p /tmp/w && echo sibling-ok > /tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w"]
  worker:
    image: forgectl/runner:local
    command: ["sleep", "3600"]
)";

}  // namespace

TEST_CASE("no_internet: siblings by name, nothing beyond the task network, not even the host") {
  TempDir dir;
  dir.write("compose.yaml", kNoInternetCompose);
  auto manifest = dir.write("env.yaml", "network_policy: no_internet\ncompose_file: compose.yaml\n");
  FakeInternet inet;
  HostListener host;
  TestStack s(manifest);

  std::string runner = s.id("runner"), worker = s.id("worker"), web = s.id("web");
  for (const auto& from : {runner, worker}) {
    CAPTURE(from);
    std::string got;
    for (int i = 0; i < 20 && got != "sibling-ok\n"; ++i) got = http_get(from, "web", "8080");
    CHECK(got == "sibling-ok\n");
  }
  for (const auto& from : {runner, worker, web}) {
    CAPTURE(from);
    CHECK(http_get(from, inet.ip, "80") == "");  // the fake internet, by address
    CHECK(sh(from, "nc -w 2 " + gateway_of(s.result, "internal") + " " + std::to_string(host.port) + " </dev/null") == "");
  }
  CHECK(host.accepted == 0);
  // Unknown names fail fast instead of stalling: the resolver is told to give up after one try.
  CHECK(sh(runner, "cat /etc/resolv.conf").find("options timeout:1 attempts:1") != std::string::npos);

  // An outside name is refused at once by the trial's resolver, and the query carrying it never
  // leaves the trial: captured on every interface of the host, it went to the resolver only.
  const std::string resolver = s.result.plan.resolver_address;
  const std::string label = "fgleak" + random_hex(6);
  DnsCapture capture(label);
  std::string looked = sh(runner, "( time nslookup " + label + ".example.com ) 2>&1");
  CHECK(looked.find("REFUSED") != std::string::npos);
  CHECK(seconds_of_time(looked) < 0.1);
  CHECK(sh(worker, "nslookup " + label + ".example.org 2>&1").find("REFUSED") != std::string::npos);
  std::this_thread::sleep_for(Millis(300));
  CHECK(capture.destinations() == std::set<std::string>{resolver});
  auto logged = engine::container_logs(*docker_env().client, s.id("egress-dns"));
  REQUIRE(logged.has_value());
  CHECK(logged->out.find(R"("host":")" + label + R"(.example.com","what":"A","outcome":"refused")") != std::string::npos);
}

TEST_CASE("without forgectl's host rule the host would be reachable: the rule is what closes it") {
  TempDir dir;
  auto manifest = dir.write("env.yaml", "network_policy: no_internet\nstack: none\n");
  HostListener host;
  auto opts = test_up_options();
  opts.host.host_firewall = false;
  auto s = std::make_unique<TestStack>(manifest, opts);
  auto out = sh(s->id("runner"), "nc -w 2 " + gateway_of(s->result, "internal") + " " + std::to_string(host.port) + " </dev/null");
  CHECK(out == "host-reached\n");
  CHECK(host.accepted == 1);
}

TEST_CASE("limited_internet: CONNECT to an allowlisted host tunnels, everything else is refused") {
  TempDir dir;
  auto manifest = dir.write("env.yaml",
                            "network_policy: limited_internet\n"
                            "limited_internet_allowlist: [allowed.example.test, .wild.example.test]\n"
                            "limited_internet_allow_private: true   # the fake internet sits on a private subnet\n"
                            "stack: none\n");
  TestStack s(manifest);
  // The fake internet joins the stack's edge network under two names, answering on 443.
  engine::ContainerSpec inet_spec;
  inet_spec.network = s.result.networks.at("edge");
  inet_spec.aliases = {"allowed.example.test", "denied.example.test"};
  inet_spec.cmd = httpd("hello-internet", "443");
  TestContainer inet(inet_spec);
  auto info = engine::inspect_container(*docker_env().client, inet.id);
  REQUIRE(info.has_value());
  std::string inet_ip = info->networks.begin()->second.ip_address;
  std::string runner = s.id("runner");

  auto through_proxy = [&](const std::string& request) {
    return sh(runner, "(printf '" + request + "'; sleep 1) | nc -w 3 egress-proxy 3128");
  };
  std::string tunnel = through_proxy(
      "CONNECT allowed.example.test:443 HTTP/1.1\\r\\nHost: allowed.example.test:443\\r\\n\\r\\n"
      "GET /index.html HTTP/1.0\\r\\n\\r\\n");
  CHECK(tunnel.find("HTTP/1.1 200 Connection established") == 0);
  CHECK(tunnel.find("hello-internet") != std::string::npos);  // data flowed through the tunnel

  CHECK(through_proxy("CONNECT denied.example.test:443 HTTP/1.1\\r\\nHost: denied.example.test:443\\r\\n\\r\\n")
            .find("HTTP/1.1 403 Forbidden") == 0);
  CHECK(through_proxy("GET http://denied.example.test/ HTTP/1.1\\r\\nHost: denied.example.test\\r\\n\\r\\n")
            .find("HTTP/1.1 403 Forbidden") == 0);
  CHECK(through_proxy("GET http://allowed.example.test/ HTTP/1.1\\r\\nHost: allowed.example.test\\r\\n\\r\\n")
            .find("HTTP/1.1 403 Forbidden") == 0);  // CONNECT only, unless plain HTTP is opted in
  CHECK(through_proxy("CONNECT allowed.example.test:80 HTTP/1.1\\r\\n\\r\\n").find("HTTP/1.1 403 Forbidden") == 0);

  // Without the proxy: neither the address nor the names are reachable.
  CHECK(http_get(runner, inet_ip, "443") == "");
  CHECK(http_get(runner, "allowed.example.test", "443") == "");

  auto env = sh(runner, "env | sort");
  CHECK(env.find("HTTPS_PROXY=http://egress-proxy:3128\n") != std::string::npos);
  CHECK(env.find("https_proxy=http://egress-proxy:3128\n") != std::string::npos);
  CHECK(env.find("NO_PROXY=localhost,127.0.0.1,::1,runner\n") != std::string::npos);

  // squid's access log is on its stdout: the audit trail of what was asked.
  auto logs = engine::container_logs(*docker_env().client, s.id("egress-proxy"));
  REQUIRE(logs.has_value());
  CHECK(logs->out.find("CONNECT allowed.example.test:443 200") != std::string::npos);
  CHECK(logs->out.find("CONNECT denied.example.test:443 403") != std::string::npos);

  // Names: the trial's resolver answers the allowlist's exact names and refuses the rest; a
  // wildcard entry's subdomain is refused too, so a label the agent chose never leaves.
  CHECK(sh(runner, "nslookup allowed.example.test 2>&1").find(inet_ip) != std::string::npos);
  CHECK(sh(runner, "nslookup denied.example.test 2>&1").find("REFUSED") != std::string::npos);
  const std::string label = "fgleak" + random_hex(6);
  DnsCapture capture(label);
  CHECK(sh(runner, "nslookup " + label + ".wild.example.test 2>&1").find("REFUSED") != std::string::npos);
  std::this_thread::sleep_for(Millis(300));
  CHECK(capture.destinations() == std::set<std::string>{s.result.plan.resolver_address});

  // The resolver answered from the proxy's network namespace, as a container of its own: its
  // user, its read-only root, no network sandbox of its own; the proxy holds its address.
  auto* c = docker_env().client;
  auto resolver = engine::inspect_container(*c, s.id("egress-dns"));
  REQUIRE(resolver.has_value());
  CHECK(resolver->host.network_mode == "container:" + s.id("egress-proxy"));
  CHECK(resolver->networks.empty());
  CHECK(resolver->user == "65534:65534");
  CHECK(resolver->host.readonly_rootfs);
  auto proxy = engine::inspect_container(*c, s.id("egress-proxy"));
  REQUIRE(proxy.has_value());
  CHECK(proxy->networks.at(s.result.plan.networks.front().name).ip_address == s.result.plan.resolver_address);
}

TEST_CASE("limited_internet: a task's upstream is reached only through the proxy, only by an allowlisted name, and "
          "reaches no internet itself") {
  TempDir dir;
  dir.write("compose.yaml", R"(services:
  index:
    image: forgectl/runner:local
    x-forgectl: {upstream: true}
    networks: {default: {aliases: [pkgs.example.test, other.example.test]}}
    command: ["sh", "-c", "mkdir -p /tmp/w && echo hello-upstream > /tmp/w/index.html && exec httpd -f -p 80 -h /tmp/w"]
    healthcheck:
      test: ["CMD-SHELL", "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc 127.0.0.1 80 | grep -q hello-upstream"]
      interval: 1s
      retries: 30
  api:
    image: forgectl/runner:local
    command: ["sh", "-c", "mkdir -p /tmp/w && echo api-ok > /tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w"]
)");
  auto manifest = dir.write("env.yaml",
                            "network_policy: limited_internet\n"
                            "limited_internet_allowlist: [pkgs.example.test]\n"
                            "limited_internet_allow_http: true\n"
                            "compose_file: compose.yaml\n");
  FakeInternet inet;
  TestStack s(manifest);
  std::string runner = s.id("runner"), api = s.id("api"), index = s.id("index");
  auto info = engine::inspect_container(*docker_env().client, index);
  REQUIRE(info.has_value());
  // On the upstream network alone (with the proxy): not the task network, not the edge.
  REQUIRE(info->networks.size() == 1);
  CHECK(info->networks.begin()->first == s.result.name + "-upstream");
  CHECK(info->host.cap_drop == std::vector<std::string>{"ALL"});
  std::string index_ip = info->networks.begin()->second.ip_address;

  // squid aborts a request whose client half-closes, so this client keeps its side open a moment.
  auto through_proxy = [&](const std::string& from, const std::string& host) {
    return sh(from, "(printf 'GET http://" + host + "/index.html HTTP/1.1\\r\\nHost: " + host +
                        "\\r\\nConnection: close\\r\\n\\r\\n'; sleep 1) | nc -w 3 egress-proxy 3128");
  };
  for (const auto& from : {runner, api}) {
    CAPTURE(from);
    std::string ok = through_proxy(from, "pkgs.example.test");
    CHECK(ok.find("HTTP/1.1 200 OK") == 0);
    CHECK(ok.find("hello-upstream") != std::string::npos);
    // Its other name is not allowlisted: the proxy refuses it, though it is the same container.
    CHECK(through_proxy(from, "other.example.test").find("HTTP/1.1 403 Forbidden") == 0);
    // Directly, neither its name nor its address answers.
    CHECK(http_get(from, "pkgs.example.test", "80") == "");
    CHECK(http_get(from, index_ip, "80") == "");
  }
  // NO_PROXY leaves the upstream out: the runner's clients go through the proxy for it.
  CHECK(sh(runner, "echo $NO_PROXY") == "localhost,127.0.0.1,::1,api,runner\n");
  // The upstream itself reaches neither the fake internet nor the task's services, which the
  // runner reaches directly.
  std::string got;
  for (int i = 0; i < 20 && got != "api-ok\n"; ++i) got = http_get(runner, "api", "8080");
  CHECK(got == "api-ok\n");
  CHECK(http_get(index, "api", "8080") == "");
  CHECK(http_get(index, inet.ip, "80") == "");

  auto logs = engine::container_logs(*docker_env().client, s.id("egress-proxy"));
  REQUIRE(logs.has_value());
  CHECK(logs->out.find("GET http://pkgs.example.test/index.html 200") != std::string::npos);
  CHECK(logs->out.find("GET http://other.example.test/index.html 403") != std::string::npos);
}

TEST_CASE("a stack's containers carry their hardening, and the kernel enforces it") {
  TempDir dir;
  dir.write("compose.yaml", R"(services:
  svc:
    image: forgectl/runner:local
    command: ["sleep", "3600"]
    mem_limit: 96m
    pids_limit: 40
    cap_add: [CHOWN]
    read_only: true
    tmpfs: [/tmp]
)");
  auto manifest = dir.write("env.yaml",
                            "network_policy: no_internet\ncompose_file: compose.yaml\n"
                            "runner:\n  memory: 256m\n  cpus: 0.5\n  pids_limit: 48\n");
  TestStack s(manifest);
  auto& c = *docker_env().client;

  auto runner = engine::inspect_container(c, s.id("runner"));
  REQUIRE(runner.has_value());
  CHECK(runner->host.cap_drop == std::vector<std::string>{"ALL"});
  CHECK(runner->host.cap_add == std::vector<std::string>{"NET_BIND_SERVICE"});
  CHECK(runner->host.security_opt == std::vector<std::string>{"no-new-privileges:true"});
  // runner.memory plus the tmpfs caps (workspace, /tmp, the agent's home): tmpfs is memory.
  const std::int64_t runner_memory = (256LL + 2048 + 512 + 64) << 20;
  CHECK(runner->host.memory == runner_memory);
  CHECK(runner->host.memory_swap == runner_memory);
  CHECK(runner->host.readonly_rootfs);
  CHECK(runner->user == "1000:1000");
  CHECK(runner->host.nano_cpus == 500000000);
  CHECK(runner->host.pids_limit == 48);
  CHECK(runner->host.init);
  CHECK(runner->labels.at("io.forgectl.role") == "runner");
  CHECK(runner->labels.at("io.forgectl.stack") == s.result.name);

  auto svc = engine::inspect_container(c, s.id("svc"));
  REQUIRE(svc.has_value());
  CHECK(svc->host.cap_drop == std::vector<std::string>{"ALL"});
  CHECK(svc->host.cap_add == std::vector<std::string>{"CHOWN"});
  CHECK(svc->host.memory == 96 << 20);
  CHECK(svc->host.pids_limit == 40);
  CHECK(svc->host.readonly_rootfs);
  CHECK(svc->labels.at("io.forgectl.service") == "svc");

  // The agent (uid 1000) holds no capability; the bounding set keeps only NET_BIND_SERVICE.
  CHECK(sh(s.id("runner"), "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status") ==
        "CapEff:\t0000000000000000\nCapBnd:\t0000000000000400\nNoNewPrivs:\t1\n");
  // A fork bomb stops at the pids limit instead of taking the host down. The bomb's errors go
  // to a file and are read with builtins only: a reader forked after the bomb would find no pid
  // left, which made a pipeline into grep flaky.
  engine::ExecOptions bomb{{"sh", "-c",
                            "i=0; ( while [ $i -lt 200 ]; do sleep 60 & i=$((i+1)); done ) "
                            ">/dev/null 2>/tmp/bomb; while IFS= read -r l; do case $l in "
                            "*\"can't fork\"*) echo \"can't fork\"; break;; esac; done </tmp/bomb"}};
  bomb.timeout = Millis(30000);
  bomb.helper = engine::kExecHelperPath;
  auto r = engine::exec_run(c, s.id("runner"), bomb);
  REQUIRE(r.has_value());
  CHECK(r->out == "can't fork\n");
}
