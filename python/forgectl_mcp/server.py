"""An MCP server over stdio (initialize, ping, tools/list, tools/call), one request at a time.

Replies are newline-delimited JSON-RPC 2.0, the framing forgectl's client (src/tools/mcp_client.cc) and
Tolokaforge's runner both speak. A tool's failure is a result with `isError: true` and a one-line message;
a broken request is a JSON-RPC error; nothing a tool does ends the server or reaches the protocol stream.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import pydantic
from forgectl_mcp import strict_json

from forgectl_mcp import jsonrpc
from forgectl_mcp.content import text_size, to_content
from forgectl_mcp.signatures import describe_validation_error, tool_signature

SUPPORTED_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18")
LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[-1]


@dataclass
class ServerLimits:
    max_line: int = 32 << 20  # bytes of one request line
    max_result: int = 32 << 20  # bytes of text in one tool result (also the state snapshot)
    max_error: int = 16 << 10  # characters of an error message


class ReportedError(Exception):
    """A failure the tool reports on purpose; its message goes to the caller as it is."""

    def report(self) -> str:
        return str(self)


class ArgumentError(Exception):
    """The call's arguments do not fit the tool."""


@dataclass
class Tool:
    name: str
    description: str
    schema: dict[str, Any]
    invoke: Callable[[dict[str, Any]], Any]  # keyword arguments -> return value
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # raw arguments -> keyword arguments
    hidden: bool = False  # callable, but not listed (the internal state tools)


# Set by the launcher (`python3 -m forgectl_mcp --state FILE`): the state the first server to run starts from.
_startup_state: dict[str, Any] | None = None
_served = False


def set_startup_state(state: dict[str, Any] | None) -> None:
    global _startup_state
    _startup_state = state


def any_server_ran() -> bool:
    return _served


@dataclass
class McpServer:
    name: str
    version: str = "1.0"
    limits: ServerLimits = field(default_factory=ServerLimits)

    def __post_init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._on_start: list[Callable[[], None]] = []
        self._replace_state: Callable[[dict[str, Any]], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.served = False

    # -- registration ---------------------------------------------------------------------------------------

    def add_tool(self, tool: Tool) -> None:
        if tool.name in self._tools:
            # FastMCP keeps the first registration and warns; so do we.
            print(f"forgectl_mcp: tool '{tool.name}' is registered twice; keeping the first", file=sys.stderr)
            return
        self._tools[tool.name] = tool

    def tool(self, name: Any = None, description: str | None = None) -> Callable[..., Any]:
        """FastMCP's decorator for plain functions: every parameter is an argument."""

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            tool_name = name if isinstance(name, str) and name else fn.__name__
            sig = tool_signature(fn, tool_name, skip_first=False)
            desc = description if description is not None else (inspect.getdoc(fn) or "")
            self.add_tool(Tool(tool_name, desc, sig.schema, invoke=lambda kw: fn(**kw), prepare=sig.parse))
            return fn

        if callable(name):  # used bare, as @mcp.tool
            fn, name = name, None
            return decorator(fn)
        return decorator

    def on_start(self, hook: Callable[[], None]) -> None:
        """Runs when the server starts serving (state is loaded then, not when the script is imported)."""
        self._on_start.append(hook)

    def state_replacer(self, replace: Callable[[dict[str, Any]], None]) -> None:
        """How `--state` seeds this server's state at start."""
        self._replace_state = replace

    def listed_tools(self) -> list[Tool]:
        return [t for t in self._tools.values() if not t.hidden]

    # -- serving --------------------------------------------------------------------------------------------

    def run(self, transport: str = "stdio") -> None:
        """Serves stdin/stdout until stdin closes. stdout is taken over for the protocol: whatever a tool
        prints goes to stderr instead, and tools read /dev/null as stdin."""
        global _served, _startup_state
        if transport != "stdio":
            raise ValueError(f"forgectl_mcp serves only the stdio transport, not '{transport}'")
        if self.served:
            raise RuntimeError(f"MCP server '{self.name}' is already running")
        self.served = True
        _served = True
        proto_in, proto_out = _claim_stdio()
        for hook in self._on_start:
            hook()
        if _startup_state is not None:
            if self._replace_state is None:
                raise RuntimeError(f"--state was given, but MCP server '{self.name}' keeps no state")
            self._replace_state(_startup_state)
            _startup_state = None
        reader = jsonrpc.LineReader(proto_in, self.limits.max_line)
        writer = jsonrpc.LineWriter(proto_out)
        while True:
            line = reader.next()
            if line is None:
                break
            if isinstance(line, jsonrpc.Oversized):
                response = jsonrpc.error_response(
                    None,
                    jsonrpc.INVALID_REQUEST,
                    f"request line is {line.size} bytes, more than the {self.limits.max_line} this server reads",
                )
            elif not line.strip():
                continue
            else:
                response = self.handle_line(line)
            if response is None:
                continue
            try:
                writer.send(response)
            except BrokenPipeError:
                break

    def handle_line(self, line: bytes) -> dict[str, Any] | None:
        try:
            message = strict_json.loads(line.decode("utf-8"))
        except RecursionError:
            return jsonrpc.error_response(None, jsonrpc.PARSE_ERROR, "parse error: the request nests too deeply")
        except (UnicodeDecodeError, ValueError) as exc:
            return jsonrpc.error_response(None, jsonrpc.PARSE_ERROR, f"parse error: {exc}")
        return self.handle(message)

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The reply to one decoded message (None for notifications and stray responses)."""
        if isinstance(message, list):
            return jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "batch requests are not supported")
        if not isinstance(message, dict):
            return jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "a request must be a JSON object")
        request_id = message.get("id")
        method = message.get("method")
        if method is None and ("result" in message or "error" in message):
            return None  # a response; this server sends no requests
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            return jsonrpc.error_response(request_id, jsonrpc.INVALID_REQUEST, "not a JSON-RPC 2.0 request")
        if "id" not in message:
            return None  # notifications/initialized, notifications/cancelled, ...: nothing to answer
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return jsonrpc.error_response(request_id, jsonrpc.INVALID_PARAMS, "params must be an object")
        try:
            if method == "initialize":
                return jsonrpc.result_response(request_id, self._initialize(params))
            if method == "ping":
                return jsonrpc.result_response(request_id, {})
            if method == "tools/list":
                return jsonrpc.result_response(request_id, self._list())
            if method == "tools/call":
                name = params.get("name")
                if not isinstance(name, str) or not name:
                    return jsonrpc.error_response(request_id, jsonrpc.INVALID_PARAMS, "tools/call needs a tool name")
                return jsonrpc.result_response(request_id, self.call_tool(name, params.get("arguments")))
            return jsonrpc.error_response(request_id, jsonrpc.METHOD_NOT_FOUND, f"method not found: {method}")
        except Exception as exc:  # a bug here must not end the server
            traceback.print_exc(file=sys.stderr)
            return jsonrpc.error_response(request_id, jsonrpc.INTERNAL_ERROR, f"internal error: {type(exc).__name__}")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": self.name, "version": self.version},
        }

    def _list(self) -> dict[str, Any]:
        return {
            "tools": [{"name": t.name, "description": t.description, "inputSchema": t.schema} for t in self.listed_tools()]
        }

    def call_tool(self, name: str, arguments: Any) -> dict[str, Any]:
        """The CallToolResult of one call: its content, and isError for every kind of failure."""
        tool = self._tools.get(name)
        if tool is None:
            return self._error(f"Unknown tool: {name}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return self._error(f"arguments for '{name}' must be a JSON object")
        try:
            kwargs = tool.prepare(arguments) if tool.prepare else dict(arguments)
        except pydantic.ValidationError as exc:
            return self._error(describe_validation_error(name, exc))
        except ArgumentError as exc:
            return self._error(str(exc))
        except RecursionError:
            return self._error(f"arguments for '{name}' nest too deeply")
        try:
            value = tool.invoke(kwargs)
            if inspect.isawaitable(value):
                value = self._event_loop().run_until_complete(value)
            content = to_content(value)
        except ReportedError as exc:
            return self._error(exc.report())
        except Exception as exc:
            # The model gets the exception's type and message; the traceback (which names files) stays on stderr.
            print(f"forgectl_mcp: tool '{name}' raised:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            return self._error(f"{type(exc).__name__}: {exc}")
        size = text_size(content)
        if size > self.limits.max_result:
            return self._error(f"the result of '{name}' is {size} bytes, more than the {self.limits.max_result} this server returns")
        return {"content": content, "isError": False}

    def _error(self, message: str) -> dict[str, Any]:
        if len(message) > self.limits.max_error:
            message = message[: self.limits.max_error] + " [truncated]"
        return {"content": [{"type": "text", "text": message}], "isError": True}

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        # One loop for the server's lifetime, so async tools may keep loop-bound objects between calls.
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop


def _claim_stdio() -> tuple[int, int]:
    """Private copies of stdin and stdout for the protocol; fd 0 becomes /dev/null and fd 1 the stderr."""
    try:
        sys.stdout.flush()
    except Exception:
        pass
    proto_out = os.dup(1)  # dup'd fds are not inherited by subprocesses a tool starts
    os.dup2(2, 1)
    proto_in = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return proto_in, proto_out
