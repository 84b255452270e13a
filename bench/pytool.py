"""docker-py way for bench/tool.sh: pytool.py CONTAINER EXPECT.

One process, one client, connected (ping) before "ready" is printed. Then one line per request on
stdin, one duration in ms per line on stdout (only the call is timed), "ERR message" on failure:
  read_file  container.exec_run(["cat", "/work/f"])  (output must be EXPECT)
  bash       container.exec_run("true")
"""
import sys
import time

import docker


def main():
    box, expect = sys.argv[1], sys.argv[2].encode()
    client = docker.from_env()
    client.ping()
    container = client.containers.get(box)
    print("ready", flush=True)
    for line in sys.stdin:
        op = line.strip()
        t = time.perf_counter()
        if op == "read_file":
            res = container.exec_run(["cat", "/work/f"])
            ok = res.exit_code == 0 and res.output == expect
        elif op == "bash":
            res = container.exec_run("true")
            ok = res.exit_code == 0
        else:
            print(f"ERR unknown request {op!r}", flush=True)
            return 1
        ms = (time.perf_counter() - t) * 1000
        if not ok:
            print(f"ERR {op}: exit {res.exit_code}, output {res.output[:200]!r}", flush=True)
            return 1
        print(f"{ms:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
