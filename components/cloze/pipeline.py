"""Running a solver over a question set: results in the upstream per-model format, resumable.

Each answer is appended to the sidecar JSONL (`<R.json>.progress.jsonl`, components.common.batch:
durable, what a resume reads). The released-format R.json is written whole, atomically, at the
end, every `WRITE_EVERY_S` seconds while answers come in (by a background writer, so no request
waits for it), and when the run is stopped or interrupted (Ctrl-C): readable throughout, and a
run's cost per answer stays flat however large the file grows (scripts/bench_batch.py).
"""
from __future__ import annotations

import random
import threading
from pathlib import Path
from collections.abc import Callable, Iterable

from backends.errors import BackendError, GenerationStopped
from components.cloze.data import MIXED_IDS, ClozeDataset, meta_files
from components.cloze.released_edge import default_spec
from components.cloze.questions import Question, question_with_order
from components.cloze.metrics import check_results, order_sensitivity
from components.cloze.solvers import RELEASED_VARIANT, ClozeSolver, released_params
from components.common.batch import check_stamp, repair_output, run_resumable
from components.common.stamps import backend_stamp, data_stamp, settings_stamp
from components.base.errors import DataFormatError, MediaError
from components.base.io import append_jsonl, atomic_write_json, load_json, output_lock, read_jsonl, real_path

#: seconds between two writes of the whole result file while a run answers
WRITE_EVERY_S = 10.0


def sidecar_path(out_path: str | Path) -> Path:
    out_path = Path(out_path)
    return out_path.with_name(out_path.name + ".progress.jsonl")


def records_to_results(records: Iterable[dict]) -> dict:
    """Sidecar records ({"key", "stem", "dim", ...}) -> {stem: {dim: entry}}; later records win."""
    out: dict = {}
    for rec in records:
        entry = {k: v for k, v in rec.items() if k not in ("key", "stem", "dim")}
        out.setdefault(rec["stem"], {})[rec["dim"]] = entry
    return out


def answer_safely(solver: ClozeSolver, ds: ClozeDataset, q: Question) -> dict:
    """One record; a broken clip becomes a recorded error (never a guessed answer)."""
    try:
        rec = solver.answer(ds.instance(q.stem), q)
    except MediaError as exc:
        rec = {"correct": False, "answer": None, "expected": q.expected, "reason": "",
               "option_map": q.option_map, "backend": solver.name, "raw": "", "parsed": False,
               "error": f"media: {exc}"}
    # the data set it was asked on, so a leaderboard row can name it (rows on different data are
    # not comparable)
    rec.setdefault("data_set", ds.root.name)
    return {"key": q.key, "stem": q.stem, "dim": q.dim, **rec}


def _seed_sidecar(out_path: Path, side: Path, stamp: dict[str, str | None], adopt: bool) -> None:
    """Resume from a results file written by an earlier run (or upstream) without a sidecar: its
    entries become the sidecar once their stamp matches this run's. A file with no stamp (the
    released eval.py's) is refused unless `adopt` takes it as this run's (components/common/batch.py)."""
    try:
        prior = check_results(load_json(out_path, "result file"), str(out_path))
    except DataFormatError as exc:
        raise DataFormatError(f"{exc}; move it away to start over.") from None
    records = [{"key": f"{stem}:{dim}", "stem": stem, "dim": dim, **entry}
               for stem, dims in prior.items() for dim, entry in dims.items()]
    records = check_stamp(records, stamp, out_path, adopt=adopt) or records
    for record in records:
        append_jsonl(side, record)


def run_stamp(solver: ClozeSolver, questions: Iterable[Question] = ()) -> dict[str, str | int]:
    """What makes two runs' answers comparable, kept in every record; a resume that differs is
    refused (components/common/batch.py, docs/formats.md "Run stamps"): the backend and model
    and what shapes its requests, the prompt style, the sampling, strict parsing, frames per
    clip, attempts, the option-order seed, the released edge baseline's feature model, the app
    version."""
    stamp = {"backend": solver.name}
    backend = getattr(solver, "backend", None)
    if backend is not None:
        stamp.update(backend_stamp(backend))
        stamp["backend"] = solver.name
    style = getattr(solver, "prompt_style", None)
    if style:
        stamp["prompt_style"] = str(style)
    max_tokens = getattr(solver, "max_tokens", None)
    if max_tokens is not None:
        params = released_params(max_tokens)
        stamp["sampling"] = f"temperature {params.temperature:g}, max_tokens {params.max_tokens}"
    features = getattr(solver, "features", None)
    variant = getattr(solver, "variant", None)
    stamp.update(settings_stamp(
        strict=getattr(solver, "strict", None), max_frames=getattr(solver, "max_frames", None),
        max_attempts=getattr(solver, "max_attempts", None),
        edge_features=(features or default_spec()) if variant == RELEASED_VARIANT else None))
    seeds = {q.seed for q in questions}
    if seeds:   # as each entry has always held it (a number)
        stamp["seed"] = seeds.pop() if len(seeds) == 1 else ",".join(sorted(map(str, seeds)))
    return stamp


def cloze_data_stamp(ds: ClozeDataset) -> dict[str, str | None]:
    """The data's Hub revision, or a local folder's fingerprint: its meta.json files, sets.json,
    the Mixed ids, and its stems."""
    files = [*meta_files(ds.root), ds.root / "sets.json", ds.root / MIXED_IDS]
    return data_stamp(ds.root, files, ds.instances)


def run_set(solver: ClozeSolver, ds: ClozeDataset, questions: list[Question], out_path: str | Path,
            *, concurrency: int = 1, progress: bool = True,
            on_result: Callable[[dict], None] | None = None,
            stop: threading.Event | None = None, stop_after_failures: int | None = None,
            adopt: bool = False) -> dict:
    """Answer every question not yet answered in the sidecar; write `out_path` whole every
    WRITE_EVERY_S seconds, at the end and on a stop or Ctrl-C (module docstring). A backend
    failure is not saved (the next run asks again); a set `stop` leaves every question not yet
    started for the next run. `adopt`: resume into a file whose answers record no stamp (the
    released eval.py's), taking them as this run's. Returns counts and the results."""
    out_path = real_path(out_path)   # a symlinked --out: its sidecar and lock are the file's own
    side = sidecar_path(out_path)
    with output_lock(side):   # one run writes R.json and its sidecar at a time
        return _run_set(solver, ds, questions, Path(out_path), side, concurrency=concurrency,
                        progress=progress, on_result=on_result, stop=stop,
                        stop_after_failures=stop_after_failures, adopt=adopt)


def _run_set(solver: ClozeSolver, ds: ClozeDataset, questions: list[Question], out_path: Path,
             side: Path, *, concurrency: int, progress: bool,
             on_result: Callable[[dict], None] | None, stop: threading.Event | None,
             stop_after_failures: int | None, adopt: bool) -> dict:
    # what the answers depend on, in every entry; a resume that differs is refused
    stamp = {**cloze_data_stamp(ds), **run_stamp(solver, questions)}
    if out_path.exists() and not side.exists():
        _seed_sidecar(out_path, side, stamp, adopt)
    repair_output(side, "key")
    lock = threading.Lock()
    results = records_to_results(read_jsonl(side))

    writer = _ResultWriter(out_path, results, lock)

    def done(rec: dict) -> None:
        with lock:
            entry = {k: v for k, v in rec.items() if k not in ("key", "stem", "dim")}
            results.setdefault(rec["stem"], {})[rec["dim"]] = entry
        writer.changed()
        if on_result:
            on_result(rec)

    def work(q: Question) -> dict:
        if stop is not None and stop.is_set():
            raise GenerationStopped(f"{q.key}: stopped before it was asked")
        rec = answer_safely(solver, ds, q)
        # a backend failure is not saved (the next run asks again); an unparsed or truncated
        # reply and a broken clip are answers of their own kind and are kept
        if rec.get("error") and not rec.get("raw") \
                and not str(rec["error"]).startswith(("media:", "unparsed", "truncated")):
            raise BackendError(f"{q.key}: {rec['error']}")
        return rec

    try:
        counts = run_resumable(questions, key=lambda q: q.key, work=work,
                               out_path=side, concurrency=concurrency, desc="cloze questions",
                               key_field="key", progress=progress, on_result=done,
                               stamp=stamp, stop=stop, stop_after_failures=stop_after_failures,
                               adopt=adopt)
    except BaseException:   # Ctrl-C, a refusal: the answers of this run (if any) reach the file
        writer.close(only_if_changed=True)
        raise
    writer.close()          # the end, or a stop: the file holds every answer of the sidecar
    return {"counts": counts, "results": results}


class _ResultWriter:
    """Writes `results` whole to `path` (atomically) every WRITE_EVERY_S seconds while answers
    come in, from its own thread, and once more on close: the batch's loop never waits for a
    rewrite, and the number of rewrites grows with the run's duration, not with its answers."""

    def __init__(self, path: Path, results: dict, lock: threading.Lock, every_s: float | None = None):
        self._path, self._results, self._lock = path, results, lock
        self._every = WRITE_EVERY_S if every_s is None else every_s
        self._dirty = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cloze-result-writer", daemon=True)
        self._thread.start()

    def changed(self) -> None:
        self._dirty.set()

    def _write(self) -> None:
        with self._lock:   # a snapshot: answers keep coming while it is encoded and written
            snapshot = {stem: dict(dims) for stem, dims in self._results.items()}
            self._dirty.clear()
        atomic_write_json(self._path, snapshot)

    def _loop(self) -> None:
        while not self._closed.wait(self._every):
            if self._dirty.is_set():
                self._write()

    def close(self, *, only_if_changed: bool = False) -> None:
        self._closed.set()
        self._thread.join()
        if self._dirty.is_set() or not only_if_changed:
            self._write()


def distinct_orders(q: Question, k: int) -> list[tuple[str, ...]]:
    """k different option orders: the question's own, then seeded shuffles of it (seed:stem:dim:order:j)."""
    orders = [q.options]
    j = 1
    while len(orders) < min(k, 24):
        opts = list(q.options)
        random.Random(f"{q.seed}:{q.stem}:{q.dim}:order:{j}").shuffle(opts)
        if tuple(opts) not in orders:
            orders.append(tuple(opts))
        j += 1
    return orders


def run_orders(solver: ClozeSolver, ds: ClozeDataset, questions: list[Question], k: int = 4,
               on_step: Callable[[int, int], None] | None = None) -> dict:
    """Each question under k candidate orders -> FR, CFR, Range, Disp (paper Table 4)."""
    runs: dict[str, list[tuple[bool, str | None]]] = {}
    records: dict[str, list[dict]] = {}
    total = len(questions) * k
    step = 0
    for q in questions:
        for order in distinct_orders(q, k):
            rec = answer_safely(solver, ds, question_with_order(q, order))
            pick = rec["option_map"].get(rec["answer"]) if rec.get("answer") else None
            runs.setdefault(q.key, []).append((bool(rec["correct"]), pick))
            records.setdefault(q.key, []).append(rec)
            step += 1
            if on_step:
                on_step(step, total)
    return {"metrics": order_sensitivity(runs), "runs": runs, "records": records}
