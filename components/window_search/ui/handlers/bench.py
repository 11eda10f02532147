"""The benchmark panel's handler: every query of the annotation file, the metrics after each, in a
table beside the paper's Table 3 rows (each row labelled with its data set)."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from backends.registry import resolve_embedder
from components.base.errors import UserError
from components.common.intervals import valid_interval
from components.base.io import atomic_write_text
from components.settings.session import own_backend_for
from components.window_search import view
from components.window_search.data import Prediction
from components.window_search.metrics import evaluate
from components.window_search.pipeline import ground_query, prediction_record
from components.window_search.solvers import solvers_for
from components.window_search.ui.handlers.search import _localizer_backend, memory_of, read_chunk, \
    search_settings
from components.window_search.ui.session import WindowSearchResources, WindowSearchSession, WindowSearchTab
from components.window_search.ui.views import BenchView

METHOD_NAMES = {"aws": "Agentic Window Search", "rag": "Movie RAG (top-1)", "oracle-chunk": "oracle chunk"}


def initial_table() -> list[list]:
    """The table before any run: the paper's rows only."""
    return view.bench_table(None)


def run_table(metrics: dict, *, data_set: str, method: str) -> list[list]:
    """The paper's rows, this run's row and, under it, its 95 % intervals (when it has some)."""
    table = view.bench_table(metrics, data_set=data_set, method=method)
    if metrics.get("intervals"):
        table.append(view.bench_interval_row(metrics, data_set=data_set, method=method))
    return table


def bench(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, settings: dict | None,
          chunk: Any, k: Any, m: Any, delta: Any, method: str,
          thinking_off: bool | None = True) -> Iterator[BenchView]:
    """Every query of the annotation file, the metrics after each (missing ones count as failures)."""
    ann = tab.annotations
    if ann is None:
        raise UserError(tab.error or "Benchmark: no annotation file in the data folder.")
    # the session's model alone: a compared model never runs a search of its own, so its answers
    # on this model's path are no benchmark answers (docs/decisions.md)
    backend = own_backend_for(settings)
    search = search_settings(settings, k, m, delta, thinking_off)
    chunk_seconds = read_chunk(chunk)
    embedder = resolve_embedder("minilm")
    solvers = solvers_for(backend, search, embedder=embedder,
                          localizer_backend=_localizer_backend(settings, backend))
    res.fresh_stop()
    records: list[dict] = []
    folder = Path(tempfile.mkdtemp(prefix="ws-bench-"))
    res.folders.append(folder)
    out = folder / "predictions.jsonl"
    queries = ann.queries
    label = f"{backend.backend_id}" + (f" — {view.BASELINE_LABEL}" if solvers.text_only else "")
    data_set = f"{Path(ann.path).parent.parent.name or 'this data'}/grounding ({len(queries)} queries), this run"
    run_name = f"{METHOD_NAMES.get(method, method)} · {backend.backend_id}" + (" (text-only)" if solvers.text_only else "")
    metrics = None
    for i, q in enumerate(queries, 1):
        if res.stop.is_set():
            break
        info = tab.movie_info(q.movie_id)
        trace = ground_query(q.query, res.movie(info, chunk_seconds), backend, embedder=embedder,
                             memory=memory_of(info), method=method, settings=search, ground_truth=q.interval,
                             qid=q.qid, stop=res.stop, solvers=solvers)
        if trace.stopped:
            break
        records.append(prediction_record(trace))
        preds = {r["qid"]: Prediction(r["qid"], valid_interval(r["interval"]), valid_interval(r.get("window")),
                                      source=r.get("source")) for r in records}
        atomic_write_text(out, "".join(json.dumps(r) + "\n" for r in records))
        metrics = evaluate(ann, preds)
        yield BenchView(bench_progress=f"{label}: {i} of {len(queries)} queries (missing ones count as failures) · "
                                       f"{view.bench_notes(metrics)}",
                        bench_table=run_table(metrics, data_set=data_set, method=run_name), bench_file=str(out))
    end = "stopped after" if res.stop.is_set() else "done,"
    notes = f" · {view.bench_notes(metrics)}" if metrics else ""
    yield BenchView(bench_progress=f"{label}: {end} {len(records)} of {len(queries)} queries{notes}",
                    bench_file=str(out) if records else None)
