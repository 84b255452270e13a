// The screenshots a trial's agent took, kept in the trial's directory as they are taken
// (screenshots/001.png, …): names of forgectl's making, never the agent's; at most
// limits::kMaxScreenshots of them, each a PNG of at most limits::kMaxScreenshotBytes; the rest
// dropped and counted, so the record can say how many.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "core/result.h"

namespace forge::results {

inline constexpr const char* kScreenshotDir = "screenshots";

// Whether `rel` is a path the store writes ("screenshots/" three or more digits ".png"): the
// only image paths a trial page shows, whatever a trial.json says.
bool is_screenshot_path(std::string_view rel);

class ScreenshotStore {
 public:
  // `trial_dir`: the trial's directory in the run (created when the first screenshot comes).
  explicit ScreenshotStore(std::string trial_dir) : dir_(std::move(trial_dir)) {}

  // Writes one image (base64) as the next file and returns its path relative to the trial's
  // directory; an error, counted as dropped, for one past the count or size limit, one that is
  // not a PNG, or one that cannot be written. The first call clears the screenshots an earlier
  // attempt of the trial left. Thread-safe.
  Result<std::string> keep(std::string_view media_type, std::string_view base64);

  int kept() const;
  int dropped() const;

 private:
  mutable std::mutex mu_;
  std::string dir_;
  bool cleared_ = false;
  int kept_ = 0, dropped_ = 0;
};

// Removes the files under TRIAL_DIR/screenshots that `referenced` (paths relative to the trial's
// directory) does not name: what an earlier attempt of the trial left. No directory: nothing to do.
Status prune_screenshots(const std::string& trial_dir, const std::set<std::string>& referenced);

}  // namespace forge::results
