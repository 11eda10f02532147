"""The one text table every `eval` prints: a row per figure, its name left-aligned, its value
(rounded for display only) after it, and an optional tail (an interval)."""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any


def format_value(value: Any) -> str:
    """None: "n/a"; a float to 2 decimals ("nan" kept); anything else as text."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.2f}"
    return str(value)


def format_table(rows: Iterable[Sequence[Any]], *, name_width: int | None = None, value_width: int = 0,
                 gap: str = "  ") -> str:
    """Rows `(name, value)` or `(name, value, tail)`: the names padded to `name_width` (the
    longest name's by default), then `gap`, the value right-aligned in `value_width`, the tail."""
    rows = [tuple(row) for row in rows]
    width = name_width if name_width is not None else max((len(str(r[0])) for r in rows), default=0)
    return "\n".join(f"{str(r[0]):<{width}}{gap}{format_value(r[1]):>{value_width}}{r[2] if len(r) > 2 else ''}"
                     for r in rows)
