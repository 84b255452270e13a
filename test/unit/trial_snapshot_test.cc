// Set up once, fork many (docs/sweeps.md "Forks"): the starting workspace's hash, which proves two
// forks alike, and the snapshot images' tags.
#include <doctest/doctest.h>

#include <thread>

#include "support/fake_transport.h"
#include "trial/service_capture.h"
#include "trial/snapshot.h"
#include "trial/snapshot_cache.h"

using namespace forge;
using namespace forge::trial;
using engine::EntryType;
using engine::TarEntry;

namespace {

std::vector<TarEntry> workspace() {
  return {{"workspace/", EntryType::kDirectory, 0755, "", "", 100, 1000, 1000},
          {"workspace/a.txt", EntryType::kFile, 0644, "hello", "", 200, 1000, 1000},
          {"workspace/d/", EntryType::kDirectory, 0755, "", "", 300, 1000, 1000},
          {"workspace/d/link", EntryType::kSymlink, 0777, "", "../a.txt", 400, 1000, 1000}};
}

}  // namespace

TEST_CASE("workspace hash: order, times and the base name do not count; content, mode, owner and links do") {
  const std::string h = workspace_hash(workspace());
  CHECK(h.size() == 64);
  auto reordered = workspace();
  std::swap(reordered[1], reordered[3]);
  for (auto& e : reordered) e.mtime += 99;
  for (auto& e : reordered) e.path.replace(0, 9, "work");  // another workdir's base name
  CHECK(workspace_hash(reordered) == h);

  auto content = workspace();
  content[1].content = "hellO";
  auto mode = workspace();
  mode[1].mode = 0755;
  auto owner = workspace();
  owner[1].uid = 0;
  auto link = workspace();
  link[3].link_target = "/etc/passwd";
  auto added = workspace();
  added.push_back({"workspace/planted.txt", EntryType::kFile, 0644, "", "", 0, 1000, 1000});
  for (const auto* v : {&content, &mode, &owner, &link, &added}) CHECK(workspace_hash(*v) != h);
}

TEST_CASE("snapshot tags: the run id made a valid tag, numbered") {
  CHECK(snapshot_tag("37a13129f2dc", 1) == "37a13129f2dc-1");
  CHECK(snapshot_tag("Run/ID:x", 2) == "runidx-2");
  CHECK(snapshot_tag("-x", 3) == "run-x-3");
  CHECK(snapshot_tag(std::string(300, 'a'), 4).size() == 102);
}

TEST_CASE("snapshot cache: one trial takes, the others wait and fork; a failed taker hands over; refused is setup") {
  auto fake = std::make_shared<forge::test::FakeTransport>();
  engine::Client c{fake}, other{fake};
  SnapshotCache cache("run1");
  auto first = cache.acquire(c, "task");
  REQUIRE(first.taking());
  CHECK(first.tag() == "run1-1");
  std::string seen;
  std::thread waiter([&] {
    auto l = cache.acquire(c, "task");
    if (l.fork()) seen = l.fork()->image_id;
  });
  std::this_thread::sleep_for(Millis(50));
  CHECK(seen.empty());  // still waiting for the snapshot
  first.publish(ForkState{"sha256:aa", "ee", {}});
  waiter.join();
  CHECK(seen == "sha256:aa");
  CHECK(cache.acquire(c, "task").fork() != nullptr);
  CHECK(cache.acquire(other, "task").taking());  // another engine: its own snapshot

  { auto lost = cache.acquire(c, "abandoned"); REQUIRE(lost.taking()); }  // the taker failed before publishing
  CHECK(cache.acquire(c, "abandoned").taking());
  {
    auto no = cache.acquire(c, "refused");
    no.refuse();
  }
  auto after = cache.acquire(c, "refused");
  CHECK_FALSE(after.taking());
  CHECK(after.fork() == nullptr);

  ForkState with_services{"sha256:bb", "ee", {}};
  with_services.service_images = {"sha256:svc"};
  { auto l = cache.acquire(c, "services"); REQUIRE(l.taking()); l.publish(with_services); }
  fake->on(engine::Method::kDelete, "/images/sha256:", 200, "[]");
  CHECK(cache.remove_all().empty());
  REQUIRE(fake->requests.size() == 3);  // the snapshot, and beside it its service's set-up image
  CHECK(fake->sent("/images/sha256:aa?force=1").size() == 1);
  CHECK(fake->sent("/images/sha256:bb?force=1").size() == 1);
  CHECK(fake->sent("/images/sha256:svc?force=1").size() == 1);
  CHECK(cache.acquire(c, "task").fork() == nullptr);  // removed: no later trial forks from it
}

TEST_CASE("forks: a task whose setup may change state a snapshot cannot hold (a service's tmpfs) is never forked") {
  manifest::TaskConfig t;
  for (const char* own : {"json-db", "mock-web", "rag"}) {
    manifest::ComposeService s;
    s.name = own;
    t.environment.compose.services.push_back(s);
  }
  CHECK(fork_unsafe_because(t).empty());  // json-db is captured; mock-web and rag are filled per trial
  manifest::ComposeService db;
  db.name = "postgres";
  t.environment.compose.services.push_back(db);
  CHECK(fork_unsafe_because(t).empty());  // its filesystem and volumes are captured
  CHECK(captured_services(t) == std::vector<std::string>{"postgres"});
  t.environment.compose.services.back().tmpfs["/run/pg"] = "";
  CHECK(fork_unsafe_because(t) == "service 'postgres' keeps state in tmpfs /run/pg, which a snapshot cannot hold");
  t.environment.compose.services.pop_back();
  CHECK(captured_services(t).empty());
  manifest::McpServerConfig py;
  py.script = "server.py";
  t.environment.tools.mcp_server = py;
  CHECK(fork_unsafe_because(t).empty());  // its state is captured and seeded into each fork's server
}

TEST_CASE("kept snapshots: the first to ask forks from a kept image of its content key; a keyed snapshot outlives the run") {
  auto fake = std::make_shared<forge::test::FakeTransport>();
  engine::Client c{fake};
  SnapshotCache cache("run2", SnapshotKeeping{true, nullptr});
  fake->on(engine::Method::kGet, "/images/json",
           200,
           R"([{"Id":"sha256:old","Created":1,"Labels":{"io.forgectl.snapshot-key":"k1","io.forgectl.snapshot-workspace":"w0"}},)"
           R"({"Id":"sha256:new","Created":2,"Labels":{"io.forgectl.snapshot-key":"k1","io.forgectl.snapshot-workspace":"w1"}}])");
  auto l = cache.acquire(c, "task", "k1");
  REQUIRE(l.fork() != nullptr);  // no trial of this run runs setup
  CHECK(l.fork()->kept);
  CHECK(l.fork()->image_id == "sha256:new");  // the newest of its key
  CHECK(l.fork()->workspace_sha256 == "w1");
  CHECK(fake->requests[0].target.find("io.forgectl.snapshot-key%3Dk1") != std::string::npos);

  auto none = std::make_shared<forge::test::FakeTransport>();
  none->on(engine::Method::kGet, "/images/json", 200, "[]");
  engine::Client c2{none};
  auto fresh = cache.acquire(c2, "changed", "k2");  // another key: nothing kept, so it takes (and keeps) one
  REQUIRE(fresh.taking());
  CHECK(fresh.content_key() == "k2");
  fresh.publish(ForkState{"sha256:k2", "w2", {}});
  const auto before = fake->requests.size() + none->requests.size();
  CHECK(cache.remove_all().empty());
  CHECK(fake->requests.size() + none->requests.size() == before);  // neither is removed at the run's end
}

TEST_CASE("snapshot initial files: any bytes round-trip; a malformed list is an error") {
  std::map<std::string, std::string> files{{"a b/c.txt", "line\nnext \x01\xff"}, {"empty", ""}};
  auto back = decode_initial_files(encode_initial_files(files));
  REQUIRE(back.has_value());
  CHECK(*back == files);
  CHECK(decode_initial_files("").value().empty());
  CHECK_FALSE(decode_initial_files("not-base64!\n").has_value());
  CHECK_FALSE(decode_initial_files("YQ==\n").has_value());  // a path without content
}

TEST_CASE("service capture: volumes and read-only binds can be captured; a writable bind or a tmpfs cannot") {
  using engine::MountPoint;
  CHECK(uncapturable_mount("db", {}).empty());
  CHECK(uncapturable_mount("db", {MountPoint{"volume", "abc", "", "/data", "local", true},
                                  MountPoint{"bind", "", "/etc/x", "/etc/x", "", false}})
            .empty());
  CHECK(uncapturable_mount("db", {MountPoint{"bind", "", "/srv", "/srv", "", true}}) ==
        "service 'db' has a writable bind mount at /srv, which a snapshot cannot hold");
  CHECK(uncapturable_mount("db", {MountPoint{"tmpfs", "", "", "/cache", "", true}}) ==
        "service 'db' has a writable tmpfs mount at /cache, which a snapshot cannot hold");
}

TEST_CASE("service capture: the list of services round-trips; a malformed one is an error") {
  std::vector<stack::ServiceSwap> in{{"db", "sha256:1", {{"/data", "tar1"}, {"/var/lib/x y", "tar2"}}},
                                     {"cache", "sha256:2", {}}};
  auto back = decode_services(encode_services(in));
  REQUIRE(back.has_value());
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].key == "db");
  CHECK((*back)[0].image == "sha256:1");
  REQUIRE((*back)[0].volumes.size() == 2);
  CHECK((*back)[0].volumes[1].target == "/var/lib/x y");
  CHECK((*back)[0].volumes[1].tar.empty());  // the tars are stored beside the list
  CHECK((*back)[1].volumes.empty());
  CHECK(decode_services("").value().empty());
  CHECK_FALSE(decode_services("ZGI=\n").has_value());  // a service without an image
  CHECK_FALSE(decode_services("ZGI= !!\n").has_value());
}

TEST_CASE("service swap: a service comes after the swapped ones it depends on; a tag is cut to 128") {
  policy::StackPlan plan;
  policy::ContainerPlan app, db, cache;
  app.key = "app";
  app.depends_on = {{"db", manifest::DependCondition::kHealthy}, {"json-db", manifest::DependCondition::kStarted}};
  db.key = "db";
  db.depends_on = {{"cache", manifest::DependCondition::kStarted}};
  cache.key = "cache";
  plan.services = {app, db, cache};
  auto order = stack::in_dependency_order(plan, {{"app", "i1", {}}, {"db", "i2", {}}, {"cache", "i3", {}}});
  REQUIRE(order.size() == 3);
  CHECK(order[0].key == "cache");
  CHECK(order[1].key == "db");
  CHECK(order[2].key == "app");
  CHECK(service_image_tag("run-1", "db") == "run-1-db");
  CHECK(service_image_tag(std::string(120, 'r'), "database").size() == 128);
}
