// Runs the forgectl binary ($FORGECTL_BIN) from a test: output captured, signals, deadlines, reaped at scope exit.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "core/clock.h"
#include "core/result.h"

extern char** environ;

namespace forge::test {

// The forgectl binary under test: $FORGECTL_BIN (set by meson for the docker suite).
inline std::string forgectl_bin() {
  const char* b = std::getenv("FORGECTL_BIN");
  return b && *b ? std::string(b) : std::string();
}

// One child process with stdout and stderr drained into strings by two threads. Destroying it
// is the guard: a child still running then is SIGKILLed and reaped, and the threads joined.
class Process {
 public:
  // Starts `bin` with `args`; its environment is ours with `extra_env` added (or overriding).
  // stdin is /dev/null; SIGINT, SIGTERM and SIGPIPE are default and unblocked in the child.
  static Result<std::unique_ptr<Process>> spawn(const std::string& bin, const std::vector<std::string>& args,
                                                const std::map<std::string, std::string>& extra_env = {}) {
    std::unique_ptr<Process> p(new Process);
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return fail(Errc::kIo, std::string("pipe: ") + std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0) {
      ::close(out[0]), ::close(out[1]);
      return fail(Errc::kIo, std::string("pipe: ") + std::strerror(errno));
    }

    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
      std::string kv(*e);
      auto eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& [k, v] : extra_env) env[k] = v;
    std::vector<std::string> env_strs, argv_strs{bin};
    for (const auto& [k, v] : env) env_strs.push_back(k + "=" + v);
    argv_strs.insert(argv_strs.end(), args.begin(), args.end());
    auto c_array = [](std::vector<std::string>& v) {
      std::vector<char*> out;
      for (auto& s : v) out.push_back(s.data());
      out.push_back(nullptr);
      return out;
    };
    auto argv = c_array(argv_strs), envp = c_array(env_strs);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);  // dup2 clears FD_CLOEXEC on 1 and 2
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = ::posix_spawn(&p->pid_, bin.c_str(), &fa, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(out[1]);
    ::close(err[1]);
    if (rc != 0) {
      ::close(out[0]), ::close(err[0]);
      p->pid_ = -1;
      return fail(Errc::kIo, "cannot start " + bin + ": " + std::strerror(rc));
    }
    p->out_thread_ = std::thread([q = p.get(), fd = out[0]] { q->drain(fd, q->out_); });
    p->err_thread_ = std::thread([q = p.get(), fd = err[0]] { q->drain(fd, q->err_); });
    return p;
  }

  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    if (pid_ > 0 && !code_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    join();
  }

  pid_t pid() const { return pid_; }
  bool running() {
    poll();
    return !code_;
  }
  // Sends `sig` unless the child has been reaped already (its pid may be someone else's by then).
  bool kill(int sig) {
    poll();
    return !code_ && ::kill(pid_, sig) == 0;
  }
  // Waits up to `timeout` for the child to exit; its exit code (128+signal when killed), or
  // nullopt when it is still running at the deadline. Once it returns a code, the output is complete.
  std::optional<int> wait_for(Millis timeout) {
    auto until = Clock::now() + timeout;
    for (;;) {
      if (poll()) break;
      if (Clock::now() >= until) return std::nullopt;
      std::this_thread::sleep_for(Millis(10));
    }
    join();
    return code_;
  }

  // What the child wrote so far (all of it once wait_for returned a code).
  std::string out() {
    std::lock_guard lock(mu_);
    return out_;
  }
  std::string err() {
    std::lock_guard lock(mu_);
    return err_;
  }

 private:
  Process() = default;

  // Reaps the child if it has exited; true once it has.
  bool poll() {
    if (code_) return true;
    if (pid_ <= 0) return false;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r != pid_) return false;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
    return true;
  }

  void drain(int fd, std::string& into) {
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::lock_guard lock(mu_);
      into.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
  }

  void join() {
    if (out_thread_.joinable()) out_thread_.join();
    if (err_thread_.joinable()) err_thread_.join();
  }

  pid_t pid_ = -1;
  std::optional<int> code_;
  std::mutex mu_;
  std::string out_, err_;
  std::thread out_thread_, err_thread_;
};

// A finished run of the binary; code -1 when it did not finish in time (it was then killed).
struct RunResult {
  int code = -1;
  std::string out, err;
  std::string text() const { return "exit " + std::to_string(code) + "\nstdout:\n" + out + "\nstderr:\n" + err; }
};

// Starts forgectl with `args`; an error when $FORGECTL_BIN is unset or the binary cannot start.
inline Result<std::unique_ptr<Process>> spawn_forgectl(const std::vector<std::string>& args,
                                                      const std::map<std::string, std::string>& extra_env = {}) {
  std::string bin = forgectl_bin();
  if (bin.empty()) return fail(Errc::kNotFound, "FORGECTL_BIN is not set (meson sets it for the docker suite)");
  return Process::spawn(bin, args, extra_env);
}

// Runs forgectl to completion, or kills it at `timeout`.
inline Result<RunResult> run_forgectl(const std::vector<std::string>& args, Millis timeout = Millis(120000),
                                      const std::map<std::string, std::string>& extra_env = {}) {
  auto p = spawn_forgectl(args, extra_env);
  if (!p) return p.fail();
  RunResult r;
  auto code = (*p)->wait_for(timeout);
  if (!code) {
    (*p)->kill(SIGKILL);
    (void)(*p)->wait_for(Millis(10000));
  }
  r.code = code.value_or(-1);
  r.out = (*p)->out();
  r.err = (*p)->err();
  return r;
}

// run_forgectl that REQUIREs the binary to have started (its exit code is the caller's to check).
// A sweep of example tasks on 2 cores beside the other docker shard: 300 s by default.
inline RunResult forgectl_run(const std::vector<std::string>& args, Millis timeout = Millis(300000),
                              const std::map<std::string, std::string>& extra_env = {}) {
  auto r = run_forgectl(args, timeout, extra_env);
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().what()));
  return *r;
}
inline RunResult forgectl_run(const std::vector<std::string>& args,
                              const std::map<std::string, std::string>& extra_env) {
  return forgectl_run(args, Millis(300000), extra_env);
}

}  // namespace forge::test
