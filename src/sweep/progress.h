// What a sweep shows while it runs. On a terminal: event lines scroll above a live block that is
// redrawn in place — the trials in flight (task, agent, phase, tool calls, elapsed), the totals
// line (done/total, pass rate, infra, cost, ETA) and the latest model tool errors below it — every
// line cut to the terminal's width so nothing wraps. Elsewhere (CI logs, files, pipes): one plain
// line per event and a status line every tenth of the run, nothing redrawn.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <iosfwd>
#include <map>
#include <mutex>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "trial/trial.h"

namespace forge::sweep {

struct TermSize {
  int cols = 80, rows = 24;
};
// The terminal's size on `fd` (TIOCGWINSZ), or 80×24 when it has none.
TermSize terminal_size(int fd);

// The totals of a sweep, as its status line shows them.
struct Totals {
  std::size_t done = 0, total = 0, graded = 0, passed = 0, infra = 0;
  double cost_usd = 0;
  bool cost_partial = false;  // some trial's price is unknown: the cost is a lower bound
};
// "[12/40] pass 75.0% (9/12) · infra 0 · $0.4210 · ETA 3m10s"; `eta` as human_duration writes it,
// or "—".
std::string totals_line(const Totals& t, const std::string& eta);

class Progress {
 public:
  // `size` is asked at every redraw (a terminal may be resized); empty: stderr's size.
  Progress(std::ostream& out, bool tty, std::size_t total, std::size_t already_done = 0,
           std::function<TermSize()> size = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void event(const std::string& line);  // a line that stays (above the live block)
  // A trial is in flight from started() to finished(); `id` is any key unique among those in flight.
  void started(const std::string& id, const std::string& task, const std::string& agent, int index);
  void update(const std::string& id, const trial::TrialProgress& p);
  void landed(const std::string& id);  // its attempt is over (finished, retried or left)
  // A trial finished: counts go up and the status is shown.
  void finished(bool infra, bool passed, double cost_usd, bool cost_known = true);
  void close();  // clears the live block (tty) and stops its clock

  std::string status() const;  // "[12/40] pass 75.0% (9/12) · infra 0 · $0.4210 · ETA 3m10s"
  // The live block as drawn at that width and height (each line at most cols − 1 columns).
  std::vector<std::string> live_lines(TermSize size) const;

 private:
  struct Flight {
    std::string task, agent, phase = "queued";
    int index = 0, tool_calls = 0, tool_errors = 0;
    Clock::time_point since = Clock::now();
    std::size_t order = 0;
  };
  std::string status_locked() const;
  void clear_locked();
  void draw_locked();
  void tick();
  std::ostream& out_;
  bool tty_;
  std::function<TermSize()> size_;
  std::size_t total_, done_ = 0, skipped_ = 0, graded_ = 0, passed_ = 0, infra_ = 0, unpriced_ = 0;
  double cost_ = 0;
  Clock::time_point start_ = Clock::now();
  std::size_t last_plain_ = 0, started_count_ = 0;
  std::map<std::string, Flight> flights_;
  std::deque<std::string> tool_errors_;  // the latest few, newest last
  int drawn_ = 0;                        // lines of the live block on screen
  bool closed_ = false;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread ticker_;  // redraws each second so elapsed times move (tty only)
};

// A stream whose complete lines go to a target (the live view's events) once one is attached, and
// straight to `fallback` before and after: a logger writing here never tears the live block.
class LineSink : private std::streambuf {
 public:
  explicit LineSink(std::ostream& fallback);
  std::ostream& stream() { return stream_; }
  void attach(std::function<void(const std::string&)> target);
  void detach();

 private:
  int overflow(int c) override;
  std::ostream& fallback_;
  std::ostream stream_;
  std::string line_;
  std::function<void(const std::string&)> target_;
  std::mutex mu_;
};

// "3m10s", "45s", "2h05m".
std::string human_duration(double seconds);

// At most `cols` columns of `s` (UTF-8: a character is a column), "…" when cut.
std::string fit_columns(const std::string& s, int cols);

}  // namespace forge::sweep
