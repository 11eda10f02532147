"""One way to validate a data file: a pydantic schema, and one message naming file, record and key.

Each tab's `data.py` describes its file with pydantic models (or dataclasses) and calls `validated`;
a malformed file raises `DataFormatError("annotations.json: queries[3].interval: ...; fix ...")`.
pydantic is imported lazily: `python app.py --help` never pays for it.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from components.common.errors import DataFormatError

T = TypeVar("T")


def location(loc: tuple) -> str:
    """("queries", 3, "interval") -> 'queries[3].interval'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "the top level"


@lru_cache(maxsize=None)
def _adapter(schema: Any):
    from pydantic import TypeAdapter

    return TypeAdapter(schema)


def validated(schema: type[T] | Any, data: Any, *, file: str | Path, fix: str = "") -> T:
    """`data` read as `schema`, or a DataFormatError naming the file, the record path, the key and
    what was wrong (the first problem; the count of the others)."""
    from pydantic import ValidationError

    try:
        return _adapter(schema).validate_python(data)
    except ValidationError as exc:
        raise DataFormatError(describe(exc, file, fix)) from None


def describe(exc: Any, file: str | Path, fix: str = "") -> str:
    """One readable sentence for a pydantic ValidationError."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = location(tuple(p for p in first["loc"] if not _is_union_tag(p)))
    got = first.get("input")
    shown = "" if first["type"] == "missing" else f" (got {_short(got)})"
    more = f" ({len(errors) - 1} more problem(s) after this one)" if len(errors) > 1 else ""
    return f"{Path(file).name}: {where}: {first['msg'].rstrip('.')}{shown}.{more}" + (f" {fix}" if fix else "")


def _is_union_tag(part: Any) -> bool:
    # pydantic adds the member type's name ("list[float]", "function-after[...]") to union locs
    return isinstance(part, str) and ("[" in part or part.startswith("function-"))


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"
