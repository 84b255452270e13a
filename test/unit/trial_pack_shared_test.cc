// Tolokaforge's pack-shared files a trial copies into mock-web beside the task's own pages: the
// category's _assets/ (static assets only, no withheld name) and mobile/_data/<dataset>/'s nine
// app-data files, and nothing else of the pack: not another task's files, not grading material.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "engine/tar.h"
#include "manifest/task_parse.h"
#include "support/manifest_helpers.h"
#include "support/tf_web_task.h"
#include "trial/trial_setup.h"

using namespace forge;
using namespace forge::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> paths_in(const std::optional<std::string>& tar) {
  std::vector<std::string> out;
  if (!tar) return out;
  auto entries = engine::read_tar(*tar);
  REQUIRE(entries.has_value());
  for (const auto& e : *entries)
    if (e.type == engine::EntryType::kFile) out.push_back(e.path);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("pack-shared files: _assets' static assets and _data's nine files, nothing else of the pack") {
  TempFiles pack("forgectl-pack-");
  const fs::path root = pack.dir();
  tf_web::write_task((root / "webshop" / "order_lookup").string());
  tf_web::put(root / "webshop/_assets/site.css", "body{}");
  tf_web::put(root / "webshop/_assets/js/app.js", "var a;");
  tf_web::put(root / "webshop/_assets/answers.json", tf_web::kGradingMarker);
  tf_web::put(root / "webshop/_assets/solution.js", tf_web::kGradingMarker);
  tf_web::put(root / "webshop/_assets/tests/expected.html", tf_web::kGradingMarker);
  tf_web::put(root / "webshop/other_task/grading.yaml", tf_web::kGradingMarker);
  tf_web::put(root / "mobile/_data/v1/places.json", "[]");
  tf_web::put(root / "mobile/_data/v1/answers.json", tf_web::kGradingMarker);
  tf_web::put(root / "mobile/_data/v1/deep/notes.json", tf_web::kGradingMarker);
  tf_web::put(root / "mobile/_data/solution/places.json", tf_web::kGradingMarker);
  tf_web::put(root / "mobile/other/places.json", tf_web::kGradingMarker);
  auto task = manifest::load_task((root / "webshop/order_lookup/task.yaml").string());
  REQUIRE_MESSAGE(task.has_value(), (task ? "" : task.error().what()));
  auto tar = trial::pack_shared_tar(*task);
  REQUIRE_MESSAGE(tar.has_value(), (tar ? "" : tar.error().what()));
  CHECK(paths_in(*tar) == std::vector<std::string>{"task/mobile/_data/v1/places.json", "task/webshop/_assets/js/app.js",
                                                   "task/webshop/_assets/site.css"});
  // A task directory not under its category's name has no pack around it.
  TempFiles lone("forgectl-lone-");
  tf_web::write_task(lone.dir());
  auto alone = manifest::load_task(lone.dir() + "/task.yaml");
  REQUIRE(alone.has_value());
  auto none = trial::pack_shared_tar(*alone);
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());
  // A link out of _assets stops the copy, naming the tree.
  fs::create_symlink(root / "webshop/other_task/grading.yaml", root / "webshop/_assets/leak.css");
  auto refused = trial::pack_shared_tar(*task);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().what().find("_assets") != std::string::npos);
}
