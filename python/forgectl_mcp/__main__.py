"""`python3 -m forgectl_mcp [--state FILE] SCRIPT`: serve a task's MCP server script over stdio.

SCRIPT runs as `__main__` (as `python3 SCRIPT` would run it). A native server starts itself
(`mcp.run(transport="stdio")`); a script that builds a server but never runs it is run; a tau-style module
(TOOLS of classes with invoke) is served through forgectl_mcp.tau. With --state, the server starts from
that JSON object instead of the state its script loads (e.g. a task's own initial_state.json when the
server script is shared by a whole project).
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path

from forgectl_mcp import server as server_mod
from forgectl_mcp import strict_json
from forgectl_mcp.tau import is_tau_module, tau_server

MAX_STATE_FILE_BYTES = 32 << 20


def _fail(message: str) -> int:
    print(f"forgectl_mcp: {message}", file=sys.stderr)
    return 2


def _read_state(path: str) -> dict | str:
    try:
        size = os.path.getsize(path)
        if size > MAX_STATE_FILE_BYTES:
            return f"--state {path}: {size} bytes, more than the {MAX_STATE_FILE_BYTES} a server loads"
        with open(path, encoding="utf-8") as f:
            state = strict_json.load(f)
    except OSError as exc:
        return f"--state {path}: {exc.strerror or exc}"
    except (ValueError, RecursionError) as exc:
        return f"--state {path}: not JSON: {exc}"
    if not isinstance(state, dict):
        return f"--state {path}: the state must be a JSON object, not a {type(state).__name__}"
    return state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m forgectl_mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--state", metavar="FILE", help="JSON object the server's state starts as")
    parser.add_argument("script", help="the task's MCP server script (mcp_server.py)")
    args = parser.parse_args(argv)

    script = Path(args.script)
    if not script.is_file():
        return _fail(f"no such script: {args.script}")
    if args.state is not None:
        state = _read_state(args.state)
        if isinstance(state, str):
            return _fail(state)
        server_mod.set_startup_state(state)

    # As `python3 SCRIPT` would: the script's directory first on sys.path, argv[0] the script.
    # Without -P/-I, `-m` put the working directory first: that entry is replaced, not kept.
    sys.argv = [str(script)]
    if not getattr(sys.flags, "safe_path", False) and sys.path:
        sys.path.pop(0)
    sys.path.insert(0, str(script.resolve().parent))
    module_globals = runpy.run_path(str(script), run_name="__main__")
    if server_mod.any_server_ran():
        return 0
    for value in module_globals.values():
        if isinstance(value, server_mod.McpServer):
            value.run()
            return 0
    if is_tau_module(module_globals):
        tau_server(module_globals, script.stem).run()
        return 0
    return _fail(f"{args.script} started no MCP server and defines no TOOLS to serve")


if __name__ == "__main__":
    sys.exit(main())
