"""The driver's inputs (transcript, states, task), read with bounds and turned into a CheckContext."""

from __future__ import annotations

import os
from typing import Any

from forgectl_mcp import strict_json

from tolokaforge.core.grading.checks_helpers import build_check_context
from tolokaforge.core.grading.checks_interface import CheckContext, Message, TaskContext, ToolCall, Transcript

MAX_INPUT_BYTES = 64 << 20
MAX_MESSAGES = 100_000


class InputError(Exception):
    """An input file that cannot be used; the message names the file and what is wrong."""


def read_json(path: str, what: str) -> Any:
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise InputError(f"{what} {path}: {exc.strerror or exc}") from None
    if size > MAX_INPUT_BYTES:
        raise InputError(f"{what} {path}: {size} bytes, more than the {MAX_INPUT_BYTES} the driver reads")
    try:
        with open(path, encoding="utf-8") as f:
            return strict_json.load(f)
    except OSError as exc:
        raise InputError(f"{what} {path}: {exc.strerror or exc}") from None
    except RecursionError:
        raise InputError(f"{what} {path}: nests too deeply") from None
    except ValueError as exc:
        raise InputError(f"{what} {path}: not JSON: {exc}") from None


def _text(content: Any) -> str:
    """Message content as text: a string, nothing, or a list of content parts (their text joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return str(content)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw:
        try:
            decoded = strict_json.loads(raw)
        except (ValueError, RecursionError):
            return {}
        return decoded if isinstance(decoded, dict) else {}
    return {}


def _status(value: Any) -> str | None:
    return value if value in ("success", "error") else None


def _tool_call(raw: Any, results: dict[str, str], statuses: dict[str, str], where: str) -> ToolCall:
    """A flat call ({name, arguments, result?, status?}) or an OpenAI wire one ({id, function: {name, arguments}}).
    Its status is its own, else that of the tool message answering its id, else `success`."""
    if not isinstance(raw, dict):
        raise InputError(f"{where} is not an object")
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    name = fn.get("name") or raw.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(f"{where} has no tool name")
    result = raw.get("result")
    if not isinstance(result, str):
        result = results.get(raw.get("id")) if isinstance(raw.get("id"), str) else None
    call_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    status = _status(raw.get("status")) or (statuses.get(call_id) if call_id else None) or "success"
    return ToolCall(name=name, arguments=_arguments(fn.get("arguments", raw.get("arguments"))), result=result, status=status)


def decode_transcript(doc: Any, path: str) -> Transcript:
    """A list of messages, or an object with `messages` (trajectory-like). A tool call's result is taken
    from the tool message answering its id when the call does not carry one."""
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(messages, list):
        raise InputError(f"transcript {path}: expected a list of messages or an object with 'messages'")
    if len(messages) > MAX_MESSAGES:
        raise InputError(f"transcript {path}: {len(messages)} messages, more than the {MAX_MESSAGES} the driver reads")
    results = {
        m["tool_call_id"]: _text(m.get("content"))
        for m in messages
        if isinstance(m, dict) and m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)
    }
    statuses = {
        m["tool_call_id"]: m["status"]
        for m in messages
        if isinstance(m, dict)
        and m.get("role") == "tool"
        and isinstance(m.get("tool_call_id"), str)
        and _status(m.get("status"))
    }
    out = []
    for i, m in enumerate(messages):
        where = f"transcript {path}: message {i}"
        if not isinstance(m, dict):
            raise InputError(f"{where} is not an object")
        role = m.get("role")
        if not isinstance(role, str):
            raise InputError(f"{where} has no role")
        calls = m.get("tool_calls") or []
        if not isinstance(calls, list):
            raise InputError(f"{where}: tool_calls is not a list")
        extra = {k: v for k, v in m.items() if k in ("tool_call_id", "ts") and isinstance(v, str)}
        out.append(
            Message(
                role=role,
                content=_text(m.get("content")),
                tool_calls=[_tool_call(c, results, statuses, f"{where}, tool call {j}") for j, c in enumerate(calls)],
                name=m.get("name") if isinstance(m.get("name"), str) else None,
                **extra,
            )
        )
    return Transcript(messages=out)


def decode_task(doc: Any, path: str) -> TaskContext:
    if not isinstance(doc, dict):
        raise InputError(f"task {path}: expected an object")
    tags = doc.get("tags") if isinstance(doc.get("tags"), list) else []
    return TaskContext(
        task_id=str(doc.get("task_id", "")),
        task_name=str(doc.get("task_name", doc.get("name", "")) or ""),
        task_description=str(doc.get("task_description", doc.get("description", "")) or ""),
        domain=str(doc.get("domain", doc.get("category", "")) or ""),
        tags=[str(t) for t in tags],
        extra=doc.get("extra") if isinstance(doc.get("extra"), dict) else {},
    )


def load_context(transcript: str, initial_state: str, final_state: str, task: str | None) -> CheckContext:
    initial = read_json(initial_state, "initial state")
    final = read_json(final_state, "final state")
    if not isinstance(initial, dict):
        raise InputError(f"initial state {initial_state}: expected a JSON object")
    if not isinstance(final, dict):
        raise InputError(f"final state {final_state}: expected a JSON object")
    task_ctx = decode_task(read_json(task, "task"), task) if task else TaskContext(task_id="")
    return build_check_context(
        initial_state_json_db=initial,
        final_env_state=final,
        transcript=decode_transcript(read_json(transcript, "transcript"), transcript),
        task=task_ctx,
    )
