#!/usr/bin/env bash
# Makes sure a Docker daemon answers: the one named by DOCKER_HOST, else /var/run/docker.sock.
# When none answers and we are root on this host, starts dockerd in the background and waits for /_ping.
set -euo pipefail

host=${DOCKER_HOST:-unix:///var/run/docker.sock}
sock=""
case "$host" in
  unix://*) sock=${host#unix://} ;;
esac

ping() {
  if [ -n "$sock" ]; then
    curl -sf --max-time 2 --unix-socket "$sock" http://docker/_ping >/dev/null 2>&1
  else
    # tcp:// hosts: let forgectl's own doctor judge them; we cannot start a remote daemon.
    return 0
  fi
}

# Registers crun and runsc (when installed) in /etc/docker/daemon.json, merged into what is there and
# idempotent; prints "changed" when it wrote the file. Only for the local daemon, and only as root.
register_runtimes() {
  [ "$sock" = "/var/run/docker.sock" ] && [ "$(id -u)" -eq 0 ] || return 0
  python3 - "${FORGECTL_DAEMON_JSON:-/etc/docker/daemon.json}" <<'PY'
import json, os, shutil, sys
path = sys.argv[1]
want = {}
crun = shutil.which("crun")
if crun:
    want["crun"] = {"path": crun}
# runsc built by scripts/install-runsc.sh lacks systrap's prebuilt signal-handler blob (Debian
# ships a placeholder and no C sources for it), so it runs on the ptrace platform.
if os.access("/usr/local/bin/runsc", os.X_OK):
    want["runsc"] = {"path": "/usr/local/bin/runsc", "runtimeArgs": ["--platform=ptrace"]}
conf = {}
if os.path.exists(path):
    with open(path) as f:
        text = f.read().strip()
    conf = json.loads(text) if text else {}
runtimes = conf.setdefault("runtimes", {})
changed = False
for name, entry in want.items():
    if name not in runtimes:  # an operator's own entry (runtimeArgs, another path) is kept
        runtimes[name] = entry
        changed = True
if changed:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".forgectl.tmp"
    with open(tmp, "w") as f:
        json.dump(conf, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    print("changed")
PY
}

if ping; then
  # A running daemon reads daemon.json's runtimes again on SIGHUP: no restart, containers keep running.
  if [ "$(register_runtimes)" = changed ]; then
    pid=$(pidof dockerd || true)
    if [ -n "$pid" ]; then
      echo "ensure-docker: registered crun/runsc in daemon.json; reloading dockerd (SIGHUP)" >&2
      kill -HUP $pid
      sleep 1
    fi
  fi
  exit 0
fi
register_runtimes >/dev/null

if [ "$sock" != "/var/run/docker.sock" ]; then
  echo "ensure-docker: no Docker daemon answers at $host; start it, or unset DOCKER_HOST to use the local one" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-docker: no Docker daemon answers at $sock and we are not root to start one; start dockerd (or the docker service)" >&2
  exit 1
fi
command -v dockerd >/dev/null || { echo "ensure-docker: dockerd is not installed; run scripts/install-deps.sh" >&2; exit 1; }

log=/var/log/forgectl-dockerd.log
echo "ensure-docker: starting dockerd (log: $log)" >&2
# setsid: the daemon must outlive this shell and ignore the terminal's signals.
setsid dockerd >"$log" 2>&1 </dev/null &
for _ in $(seq 1 120); do
  ping && exit 0
  sleep 0.5
done
echo "ensure-docker: dockerd did not answer /_ping within 60 s; last lines of $log:" >&2
tail -n 20 "$log" >&2 || true
exit 1
