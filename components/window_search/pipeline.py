"""One query end to end, the function both the UI and the CLI call (no gradio):

    retrieve top-K chunks -> window selection -> localize in the window -> SearchTrace

Window selection methods:
- "aws":          Agentic Window Search (Algorithm 1) over the top K chunks;
- "rag":          Movie RAG: the top-1 chunk straight to the localizer (paper §3, Table 2 row 2);
- "oracle-chunk": the chunk with the largest GT overlap (Table 2 row 6; needs the ground truth).
Which verifier and localizer answer is `solvers.solvers_for`'s decision (the baseline backend gets
the text-only baseline, and the trace says so: `text_only_baseline`).

Also the command line's work: every query of a file (`run grounding`: resumable, sharded,
`run_grounding`), the prediction files read and scored (`eval grounding`) and two runs compared
(`compare grounding`).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from backends.base import EmbeddingBackend, VLMBackend
from backends.errors import BackendError
from backends.registry import resolve_embedder
from components.base.errors import UserError
from components.base.io import append_jsonl, output_lock, real_path
from components.common import compare
from components.common.batch import checked_output, repair_companion, run_resumable
from components.common.shards import Shard, describe_selection, input_files, merged_files
from components.common.stamps import backend_stamp, data_fingerprint, data_stamp, settings_stamp
from components.datasource import fetch_all
from components.media.probe import container_duration
from components.window_search.agent import agentic_window_search
from components.window_search.data import GroundingAnnotations, GroundingQuery, MovieEntry, load_annotations, \
    load_predictions, movie_files
from components.window_search.eval_inputs import grounding_input_report
from components.window_search.metrics import disagreements, evaluate, unit_scores
from components.window_search.memory import CharacterMemory, load_or_empty
from components.window_search.movie import Movie
from components.window_search.retrieval import caption_chunks, chunk_embeddings, oracle_chunk, retrieve
from components.window_search.solvers import WindowSearchSolvers, solvers_for
from components.common.intervals import valid_interval
from components.window_search.types import UNPARSED, CandidateTrace, Chunk, SearchSettings, \
    SearchTrace, fallback_source, is_scored_source

__all__ = ["METHODS", "SearchSettings", "ground_query", "prediction_record", "prediction_source",
           "MovieLibrary", "GroundingRun", "run_grounding", "evaluate_prediction_files", "compare_runs"]

METHODS = ("aws", "rag", "oracle-chunk")


def _chosen_chunk(method: str, ranked: list[Chunk], movie: Movie,
                  ground_truth: tuple[float, float] | None) -> Chunk:
    if method == "rag":
        return ranked[0]
    if ground_truth is None:
        raise UserError("the oracle-chunk method needs the query's ground truth (pick a query "
                        "from an annotation file).")
    return oracle_chunk(movie, ground_truth)


def _select_window(query: str, method: str, ranked: list[Chunk], movie: Movie,
                   memory: CharacterMemory, solvers: WindowSearchSolvers, settings: SearchSettings,
                   ground_truth: tuple[float, float] | None, qid: str | None,
                   on_update: Callable[[SearchTrace], None] | None,
                   stop: threading.Event | None) -> SearchTrace:
    """The trace of the window-selection step (its `window` goes to the localizer)."""
    if method == "aws":
        return agentic_window_search(
            query, ranked, movie, memory, solvers.verifier, K=settings.k, M=settings.m,
            delta_max=settings.delta_max, max_new_frames=settings.capped(settings.max_new_frames),
            frame_cap=settings.capped(settings.frame_cap), on_update=on_update, stop=stop, qid=qid)
    chosen = _chosen_chunk(method, ranked, movie, ground_truth)
    trace = SearchTrace(query=query, qid=qid, chunks=ranked, method=method)
    trace.candidates = [CandidateTrace(rank=chosen.rank or 1, chunk=chosen,
                                       final_window=(chosen.start, chosen.end), outcome="selected")]
    trace.selected_rank = chosen.rank
    trace.window = (chosen.start, chosen.end)
    return trace


def ground_query(query: str, movie: Movie, backend: VLMBackend, *,
                 embedder: EmbeddingBackend, memory: CharacterMemory | None = None,
                 method: str = "aws", settings: SearchSettings | None = None,
                 ground_truth: tuple[float, float] | None = None, qid: str | None = None,
                 on_update: Callable[[SearchTrace], None] | None = None,
                 stop: threading.Event | None = None,
                 captions: dict[int, str] | None = None,
                 solvers: WindowSearchSolvers | None = None) -> SearchTrace:
    """Ground one query in one movie; the returned trace carries window, prediction and GT.
    `captions` (chunk index -> text, e.g. from retrieval.caption_chunks) join the chunk texts;
    `solvers` defaults to `solvers_for(backend, settings)`."""
    settings = settings or SearchSettings()
    if method not in METHODS:
        raise UserError(f"unknown method '{method}'; choose one of {', '.join(METHODS)}.")
    if not query or not query.strip():
        raise UserError("the query is empty; type a description of the moment to find.")
    solvers = solvers or solvers_for(backend, settings, embedder=embedder)
    started = time.perf_counter()
    memory = memory if memory is not None else CharacterMemory(movie.movie_id)
    ranked = retrieve(query, movie, embedder, k=settings.k, captions=captions)
    trace = _select_window(query, method, ranked, movie, memory, solvers, settings, ground_truth,
                           qid, on_update, stop)
    trace.backend = backend.backend_id
    trace.method = method
    trace.thinking = settings.thinking
    trace.localizer_backend = localizer_id(solvers)
    trace.text_only_baseline = solvers.text_only
    trace.ground_truth = tuple(ground_truth) if ground_truth is not None else None
    if on_update:
        on_update(trace)

    if trace.window is not None and not trace.stopped and not (stop is not None and stop.is_set()):
        result = solvers.localizer.localize(query, trace.window, movie, stop=stop, ref=qid or "")
        trace.calls["localize"] = trace.calls.get("localize", 0) + 1
        trace.prediction = tuple(result.interval) if result.interval is not None else None
        trace.localize_method, trace.localize_raw = result.method, result.raw
        trace.localize_reasoning = result.reasoning
        if result.usage:
            trace.usage["localize"] = result.usage
        if result.partner is not None:
            trace.partner_backend = trace.partner_backend or result.partner.backend
            trace.partner["localize"] = result.partner.to_dict()
        if result.method == "vlm-fallback-window":
            trace.fallbacks.append("localizer-truncated" if result.truncated else "localizer-unparsed")
        if result.error:
            trace.errors.append(f"localize: {result.error}")
    elif stop is not None and stop.is_set():
        trace.stopped = True
    trace.source = prediction_source(trace)
    trace.elapsed_s = time.perf_counter() - started
    if on_update:
        on_update(trace)
    return trace


def localizer_id(solvers: WindowSearchSolvers) -> str:
    """Who localizes: the localizer model's backend id, or the subtitle baseline."""
    backend = getattr(solvers.localizer, "backend", None)
    return backend.backend_id if backend is not None else "baseline:subtitles"


def prediction_source(trace: SearchTrace) -> str:
    """How the trace's prediction was obtained (types.MODEL_SOURCES / FALLBACKS): the first
    fallback taken, else the text-only baseline, else the window's provenance."""
    if trace.prediction is None:
        return UNPARSED
    if trace.fallbacks:
        return fallback_source(trace.fallbacks[0])
    if trace.text_only_baseline:
        return "baseline"
    if trace.method == "aws":
        return "emitted" if trace.accepted_rank is not None else "selected"
    return trace.method or "emitted"


def prediction_record(trace: SearchTrace) -> dict:
    """The predictions.jsonl line of a trace (docs/formats.md), window included for the diagnostics.
    Only a model answer (or the baseline's) is written as "interval"; a fallback's interval is
    kept apart as "fallback_interval" (interval null), so no tool scores it as an answer."""
    source = trace.source or prediction_source(trace)
    pred = valid_interval(trace.prediction)
    scored = is_scored_source(source)
    rec: dict = {"qid": trace.qid, "interval": list(pred) if pred and scored else None,
                 "source": source}
    if pred and not scored:
        rec["fallback_interval"] = list(pred)
    if trace.window is not None and valid_interval(trace.window):
        rec["window"] = list(trace.window)
    rec["trace"] = trace.qid
    json.dumps(rec, allow_nan=False)  # a non-finite number never reaches the predictions file
    return rec


@dataclass
class MovieLibrary:
    """Movies, memories and the embedder of one annotation file, opened once and reused."""

    chunk_seconds: float = 180.0
    embedder_spec: str = "minilm"
    memory_dir: Path | None = None   # folder holding <movie_id>.json (None: no character memory)
    _movies: dict = field(default_factory=dict)
    _memories: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def embedder(self) -> EmbeddingBackend:
        return resolve_embedder(self.embedder_spec)

    def movie(self, entry: MovieEntry) -> Movie:
        key = (str(entry.video), self.chunk_seconds)
        with self._lock:
            if key not in self._movies:
                self._movies[key] = Movie(entry.video, entry.subtitles, movie_id=entry.movie_id,
                                          chunk_seconds=self.chunk_seconds)
            return self._movies[key]

    def memory(self, movie_id: str) -> CharacterMemory:
        with self._lock:
            if movie_id not in self._memories:
                if self.memory_dir is None:
                    self._memories[movie_id] = CharacterMemory(movie_id)
                else:
                    self._memories[movie_id] = load_or_empty(Path(self.memory_dir) / f"{movie_id}.json",
                                                             movie_id)
            return self._memories[movie_id]


# -- the batch: `run grounding` ---------------------------------------------------------------------

@dataclass(frozen=True)
class GroundingRun:
    """What `run grounding` was asked (cli.py reads it from the command line)."""

    out: Path                        # predictions JSONL (appended; resumable)
    traces: Path | None = None       # per-query search traces JSONL
    method: str = "aws"              # METHODS
    k: int = 5
    m: int = 3
    delta_max: float = 30.0
    chunk_seconds: float = 180.0
    embedder: str = "minilm"
    memory_dir: Path | None = None   # None: <annotations dir>/memory
    limit: int | None = None         # only the first N queries
    captions: bool = False
    localize_frames: int = 32
    thinking: str = "off"            # "off" | "default"
    concurrency: int = 1
    progress: bool = True
    shard: Shard | None = None
    shard_by: str = "query"          # "query" | "movie"
    stop_after_failures: int | None = None
    adopt: bool = False

    def search_settings(self) -> SearchSettings:
        """The search's settings (refused with one line when K, M or Δmax is out of range)."""
        return SearchSettings(k=self.k, m=self.m, delta_max=self.delta_max, localize_cap=self.localize_frames,
                              thinking=False if self.thinking == "off" else None)


def run_grounding(ann: GroundingAnnotations, run: GroundingRun, settings: SearchSettings, backend: VLMBackend,
                  localizer: VLMBackend) -> dict:
    """Ground every query of `ann` (or its first `run.limit`, or its shard) into `run.out`, resumable:
    the queries already there are skipped, a failed one is not written (the next run asks again).
    Returns run_resumable's counts."""
    memory_dir = run.memory_dir or (Path(ann.path).parent / "memory")
    lib = MovieLibrary(chunk_seconds=run.chunk_seconds, embedder_spec=run.embedder, memory_dir=memory_dir)
    embedder = lib.embedder()
    solvers = solvers_for(backend, settings, embedder=embedder, localizer_backend=localizer)
    queries = ann.queries[: run.limit] if run.limit else ann.queries
    shard = run.shard
    if shard is not None:
        by_movie = run.shard_by == "movie"
        total = len(queries)
        queries = shard.select(queries, (lambda q: q.movie_id) if by_movie else (lambda q: q.qid))
        print(describe_selection(shard, len(queries), total, "queries"), file=sys.stderr)
    fetch_all(movie_files(ann, [q.movie_id for q in queries], memory_dir), progress=run.progress,
              desc="fetching movies")
    stamp = grounding_stamp(run, ann, backend, localizer, memory_dir)
    with output_lock(run.out):
        # refused before the movies are prepared
        checked_output(run.out, stamp, "qid", adopt=run.adopt)
        if run.traces:   # one trace per query in --out, whatever the moment a run was killed
            repair_companion(run.traces, real_path(run.out), [q.qid for q in queries], "qid", "trace")
        captions = prepare_movies(ann, queries, lib, solvers, embedder, captions=run.captions,
                                  chunk_seconds=run.chunk_seconds)
        trace_lock = threading.Lock()
        stamped = {k: v for k, v in stamp.items() if v is not None}

        def work(q: GroundingQuery) -> dict:
            movie = lib.movie(ann.movie(q.movie_id))
            trace = ground_query(q.query, movie, backend, embedder=embedder, memory=lib.memory(q.movie_id),
                                 method=run.method, settings=settings, ground_truth=q.interval, qid=q.qid,
                                 captions=captions.get(q.movie_id), solvers=solvers)
            if trace.prediction is None and (trace.errors or trace.stopped):
                # a transport failure is not an answer: leave the query for the next (resumed) run
                raise BackendError("; ".join(trace.errors) or "stopped")
            if run.traces:
                append_jsonl(run.traces, {**stamped, **trace.to_dict()}, lock=trace_lock)  # its own values win
            return prediction_record(trace)

        return run_resumable(queries, key=lambda q: q.qid, work=work, out_path=run.out,
                             concurrency=max(1, run.concurrency), desc=f"grounding ({run.method})",
                             progress=run.progress, stamp=stamp, stop_after_failures=run.stop_after_failures,
                             adopt=run.adopt)


def prepare_movies(ann: GroundingAnnotations, queries: list[GroundingQuery], lib: MovieLibrary,
                    solvers: WindowSearchSolvers, embedder, *, captions: bool,
                    chunk_seconds: float) -> dict[str, dict[int, str]]:
    """Sample and embed each movie once, before queries run in parallel; the chunk captions."""
    out: dict[str, dict[int, str]] = {}
    for mid in dict.fromkeys(q.movie_id for q in queries):
        movie = lib.movie(ann.movie(mid))
        print(f"preparing {mid}: {len(movie.chunks)} chunks of {chunk_seconds:g} s", file=sys.stderr)
        if captions and solvers.model is not None:
            out[mid] = caption_chunks(movie, solvers.model)
        chunk_embeddings(movie, embedder, captions=out.get(mid))
    return out


def grounding_stamp(run: GroundingRun, ann: GroundingAnnotations,
                    backend: VLMBackend, localizer: VLMBackend, memory_dir: Path) -> dict[str, str | None]:
    """What makes two runs' predictions comparable, on every line; a resume that differs is refused
    (docs/formats.md "Run stamps"): the data (its revision, or the annotation file, subtitles and
    videos' names), both backends and what shapes their requests, the method, thinking, the
    search's settings (K, M, Δmax, chunk length, localizer frames), the embedder, captions, the
    character memories read, the app version."""
    movies = list(ann.movies.values())   # all of the file's: a resume with --limit or a shard keeps it
    files = [ann.path, *(m.subtitles for m in movies if m.subtitles)]
    memories = [Path(memory_dir) / f"{m.movie_id}.json" for m in movies]
    return {**data_stamp(ann.path, files, [Path(m.video).name for m in ann.movies.values()]),
            **backend_stamp(backend), **backend_stamp(localizer, "localizer"),
            "method": run.method, "thinking": run.thinking,
            **settings_stamp(k=run.k, m=run.m, delta_max=run.delta_max, chunk_seconds=run.chunk_seconds,
                             localize_frames=run.localize_frames, embedder=run.embedder,
                             captions=bool(run.captions),
                             memory=data_fingerprint([p for p in memories if p.is_file()], []))}


def source_summary(records: list[dict]) -> str:
    """How the file's predictions were obtained: model answers, fallbacks, unparsed."""
    by: dict[str, int] = {}
    for r in records:
        by[str(r.get("source") or "(no source)")] = by.get(str(r.get("source") or "(no source)"), 0) + 1
    fallbacks = sum(n for k, n in by.items() if k.startswith("fallback:"))
    unparsed = by.get(UNPARSED, 0)
    detail = ", ".join(f"{k} {n}" for k, n in sorted(by.items()))
    return (f"sources: {len(records) - fallbacks - unparsed} model answers, {fallbacks} fallbacks, "
            f"{unparsed} unparsed ({detail or 'none'}); fallbacks and unparsed items are written "
            "with interval null and score IoU 0")


# -- run files read and scored: `eval grounding`, `compare grounding` ----------------------------------

def load_prediction_files(paths: list[Path], lines: dict | None = None) -> dict:
    """qid -> Prediction over every file (duplicates across files: docs/scale.md "Merging");
    `lines` gets qid -> "<file> line <n>"."""
    files = input_files(paths, "*.jsonl", "grounding predictions", "--predictions")
    return merged_files(files, lambda p: load_predictions(p, lines).items(), what="prediction for qid")


def evaluate_prediction_files(ann: GroundingAnnotations, paths: list[Path], *,
                              score_fallbacks: bool = False) -> tuple[dict, dict]:
    """(the scores with what the prediction lines held beyond them: eval_inputs.py, its `notes`
    last; the predictions read) of every prediction file or folder in `paths`."""
    where: dict[str, str] = {}
    preds = load_prediction_files(paths, where)
    report = grounding_input_report(ann, preds, where, ", ".join(map(str, paths)),
                                    duration_of=lambda mid: container_duration(ann.movie(mid).video),
                                    score_fallbacks=score_fallbacks)
    return {**evaluate(ann, preds, score_fallbacks=score_fallbacks), **report}, preds


def compare_runs(annotations_path: Path | str, a: Path | str, b: Path | str, *,
                 score_fallbacks: bool = False) -> compare.Comparison:
    """`compare grounding`: run A against run B on the same annotations, paired by query."""
    ann = load_annotations(annotations_path)
    runs = [load_prediction_files([Path(a)]), load_prediction_files([Path(b)])]
    qids = {q.qid for q in ann.queries}
    for path, preds in zip((a, b), runs):
        compare.refuse_unknown(path, preds, qids, what="prediction(s) for qids", against=str(annotations_path))
    fallbacks = score_fallbacks
    groups = [unit_scores(ann, preds, score_fallbacks=fallbacks) for preds in runs]
    return compare.Comparison(
        "grounding", str(a), str(b),
        f"{annotations_path} ({len(ann.queries)} queries, {len(ann.pairs)} pairs)",
        compare.paired(*groups), disagreements(ann, *runs, score_fallbacks=fallbacks),
        len(ann.queries), "queries",
        notes=["DIAGNOSTIC: fallbacks scored as answers (--score-fallbacks)"] if fallbacks else [])
