// Images against the real daemon: build from a tar context (no network, no pull), inspect, tag,
// list by label, save and load, remove; build failures reported inside a 200 stream.
#include <doctest/doctest.h>

#include "core/strings.h"
#include "engine/images.h"
#include "engine/tar.h"
#include "stack/local_images.h"
#include "support/containers.h"

using namespace forge;
using namespace forge::test;

namespace {

std::string context(const std::string& dockerfile) {
  engine::TarWriter w;
  REQUIRE(w.add_file("Dockerfile", dockerfile).has_value());
  REQUIRE(w.add_file("hello.txt", "hello\n").has_value());
  auto tar = w.finish();
  REQUIRE(tar.has_value());
  return *tar;
}

}  // namespace

TEST_CASE("build, inspect, tag, list, save, load and remove an image") {
  auto& c = *docker_env().client;
  std::string tag = "forgectl-test/img:" + random_hex(4);
  std::string mark = random_hex(4);
  engine::BuildSpec spec;
  spec.context_tar = context(std::string("FROM ") + stack::kRunnerImage + "\nCOPY hello.txt /hello.txt\nRUN cat /hello.txt > /copy.txt\n");
  spec.tags = {tag};
  spec.labels = {{"io.forgectl.test-image", mark}};
  std::vector<std::string> progress;
  auto id = engine::build_image(c, spec, [&](std::string_view l) { progress.emplace_back(l); });
  must(id);
  CHECK(starts_with(*id, "sha256:"));
  CHECK_FALSE(progress.empty());

  auto info = engine::inspect_image(c, tag);
  must(info);
  CHECK(info->id == *id);
  CHECK(info->labels.at("io.forgectl.test-image") == mark);
  CHECK(info->repo_digests.empty());  // built locally: no registry digest

  std::string tag2 = "forgectl-test/img2:" + random_hex(4);
  must(engine::tag_image(c, tag, tag2.substr(0, tag2.find(':')), tag2.substr(tag2.find(':') + 1)));
  auto listed = engine::list_images(c, {{"label", {"io.forgectl.test-image=" + mark}}});
  must(listed);
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().id == *id);

  auto saved = engine::save_images(c, {tag2});
  must(saved);
  must(engine::remove_image(c, tag2));
  auto gone = engine::inspect_image(c, tag2);
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().code == Errc::kNotFound);
  auto loaded = engine::load_images(c, *saved);
  must(loaded);
  CHECK(std::find(loaded->begin(), loaded->end(), tag2) != loaded->end());
  auto back = engine::inspect_image(c, tag2);
  must(back);
  CHECK(back->id == *id);

  must(engine::remove_image(c, tag2));
  must(engine::remove_image(c, tag));
  auto none = engine::inspect_image(c, *id);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code == Errc::kNotFound);
}

TEST_CASE("a failing build step is an error carrying the daemon's message") {
  auto& c = *docker_env().client;
  engine::BuildSpec spec;
  spec.context_tar = context(std::string("FROM ") + stack::kRunnerImage + "\nRUN exit 3\n");
  spec.tags = {"forgectl-test/fail:" + random_hex(4)};
  auto id = engine::build_image(c, spec);
  REQUIRE_FALSE(id.has_value());
  CHECK(id.error().what().find("returned a non-zero code: 3") != std::string::npos);
}

TEST_CASE("build steps have no network") {
  auto& c = *docker_env().client;
  engine::BuildSpec spec;
  // With networkmode=none the only interface is lo: no route exists to anywhere else.
  spec.context_tar = context(std::string("FROM ") + stack::kRunnerImage + "\nRUN ! ip route | grep -q default && test $(ls /sys/class/net | wc -l) = 1\n");
  spec.tags = {"forgectl-test/nonet:" + random_hex(4)};
  auto id = engine::build_image(c, spec);
  must(id);
  must(engine::remove_image(c, spec.tags.front()));
}
