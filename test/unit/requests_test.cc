// Request shapes (method, path, query, content type, body) of every engine endpoint, against golden JSON files.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/strings.h"
#include "engine/archive.h"
#include "engine/client.h"
#include "engine/containers.h"
#include "engine/exec.h"
#include "engine/images.h"
#include "engine/networks.h"
#include "engine/system.h"
#include "support/fake_transport.h"
#include "support/golden.h"

using namespace forge;
using namespace forge::engine;
using forge::test::check_golden;
using forge::test::FakeTransport;

namespace {

struct Fx {
  std::shared_ptr<FakeTransport> fake = std::make_shared<FakeTransport>();
  Client c{fake};
};

std::string url_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];  // as Go's url.ParseQuery reads it
    }
  }
  return out;
}

// The query as the daemon decodes it: key → values, in order.
std::map<std::string, std::vector<std::string>> query_of(const Request& r) {
  std::map<std::string, std::vector<std::string>> q;
  auto qm = r.target.find('?');
  if (qm == std::string::npos) return q;
  std::string_view rest = std::string_view(r.target).substr(qm + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    auto eq = pair.find('=');
    q[url_decode(pair.substr(0, eq))].push_back(eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1)));
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
  }
  return q;
}

std::string query_param(const Request& r, const std::string& key) {
  auto q = query_of(r);
  auto it = q.find(key);
  REQUIRE_MESSAGE(it != q.end(), "no '" << key << "' in " << r.target);
  REQUIRE(it->second.size() == 1);
  return it->second.front();
}

std::string canon(std::string_view json) {
  auto c = json::canonical(json);
  REQUIRE_MESSAGE(c, "not JSON: " << json);
  return *c;
}

bool is_json_container(const std::string& v) {
  return !v.empty() && (v.front() == '{' || v.front() == '[') && json::canonical(v);
}

// One request as a JSON document: query values that are JSON (filters, labels) are embedded decoded.
std::string describe(const Request& r) {
  json::Writer w;
  w.begin_object().field("method", method_name(r.method));
  w.field("path", r.target.substr(0, r.target.find('?')));
  w.key("query").begin_object();
  for (const auto& [k, vs] : query_of(r)) {
    w.key(k);
    if (vs.size() > 1) w.begin_array();
    for (const auto& v : vs) is_json_container(v) ? w.raw_value(canon(v)) : w.str(v);
    if (vs.size() > 1) w.end_array();
  }
  w.end_object();
  if (!r.content_type.empty()) w.field("content_type", r.content_type);
  if (r.content_type.starts_with("application/json")) {
    w.key("body").raw_value(canon(r.body));
  } else if (!r.body.empty()) {
    w.field("body_bytes", static_cast<std::int64_t>(r.body.size()));
  }
  if (r.timeout.count() > 0) w.field("timeout_ms", static_cast<std::int64_t>(r.timeout.count()));
  w.end_object();
  return w.take();
}

const Request& only_request(const Fx& f) {
  REQUIRE(f.fake->requests.size() == 1);
  return f.fake->requests.front();
}

}  // namespace

TEST_CASE("network create: CheckDuplicate, Internal, IPAM subnet and gateway, labels, driver options") {
  Fx f;
  f.fake->on(Method::kPost, "/networks/create", 201, R"({"Id":"5e2c0a1b","Warning":""})");
  NetworkSpec s;
  s.name = "demo-internal";
  s.internal = true;
  s.ipam = IpamConfig{"10.213.4.0/28", "10.213.4.1"};
  s.labels = {{"io.forgectl.project", "demo"}, {"io.forgectl.network", "internal"}};
  s.options = {{"com.docker.network.bridge.name", "fx-demo0"}};
  auto id = create_network(f.c, s);
  REQUIRE(id);
  CHECK(*id == "5e2c0a1b");
  const auto& r = only_request(f);
  auto body = json::parse(r.body, "body");
  REQUIRE(body);
  REQUIRE(body->HasMember("CheckDuplicate"));
  CHECK((*body)["CheckDuplicate"].IsTrue());  // false is the 1.41 default: duplicates would make names ambiguous
  check_golden("network_create", describe(r));
}

TEST_CASE("network create without an explicit subnet leaves IPAM to the daemon's pools") {
  Fx f;
  f.fake->on(Method::kPost, "/networks/create", 201, R"({"Id":"n2","Warning":""})");
  REQUIRE(create_network(f.c, NetworkSpec{.name = "demo-edge"}));
  auto body = json::parse(only_request(f).body, "body");
  REQUIRE(body);
  CHECK_FALSE(body->HasMember("IPAM"));
  CHECK(json::get_bool(*body, "CheckDuplicate"));
  CHECK_FALSE(json::get_bool(*body, "Internal", true));
}

TEST_CASE("network connect with aliases, disconnect, remove, inspect") {
  Fx f;
  f.fake->on(Method::kPost, "/networks/5e2c0a1b/connect", 200);
  f.fake->on(Method::kPost, "/networks/5e2c0a1b/disconnect", 200);
  f.fake->on(Method::kDelete, "/networks/5e2c0a1b", 204);
  f.fake->on(Method::kGet, "/networks/5e2c0a1b", 200,
             R"({"Name":"demo-internal","Id":"5e2c0a1b","Driver":"bridge","Internal":true,
                 "IPAM":{"Driver":"default","Config":[{"Subnet":"10.213.4.0/28","Gateway":"10.213.4.1"}]},
                 "Labels":{"io.forgectl.project":"demo"},"Options":{},
                 "Containers":{"c0ffee":{"Name":"demo-web-1","EndpointID":"e","MacAddress":"02:42:0a:d5:04:02",
                                         "IPv4Address":"10.213.4.2/28","IPv6Address":""}}})");

  REQUIRE(connect_network(f.c, "5e2c0a1b", "demo-web-1", {"web", "svc-web"}));
  REQUIRE(disconnect_network(f.c, "5e2c0a1b", "demo-web-1", true));
  REQUIRE(remove_network(f.c, "5e2c0a1b"));
  auto info = inspect_network(f.c, "5e2c0a1b");
  REQUIRE(info);
  CHECK(info->internal);
  REQUIRE(info->ipam.size() == 1);
  CHECK(info->ipam[0].gateway == "10.213.4.1");
  CHECK(info->containers["c0ffee"].ipv4_address == "10.213.4.2/28");

  REQUIRE(f.fake->requests.size() == 4);
  check_golden("network_connect", describe(f.fake->requests[0]));
  check_golden("network_disconnect", describe(f.fake->requests[1]));
  check_golden("network_remove", describe(f.fake->requests[2]));
  check_golden("network_inspect", describe(f.fake->requests[3]));
}

TEST_CASE("network list sends the label filter as a JSON object of string arrays") {
  Fx f;
  f.fake->on(Method::kGet, "/networks", 200, R"([{"Name":"demo-internal","Id":"5e2c0a1b","Containers":{}}])");
  auto nets = list_networks(f.c, {{"label", {"io.forgectl.project=demo", "io.forgectl.managed=true"}}});
  REQUIRE(nets);
  REQUIRE(nets->size() == 1);
  CHECK((*nets)[0].id == "5e2c0a1b");
  const auto& r = only_request(f);
  CHECK(canon(query_param(r, "filters")) ==
        canon(R"({"label":["io.forgectl.project=demo","io.forgectl.managed=true"]})"));
  check_golden("network_list", describe(r));
}

namespace {

ContainerSpec hardened_spec() {
  ContainerSpec s;
  s.name = "demo-web-1";
  s.image = "sha256:7d9e1c0f";
  s.entrypoint = std::vector<std::string>{"/.forgectl/init"};
  s.cmd = std::vector<std::string>{"sh", "-c", "exec httpd -f -p 8080 -h /srv"};
  s.env = {"FOO=bar", "GREETING=two words"};
  s.user = "65534:65534";
  s.workdir = "/srv";
  s.hostname = "web";
  s.labels = {{"io.forgectl.project", "demo"}, {"io.forgectl.service", "web"}};
  s.healthcheck = Healthcheck{{"CMD-SHELL", "wget -q -O- http://127.0.0.1:8080/ || exit 1"},
                              Millis(1500), Millis(1000), Millis(10000), 3};
  s.stop_signal = "SIGTERM";
  s.stop_timeout = 2;
  HostSpec& h = s.host;
  h.cap_drop = {"ALL"};
  h.cap_add = {"NET_BIND_SERVICE"};
  h.security_opt = {"no-new-privileges:true"};
  h.pids_limit = 64;
  h.memory = 64L << 20;
  h.memory_swap = 64L << 20;
  h.nano_cpus = 500000000;
  h.readonly_rootfs = true;
  h.tmpfs = {{"/tmp", "rw,noexec,nosuid,size=16m"}};
  h.init = true;
  h.binds = {"/srv/demo/data:/data:ro"};
  h.ulimits = {{"nofile", 1024, 2048}};
  s.network = "demo-internal";
  s.aliases = {"web", "svc-web"};
  return s;
}

}  // namespace

TEST_CASE("container create carries every hardening field, nanosecond durations and one matching network") {
  Fx f;
  f.fake->on(Method::kPost, "/containers/create", 201, R"({"Id":"c0ffee","Warnings":[]})");
  auto created = create_container(f.c, hardened_spec());
  REQUIRE(created);
  CHECK(created->id == "c0ffee");
  const auto& r = only_request(f);
  CHECK(query_param(r, "name") == "demo-web-1");
  auto body = json::parse(r.body, "body");
  REQUIRE(body);
  const auto* hc = json::get_object(*body, "Healthcheck");
  REQUIRE(hc);
  CHECK(json::get_int(*hc, "Interval") == 1500000000);
  CHECK(json::get_int(*hc, "StartPeriod") == 10000000000);
  const auto* host = json::get_object(*body, "HostConfig");
  REQUIRE(host);
  CHECK(json::get_string(*host, "NetworkMode") == "demo-internal");
  const auto* nc = json::get_object(*body, "NetworkingConfig");
  REQUIRE(nc);
  const auto* eps = json::get_object(*nc, "EndpointsConfig");
  REQUIRE(eps);
  CHECK(eps->MemberCount() == 1);  // API 1.41 refuses more than one network at create
  CHECK(json::get_strings((*eps)["demo-internal"], "Aliases") == std::vector<std::string>{"web", "svc-web"});
  check_golden("container_create", describe(r));
}

TEST_CASE("container create: the joined network overrides a different NetworkMode; none stays none") {
  ContainerSpec s;
  s.image = "busybox:local";
  s.host.network_mode = "bridge";
  s.network = "demo-internal";
  auto body = json::parse(container_create_body(s), "body");
  REQUIRE(body);
  CHECK(json::get_string((*body)["HostConfig"], "NetworkMode") == "demo-internal");

  ContainerSpec none;
  none.image = "busybox:local";
  none.host.network_mode = "none";
  auto b2 = json::parse(container_create_body(none), "body");
  REQUIRE(b2);
  CHECK(json::get_string((*b2)["HostConfig"], "NetworkMode") == "none");
  CHECK_FALSE(b2->HasMember("NetworkingConfig"));
  CHECK_FALSE(b2->HasMember("Cmd"));  // unset = the image's own
}

TEST_CASE("container start, stop, kill, wait and remove query strings") {
  Fx f;
  f.fake->on(Method::kPost, "/containers/c0ffee/start", 204);
  f.fake->on(Method::kPost, "/containers/c0ffee/stop", 204);
  f.fake->on(Method::kPost, "/containers/c0ffee/kill", 204);
  f.fake->on(Method::kPost, "/containers/c0ffee/wait", 200, "{\"Error\":null,\"StatusCode\":137}\n");
  f.fake->on(Method::kDelete, "/containers/c0ffee", 204);

  REQUIRE(start_container(f.c, "c0ffee"));
  REQUIRE(stop_container(f.c, "c0ffee", 7));
  REQUIRE(kill_container(f.c, "c0ffee"));
  REQUIRE(kill_container(f.c, "c0ffee", "SIGTERM"));
  auto code = wait_container(f.c, "c0ffee", WaitCondition::kNextExit, Millis(60000));
  REQUIRE(code);
  CHECK(*code == 137);
  REQUIRE(remove_container(f.c, "c0ffee"));
  REQUIRE(remove_container(f.c, "c0ffee", RemoveMode::kNormal));

  const auto& rs = f.fake->requests;
  REQUIRE(rs.size() == 7);
  CHECK(query_param(rs[1], "t") == "7");
  CHECK(rs[1].timeout >= Millis(7000));  // the HTTP call must outlive the daemon's grace period
  CHECK(query_param(rs[2], "signal") == "SIGKILL");
  CHECK(query_param(rs[4], "condition") == "next-exit");
  std::string all = "{\"start\":" + describe(rs[0]) + ",\"stop\":" + describe(rs[1]) + ",\"kill\":" + describe(rs[2]) +
                    ",\"kill_term\":" + describe(rs[3]) + ",\"wait\":" + describe(rs[4]) +
                    ",\"remove_force\":" + describe(rs[5]) + ",\"remove\":" + describe(rs[6]) + "}";
  check_golden("container_lifecycle", all);
}

TEST_CASE("exec create body and exec start on a hijacked connection") {
  Fx f;
  f.fake->on(Method::kPost, "/containers/demo-web-1/exec", 201, R"({"Id":"e1e1"})");
  f.fake->on_hijack("/exec/e1e1/start");
  ExecCreateSpec spec{{"sh", "-c", "echo out:$X"}, {"X=1", "Y=two words"}, "65534:65534", "/etc", true};
  auto id = exec_create(f.c, "demo-web-1", spec);
  REQUIRE(id);
  CHECK(*id == "e1e1");
  auto stream = exec_start(f.c, *id);
  REQUIRE(stream);
  REQUIRE(f.fake->requests.size() == 2);
  const auto& start = f.fake->requests[1];
  CHECK(start.method == Method::kPost);
  CHECK(start.target == "/v1.41/exec/e1e1/start");
  CHECK(canon(start.body) == canon(R"({"Detach":false,"Tty":false})"));
  check_golden("exec_create", describe(f.fake->requests[0]));
  check_golden("exec_start", describe(start));
}

TEST_CASE("archive put, get and HEAD stat") {
  Fx f;
  std::string stat_json = R"({"name":"app","size":4096,"mode":2147484141,"mtime":"2024-03-01T10:00:00Z","linkTarget":""})";
  std::string stat_b64 = base64_encode(stat_json);
  f.fake->on(Method::kPut, "/containers/demo-web-1/archive", 200);
  f.fake->on(Method::kGet, "/containers/demo-web-1/archive", 200, std::string(1024, '\0'),
             {{"content-type", "application/x-tar"}, {"x-docker-container-path-stat", stat_b64}});
  f.fake->on(Method::kHead, "/containers/demo-web-1/archive", 200, "", {{"x-docker-container-path-stat", stat_b64}});

  std::string tar(2048, 'T');
  REQUIRE(put_archive(f.c, "demo-web-1", "/srv/app", tar));
  auto got = get_archive(f.c, "demo-web-1", "/srv/app");
  REQUIRE(got);
  CHECK(got->tar.size() == 1024);
  CHECK(got->stat.name == "app");
  CHECK(got->stat.is_dir());
  auto st = stat_path(f.c, "demo-web-1", "/srv/app");
  REQUIRE(st);
  CHECK(st->perm() == 0755);

  REQUIRE(f.fake->requests.size() == 3);
  const auto& put = f.fake->requests[0];
  CHECK(put.body == tar);
  CHECK(put.content_type == "application/x-tar");
  CHECK(query_param(put, "path") == "/srv/app");
  CHECK(query_param(put, "noOverwriteDirNonDir") == "true");
  CHECK(f.fake->requests[2].method == Method::kHead);
  check_golden("archive_put", describe(put));
  check_golden("archive_get", describe(f.fake->requests[1]));
  check_golden("archive_stat", describe(f.fake->requests[2]));
}

TEST_CASE("build query: tags, networkmode=none, labels JSON, dockerfile; the context goes as a tar") {
  Fx f;
  f.fake->on(Method::kPost, "/build", 200,
             "{\"stream\":\"Step 1/2 : FROM scratch\\n\"}\n{\"aux\":{\"ID\":\"sha256:9a8b7c\"}}\n"
             "{\"stream\":\"Successfully tagged forgectl/runner:0.1\\n\"}\n");
  BuildSpec s;
  s.context_tar = std::string(3072, 'C');
  s.tags = {"forgectl/runner:0.1", "forgectl/runner:latest"};
  s.dockerfile = "docker/Dockerfile.runner";
  s.labels = {{"io.forgectl.image", "runner"}};
  s.build_args = {{"VERSION", "0.1"}};
  std::vector<std::string> progress;
  auto id = build_image(f.c, s, [&](std::string_view t) { progress.emplace_back(t); });
  REQUIRE(id);
  CHECK(*id == "sha256:9a8b7c");
  CHECK(progress.size() == 2);
  const auto& r = only_request(f);
  CHECK(r.content_type == "application/x-tar");
  CHECK(r.body == s.context_tar);
  CHECK(query_param(r, "networkmode") == "none");
  CHECK(query_of(r)["t"] == s.tags);
  CHECK(canon(query_param(r, "labels")) == canon(R"({"io.forgectl.image":"runner"})"));
  CHECK_FALSE(query_of(r).contains("pull"));  // never reach a registry
  check_golden("image_build", describe(r));
}

TEST_CASE("image inspect, tag, remove, load and pinned pull") {
  Fx f;
  f.fake->on(Method::kGet, "/images/forgectl/runner:0.1/json", 200,
             R"({"Id":"sha256:9a8b7c","RepoTags":["forgectl/runner:0.1"],"RepoDigests":[],"Size":1234,
                 "Config":{"Labels":{"io.forgectl.image":"runner"}}})");
  f.fake->on(Method::kPost, "/images/sha256:9a8b7c/tag", 201);
  f.fake->on(Method::kDelete, "/images/forgectl/runner:0.1", 200, R"([{"Untagged":"forgectl/runner:0.1"}])");
  f.fake->on(Method::kPost, "/images/load", 200, "{\"stream\":\"Loaded image: forgectl/runner:0.1\\n\"}\n");
  const std::string digest = "sha256:" + std::string(64, 'a');
  f.fake->on(Method::kPost, "/images/create", 200, "{\"status\":\"Digest: " + digest + "\"}\n");
  f.fake->on(Method::kGet, "/images/busybox@" + digest + "/json", 200, R"({"Id":"sha256:beef"})");

  auto img = inspect_image(f.c, "forgectl/runner:0.1");
  REQUIRE(img);
  CHECK(img->labels["io.forgectl.image"] == "runner");
  REQUIRE(tag_image(f.c, "sha256:9a8b7c", "forgectl/runner", "0.1"));
  REQUIRE(remove_image(f.c, "forgectl/runner:0.1", true));
  auto loaded = load_images(f.c, std::string(512, 'L'));
  REQUIRE(loaded);
  CHECK(*loaded == std::vector<std::string>{"forgectl/runner:0.1"});
  auto pulled = pull_image_by_digest(f.c, "busybox@" + digest);
  REQUIRE(pulled);
  CHECK(*pulled == "sha256:beef");

  const auto& rs = f.fake->requests;
  REQUIRE(rs.size() == 6);
  CHECK(query_param(rs[1], "repo") == "forgectl/runner");
  CHECK(rs[3].content_type == "application/x-tar");
  CHECK(query_param(rs[4], "fromImage") == "busybox");
  CHECK(query_param(rs[4], "tag") == digest);
  check_golden("image_inspect", describe(rs[0]));
  check_golden("image_tag", describe(rs[1]));
  check_golden("image_remove", describe(rs[2]));
  check_golden("image_load", describe(rs[3]));
  check_golden("image_pull", describe(rs[4]));
}

TEST_CASE("events: filters as JSON, since and until") {
  Fx f;
  f.fake->on(Method::kGet, "/events", 200,
             "{\"Type\":\"container\",\"Action\":\"start\",\"Actor\":{\"ID\":\"c0ffee\",\"Attributes\":{\"name\":\"demo-web-1\"}},"
             "\"timeNano\":1700000001000000000}\n"
             "{\"Type\":\"container\",\"Action\":\"die\",\"Actor\":{\"ID\":\"c0ffee\",\"Attributes\":{\"exitCode\":\"2\"}},"
             "\"timeNano\":1700000002000000000}\n");
  EventQuery q;
  q.filters = {{"type", {"container"}}, {"label", {"io.forgectl.project=demo"}}};
  q.since = 1700000000;
  q.until = 1700000060;
  std::vector<Event> seen;
  REQUIRE(events(f.c, q, [&](const Event& e) {
    seen.push_back(e);
    return true;
  }));
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].action == "die");
  CHECK(seen[1].attributes["exitCode"] == "2");
  const auto& r = only_request(f);
  CHECK(canon(query_param(r, "filters")) == canon(R"({"label":["io.forgectl.project=demo"],"type":["container"]})"));
  check_golden("events", describe(r));
}

// A fork's snapshot (docs/sweeps.md "Forks"): the set-up container committed, unpaused, under
// forgectl's snapshot labels; the image id comes back.
TEST_CASE("container commit sends the container, the tag and the labels") {
  Fx f;
  f.fake->on(Method::kPost, "/commit", 201, R"({"Id":"sha256:5a5a"})");
  CommitSpec s{"abc123", "forgectl-snapshot", "run1-0", "", {{"io.forgectl.snapshot", "run1"}}};
  auto id = commit_container(f.c, s);
  REQUIRE(id);
  CHECK(*id == "sha256:5a5a");
  const auto& r = only_request(f);
  CHECK(query_param(r, "container") == "abc123");
  CHECK(query_param(r, "pause") == "false");
  CHECK(query_param(r, "repo") == "forgectl-snapshot");
  CHECK(query_param(r, "tag") == "run1-0");
  CHECK(canon(r.body) == canon(R"({"Labels":{"io.forgectl.snapshot":"run1"}})"));
}

TEST_CASE("container commit without an image id in the reply is an error") {
  Fx f;
  f.fake->on(Method::kPost, "/commit", 201, R"({})");
  auto id = commit_container(f.c, CommitSpec{"abc123", "", "", "", {}});
  REQUIRE_FALSE(id);
  CHECK(id.error().code == Errc::kProtocol);
}
