"""Resumable, concurrent batch runs shared by the `run` subcommands (pure; no gradio).

Results are appended to a JSONL file as each item finishes (flushed and fsynced), so a killed run
loses at most the items in flight. One run writes an output at a time (`<file>.lock`,
components.base.io.output_lock; a second is refused, naming the first's process). A rerun first
repairs the file (`repair_output`: a torn last line or an unreadable line moved to `<file>.torn`,
a key given twice keeps its first line, the rest moved to `<file>.duplicates`, each said on
stderr) and then skips every key already in the file. A failed item is left for the next run; the
first item to fail for each distinct reason is named on stderr with that reason, with or without
a progress bar; `stop_after_failures` items failed in a row stop the run (a dead or hung server).

A run's `stamp` (components/common/stamps.py: e.g. {"data_revision": "hf://datasets/o/n@<commit>",
"backend": "openai:m", "prompt_style": "api", "sampling": "...", "app_version": "..."}) is written
into every record, and a rerun whose stamp differs from the records already in the file is
refused, naming both values: one output never mixes two data sets, two models, two prompts, two
settings or two versions. Records that lack a stamped key (a released file, an older run) are not
resumed into unless the run adopts them (`--adopt`: taken as made with this run's stamp).
"""
from __future__ import annotations

import json
import sys
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from queue import SimpleQueue
from pathlib import Path
from typing import TypeVar
from collections.abc import Callable, Iterable, Iterator

from components.base.errors import UserError
from components.base.io import JsonlAppender, append_lines, atomic_write_bytes, output_lock, path_lock, \
    read_jsonl, real_path, repair_torn_tail, torn_path

T = TypeVar("T")


def failure_reason(key: str, exc: BaseException) -> str:
    """Why an item failed, without the item's own key (so that one cause is one line)."""
    text = str(exc).strip() or type(exc).__name__
    if text.startswith(key):
        text = text[len(key):].lstrip(" :") or type(exc).__name__
    return text
#: stamp keys whose absence from a record is a value of its own (no revision: a local folder)
_ABSENT_IS_A_VALUE = {"data_revision"}


def check_stamp(records: Iterable[dict], stamp: dict[str, str | None] | None, source: str | Path,
                *, adopt: bool = False) -> list[dict] | None:
    """Refuse to add records made with `stamp` to `records` made with another: another revision
    or fingerprint of the data (a record without a revision counts as a local folder), or another
    backend, model, prompt style, sampling, setting or app version (components/common/stamps.py).
    A record that lacks a key this run stamps (a file the released code wrote, or an older run)
    may come from anything, so it is refused too, unless `adopt`: then it is taken as made with
    this run's stamp, and the records with the missing keys filled in are returned (None when
    none lacked one) for the caller to write back."""
    records = list(records)
    stamp = stamp or {}
    # a value recorded and different first (another backend records other keys), then what no
    # record says, then a data revision's absence (a local folder)
    for name, value in stamp.items():
        if name not in _ABSENT_IS_A_VALUE:
            _refuse_other(name, {r[name] for r in records if name in r} - {value}, value, source)
    required = [k for k, v in stamp.items() if v is not None and k not in _ABSENT_IS_A_VALUE]
    lacking = [r for r in records if any(k not in r for k in required)]
    if lacking and not adopt:
        missing = sorted({k for r in lacking for k in required if k not in r})
        backend = stamp.get("backend")
        raise UserError(
            f"{source} holds {len(lacking)} result(s) that do not record their {', '.join(missing)} (a "
            "file the released code wrote, or one from an older version of this app): they may come "
            "from another model or other settings, so this run does not add to them. Start another "
            "output (--out <a new file>), or rerun with --adopt to take them as made with this run's "
            + (f"backend ({backend}) and " if backend else "") + "settings.")
    filled = [{**r, **{k: v for k, v in stamp.items() if v is not None and k not in r}}
              for r in records] if lacking else None
    for name, value in stamp.items():
        if name in _ABSENT_IS_A_VALUE:
            _refuse_other(name, {r.get(name) for r in (filled or records)} - {value}, value, source)
    return filled


def _refuse_other(name: str, found: set, value: str | None, source: str | Path) -> None:
    """UserError naming both values when records hold another value of stamp key `name`."""
    if not found:
        return
    other = sorted(map(str, found))[0]
    if name == "data_revision":
        now = value or "a local folder (no revision)"
        raise UserError(f"{source} holds results made from {other if other != 'None' else 'a local folder'} "
                        f"({name}), but this run reads {now}: one output never mixes two revisions; "
                        f"write to another output file, or rerun on the same data (pin it with @<commit>).")
    if name == "data_fingerprint":
        raise UserError(f"{source} holds results made from a local folder with data_fingerprint {other}, but "
                        f"this run reads one with data_fingerprint {value} (other annotation files or "
                        "stems): one output never mixes two data sets; write to another output file "
                        "(--out), or rerun on the folder it was made from.")
    raise UserError(f"{source} holds results made with {name} {other}, but this run uses {name} "
                    f"{value}: one output never mixes two; write to another output file (--out), "
                    f"or rerun with {name} {other}.")


def _tail_repaired(path: Path, then: str = "") -> bool:
    """A torn last line moved to `<file>.torn` (said on stderr, with `then`); whether the file
    is there to read."""
    moved = repair_torn_tail(path)
    if moved:
        print(f"{path}: its last line was cut off mid-write ({moved} bytes); moved to "
              f"{torn_path(path)}{then}.", file=sys.stderr)
    return path.exists()


def repair_output(path: str | Path, key_field: str) -> None:
    """Make an output safe to resume and to score, saying on stderr what was done: a torn last
    line is moved to `<file>.torn` (io.repair_torn_tail); a line in the middle that is not a
    JSON object (a disk error, a hand edit) is moved there too; a key given on two lines (two runs
    that once wrote one file at the same time) keeps its first line, the later ones go to
    `<file>.duplicates`. Every item moved aside is asked again only if no line of it remains."""
    path = real_path(path)   # rewritten in place of the file a symlink names, never of the link
    if not _tail_repaired(path, ", that item is done again"):
        return
    kept: list[bytes] = []
    bad: list[int] = []
    dups: dict[str, list[int]] = {}
    seen: set[str] = set()
    corrupt, repeated = bytearray(), bytearray()
    for number, line, record in _lines(path):
        if record is None:
            bad.append(number)
            corrupt += line + b"\n"
            continue
        key = str(record.get(key_field))
        if key in seen:
            dups.setdefault(key, []).append(number)
            repeated += line + b"\n"
            continue
        seen.add(key)
        kept.append(line + b"\n")
    if not bad and not dups:
        return
    with path_lock(path):
        for aside, data in ((torn_path(path), corrupt), (duplicates_path(path), repeated)):
            if data:
                append_lines(aside, bytes(data))
        atomic_write_bytes(path, b"".join(kept))
    if bad:
        lines = ", ".join(map(str, bad[:5])) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        print(f"{path}: line(s) {lines} were not readable JSON records; moved to {torn_path(path)}, "
              "their items are done again.", file=sys.stderr)
    if dups:
        first = next(iter(dups))
        print(f"{path}: {sum(map(len, dups.values()))} line(s) repeated a {key_field} already in the "
              f"file (e.g. {first!r} again on line {dups[first][0]}; two runs wrote it at once?); "
              f"the first line of each is kept, the others moved to {duplicates_path(path)}.",
              file=sys.stderr)


def checked_output(out_path: str | Path, stamp: dict[str, str | None] | None, key_field: str,
                   *, adopt: bool = False) -> list[dict]:
    """The records of an output about to be resumed, once repaired (`repair_output`) and checked
    against this run's stamp (`check_stamp`; with `adopt`, records without a stamp are stamped as
    this run's and written back); a run may call it early, before costly preparation, to be
    refused at once."""
    out_path = real_path(out_path)
    repair_output(out_path, key_field)
    existing = read_jsonl(out_path)
    adopted = check_stamp(existing, stamp, out_path, adopt=adopt)
    if adopted is not None:
        lacking = sum(1 for old, new in zip(existing, adopted) if old != new)
        with path_lock(out_path):
            atomic_write_bytes(out_path, b"".join(
                (json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8") for r in adopted))
        print(f"{out_path}: {lacking} result(s) without a stamp adopted as made with this run's "
              f"{'backend ' + str(stamp.get('backend')) + ' and ' if (stamp or {}).get('backend') else ''}"
              "settings (--adopt).", file=sys.stderr)
        existing = adopted
    return existing


def repair_companion(path: str | Path, output: str | Path, keys: Iterable[str], key_field: str,
                     what: str = "line") -> None:
    """Keep a file written beside an output, one line per item (grounding's --traces: written
    just before the item's output line), in step with the output before a resume. Of the items
    `keys` (the run's), a line whose key the output does not hold (a kill came between the two
    appends: the item is done again and writes its own) and every line after the first of a key
    are moved to `<file>.duplicates`, as `repair_output` does with a repeated output line; lines of
    other items are left alone. Said on stderr."""
    path = real_path(path)
    if not _tail_repaired(path):
        return
    mine = set(map(str, keys))
    done = {str(r.get(key_field)) for r in read_jsonl(output)}
    kept, aside = bytearray(), bytearray()
    seen: set[str] = set()
    orphans = repeats = 0
    for _, line, record in _lines(path):
        key = str(record.get(key_field)) if record is not None else None
        if key is not None and key in mine and (key not in done or key in seen):
            aside += line + b"\n"
            orphans += key not in done
            repeats += key in done
            continue
        if key is not None:
            seen.add(key)
        kept += line + b"\n"
    if not aside:
        return
    with path_lock(path):
        append_lines(duplicates_path(path), bytes(aside))
        atomic_write_bytes(path, bytes(kept))
    parts = ([f"{orphans} {what}(s) of items {output} does not hold (a run stopped between the two "
              "writes; they are done again)"] if orphans else []) + \
        ([f"{repeats} repeated {what}(s) of an item (the first is kept)"] if repeats else [])
    print(f"{path}: {' and '.join(parts)} moved to {duplicates_path(path)}.", file=sys.stderr)


def _lines(path: Path) -> Iterator[tuple[int, bytes, dict | None]]:
    """Each non-blank line of a JSONL file: (its number, its bytes without the line end, the
    JSON object it holds or None when it holds none: not JSON, not UTF-8, not an object). The
    one reader of `repair_output` and `repair_companion`."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line:
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                record = None
            yield number, line, record if isinstance(record, dict) else None


def duplicates_path(path: str | Path) -> Path:
    """Where `repair_output` keeps the later lines of a key given twice (beside the file)."""
    path = Path(path)
    return path.with_name(path.name + ".duplicates")


def run_resumable(items: Iterable[T], *, key: Callable[[T], str], work: Callable[[T], dict],
                  out_path: str | Path, concurrency: int = 1, desc: str = "items",
                  key_field: str = "qid", progress: bool = True,
                  on_result: Callable[[dict], None] | None = None,
                  stamp: dict[str, str | None] | None = None,
                  stop: threading.Event | None = None,
                  stop_after_failures: int | None = None, adopt: bool = False) -> dict[str, int]:
    """Run `work` on every item whose key is not yet in `out_path`; append each result there.

    `work` returns a dict record; `key_field` is set to the item's key if missing, and each
    non-None value of `stamp` is added. Once `stop` is set no item is started: those in flight
    finish, the rest are left for the next run. Once `stop_after_failures` items in a row failed
    (a dead or hung server) no item is started either, a line says so, and the counts hold
    "gave_up": that number. Returns counts {"done": new results, "skipped": already present,
    "failed": work raised, "stopped": not started because of `stop` or the failures}. Records
    already there made with another stamp, records without one (unless `adopt`: `check_stamp`),
    or another run writing `out_path`: UserError.
    """
    out_path = real_path(out_path)   # a symlink or `..`: one file, one lock, and the link kept
    with output_lock(out_path):
        existing = checked_output(out_path, stamp, key_field, adopt=adopt)
        return _run(items, key=key, work=work, out_path=out_path, concurrency=concurrency, desc=desc,
                    key_field=key_field, progress=progress, on_result=on_result, stamp=stamp,
                    stop=stop, stop_after_failures=stop_after_failures,
                    done_keys={str(r.get(key_field)) for r in existing})


def _run(items: Iterable[T], *, key: Callable[[T], str], work: Callable[[T], dict],
         out_path: str | Path, concurrency: int, desc: str, key_field: str, progress: bool,
         on_result: Callable[[dict], None] | None, stamp: dict[str, str | None] | None,
         stop: threading.Event | None, stop_after_failures: int | None,
         done_keys: set[str]) -> dict[str, int]:
    extra = {k: v for k, v in (stamp or {}).items() if v is not None}
    todo = [item for item in items if key(item) not in done_keys]
    counts = {"done": 0, "skipped": 0, "failed": 0, "stopped": 0}
    counts["skipped"] = len(done_keys)
    reasons: set[str] = set()
    in_a_row = [0, ""]   # failures since the last success, the last one's reason
    gave_up = threading.Event()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(todo), desc=desc, unit="item")

    def say(line: str) -> None:
        if bar is not None:
            bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def report(item_key: str, reason: str) -> None:
        if reason in reasons:
            return
        reasons.add(reason)
        say(f"{item_key} failed: {reason}")

    def finish(item: T, fut: Future) -> None:
        try:
            record = fut.result()
        except Exception as exc:  # a failed item is reported and left for the next run
            if stop is not None and stop.is_set():   # cut by the stop (left for the next run too)
                counts["stopped"] += 1
            else:
                counts["failed"] += 1
                reason = failure_reason(key(item), exc)
                report(key(item), reason)
                in_a_row[0] += 1
                in_a_row[1] = reason
                if stop_after_failures and in_a_row[0] >= stop_after_failures:
                    gave_up.set()
        else:
            in_a_row[0] = 0
            counts["done"] += 1
            if on_result:
                on_result(record)
        if bar is not None:
            bar.update(1)

    def halted() -> bool:
        return gave_up.is_set() or (stop is not None and stop.is_set())

    def work_and_keep(item: T) -> dict:
        """The item's record, made durable in its worker thread (the workers' fsyncs overlap,
        and the loop below, which hands out the next items, never waits for the disk)."""
        record = work(item)
        record.setdefault(key_field, key(item))
        record.update(extra)
        output.append(record)
        return record

    with JsonlAppender(out_path) as output, ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        pending: dict[Future, T] = {}
        finished: SimpleQueue[Future] = SimpleQueue()   # futures as they finish (no scan of all
        queue = deque(todo)                             # those in flight for each one done)
        while queue or pending:
            if halted() and queue:
                counts["stopped"] += len(queue)
                queue.clear()
                if not pending:
                    break
            while queue and len(pending) < max(1, concurrency):
                item = queue.popleft()
                fut = pool.submit(work_and_keep, item)
                pending[fut] = item
                fut.add_done_callback(finished.put)
            done = [finished.get()]
            while not finished.empty():
                done.append(finished.get())
            for fut in done:
                finish(pending.pop(fut), fut)
    if bar is not None:
        bar.close()
    if gave_up.is_set():
        counts["gave_up"] = in_a_row[0]
        say(f"stopped: {in_a_row[0]} {desc} in a row failed (the last: {in_a_row[1]}); the server "
            f"looks down or hung, so {counts['stopped']} more were not asked. Check the server, then "
            f"rerun the same command to resume ({out_path}).")
    if counts["failed"] > len(reasons):
        print(f"{counts['failed']} item(s) failed for {len(reasons)} distinct reason(s) (each named "
              "once above); they are left for the next run.", file=sys.stderr)
    return counts
