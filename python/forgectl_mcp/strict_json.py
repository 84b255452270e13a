"""JSON as forgectl reads it: an object holding a key twice is an error, never its last value.

Readers disagree about duplicate keys (Python's json keeps the last, forgectl's C++ refuses them, and
others keep the first), so a document that means two things to two readers is refused wherever it
crosses into forgectl's Python: requests, state files, the checks driver's evidence.
"""

from __future__ import annotations

import json
from typing import IO, Any


class DuplicateKeyError(ValueError):
    """A key given twice in one object (a ValueError, as json's own decoding errors are)."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            shown = key if len(key) <= 80 else key[:80] + "…"
            raise DuplicateKeyError(f"the key {shown!r} twice in one object")
        out[key] = value
    return out


def loads(text: str | bytes) -> Any:
    return json.loads(text, object_pairs_hook=_object)


def load(f: IO[str]) -> Any:
    return json.load(f, object_pairs_hook=_object)
