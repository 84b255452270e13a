// The local squid image against the real daemon: built without a registry, parses every config
// forgectl writes, and runs hardened (13:13, no capabilities, read-only, no network).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "core/scope_guard.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "policy/allowlist.h"
#include "policy/squid_conf.h"
#include "stack/local_images.h"
#include "support/containers.h"

using namespace forge;
using namespace forge::test;

namespace {

// forgectl/squid:local, built once for this file (the suite's main builds only the runner).
const std::string& squid_image() {
  static const std::string id = [] {
    auto r = stack::build_squid_image(*docker_env().client, {});
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
    return *r;
  }();
  return id;
}

std::string conf_tar(const std::string& conf) {
  engine::TarWriter w;
  must(w.add_file("squid.conf", conf));
  auto tar = w.finish();
  must(tar);
  return *tar;
}

policy::SquidOptions options(std::vector<std::string> allowlist = {"allowed.example.test", "*.allowsub.example.test"}) {
  policy::SquidOptions o;
  o.internal_subnet = "10.213.0.0/28";
  auto normal = policy::normalise_allowlist(allowlist);
  must(normal);
  o.allowlist = *normal;
  return o;
}

// The squid container every test starts from: proxy user, no capabilities, no network.
engine::ContainerSpec squid_spec(const std::string& image, std::vector<std::string> cmd) {
  engine::ContainerSpec s;
  s.image = image;
  s.user = policy::kSquidUser;
  s.entrypoint = std::vector<std::string>{"/usr/sbin/squid"};
  s.cmd = std::move(cmd);
  s.host.network_mode = "none";
  s.host.cap_drop = {"ALL"};
  s.host.security_opt = {"no-new-privileges"};
  return s;
}

struct ParseResult {
  int exit_code = -1;
  std::string log;
};

// `squid -k parse` on `conf`, put into /etc/squid before the container starts.
ParseResult parse(const std::string& conf) {
  auto& c = *docker_env().client;
  TestContainer box(squid_spec(squid_image(), {"-k", "parse", "-f", policy::kSquidConfPath}), false);
  must(engine::put_archive(c, box.id, policy::kSquidConfDir, conf_tar(conf)));
  must(engine::start_container(c, box.id));
  auto code = engine::wait_container(c, box.id, engine::WaitCondition::kNotRunning, Millis(30000));
  must(code);
  auto logs = engine::container_logs(c, box.id);
  must(logs);
  return {*code, logs->out + logs->err};
}

}  // namespace

TEST_CASE("squid image: built from the host's squid, with its libraries, data files and proxy-owned directories") {
  auto ctx = stack::squid_build_context({});
  must(ctx);
  auto entries = engine::read_tar(*ctx);
  must(entries);
  auto has = [&](const std::string& p) {
    return std::any_of(entries->begin(), entries->end(), [&](const engine::TarEntry& e) { return e.path == p; });
  };
  for (const char* p :
       {"Dockerfile", "rootfs/usr/sbin/squid", "rootfs/usr/lib/squid/unlinkd", "rootfs/lib64/ld-linux-x86-64.so.2",
        "rootfs/usr/share/squid/mime.conf", "rootfs/etc/squid/errorpage.css", "rootfs/etc/passwd",
        "rootfs/usr/share/squid/errors/templates/ERR_ACCESS_DENIED", "rootfs/tmp/"}) {
    CAPTURE(p);
    CHECK(has(p));
  }
  CHECK(std::any_of(entries->begin(), entries->end(),
                    [](const engine::TarEntry& e) { return starts_with(e.path, "rootfs/usr/share/squid/icons/"); }));

  auto& c = *docker_env().client;
  auto info = engine::inspect_image(c, squid_image());
  must(info);
  CHECK(info->labels.at(stack::kImageLabel) == "squid");
  CHECK(std::find(info->repo_tags.begin(), info->repo_tags.end(), stack::kSquidImage) != info->repo_tags.end());
  CHECK(info->size < (64 << 20));  // squid and its libraries, nothing else (24.7 MB on Debian 12)

  // COPY --chown really gave the state directories to proxy (13:13).
  TestContainer box(squid_spec(squid_image(), {"-v"}), false);
  for (const char* dir : {"/run/squid", "/var/spool/squid", "/var/log/squid"}) {
    CAPTURE(dir);
    auto got = engine::get_archive(c, box.id, dir);
    must(got);
    auto tar = engine::read_tar(got->tar);
    must(tar);
    REQUIRE_FALSE(tar->empty());
    CHECK(tar->front().uid == 13);
    CHECK(tar->front().gid == 13);
  }
}

TEST_CASE("squid image: squid -k parse accepts every config forgectl writes") {
  std::vector<std::string> many;
  for (int i = 0; i < 400; ++i)
    many.push_back("host" + std::to_string(i) + "." + std::string(30, 'q') + ".example.com");
  many.push_back("*.wild.example.org");

  struct Case {
    const char* name;
    policy::SquidOptions opts;
  };
  std::vector<Case> cases{{"default", options()}};
  cases.push_back({"allow private", options()});
  cases.back().opts.deny_private = false;
  cases.push_back({"plain http", options()});
  cases.back().opts.allow_plain_http = true;
  cases.push_back({"several ports", options()});
  cases.back().opts.connect_ports = {443, 8443, 9443};
  cases.push_back({"large allowlist", options(many)});
  cases.push_back({"empty allowlist", options({})});
  cases.push_back({"ipv6 clients", options()});
  cases.back().opts.internal_subnet = "fd00:213::/64";

  for (const auto& k : cases) {
    CAPTURE(k.name);
    must(policy::check_squid_options(k.opts));
    auto r = parse(policy::squid_conf(k.opts));
    INFO(r.log);
    CHECK(r.exit_code == 0);
    CHECK(r.log.find("FATAL") == std::string::npos);
    CHECK(r.log.find("ERROR") == std::string::npos);
    CHECK(r.log.find("Processing: http_access deny !task_clients") != std::string::npos);  // our file was read
  }
}

TEST_CASE("squid image: squid -k parse fails on an allowlist overlap, as normalisation assumes") {
  // The control for the test above: a raw `www.x .x` list makes squid 5.7 exit 1.
  auto r = parse(
      "http_port 3128\nvisible_hostname egress-proxy\n"
      "acl allowlist dstdomain -n www.example.com .example.com\n"
      "http_access deny !allowlist\nhttp_access deny all\npid_filename none\ncache_log /dev/stderr\n");
  INFO(r.log);
  CHECK(r.exit_code != 0);
  CHECK(r.log.find("FATAL") != std::string::npos);
}

TEST_CASE("squid image: squid runs hardened and is ready within 10 s") {
  auto& c = *docker_env().client;
  // The root filesystem is read-only, and the daemon refuses archive uploads into such a container,
  // so the config goes into a one-line image on top (a local build; nothing is pulled).
  std::string tag = "forgectl-test/squid-conf:" + random_hex(4);
  engine::TarWriter w;
  must(w.add_file("Dockerfile", std::string("FROM ") + squid_image() + "\nCOPY squid.conf /etc/squid/squid.conf\n"));
  must(w.add_file("squid.conf", policy::squid_conf(options())));
  auto ctx = w.finish();
  must(ctx);
  engine::BuildSpec build;
  build.context_tar = *ctx;
  build.tags = {tag};
  auto image = engine::build_image(c, build);
  must(image);
  ScopeGuard remove_image([&] { (void)engine::remove_image(c, tag, true); });

  // The invocation manifests/images.yaml gives, identical for ubuntu/squid.
  auto spec = squid_spec(tag, {"-f", policy::kSquidConfPath, "-N"});
  spec.host.readonly_rootfs = true;
  spec.host.memory = 128 << 20;
  spec.host.pids_limit = 64;
  auto started = std::chrono::steady_clock::now();
  TestContainer box(spec);

  std::string log;
  bool ready = false;
  while (std::chrono::steady_clock::now() - started < std::chrono::seconds(10)) {
    auto logs = engine::container_logs(c, box.id);
    must(logs);
    log = logs->out + logs->err;
    if (log.find("Accepting HTTP Socket connections") != std::string::npos || log.find("FATAL") != std::string::npos) {
      ready = log.find("FATAL") == std::string::npos;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(log);
  REQUIRE(ready);
  MESSAGE("squid ready "
          << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count()
          << " ms after create");

  auto info = engine::inspect_container(c, box.id);
  must(info);
  CHECK(info->state.running);
  CHECK(info->user == "13:13");
  CHECK(info->host.cap_drop == std::vector<std::string>{"ALL"});
  CHECK(info->host.cap_add.empty());
  CHECK(std::find(info->host.security_opt.begin(), info->host.security_opt.end(), "no-new-privileges") !=
        info->host.security_opt.end());
  CHECK(info->host.readonly_rootfs);
  CHECK(info->host.network_mode == "none");
  CHECK(info->host.tmpfs.empty());  // nothing writable needed

  // The kernel's view, when the daemon shares this machine's /proc (a local daemon).
  std::ifstream status("/proc/" + std::to_string(info->state.pid) + "/status");
  if (status) {
    std::string all((std::istreambuf_iterator<char>(status)), std::istreambuf_iterator<char>());
    CHECK(all.find("Uid:\t13\t13\t13\t13") != std::string::npos);
    CHECK(all.find("Gid:\t13\t13\t13\t13") != std::string::npos);
    CHECK(all.find("CapEff:\t0000000000000000") != std::string::npos);
    CHECK(all.find("NoNewPrivs:\t1") != std::string::npos);
  } else {
    MESSAGE("daemon on another machine: process credentials not checked");
  }

  // shutdown_lifetime 1 s: a stop finishes well inside docker's 10 s grace period, without SIGKILL.
  auto stop_begin = std::chrono::steady_clock::now();
  must(engine::stop_container(c, box.id, 10));
  CHECK(std::chrono::steady_clock::now() - stop_begin < std::chrono::seconds(6));
  auto after = engine::inspect_container(c, box.id);
  must(after);
  CHECK_FALSE(after->state.running);
  CHECK(after->state.exit_code != 137);
}
