"""One way to validate a data file: a pydantic schema, and one message naming file, record and key.

Each tab's `data.py` describes its file with pydantic models (or dataclasses) and calls `validated`;
a malformed file raises `DataFormatError("annotations.json: queries[3].interval: ...; fix ...")`.
pydantic is imported lazily: `python app.py --help` never pays for it.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, TypeVar
from collections.abc import Callable

from components.base.errors import DataFormatError

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


@cache
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
    where = location(_record_path(first, errors))
    got = first.get("input")
    shown = "" if first["type"] == "missing" else f" (got {_short(got)})"
    problems = len({_record_path(error, errors) for error in errors})  # a union's members count once
    more = f" ({problems - 1} more problem(s) after this one)" if problems > 1 else ""
    return f"{Path(file).name}: {where}: {first['msg'].rstrip('.')}{shown}.{more}" + (f" {fix}" if fix else "")


#: error types of the plain union members pydantic names by type ("int", "str", ...) in a loc
_MEMBER_ERRORS = {"int": "int_", "float": "float_", "str": "string_", "bool": "bool_",
                  "bytes": "bytes_", "none": "none_"}


def _is_member_error(error: dict) -> bool:
    loc = error["loc"]
    return bool(loc) and error["type"].startswith(_MEMBER_ERRORS.get(loc[-1], "\0"))


def _record_path(error: dict, errors: list[dict]) -> tuple:
    """The error's loc without the union member names pydantic adds to it."""
    loc = error["loc"]
    if _ends_in_member_name(error, errors):
        loc = loc[:-1]  # ("label", "int") for `label: int | str`: the key is "label"
    return tuple(p for p in loc if not _is_union_tag(p))


def _ends_in_member_name(error: dict, errors: list[dict]) -> bool:
    """True when the loc ends in a plain member's type name and another member of the same union
    failed at the same place (a key that merely reads "int" has no such sibling)."""
    loc = error["loc"]
    if not _is_member_error(error):
        return False
    n = len(loc) - 1
    for other in errors:
        at = other["loc"]
        if other is error or len(at) <= n or at[:n] != loc[:n] or at[n] == loc[n]:
            continue
        if _is_union_tag(at[n]) or (len(at) == n + 1 and _is_member_error(other)):
            return True
    return False


def _is_union_tag(part: Any) -> bool:
    # pydantic adds the member type's name ("list[float]", "function-after[...]") to union locs
    return isinstance(part, str) and ("[" in part or part.startswith("function-"))


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def validated_as(schema: type[T] | Any, data: Any, *, file: str | Path,
                 where: Callable[[tuple], str] = location, fix: str = "") -> T:
    """`validated` for files whose messages keep their own wording: `file` as given (e.g. a full
    path), the place as `where(loc)` names it (e.g. "items[3] (qid 'h7')"), then the first
    problem: a validator's ValueError text as written, "missing required key 'k'." for a missing
    key (the place is then the record that lacks it), else pydantic's text and the value."""
    from pydantic import ValidationError

    try:
        return _adapter(schema).validate_python(data)
    except ValidationError as exc:
        raise DataFormatError(_describe_as(exc, file, where, fix)) from None


def _describe_as(exc: Any, file: str | Path, where: Callable[[tuple], str], fix: str) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = tuple(p for p in first["loc"] if not _is_union_tag(p))
    if first["type"] == "missing" and loc:
        loc, text = loc[:-1], f"missing required key '{loc[-1]}'."
    elif first["type"] == "value_error" and "error" in first.get("ctx", {}):
        text = str(first["ctx"]["error"])
    else:
        text = f"{first['msg'].rstrip('.')} (got {_short(first.get('input'))})."
    more = f" ({len(errors) - 1} more problem(s) after this one)" if len(errors) > 1 else ""
    return f"{file}: {where(loc)}: {text}{more}" + (f" {fix}" if fix else "")
