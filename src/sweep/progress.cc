// Progress of a sweep: the live block on a terminal, plain lines elsewhere.
#include "sweep/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace forge::sweep {

namespace {

constexpr std::size_t kToolErrorsShown = 3;

std::size_t columns_of(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& s, std::size_t cols) {
  std::size_t n = columns_of(s);
  return n >= cols ? s : s + std::string(cols - n, ' ');
}

// One line of text from the data: control characters would move the cursor.
std::string one_line(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
  return out;
}

}  // namespace

TermSize terminal_size(int fd) {
  winsize w{};
  if (::ioctl(fd, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return {w.ws_col, w.ws_row > 0 ? w.ws_row : 24};
  return {};
}

std::string human_duration(double seconds) {
  long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%lds", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  return buf;
}

std::string fit_columns(const std::string& s, int cols) {
  if (cols <= 0) return "";
  if (columns_of(s) <= static_cast<std::size_t>(cols)) return s;
  std::string out;
  int n = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 1;
    while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xC0) == 0x80) ++len;
    if (n + 1 >= cols) break;
    out += s.substr(i, len);
    ++n;
    i += len;
  }
  return out + "…";
}

Progress::Progress(std::ostream& out, bool tty, std::size_t total, std::size_t already_done,
                   std::function<TermSize()> size)
    : out_(out), tty_(tty), size_(std::move(size)), total_(total), skipped_(already_done) {
  if (!size_) size_ = [] { return terminal_size(STDERR_FILENO); };
  if (tty_) ticker_ = std::thread([this] { tick(); });
}

Progress::~Progress() { close(); }

void Progress::tick() {
  std::unique_lock lock(mu_);
  while (!closed_) {
    cv_.wait_for(lock, std::chrono::seconds(1));
    if (closed_) break;
    if (!flights_.empty()) {
      clear_locked();
      draw_locked();
    }
  }
}

std::string Progress::status_locked() const {
  std::size_t done = done_ + skipped_;
  std::string eta = "—";
  if (done_ > 0 && done < total_) {
    double per = static_cast<double>(elapsed_since(start_).count()) / 1000.0 / static_cast<double>(done_);
    eta = human_duration(per * static_cast<double>(total_ - done));
  } else if (done >= total_) {
    eta = "0s";
  }
  return totals_line({done, total_, graded_, passed_, infra_, cost_, unpriced_ > 0}, eta);
}

std::string totals_line(const Totals& t, const std::string& eta) {
  char buf[240];
  double rate = t.graded ? 100.0 * static_cast<double>(t.passed) / static_cast<double>(t.graded) : 0.0;
  std::string cost = t.cost_partial ? "≥$" : "$";
  std::snprintf(buf, sizeof buf, "[%zu/%zu] pass %.1f%% (%zu/%zu) · infra %zu · %s%.4f · ETA %s", t.done, t.total, rate,
                t.passed, t.graded, t.infra, cost.c_str(), t.cost_usd, eta.c_str());
  return buf;
}

std::string Progress::status() const {
  std::lock_guard lock(mu_);
  return status_locked();
}

std::vector<std::string> Progress::live_lines(TermSize size) const {
  int cols = std::max(size.cols - 1, 10);  // the last column would wrap on some terminals
  std::vector<const Flight*> fs;
  for (const auto& [id, f] : flights_) fs.push_back(&f);
  std::sort(fs.begin(), fs.end(), [](const Flight* a, const Flight* b) { return a->order < b->order; });
  // Room for the flights: the terminal less the status, the tool errors and the heading.
  int room = std::max(1, size.rows - 3 - static_cast<int>(std::min(tool_errors_.size(), kToolErrorsShown)));
  std::vector<std::string> lines;
  if (!fs.empty()) {
    std::size_t name_w = 4, agent_w = 5;
    for (const auto* f : fs) {
      name_w = std::max(name_w, columns_of(f->task) + 1 + std::to_string(f->index).size());
      agent_w = std::max(agent_w, columns_of(f->agent));
    }
    name_w = std::min<std::size_t>(name_w, static_cast<std::size_t>(cols) * 2 / 5);
    lines.push_back(fit_columns("in flight: " + std::to_string(fs.size()), cols));
    std::size_t shown = std::min<std::size_t>(fs.size(), static_cast<std::size_t>(room));
    if (shown < fs.size() && shown > 0) --shown;  // keep a line for "… and N more"
    for (std::size_t i = 0; i < shown; ++i) {
      const Flight& f = *fs[i];
      std::string calls = std::to_string(f.tool_calls) + " calls" +
                          (f.tool_errors ? " (" + std::to_string(f.tool_errors) + " err)" : "");
      std::string name = fit_columns(one_line(f.task) + "#" + std::to_string(f.index), static_cast<int>(name_w));
      // The agent last: on a narrow terminal it is what the cut takes.
      std::string line = "  " + pad(name, name_w) + "  " + pad(f.phase, 7) + "  " +
                         pad(human_duration(static_cast<double>(elapsed_since(f.since).count()) / 1000.0), 6) + "  " +
                         pad(calls, 9) + "  " + pad(one_line(f.agent), agent_w);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      lines.push_back(fit_columns(line, cols));
    }
    if (shown < fs.size()) lines.push_back(fit_columns("  … and " + std::to_string(fs.size() - shown) + " more", cols));
  }
  lines.push_back(fit_columns(status_locked(), cols));
  std::size_t from = tool_errors_.size() > kToolErrorsShown ? tool_errors_.size() - kToolErrorsShown : 0;
  for (std::size_t i = from; i < tool_errors_.size(); ++i) lines.push_back(fit_columns("  " + tool_errors_[i], cols));
  return lines;
}

void Progress::clear_locked() {
  if (!tty_ || drawn_ == 0) return;
  out_ << '\r';
  if (drawn_ > 1) out_ << "\033[" << drawn_ - 1 << 'A';
  out_ << "\033[J";
  drawn_ = 0;
}

void Progress::draw_locked() {
  if (!tty_ || closed_) return;
  auto lines = live_lines(size_());
  for (std::size_t i = 0; i < lines.size(); ++i) out_ << (i ? "\n" : "") << lines[i];
  out_ << std::flush;
  drawn_ = static_cast<int>(lines.size());
}

void Progress::event(const std::string& line) {
  std::lock_guard lock(mu_);
  clear_locked();
  out_ << line << '\n';
  if (tty_)
    draw_locked();
  else
    out_ << std::flush;
}

void Progress::started(const std::string& id, const std::string& task, const std::string& agent, int index) {
  std::lock_guard lock(mu_);
  Flight f;
  f.task = task;
  f.agent = agent;
  f.index = index;
  f.order = started_count_++;
  flights_[id] = f;
  if (tty_) {
    clear_locked();
    draw_locked();
  }
}

void Progress::update(const std::string& id, const trial::TrialProgress& p) {
  std::lock_guard lock(mu_);
  auto it = flights_.find(id);
  if (it == flights_.end()) return;
  Flight& f = it->second;
  if (!p.phase.empty()) f.phase = p.phase;
  f.tool_calls = p.tool_calls;
  f.tool_errors = p.tool_errors;
  if (!p.tool_error.empty()) {
    tool_errors_.push_back("tool error " + one_line(f.task) + "#" + std::to_string(f.index) + " " + one_line(f.agent) +
                           ": " + one_line(p.tool_error));
    while (tool_errors_.size() > kToolErrorsShown) tool_errors_.pop_front();
  }
  if (tty_) {
    clear_locked();
    draw_locked();
  }
}

void Progress::landed(const std::string& id) {
  std::lock_guard lock(mu_);
  flights_.erase(id);
  if (tty_) {
    clear_locked();
    draw_locked();
  }
}

void Progress::finished(bool infra, bool passed, double cost_usd, bool cost_known) {
  std::lock_guard lock(mu_);
  ++done_;
  cost_ += cost_usd;
  unpriced_ += cost_known ? 0 : 1;
  if (infra) {
    ++infra_;
  } else {
    ++graded_;
    passed_ += passed;
  }
  if (tty_) {
    clear_locked();
    return draw_locked();
  }
  // Plain output: the status every tenth of the run (and at the end), so a log shows the pace.
  std::size_t step = std::max<std::size_t>(1, total_ / 10);
  bool last = done_ + skipped_ >= total_;
  if (last || (total_ >= 10 && done_ - last_plain_ >= step)) {
    last_plain_ = done_;
    out_ << "  " << status_locked() << '\n' << std::flush;
  }
}

void Progress::close() {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    clear_locked();
    closed_ = true;
    if (tty_) out_ << std::flush;
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

LineSink::LineSink(std::ostream& fallback) : fallback_(fallback), stream_(this) {}

void LineSink::attach(std::function<void(const std::string&)> target) {
  std::lock_guard lock(mu_);
  target_ = std::move(target);
}

void LineSink::detach() {
  std::lock_guard lock(mu_);
  target_ = nullptr;
  if (!line_.empty()) fallback_ << line_ << std::flush;
  line_.clear();
}

int LineSink::overflow(int c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  std::lock_guard lock(mu_);
  if (c != '\n') {
    line_ += static_cast<char>(c);
    return c;
  }
  std::string line = std::move(line_);
  line_.clear();
  if (target_)
    target_(line);
  else
    fallback_ << line << '\n' << std::flush;
  return c;
}

}  // namespace forge::sweep
