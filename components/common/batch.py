"""Resumable, concurrent batch runs shared by the `run` subcommands (pure; no gradio).

Results are appended to a JSONL file as each item finishes (flushed and fsynced), so a killed run
loses at most the items in flight; a rerun first repairs a torn last line (its bytes kept in
`<file>.torn`, components.common.io.repair_torn_tail) and then skips every key already in the file.
A failed item is left for the next run; the first item to fail for each distinct reason is named
on stderr with that reason, with or without a progress bar.

A run's `stamp` (e.g. {"data_revision": "hf://datasets/o/n@<commit>"}) is written into every
record, and a rerun whose stamp differs from the records already in the file is refused: one
output never mixes two revisions of its data.
"""
from __future__ import annotations

import sys
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TypeVar
from collections.abc import Callable, Iterable

from components.common.errors import UserError
from components.common.io import append_jsonl, read_jsonl, repair_torn_tail, torn_path

T = TypeVar("T")


def failure_reason(key: str, exc: BaseException) -> str:
    """Why an item failed, without the item's own key (so that one cause is one line)."""
    text = str(exc).strip() or type(exc).__name__
    if text.startswith(key):
        text = text[len(key):].lstrip(" :") or type(exc).__name__
    return text
def check_stamp(records: Iterable[dict], stamp: dict[str, str | None] | None, source: str | Path) -> None:
    """Refuse to add records made with `stamp` to `records` made with another (a key missing from a
    record counts as None: data from a local folder)."""
    for name, value in (stamp or {}).items():
        found = {r.get(name) for r in records} - {value}
        if found:
            other = sorted(map(str, found))[0]
            now = value or "a local folder (no revision)"
            raise UserError(f"{source} holds results made from {other if other != 'None' else 'a local folder'} "
                            f"({name}), but this run reads {now}: one output never mixes two revisions; "
                            f"write to another output file, or rerun on the same data (pin it with @<commit>).")


def run_resumable(items: Iterable[T], *, key: Callable[[T], str], work: Callable[[T], dict],
                  out_path: str | Path, concurrency: int = 1, desc: str = "items",
                  key_field: str = "qid", progress: bool = True,
                  on_result: Callable[[dict], None] | None = None,
                  stamp: dict[str, str | None] | None = None,
                  stop: threading.Event | None = None) -> dict[str, int]:
    """Run `work` on every item whose key is not yet in `out_path`; append each result there.

    `work` returns a dict record; `key_field` is set to the item's key if missing, and each
    non-None value of `stamp` is added. Once `stop` is set no item is started: those in flight
    finish, the rest are left for the next run. Returns counts {"done": new results, "skipped":
    already present, "failed": work raised, "stopped": not started because of `stop`}. Records
    already there made with another stamp: UserError.
    """
    moved = repair_torn_tail(out_path)
    if moved:
        print(f"{out_path}: its last line was cut off mid-write ({moved} bytes); moved to "
              f"{torn_path(out_path)}, that item is done again.", file=sys.stderr)
    existing = read_jsonl(out_path)
    check_stamp(existing, stamp, out_path)
    extra = {k: v for k, v in (stamp or {}).items() if v is not None}
    done_keys = {str(r.get(key_field)) for r in existing}
    todo = [item for item in items if key(item) not in done_keys]
    counts = {"done": 0, "skipped": 0, "failed": 0, "stopped": 0}
    counts["skipped"] = len(done_keys)
    lock = threading.Lock()
    reasons: set[str] = set()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(todo), desc=desc, unit="item")

    def report(item_key: str, reason: str) -> None:
        if reason in reasons:
            return
        reasons.add(reason)
        line = f"{item_key} failed: {reason}"
        if bar is not None:
            bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def finish(item: T, fut: Future) -> None:
        try:
            record = fut.result()
        except Exception as exc:  # a failed item is reported and left for the next run
            if stop is not None and stop.is_set():   # cut by the stop (left for the next run too)
                counts["stopped"] += 1
            else:
                counts["failed"] += 1
                report(key(item), failure_reason(key(item), exc))
        else:
            record.setdefault(key_field, key(item))
            record.update(extra)
            append_jsonl(out_path, record, lock=lock)
            counts["done"] += 1
            if on_result:
                on_result(record)
        if bar is not None:
            bar.update(1)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        pending: dict[Future, T] = {}
        queue = list(todo)
        while queue or pending:
            if stop is not None and stop.is_set() and queue:
                counts["stopped"] += len(queue)
                queue.clear()
                if not pending:
                    break
            while queue and len(pending) < max(1, concurrency):
                item = queue.pop(0)
                pending[pool.submit(work, item)] = item
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                finish(pending.pop(fut), fut)
    if bar is not None:
        bar.close()
    if counts["failed"] > len(reasons):
        print(f"{counts['failed']} item(s) failed for {len(reasons)} distinct reason(s) (each named "
              "once above); they are left for the next run.", file=sys.stderr)
    return counts
