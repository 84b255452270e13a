"""docker-py reference for bench/sweep.sh and bench/scale.sh:
pysweep.py TRIALS CONCURRENCY RUN FILE [TURNS TURN_S]
pysweep.py TRIALS CONCURRENCY RUN FILE --declared

Does by hand, per trial, what `forgectl run examples/tasks/files-basic --agent oracle` needs
from the daemon, on a thread pool of CONCURRENCY workers sharing one client. The task uses no
network and no json-db, so forgectl gives it the runner alone with NetworkMode none; so does this:

  1. the runner from forgectl/runner:local (`sleep`, workdir /work, anonymous volumes /.forgectl
     and /work), created and started;
  2. FILE copied into /work (put_archive), as initial_state.filesystem.copy does;
  3. two exec_run calls: read the file, write submissions/answer.md;
  4. the container removed (force, v).

The runner gets forgectl's hardening (policy/hardening.cc, stack/specs.cc): init, cap_drop ALL
but NET_BIND_SERVICE, no-new-privileges, pids 512, memory = memswap 2 GiB, 1 CPU.
With --declared, each trial is instead the sandbox the task declares, as a harness that brings up a
task's stack as written (docker-compose, Tolokaforge) does: files-basic names no compose file, so the
built-in core stack — an internal bridge network, json-db from forgectl/services:local (read-only
root, core.yaml's healthcheck, waited for by polling inspect every 100 ms) and the runner on it; then
the same copy and two execs, every container removed, then the network. This is the reference the
issue's sweep target (forgectl <= 0.6x) was set against.

All objects carry io.forgectl.bench.run=RUN, which the driver sweeps after a failure.
Prints "trials N ok M seconds S" (S: the pool's wall time, interpreter start and import excluded).

With TURNS and TURN_S (bench/scale.sh), each trial is the same sandbox with TURNS turns of a model that answers
after TURN_S seconds (time.sleep on the pool's thread, as a synchronous client waits), each turn
but the last followed by one exec (cat, the answer's write, ls), then removed. It also prints
"first_tool_ms P50 P95": from a trial's start to its first exec's end, less TURN_S.
"""
import concurrent.futures as cf
import io
import os
import sys
import tarfile
import time

import docker

RUNNER_IMAGE = "forgectl/runner:local"
ANSWER = "# Answer\n\nThe value is 42.\n"


def tar_of(name, data):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def model_bound_trial(client, run, index, archive, turns, turn_s):
    """One model-bound trial in the runner alone (NetworkMode none); returns ms to the first tool call, less turn_s."""
    api = client.api
    stack = f"fgb-scale{run}-{index}"
    labels = {"io.forgectl.bench": "1", "io.forgectl.bench.run": run, "io.forgectl.bench.stack": stack}
    start = time.perf_counter()
    host = api.create_host_config(
        network_mode="none", init=True, cap_drop=["ALL"], cap_add=["NET_BIND_SERVICE"],
        security_opt=["no-new-privileges:true"], pids_limit=512, mem_limit=2 << 30, memswap_limit=2 << 30,
        nano_cpus=10**9)
    box = api.create_container(RUNNER_IMAGE, command=["sleep", "2147483647"], name=f"{stack}-runner", labels=labels,
                               working_dir="/work", volumes=["/.forgectl", "/work"], host_config=host)["Id"]
    first = None
    try:
        api.start(box)
        if not api.put_archive(box, "/work", archive):
            raise RuntimeError(f"{stack}: put_archive failed")
        c = client.containers.get(box)
        commands = [["cat", "/work/problem.txt"],
                    ["sh", "-c", 'mkdir -p submissions && printf %s "$1" > submissions/answer.md', "sh", ANSWER]]
        for turn in range(1, turns + 1):
            time.sleep(turn_s)  # the model's turn
            if turn == turns:
                break
            r = c.exec_run(commands[turn - 1] if turn <= len(commands) else ["ls", "/work"], user="1000:1000")
            if r.exit_code != 0:
                raise RuntimeError(f"{stack}: turn {turn}: exit {r.exit_code}")
            if first is None:
                first = (time.perf_counter() - start - turn_s) * 1000
    finally:
        api.remove_container(box, v=True, force=True)
    return first


SERVICES_IMAGE = "forgectl/services:local"
JSON_DB_HEALTH = {
    "test": ["CMD-SHELL", "printf 'GET /health HTTP/1.0\\r\\n\\r\\n' | nc 127.0.0.1 8000 | grep -q healthy"],
    "interval": 1_000_000_000, "timeout": 2_000_000_000, "retries": 30,
}


def declared_trial(client, run, index, archive):
    """One oracle trial in the task's declared stack: internal network, json-db (healthy), runner."""
    api = client.api
    stack = f"fgb-sweepd{run}-{index}"
    net_name = stack + "-internal"
    labels = {"io.forgectl.bench": "1", "io.forgectl.bench.run": run, "io.forgectl.bench.stack": stack}
    net = api.create_network(net_name, driver="bridge", internal=True, labels=labels, check_duplicate=True)["Id"]
    boxes = []
    try:
        def create(key, image, command, *, mem, pids, env=None, read_only=False, healthcheck=None, cap_add=None,
                   workdir=None, volumes=None):
            host = api.create_host_config(
                network_mode=net_name, init=True, cap_drop=["ALL"], cap_add=cap_add,
                security_opt=["no-new-privileges:true"], pids_limit=pids, mem_limit=mem, memswap_limit=mem,
                nano_cpus=10**9, dns_opt=["timeout:1", "attempts:1"], read_only=read_only)
            netcfg = api.create_networking_config({net_name: api.create_endpoint_config(aliases=[key])})
            box = api.create_container(image, command=command, name=f"{stack}-{key}", labels=labels,
                                       environment=env, working_dir=workdir, volumes=volumes,
                                       healthcheck=healthcheck, host_config=host, networking_config=netcfg)["Id"]
            boxes.append(box)
            api.start(box)
            return box

        db = create("json-db", SERVICES_IMAGE, ["forgectl", "serve", "json-db", "--port", "8000"], mem=1 << 30,
                    pids=256, env={"FORGECTL_SERVICE_TOKEN": os.urandom(32).hex()}, read_only=True,
                    healthcheck=JSON_DB_HEALTH)
        deadline = time.monotonic() + 60
        while True:
            state = api.inspect_container(db)["State"]
            health = (state.get("Health") or {}).get("Status")
            if health == "healthy":
                break
            if health == "unhealthy" or not state.get("Running") or time.monotonic() > deadline:
                raise RuntimeError(f"{stack}: json-db is not healthy ({health}, running {state.get('Running')})")
            time.sleep(0.1)
        runner = create("runner", RUNNER_IMAGE, ["sleep", "2147483647"], mem=2 << 30, pids=512,
                        cap_add=["NET_BIND_SERVICE"], workdir="/work", volumes=["/.forgectl", "/work"])
        if not api.put_archive(runner, "/work", archive):
            raise RuntimeError(f"{stack}: put_archive failed")
        box = client.containers.get(runner)
        read = box.exec_run(["cat", "/work/problem.txt"], user="1000:1000")
        write = box.exec_run(["sh", "-c", 'mkdir -p submissions && printf %s "$1" > submissions/answer.md', "sh",
                              ANSWER], user="1000:1000")
        if read.exit_code != 0 or write.exit_code != 0:
            raise RuntimeError(f"{stack}: tool calls: exit {read.exit_code}, {write.exit_code}")
    finally:
        for box in boxes:
            api.remove_container(box, v=True, force=True)
        api.remove_network(net)


def main():
    declared = sys.argv[5:] == ["--declared"]
    if len(sys.argv) not in (5, 7) and not declared:
        sys.exit("usage: pysweep.py TRIALS CONCURRENCY RUN FILE [TURNS TURN_S | --declared]")
    trials, workers, run, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    bound = len(sys.argv) == 7
    turns, turn_s = (int(sys.argv[5]), float(sys.argv[6])) if bound else (0, 0.0)
    with open(path, "rb") as f:
        archive = tar_of("problem.txt", f.read())
    base_url = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    # One client for the pool; its connection pool is as large as the pool of threads.
    client = docker.DockerClient(base_url=base_url, version="1.41", max_pool_size=max(10, workers))
    client.ping()
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(max_workers=workers) as pool:
        if bound:
            futures = [pool.submit(model_bound_trial, client, run, i, archive, turns, turn_s) for i in range(trials)]
        elif declared:
            futures = [pool.submit(declared_trial, client, run, i, archive) for i in range(trials)]
        else:
            # Two tool calls (read, write) and no model time: the oracle's trial.
            futures = [pool.submit(model_bound_trial, client, run, i, archive, 3, 0.0) for i in range(trials)]
        errors = [f.exception() for f in futures if f.exception() is not None]
    seconds = time.perf_counter() - t0
    for e in errors:
        print(f"pysweep.py: {e}", file=sys.stderr)
    print(f"trials {trials} ok {trials - len(errors)} seconds {seconds:.3f}", flush=True)
    if bound:
        firsts = sorted(f.result() for f in futures if f.exception() is None and f.result() is not None)
        if firsts:
            pick = lambda q: firsts[min(len(firsts) - 1, int(q * len(firsts)))]
            print(f"first_tool_ms {pick(0.5):.1f} {pick(0.95):.1f}", flush=True)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
