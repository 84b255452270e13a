"""Tolokaforge's tool-server interface: create_server, DomainToolRegistry, @registry.tool, ToolError.

A task's mcp_server.py does

    mcp, registry, TOOLS = create_server(__file__, "shop")

    @registry.tool("Place an order.")
    def place_order(data: dict, customer_id: str, items: list[Item]) -> dict: ...

    if __name__ == "__main__":
        mcp.run(transport="stdio")

`data` is the server's state dict (loaded from `initial_state.json` beside the script when the server starts);
the other parameters become the tool's JSON schema. TOOLS maps each name to a class whose
`invoke(data, **kwargs)` runs the tool against a given state, as Tolokaforge's host grader calls it.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Annotated, Any, Callable, get_args, get_origin

from forgectl_mcp.server import McpServer, ReportedError, Tool
from forgectl_mcp.signatures import tool_signature
from forgectl_mcp import strict_json
from forgectl_mcp.state_tools import register_state_tools, replace_in_place

__all__ = ["ToolError", "DomainToolRegistry", "setup_task_server", "create_server"]

# A state file larger than this is refused when the server starts.
MAX_STATE_FILE_BYTES = 32 << 20


class ToolError(ReportedError):
    """A business-logic failure a tool raises on purpose.

    Over MCP it is an `isError` result carrying the message (and details). Through TOOLS[...].invoke it is
    returned as `{"error": message, "details": [...]}`, as in Tolokaforge.
    """

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        self.details: list[str] = list(details or [])
        super().__init__(message)

    @classmethod
    def from_exc(cls, message: str, exc: Exception) -> ToolError:
        return cls(message, [str(exc)])

    def report(self) -> str:
        message = str(self)
        if self.details:
            return f"{message} ({'; '.join(str(d) for d in self.details)})"
        return message


def _tool_error_dict(exc: ToolError) -> dict[str, Any]:
    out: dict[str, Any] = {"error": str(exc)}
    if exc.details:
        out["details"] = exc.details
    return out


def _unwrap(hint: Any) -> Any:
    return get_args(hint)[0] if get_origin(hint) is Annotated else hint


def _model_validator(hint: Any) -> Callable[[Any], Any] | None:
    validate = getattr(_unwrap(hint), "model_validate", None)
    return validate if callable(validate) else None


def _grading_class(name: str, func: Callable[..., Any]) -> type:
    """TOOLS[name]: `invoke(data, **kwargs)`. Grading passes raw dicts (golden actions from YAML); a
    parameter typed as a pydantic model, or a list of them, gets them validated into models first."""
    import typing

    hints = typing.get_type_hints(func, include_extras=True)

    def coerce(arg: str, value: Any) -> Any:
        hint = _unwrap(hints.get(arg))
        if hint is None:
            return value
        if get_origin(hint) is list:
            args = get_args(hint)
            validate = _model_validator(args[0]) if args else None
            if validate and isinstance(value, list):
                return [validate(v) if isinstance(v, dict) else v for v in value]
            return value
        validate = _model_validator(hint)
        if validate and isinstance(value, dict):
            return validate(value)
        return value

    def invoke(data: dict[str, Any], **kwargs: Any) -> Any:
        coerced = {k: coerce(k, v) for k, v in kwargs.items()}
        try:
            return func(data, **coerced)
        except ToolError as exc:
            return _tool_error_dict(exc)

    return type(name, (), {"invoke": staticmethod(invoke), "__qualname__": name, "__doc__": func.__doc__})


class DomainToolRegistry:
    """One decorator registers a tool both with the MCP server and in TOOLS (for grading)."""

    def __init__(self, mcp: McpServer, state: Callable[[], dict[str, Any]]) -> None:
        if not isinstance(mcp, McpServer):
            raise TypeError("DomainToolRegistry needs the server create_server() returns (forgectl has no FastMCP)")
        self.TOOLS: dict[str, type] = {}
        self._mcp = mcp
        self._state = state
        register_state_tools(mcp, state, lambda new: replace_in_place(state(), new))

    def tool(self, description: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers `func(data, ...)`; the state is passed as `data` at call time and is not in the schema."""

        def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
            name = func.__name__
            sig = tool_signature(func, name, skip_first=True)
            self.TOOLS[name] = _grading_class(name, func)
            state = self._state
            self._mcp.add_tool(
                Tool(name, description, sig.schema, invoke=lambda kwargs: func(state(), **kwargs), prepare=sig.parse)
            )
            return func

        return decorator


def setup_task_server(caller_file: str) -> type[DomainToolRegistry]:
    """Puts the script's directory first on sys.path (so its own `tools/` package wins) and lets tool
    modules import this module as `core.tools_interface` too."""
    task_dir = str(Path(caller_file).parent)
    if task_dir in sys.path:
        sys.path.remove(task_dir)
    sys.path.insert(0, task_dir)
    this = sys.modules[__name__]
    sys.modules.setdefault("core.tools_interface", this)
    if "core" not in sys.modules and importlib.util.find_spec("core") is None:
        # `import core.tools_interface` needs a parent package; give it one only when the task has none.
        stub = types.ModuleType("core")
        stub.__path__ = []  # a package without a directory
        stub.tools_interface = this  # type: ignore[attr-defined]
        sys.modules["core"] = stub
    return DomainToolRegistry


def _load_state_file(path: Path) -> dict[str, Any]:
    size = path.stat().st_size
    if size > MAX_STATE_FILE_BYTES:
        raise ValueError(f"{path}: the state file is {size} bytes, more than the {MAX_STATE_FILE_BYTES} a server loads")
    try:
        loaded = strict_json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: the state must be a JSON object, not a {type(loaded).__name__}")
    return loaded


def create_server(
    caller_file: str, server_name: str, state_file: str = "initial_state.json"
) -> tuple[McpServer, DomainToolRegistry, dict[str, type]]:
    """(mcp, registry, TOOLS) for a task directory. The state is read from `state_file` (relative to the
    script's directory; absent means empty) when `mcp.run()` starts, not on import, so grading can import
    the module without a state file."""
    setup_task_server(caller_file)
    task_dir = Path(caller_file).parent
    state: dict[str, Any] = {}

    def load() -> None:
        path = task_dir / state_file
        replace_in_place(state, _load_state_file(path) if path.exists() else {})

    mcp = McpServer(server_name)
    mcp.on_start(load)
    registry = DomainToolRegistry(mcp, lambda: state)
    return mcp, registry, registry.TOOLS
