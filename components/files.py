"""Durable file writes shared by every tab: write to a temp file beside the target, fsync, rename."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Callable


def atomic_write(path: str | Path, write: Callable[[BinaryIO], Any]) -> Path:
    """Call `write(fh)` on a temp file in the target's folder, then rename it over `path`; readers
    see the old file or the new one, never a partial one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    return atomic_write(path, lambda fh: fh.write(data))


def atomic_write_json(path: str | Path, obj: Any, *, indent: int = 1) -> Path:
    data = (json.dumps(obj, indent=indent, ensure_ascii=False) + "\n").encode("utf-8")
    return atomic_write_bytes(path, data)
