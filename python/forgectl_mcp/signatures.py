"""A tool function's parameters as a pydantic model: its JSON schema for tools/list and its argument validation.

The schema follows what FastMCP derives from the same function (a model named `<tool>Arguments`, titles,
`required`, `$defs` for nested models), plus `additionalProperties: false` at the root, which is how
forgectl governs every tool. Validation, like FastMCP's, ignores unknown keys: forgectl's executor has
already refused them for the agent, and golden replays written for Tolokaforge may carry extras.
"""

from __future__ import annotations

import inspect
import json
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable

import pydantic
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from forgectl_mcp import strict_json

# Parameter names a pydantic model cannot use as field names (they shadow BaseModel members).
_SHADOWED = {name for name in dir(BaseModel) if not name.startswith("_")}


class SignatureError(Exception):
    """A tool function whose parameters cannot become a schema."""


@dataclass(frozen=True)
class _Param:
    name: str  # the function's parameter name (what the caller sends)
    field: str  # the model's field name (differs when the name shadows a BaseModel member)
    annotation: Any


@dataclass
class ToolSignature:
    """The arguments model of one tool and how to turn validated arguments back into keyword arguments."""

    model: type[BaseModel]
    params: list[_Param]
    schema: dict[str, Any]

    def parse(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments for the function; raises pydantic.ValidationError."""
        instance = self.model.model_validate(_pre_parse_json(arguments, self.params))
        return {p.name: getattr(instance, p.field) for p in self.params}


def _pre_parse_json(arguments: dict[str, Any], params: list[_Param]) -> dict[str, Any]:
    # Models often send a list or an object as a JSON string; FastMCP decodes those for non-str parameters.
    out = dict(arguments)
    for p in params:
        value = out.get(p.name)
        if isinstance(value, str) and p.annotation is not str:
            try:
                decoded = strict_json.loads(value)
            except (ValueError, RecursionError):
                continue
            if isinstance(decoded, (list, dict)):
                out[p.name] = decoded
    return out


def _resolved_hints(fn: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # NameError for an unresolvable forward reference, and others
        raise SignatureError(f"cannot resolve the type hints of tool '{tool_name}': {type(exc).__name__}: {exc}") from exc


def tool_signature(fn: Callable[..., Any], tool_name: str, skip_first: bool) -> ToolSignature:
    """The arguments of `fn` (without its first parameter when `skip_first`: the state dict)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise SignatureError(f"tool '{tool_name}' has no inspectable signature: {exc}") from exc
    hints = _resolved_hints(fn, tool_name)
    params = [p for p in sig.parameters.values()]
    if skip_first:
        if not params or params[0].kind not in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            raise SignatureError(f"tool '{tool_name}' must take the state dict (data: dict) as its first parameter")
        params = params[1:]

    fields: dict[str, Any] = {}
    kept: list[_Param] = []
    for p in params:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue  # *args / **kwargs take no part in the schema
        if p.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise SignatureError(f"parameter '{p.name}' of tool '{tool_name}' is positional-only; tools are called by keyword")
        if p.name.startswith("_"):
            raise SignatureError(f"parameter '{p.name}' of tool '{tool_name}' cannot start with '_'")
        annotation = hints.get(p.name, inspect.Parameter.empty)
        if annotation is inspect.Parameter.empty:
            # FastMCP advertises an untyped parameter as a string and accepts anything.
            annotation = Annotated[Any, WithJsonSchema({"title": p.name, "type": "string"})]
        default = ... if p.default is inspect.Parameter.empty else p.default
        field = p.name
        if p.name in _SHADOWED:  # e.g. `json`, `copy`: an internal field name, the parameter's as alias
            field = f"field_{p.name}"
            annotation = Annotated[annotation, Field(alias=p.name)]
        fields[field] = (annotation, default)
        kept.append(_Param(p.name, field, annotation))

    try:
        model = pydantic.create_model(
            f"{tool_name}Arguments",
            __config__=ConfigDict(arbitrary_types_allowed=True, protected_namespaces=(), populate_by_name=True),
            **fields,
        )
        schema = model.model_json_schema(by_alias=True)
    except Exception as exc:
        raise SignatureError(f"tool '{tool_name}': its parameters have no JSON schema: {type(exc).__name__}: {exc}") from exc
    schema = portable_schema(schema)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return ToolSignature(model=model, params=kept, schema=schema)


class _Cycle(Exception):
    pass


def _inline(node: Any, defs: dict[str, Any], active: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(n, defs, active) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref[len("#/$defs/") :]
        if name in active or name not in defs:
            raise _Cycle(name)
        body = _inline(defs[name], defs, active + (name,))
        siblings = {k: _inline(v, defs, active) for k, v in node.items() if k != "$ref"}
        return {**body, **siblings}
    return {k: _inline(v, defs, active) for k, v in node.items()}


def portable_schema(schema: dict[str, Any], max_bytes: int = 64 << 10) -> dict[str, Any]:
    """pydantic's `$defs` references inlined, so validators and model providers that know only older JSON
    Schema (forgectl's RapidJSON validator ignores `$defs`; some providers refuse `$ref`) still see every
    constraint. A recursive model cannot be inlined: its definitions move to `definitions`, which they do know."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict) or not defs:
        return schema
    rest = {k: v for k, v in schema.items() if k != "$defs"}
    try:
        inlined = _inline(rest, defs, ())
        if len(json.dumps(inlined)) <= max_bytes:
            return inlined
    except _Cycle:
        pass
    text = json.dumps(schema).replace('"#/$defs/', '"#/definitions/')
    out = json.loads(text)
    out["definitions"] = out.pop("$defs")
    return out


def describe_validation_error(tool_name: str, error: pydantic.ValidationError, limit: int = 10) -> str:
    """One line per problem, without pydantic's documentation URLs."""
    parts = []
    errors = error.errors(include_url=False)
    for e in errors[:limit]:
        loc = ".".join(str(x) for x in e.get("loc", ()))
        parts.append(f"{loc}: {e.get('msg', 'invalid')}" if loc else str(e.get("msg", "invalid")))
    if len(errors) > limit:
        parts.append(f"and {len(errors) - limit} more")
    return f"invalid arguments for '{tool_name}': " + "; ".join(parts)
