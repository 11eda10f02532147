"""Splitting one benchmark across N client machines (`run ... --shard i/N`) and merging their
outputs again (`eval` with several files or a folder). Pure; no gradio.

An item belongs to shard `i` of `N` when sha256(its key) mod N == i - 1: deterministic, the same
on every machine and independent of the rest of the file, and every item lands in exactly one shard.
"""
from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from components.base.errors import DataFormatError

T = TypeVar("T")
V = TypeVar("V")
R = TypeVar("R")

SHARD_HELP = ("run only shard i of N (1-based: 1/3, 2/3, 3/3 on three machines); items are split "
              "by their key, every item in exactly one shard; `eval` merges the shards' outputs")


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def holds(self, key: str) -> bool:
        return shard_of(key, self.count) == self.index

    def select(self, items: Iterable[T], key: Callable[[T], str]) -> list[T]:
        return [item for item in items if self.holds(key(item))]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(key: str, count: int) -> int:
    """The 1-based shard of `key` among `count` shards."""
    digest = hashlib.sha256(str(key).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(text: str) -> Shard:
    """'i/N' -> Shard; ValueError with the rule when it is not 1 <= i <= N."""
    parts = str(text).strip().split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"expected i/N with whole numbers, e.g. 1/3 (got {text!r})")
    index, count = (int(p) for p in parts)
    if count < 1:
        raise ValueError(f"N must be at least 1 (got {text!r})")
    if not 1 <= index <= count:
        raise ValueError(f"i must be between 1 and N={count}: shards are numbered 1/{count} to "
                         f"{count}/{count} (got {text!r})")
    return Shard(index, count)


def describe_selection(shard: Shard | None, kept: int, total: int, unit: str) -> str:
    return f"shard {shard}: {kept} of {total} {unit}" if shard else f"{total} {unit}"


# -- merging ---------------------------------------------------------------------------------------

def input_files(paths: Iterable[str | Path], pattern: str, what: str, flag: str) -> list[Path]:
    """Each path as given when it is a file; for a folder, the files under it matching `pattern`
    (recursively, sorted), so a folder of shard outputs can be passed as it is."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob(pattern)
                           if p.is_file() and not p.name.endswith(".progress.jsonl"))
            if not found:
                raise DataFormatError(f"{flag} {path}: the folder holds no {what} ({pattern}); "
                                      "pass the files themselves or the folder the shards wrote.")
            out += found
        elif path.exists():
            out.append(path)
        else:
            raise DataFormatError(f"{flag}: {what} not found: {path}")
    return list(dict.fromkeys(out))


def merge_keyed(parts: Iterable[tuple[Path, Iterable[tuple[V, R]]]], *, what: str,
                name: Callable[[V], str] = str, note: Callable[[str], None] | None = None) -> dict[V, R]:
    """Merge (file, [(key, record), ...]) parts into key -> record.

    The same key with an identical record in two files (a shard run twice, a copied file) is kept
    once and noted; with different records it is refused, naming both files."""
    merged: dict[V, R] = {}
    origin: dict[V, Path] = {}
    duplicates = 0
    first_duplicate = ""
    for path, pairs in parts:
        for key, record in pairs:
            if key in merged:
                if _canonical(merged[key]) != _canonical(record):
                    raise DataFormatError(
                        f"{what} {name(key)} is in both {origin[key]} and {path} with different "
                        "contents; each item must come from exactly one shard (were two shards "
                        "run with the same --shard, or is one file an older run?). Remove one.")
                duplicates += 1
                first_duplicate = first_duplicate or f"{name(key)} in {origin[key]} and {path}"
                continue
            merged[key] = record
            origin[key] = path
    if duplicates:
        (note or _stderr)(f"note: {duplicates} {what}(s) appeared twice with identical contents and "
                          f"were counted once (e.g. {first_duplicate}).")
    return merged


def merged_files(paths: list[Path], load: Callable[[Path], Iterable[tuple[V, R]]], *, what: str,
                 name: Callable[[V], str] = str) -> dict[V, R]:
    """`load` each file and merge them (single file: just its records)."""
    return merge_keyed(((p, load(p)) for p in paths), what=what, name=name)


def _canonical(record: object) -> str:
    # records are JSON objects or dataclasses holding one (their repr compares every field)
    return json.dumps(record, sort_keys=True, default=repr)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def iter_pairs(records: Iterable[dict], key: Callable[[dict], V]) -> Iterator[tuple[V, dict]]:
    for record in records:
        yield key(record), record
