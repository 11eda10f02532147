"""Paths named inside data files stay inside that file's folder (no `..`, no absolute paths)."""
from __future__ import annotations

import os
from pathlib import Path

from components.base.errors import DataFormatError

ALLOW_EXTERNAL_ENV = "APP_ALLOW_EXTERNAL_MEDIA"


def confined_path(base: Path, value: str, *, file: Path, where: str, key: str) -> Path:
    """`base / value`, refusing absolute paths and `..` escapes (checked lexically, so folders
    symlinked into the data directory keep working). APP_ALLOW_EXTERNAL_MEDIA=1 lifts the rule
    for an operator who keeps media elsewhere."""
    candidate = Path(value)
    if os.environ.get(ALLOW_EXTERNAL_ENV) == "1":
        return candidate if candidate.is_absolute() else base / candidate
    joined = Path(os.path.normpath(base / candidate))
    inside = not candidate.is_absolute() and (joined == Path(os.path.normpath(base))
                                               or Path(os.path.normpath(base)) in joined.parents)
    if not inside:
        raise DataFormatError(
            f"{file}: {where} key '{key}' points outside the file's folder ({value!r}); use a path "
            f"relative to {base} (symlink the media folder there) or set {ALLOW_EXTERNAL_ENV}=1.")
    return joined
