"""Numbers typed into a form, read strictly: a value outside its range is refused with a message
that names the field and says what to do, never silently changed into another one."""
from __future__ import annotations

import math
from typing import Any

from components.base.errors import UserError


def number(value: Any, field: str, *, default: float | None = None, least: float | None = None,
           most: float | None = None) -> float:
    """`value` as a float; empty gives `default` (refused when there is none)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if default is None:
            raise UserError(f"{field} is empty; enter a number.")
        return float(default)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{field} must be a number (got {value!r}).") from None
    if not math.isfinite(x):
        raise UserError(f"{field} must be a finite number (got {value!r}).")
    if least is not None and x < least:
        raise UserError(f"{field} must be at least {least:g} (got {x:g}).")
    if most is not None and x > most:
        raise UserError(f"{field} must be at most {most:g} (got {x:g}).")
    return x


def whole(value: Any, field: str, *, default: int | None = None, least: int | None = None,
          most: int | None = None) -> int:
    """`value` as an int; 2.5 is refused, not rounded."""
    x = number(value, field, default=default, least=least, most=most)
    if x != int(x):
        raise UserError(f"{field} must be a whole number (got {x:g}).")
    return int(x)
