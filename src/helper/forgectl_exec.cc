// forgectl-exec: static in-container wrapper that runs one command under a deadline and kills its whole process tree,
// answers a trial's tool calls over stdin/stdout (--serve), or runs a verifier's commands as the agent (--as-agent*).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helper/as_agent.h"
#include "helper/cli.h"
#include "helper/kill_token.h"
#include "helper/ops.h"
#include "helper/privdrop.h"
#include "helper/serve.h"

namespace forge::helper {

constexpr long long kReapGraceMs = 100;  // how long to wait for killed orphans before leaving them to init

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "forgectl-exec: %s\n%s", msg.c_str(), kUsage);
  std::exit(kExitFailed);
}

long long now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

timespec to_timespec(long long ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1000000000LL);
  ts.tv_nsec = static_cast<long>(ns % 1000000000LL);
  return ts;
}

// The child itself is killed by pid too, in case it moved out of its own group.
void kill_tree(pid_t child, const std::string& token) {
  kill(-child, SIGKILL);
  kill(child, SIGKILL);
  if (!token.empty()) kill_token(token);  // catches descendants that escaped via setsid
}

// Reaps other zombies on the way; reports the child's exit without reaping it, so its pgid stays valid.
bool child_exited(pid_t child, siginfo_t* info) {
  for (;;) {
    siginfo_t si{};
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0) return false;
    if (si.si_pid == child) {
      *info = si;
      return true;
    }
    waitpid(si.si_pid, nullptr, 0);
  }
}

// As subreaper we inherit orphaned descendants; reap the ones we killed so no zombies are left in the container.
void reap_orphans() {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  const long long give_up = now_ns() + kReapGraceMs * 1000000LL;
  for (;;) {
    const pid_t pid = waitpid(-1, nullptr, WNOHANG);
    if (pid > 0) continue;
    if (pid < 0 && errno != EINTR) return;  // ECHILD: nothing left
    const long long left = give_up - now_ns();
    if (left <= 0) return;  // survivors are escaped daemons we did not kill
    const timespec ts = to_timespec(left);
    sigtimedwait(&chld, nullptr, &ts);
  }
}

[[noreturn]] void run_child(const CommandLine& o, char** cmd, bool own_tty, const sigset_t& orig_mask,
                           const struct sigaction& orig_chld) {
  setpgid(0, 0);
  // SIGTTOU is still blocked here, which is what lets tcsetpgrp succeed from a background group.
  if (own_tty) tcsetpgrp(STDIN_FILENO, getpid());
  if (!o.token.empty()) setenv(kTokenVar, o.token.c_str(), 1);
  sigaction(SIGCHLD, &orig_chld, nullptr);
  sigprocmask(SIG_SETMASK, &orig_mask, nullptr);
  execvp(cmd[0], cmd);
  const int err = errno;
  std::fprintf(stderr, "forgectl-exec: cannot run %s: %s\n", cmd[0], std::strerror(err));
  _exit(err == EACCES ? kExitNotExecutable : kExitNotFound);
}

int run(const CommandLine& o) {
  std::vector<char*> cmd;
  for (const auto& a : o.cmd) cmd.push_back(const_cast<char*>(a.c_str()));
  cmd.push_back(nullptr);
  sigset_t handled;
  sigemptyset(&handled);
  for (const int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&handled, s);
  sigset_t blocked = handled;
  sigaddset(&blocked, SIGTTOU);  // lets us write to / hand over a tty from a background group
  // An inherited SIG_IGN for SIGCHLD would auto-reap the child and lose its status.
  struct sigaction dfl{};
  struct sigaction orig_chld{};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, &orig_chld);
  sigset_t orig_mask;
  sigprocmask(SIG_BLOCK, &blocked, &orig_mask);  // signals are consumed synchronously by sigtimedwait

  setsid();  // fails harmlessly if we already lead a session
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  const long long deadline = o.timeout_ms > 0 ? now_ns() + o.timeout_ms * 1000000LL : 0;
  // With a controlling tty (docker exec -t) the command's group must be foreground, or reading stdin stops it.
  // Decided before fork: once setpgid(child) has run, the child can no longer compare groups.
  const bool own_tty = tcgetpgrp(STDIN_FILENO) == getpgrp();

  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "forgectl-exec: fork: %s\n", std::strerror(errno));
    return kExitFailed;
  }
  if (child == 0) run_child(o, cmd.data(), own_tty, orig_mask, orig_chld);
  setpgid(child, child);    // also here, so kill(-child) is right even before the child has run
  signal(SIGPIPE, SIG_IGN);  // a closed stderr must not change our exit code

  siginfo_t info{};
  bool timed_out = false;
  int fatal_sig = 0;
  for (;;) {
    timespec ts{};
    const timespec* tsp = nullptr;
    if (deadline != 0) {
      const long long left = deadline - now_ns();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      ts = to_timespec(left);
      tsp = &ts;
    }
    const int sig = sigtimedwait(&handled, nullptr, tsp);
    if (sig < 0) continue;  // EAGAIN: deadline re-checked above; EINTR: retry
    if (sig != SIGCHLD) {
      fatal_sig = sig;
      break;
    }
    if (child_exited(child, &info)) break;
  }

  if (timed_out || fatal_sig != 0) {
    kill_tree(child, o.token);
    siginfo_t si{};
    while (waitid(P_PID, static_cast<id_t>(child), &si, WEXITED) < 0 && errno == EINTR) continue;
    reap_orphans();
    if (fatal_sig != 0) return 128 + fatal_sig;
    std::fprintf(stderr, "forgectl-exec: timed out after %lld ms\n", o.timeout_ms);
    return kExitTimeout;
  }
  // Background jobs still holding stdout would keep the Docker exec stream open after the command is done.
  kill(-child, SIGKILL);
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) continue;
  reap_orphans();
  return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

// Serve mode: the tool channel (docs/helper-protocol.md) until stdin closes.
int serve_main(const char* root_path) {
  Root root;
  if (OpStatus st = Root::open(root_path, &root); !st.ok()) {
    std::fprintf(stderr, "forgectl-exec: workspace %s\n", st.message.c_str());
    return kExitMalformed;
  }
  signal(SIGPIPE, SIG_IGN);  // a closed channel shows up as a write error, and we exit
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // killed commands' orphans come back to us to reap
  return serve(root, STDIN_FILENO, STDOUT_FILENO, Orphans::kReap);
}

}  // namespace forge::helper

int main(int argc, char** argv) {
  using namespace forge::helper;
  // First, in every mode: a process of the same uid (the agent) must not read our memory,
  // environment or descriptors through /proc, nor ptrace us. Commands we exec are dumpable again.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  CommandLine cl;
  std::string error;
  if (!parse_command_line(std::vector<std::string>(argv + 1, argv + argc), &cl, &error)) usage_error(error);
  // The server stays root to fork and drops in each child; every other mode drops itself, first.
  if (cl.drop && cl.mode != Mode::kAsAgentServer && !drop_privileges(cl.as, &error)) {
    std::fprintf(stderr, "forgectl-exec: cannot drop privileges to %s: %s\n", describe(cl.as).c_str(), error.c_str());
    return kExitFailed;
  }
  switch (cl.mode) {
    case Mode::kVersion:
      std::printf("forgectl-exec 2\n");
      return 0;
    case Mode::kKillToken:
      std::printf("%d\n", kill_token(cl.kill_token));
      return 0;
    case Mode::kKillAll:
      std::printf("%d\n", kill_all());
      return 0;
    case Mode::kServe:
      return serve_main(cl.root.c_str());
    case Mode::kAsAgentServer:
      return as_agent_server(cl);
    case Mode::kAsAgent:
      return as_agent_client(cl);
    case Mode::kRun:
      break;
  }
  return run(cl);
}
