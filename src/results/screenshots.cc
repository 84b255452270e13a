// A trial's screenshots on disk: written one at a time as the agent takes them.
#include "results/screenshots.h"

#include <cstdio>
#include <filesystem>
#include <vector>

#include "core/files.h"
#include "core/limits.h"
#include "core/strings.h"

namespace forge::results {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPngSignature = "\x89PNG\r\n\x1a\n";

}  // namespace

bool is_screenshot_path(std::string_view rel) {
  const std::string_view prefix = "screenshots/", suffix = ".png";
  if (rel.size() < prefix.size() + 3 + suffix.size() || rel.size() > prefix.size() + 9 + suffix.size()) return false;
  if (rel.substr(0, prefix.size()) != prefix || rel.substr(rel.size() - suffix.size()) != suffix) return false;
  for (char c : rel.substr(prefix.size(), rel.size() - prefix.size() - suffix.size()))
    if (c < '0' || c > '9') return false;
  return true;
}

Result<std::string> ScreenshotStore::keep(std::string_view media_type, std::string_view base64) {
  std::lock_guard lock(mu_);
  auto drop = [&](std::string why) -> Result<std::string> {
    ++dropped_;
    return fail(Errc::kInvalid, "screenshot not kept: " + why);
  };
  if (kept_ >= limits::kMaxScreenshots)
    return drop("the trial's directory keeps " + std::to_string(limits::kMaxScreenshots) + " at most");
  if (media_type != "image/png") return drop("'" + std::string(media_type.substr(0, 40)) + "' is not image/png");
  // Checked before decoding: base64 holds 3 bytes in every 4 characters.
  if (base64.size() / 4 * 3 > limits::kMaxScreenshotBytes + 3)
    return drop("over the " + std::to_string(limits::kMaxScreenshotBytes) + "-byte limit");
  auto bytes = base64_decode(base64);
  if (!bytes) return drop("not base64");
  if (bytes->size() > limits::kMaxScreenshotBytes)
    return drop(std::to_string(bytes->size()) + " bytes, over the " + std::to_string(limits::kMaxScreenshotBytes) +
                "-byte limit");
  if (bytes->compare(0, kPngSignature.size(), kPngSignature) != 0) return drop("not a PNG");
  const fs::path shots = fs::path(dir_) / kScreenshotDir;
  std::error_code ec;
  if (!cleared_) {
    fs::remove_all(shots, ec);  // an earlier attempt's: this attempt's record replaces its record
    cleared_ = true;
  }
  fs::create_directories(shots, ec);
  if (ec) return drop("cannot create " + shots.string() + ": " + ec.message());
  char name[32];
  std::snprintf(name, sizeof name, "%03d.png", kept_ + 1);
  if (auto st = write_file_atomic((shots / name).string(), *bytes); !st) return drop(st.error().what());
  ++kept_;
  return std::string(kScreenshotDir) + "/" + name;
}

int ScreenshotStore::kept() const {
  std::lock_guard lock(mu_);
  return kept_;
}

int ScreenshotStore::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

Status prune_screenshots(const std::string& trial_dir, const std::set<std::string>& referenced) {
  const fs::path shots = fs::path(trial_dir) / kScreenshotDir;
  std::error_code ec;
  if (!fs::is_directory(shots, ec)) return {};
  std::vector<fs::path> stale;  // collected first: removing while listing is unspecified
  std::size_t left = 0;
  for (fs::directory_iterator it(shots, ec), end; !ec && it != end; it.increment(ec)) {
    if (referenced.count(std::string(kScreenshotDir) + "/" + it->path().filename().string()))
      ++left;
    else
      stale.push_back(it->path());
  }
  if (ec) return fail(Errc::kIo, "cannot list " + shots.string() + ": " + ec.message());
  for (const auto& p : stale) {
    fs::remove_all(p, ec);
    if (ec) return fail(Errc::kIo, "cannot remove " + p.string() + ": " + ec.message());
  }
  if (left == 0) fs::remove(shots, ec);
  return {};
}

}  // namespace forge::results
