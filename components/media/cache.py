"""Disk cache keyed by file identity + parameters. (SKELETON: media helper implements.)"""
from __future__ import annotations

from pathlib import Path


def default_cache_dir() -> Path: ...
def file_identity(path: str | Path) -> str:
    """size, mtime and sha256 of the first and last MiB -> hex digest."""


class DiskCache:
    def __init__(self, root: str | Path | None = None): ...
