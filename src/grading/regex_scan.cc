// Windowed regex search on a big-stack thread under a time budget (see regex_scan.h for why).
#include "grading/regex_scan.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "grading/component.h"

namespace forge::grading {

namespace {

// The backtracker needs up to ~800 bytes of stack per input byte for patterns like (a|b)*; an
// 8 KiB window then takes ~6.5 MiB. Thread stacks are reserved, not committed: the margin is free.
constexpr std::size_t kScanStack = 128u << 20;

// Owned by the scan thread and the caller together, so that a scan abandoned on timeout keeps
// its regex and text alive until it notices and stops.
struct Scan {
  std::regex re;
  std::vector<std::string> texts;
  std::vector<bool> found;
  std::string error;
  std::atomic<bool> abandoned{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

// Whether `re` matches in `text`; nullopt when the scan was abandoned.
std::optional<bool> search_windows(const Scan& job, std::string_view text) {
  namespace rc = std::regex_constants;
  if (text.size() <= kRegexWindow) return std::regex_search(text.begin(), text.end(), job.re);
  const std::size_t stride = kRegexWindow - kRegexWindowOverlap;
  for (std::size_t start = 0;; start += stride) {
    if (job.abandoned) return std::nullopt;
    const std::size_t end = std::min(text.size(), start + kRegexWindow);
    auto flags = rc::match_default;
    // Inner edges are not the text's edges: ^ and \b look at the previous byte, $ and \b never
    // match at a cut. A match lost to a cut lies within the overlap of the next window.
    if (start > 0) flags |= rc::match_prev_avail;
    if (end < text.size()) flags |= rc::match_not_eol | rc::match_not_eow;
    if (std::regex_search(text.begin() + start, text.begin() + end, job.re, flags)) return true;
    if (end == text.size()) return false;
  }
}

void* scan_thread(void* arg) {
  std::shared_ptr<Scan> job(*static_cast<std::shared_ptr<Scan>*>(arg));
  delete static_cast<std::shared_ptr<Scan>*>(arg);
  // An exception must not leave the thread: that would terminate the process.
  try {
    for (const std::string& t : job->texts) {
      auto hit = search_windows(*job, t);
      if (!hit) break;
      job->found.push_back(*hit);
    }
  } catch (const std::exception& e) {
    job->error = e.what();
  } catch (...) {
    job->error = "unknown error";
  }
  {
    std::lock_guard lock(job->mu);
    job->done = true;
  }
  job->cv.notify_all();
  return nullptr;
}

}  // namespace

Result<std::vector<bool>> regex_search_each(const std::regex& re, const std::vector<std::string_view>& texts,
                                            std::chrono::milliseconds budget) {
  auto job = std::make_shared<Scan>();
  job->re = re;
  job->texts.assign(texts.begin(), texts.end());

  pthread_attr_t attr;
  if (int rc = pthread_attr_init(&attr); rc != 0)
    return fail(Errc::kUnavailable, std::string("cannot start the regex scan: ") + std::strerror(rc));
  pthread_attr_setstacksize(&attr, kScanStack);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);  // a timed-out scan is never joined
  pthread_t thread;
  auto* handoff = new std::shared_ptr<Scan>(job);
  int rc = pthread_create(&thread, &attr, scan_thread, handoff);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete handoff;
    return fail(Errc::kUnavailable, std::string("cannot start the regex scan: ") + std::strerror(rc));
  }

  std::unique_lock lock(job->mu);
  if (!job->cv.wait_for(lock, budget, [&] { return job->done; })) {
    job->abandoned = true;  // the thread stops at its next window and frees the job
    return fail(Errc::kTimeout, "the scan took longer than " + format_score(double(budget.count()) / 1000) + " s");
  }
  if (!job->error.empty()) return fail(Errc::kInvalid, "the regex engine gave up: " + job->error);
  return job->found;
}

}  // namespace forge::grading
