"""docker-py way for bench/run.sh: pyclient.py exec|run|network N [CONTAINER] | stack N K RUN [parallel].

One process, one kept-alive client; prints one duration (ms) per line, timing only the calls
(`stack`: "up down" per line).
"""
import os
import secrets
import sys
import threading
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


# stack: the containers of forgectl's no_internet stack, with the HostConfig forgectl sends
# (stack/specs.cc, policy/hardening.cc): s1..s3 as services, and "runner" as the 4th when K is 4,
# with its anonymous volumes (forgectl's helper directory and the workdir).
def stack_members(k):
    service = dict(command=["sleep", "3600"], cap_add=None, mem=1 << 30, pids=256, workdir=None, volumes=None)
    members = [(f"s{i}", service) for i in range(1, min(k, 3) + 1)]
    if k >= 4:
        members.append(("runner", dict(command=["sleep", "2147483647"], cap_add=["NET_BIND_SERVICE"], mem=2 << 30,
                                       pids=512, workdir="/work", volumes=["/.forgectl", "/work"])))
    return members


def each(parallel, items, f):
    """f(item) for every item: one after the other, or on one thread each."""
    if not parallel:
        for item in items:
            f(item)
        return
    errors = []
    def run(item):
        try:
            f(item)
        except Exception as e:  # noqa: BLE001 - re-raised below, on the main thread
            errors.append(e)
    threads = [threading.Thread(target=run, args=(item,)) for item in items]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def stack_cycle(client, k, run, parallel):
    """up: internal network, then create + start each container; down: list by label, force-remove
    each, remove the network. Sequential over the one client, or one thread per container."""
    api = client.api
    members = stack_members(k)
    def up_down():
        stack = f"fgb-py{run}-{secrets.token_hex(3)}"
        labels = {"io.forgectl.bench": "1", "io.forgectl.bench.run": run, "io.forgectl.bench.stack": stack}
        t0 = time.perf_counter()
        net = api.create_network(stack + "-internal", driver="bridge", internal=True, labels=labels,
                                 check_duplicate=True)["Id"]
        def create_start(member):
            key, m = member
            host = api.create_host_config(
                network_mode=stack + "-internal", init=True, cap_drop=["ALL"], cap_add=m["cap_add"],
                security_opt=["no-new-privileges:true"], pids_limit=m["pids"], mem_limit=m["mem"],
                memswap_limit=m["mem"], nano_cpus=10**9, dns_opt=["timeout:1", "attempts:1"])
            netcfg = api.create_networking_config({stack + "-internal": api.create_endpoint_config(aliases=[key])})
            box = api.create_container(IMAGE, command=m["command"], name=f"{stack}-{key}", labels=labels,
                                       working_dir=m["workdir"], volumes=m["volumes"], host_config=host,
                                       networking_config=netcfg)["Id"]
            api.start(box)
        each(parallel, members, create_start)
        t1 = time.perf_counter()
        boxes = api.containers(all=True, quiet=True, filters={"label": f"io.forgectl.bench.stack={stack}"})
        each(parallel, [b["Id"] for b in boxes], lambda box: api.remove_container(box, v=True, force=True))
        api.remove_network(net)
        t2 = time.perf_counter()
        if len(boxes) != k:
            raise RuntimeError(f"stack {stack}: found {len(boxes)} containers, wanted {k}")
        return (t1 - t0) * 1000, (t2 - t1) * 1000
    return up_down


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("exec", "run", "network", "stack"):
        sys.exit("usage: pyclient.py exec|run|network N [CONTAINER] | stack N K RUN [parallel]")
    scenario, n = sys.argv[1], int(sys.argv[2])
    base_url = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    client = docker.DockerClient(base_url=base_url, version="1.41")
    client.ping()  # opens the keep-alive connection: set-up, not timed
    if scenario == "stack":
        up_down = stack_cycle(client, int(sys.argv[3]), sys.argv[4], len(sys.argv) > 5 and sys.argv[5] == "parallel")
        for _ in range(n):
            up, down = up_down()
            print(f"{up:.3f} {down:.3f}", flush=True)
        return
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
