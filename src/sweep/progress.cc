// Progress of a sweep.
#include "sweep/progress.h"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace forge::sweep {

std::string human_duration(double seconds) {
  long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%lds", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  return buf;
}

Progress::Progress(std::ostream& out, bool tty, std::size_t total, std::size_t already_done)
    : out_(out), tty_(tty), total_(total), skipped_(already_done) {}

std::string Progress::status() const {
  std::size_t done = done_ + skipped_;
  char buf[200];
  double rate = graded_ ? 100.0 * static_cast<double>(passed_) / static_cast<double>(graded_) : 0.0;
  std::string eta = "—";
  if (done_ > 0 && done < total_) {
    double per = static_cast<double>(elapsed_since(start_).count()) / 1000.0 / static_cast<double>(done_);
    eta = human_duration(per * static_cast<double>(total_ - done));
  } else if (done >= total_) {
    eta = "0s";
  }
  std::snprintf(buf, sizeof buf, "[%zu/%zu] pass %.1f%% (%zu/%zu) · infra %zu · $%.4f · ETA %s", done, total_, rate,
                passed_, graded_, infra_, cost_, eta.c_str());
  return buf;
}

void Progress::redraw() {
  if (tty_) out_ << "\r\033[K" << status() << std::flush;
}

void Progress::event(const std::string& line) {
  std::lock_guard lock(mu_);
  if (tty_) out_ << "\r\033[K";
  out_ << line << '\n';
  redraw();
}

void Progress::finished(bool infra, bool passed, double cost_usd) {
  std::lock_guard lock(mu_);
  ++done_;
  cost_ += cost_usd;
  if (infra) {
    ++infra_;
  } else {
    ++graded_;
    passed_ += passed;
  }
  if (tty_) return redraw();
  // Plain output: the status every tenth of the run (and at the end), so a log shows the pace.
  std::size_t step = std::max<std::size_t>(1, total_ / 10);
  bool last = done_ + skipped_ >= total_;
  if (last || (total_ >= 10 && done_ - last_plain_ >= step)) {
    last_plain_ = done_;
    out_ << "  " << status() << '\n' << std::flush;
  }
}

void Progress::close() {
  std::lock_guard lock(mu_);
  if (tty_) out_ << "\r\033[K" << std::flush;
}

}  // namespace forge::sweep
