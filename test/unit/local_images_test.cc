// Which local images a sweep checks: the services image only when a task needs it.
#include <doctest/doctest.h>

#include "engine/client.h"
#include "stack/local_images.h"
#include "support/fake_transport.h"

using forge::test::FakeTransport;
namespace engine = forge::engine;
namespace stack = forge::stack;

namespace {

std::shared_ptr<FakeTransport> images_present() {
  auto fake = std::make_shared<FakeTransport>();
  fake->on(engine::Method::kGet, "/images/forgectl/runner:local/json", 200, R"({"Id":"sha256:r"})");
  fake->on(engine::Method::kGet, "/images/forgectl/squid:local/json", 200, R"({"Id":"sha256:s"})");
  fake->on(engine::Method::kGet, "/images/forgectl/services:test/json", 200, R"({"Id":"sha256:v"})");
  return fake;
}

}  // namespace

TEST_CASE("local images: a sweep whose tasks run no built-in service never looks for the services image") {
  auto fake = images_present();
  engine::Client c(fake);
  auto host = forge::HostSettings::defaults();
  host.services_image = "forgectl/services:test";
  auto built = stack::ensure_local_images(c, host, {}, {.runner = true, .squid = true, .services = false});
  REQUIRE(built.has_value());
  CHECK(built->empty());
  CHECK(fake->sent("/images/forgectl/runner:local").size() == 1);
  CHECK(fake->sent("/images/forgectl/squid:local").size() == 1);
  CHECK(fake->sent("/images/forgectl/services").empty());
  CHECK(fake->sent("/build").empty());
}

TEST_CASE("local images: the services image alone when a task needs it, and built when missing") {
  auto fake = images_present();
  engine::Client c(fake);
  auto host = forge::HostSettings::defaults();
  host.services_image = "forgectl/services:test";
  auto there = stack::ensure_local_images(c, host, {}, {.runner = false, .squid = false, .services = true});
  REQUIRE(there.has_value());
  CHECK(there->empty());
  CHECK(fake->sent("/images/forgectl/services:test").size() == 1);
  CHECK(fake->sent("/images/forgectl/runner").empty());
  CHECK(fake->sent("/images/forgectl/squid").empty());

  // Missing: a build is attempted (the fake daemon refuses it, which is the error we see).
  auto missing = std::make_shared<FakeTransport>();
  engine::Client c2(missing);
  host.services_image = "forgectl/services:absent";
  auto built = stack::ensure_local_images(c2, host, {}, {.runner = false, .squid = false, .services = true});
  CHECK_FALSE(built.has_value());
  CHECK(missing->sent("/images/forgectl/services:absent").size() == 1);
}
