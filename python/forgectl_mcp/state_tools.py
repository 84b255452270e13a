"""The internal tools through which the harness reads and replaces a server's domain state.

Names, arguments and answers are Tolokaforge's: `_tolokaforge_get_state_` takes nothing and answers the state
as JSON text; `_tolokaforge_set_state_` takes `{"state_json": "<JSON object>"}`, replaces the state's
contents in place and answers `{"status": "ok", "tables": [...]}`. They are hidden from tools/list, so an
agent that is offered "every tool of the server" is never offered these.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from forgectl_mcp.server import ArgumentError, McpServer, ReportedError, Tool
from forgectl_mcp import strict_json

GET_STATE = "_tolokaforge_get_state_"
SET_STATE = "_tolokaforge_set_state_"

_GET_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False, "title": f"{GET_STATE}Arguments"}
_SET_SCHEMA = {
    "type": "object",
    "properties": {"state_json": {"title": "State Json", "type": "string"}},
    "required": ["state_json"],
    "additionalProperties": False,
    "title": f"{SET_STATE}Arguments",
}


def replace_in_place(current: dict[str, Any], new: dict[str, Any]) -> None:
    # In place, because tool code may hold a reference to the state dict.
    current.clear()
    current.update(new)


def register_state_tools(
    server: McpServer,
    get_state: Callable[[], Any],
    replace_state: Callable[[dict[str, Any]], None],
) -> None:
    limit = server.limits.max_result

    def snapshot(_: dict[str, Any]) -> str:
        # default=str: a date or a set in the state becomes text instead of failing the whole snapshot.
        text = json.dumps(get_state(), default=str)
        if len(text) > limit:
            raise ReportedError(f"the state is {len(text)} bytes of JSON, more than the {limit} this server returns")
        return text

    def prepare_set(arguments: dict[str, Any]) -> dict[str, Any]:
        state_json = arguments.get("state_json")
        if not isinstance(state_json, str):
            raise ArgumentError(f"{SET_STATE} needs state_json, a string holding a JSON object")
        if len(state_json) > limit:
            raise ArgumentError(f"state_json is {len(state_json)} bytes, more than the {limit} this server takes")
        try:
            new = strict_json.loads(state_json)
        except RecursionError:
            raise ArgumentError("state_json nests too deeply") from None
        except ValueError as exc:
            raise ArgumentError(f"state_json is not JSON: {exc}") from None
        if not isinstance(new, dict):
            raise ArgumentError(f"state_json must hold a JSON object, not a {type(new).__name__}")
        return {"state": new}

    def replace(kwargs: dict[str, Any]) -> str:
        replace_state(kwargs["state"])
        state = get_state()
        tables = list(state.keys()) if isinstance(state, dict) else []
        return json.dumps({"status": "ok", "tables": tables})

    server.add_tool(Tool(GET_STATE, "Internal: get state snapshot", _GET_SCHEMA, invoke=snapshot, hidden=True))
    server.add_tool(Tool(SET_STATE, "Internal: replace state", _SET_SCHEMA, invoke=replace, prepare=prepare_set, hidden=True))
    server.state_replacer(replace_state)
