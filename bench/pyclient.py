"""docker-py way for bench/run.sh: pyclient.py exec|run|network N [CONTAINER].

One process, one kept-alive client; prints one duration (ms) per line, timing only the calls.
"""
import os
import secrets
import sys
import time

import docker

LABELS = {"io.forgectl.bench": "1"}
IMAGE = "forgectl/runner:local"


def exec_true(client, box):
    container = client.containers.get(box)
    def once():
        res = container.exec_run("true")
        if res.exit_code != 0:
            raise RuntimeError(f"exec of true exited {res.exit_code}")
    return once


def run_true(client):
    api = client.api
    host_config = api.create_host_config(network_mode="none")
    def once():
        box = api.create_container(IMAGE, command=["true"], labels=LABELS, host_config=host_config)["Id"]
        api.start(box)
        code = api.wait(box)["StatusCode"]
        api.remove_container(box, v=True, force=True)
        if code != 0:
            raise RuntimeError(f"true exited {code}")
    return once


def network_cycle(client):
    api = client.api
    def once():
        name = "forgectl-bench-py-" + secrets.token_hex(4)
        net = api.create_network(name, driver="bridge", internal=True, labels=LABELS, check_duplicate=True)["Id"]
        api.remove_network(net)
    return once


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("exec", "run", "network"):
        sys.exit("usage: pyclient.py exec|run|network N [CONTAINER]")
    scenario, n = sys.argv[1], int(sys.argv[2])
    base_url = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    client = docker.DockerClient(base_url=base_url, version="1.41")
    client.ping()  # opens the keep-alive connection: set-up, not timed
    if scenario == "exec":
        once = exec_true(client, sys.argv[3])
    elif scenario == "run":
        once = run_true(client)
    else:
        once = network_cycle(client)
    for _ in range(n):
        t = time.perf_counter()
        once()
        print(f"{(time.perf_counter() - t) * 1000:.3f}", flush=True)


if __name__ == "__main__":
    main()
