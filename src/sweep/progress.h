// What a sweep shows while it runs. On a terminal: event lines scroll above one status line that
// is redrawn in place (done/total, pass rate, cost, ETA). Elsewhere (CI logs, files, pipes): one
// plain line per event and a status line every tenth of the run, nothing redrawn.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <string>

#include "core/clock.h"

namespace forge::sweep {

class Progress {
 public:
  Progress(std::ostream& out, bool tty, std::size_t total, std::size_t already_done = 0);

  void event(const std::string& line);  // a line that stays
  // A trial finished: counts go up and the status is shown.
  void finished(bool infra, bool passed, double cost_usd);
  void close();  // clears the status line (tty)

  std::string status() const;  // "[12/40] pass 75.0% (9/12) · infra 0 · $0.4210 · ETA 3m10s"

 private:
  void redraw();
  std::ostream& out_;
  bool tty_;
  std::size_t total_, done_ = 0, skipped_ = 0, graded_ = 0, passed_ = 0, infra_ = 0;
  double cost_ = 0;
  Clock::time_point start_ = Clock::now();
  std::size_t last_plain_ = 0;
  mutable std::mutex mu_;
};

// "3m10s", "45s", "2h05m".
std::string human_duration(double seconds);

}  // namespace forge::sweep
