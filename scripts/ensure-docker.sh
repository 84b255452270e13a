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

ping && exit 0

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
