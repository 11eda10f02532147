"""One query end to end, the function both the UI and the CLI call (pure; no gradio):

    retrieve top-K chunks -> window selection -> localize in the window -> SearchTrace

Window selection methods:
- "aws":          Agentic Window Search (Algorithm 1) over the top K chunks;
- "rag":          Movie RAG: the top-1 chunk straight to the localizer (paper §3, Table 2 row 2);
- "oracle-chunk": the chunk with the largest GT overlap (Table 2 row 6; needs the ground truth).
Which verifier and localizer answer is `solvers.solvers_for`'s decision (the baseline backend gets
the text-only baseline, and the trace says so: `text_only_baseline`).
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from backends.base import EmbeddingBackend, VLMBackend
from backends.registry import resolve_embedder
from components.base.errors import UserError
from components.window_search.agent import agentic_window_search
from components.window_search.data import MovieEntry
from components.window_search.memory import CharacterMemory, load_or_empty
from components.window_search.movie import Movie
from components.window_search.retrieval import oracle_chunk, retrieve
from components.window_search.solvers import WindowSearchSolvers, solvers_for
from components.common.intervals import valid_interval
from components.window_search.types import UNPARSED, CandidateTrace, Chunk, SearchSettings, \
    SearchTrace, fallback_source, is_scored_source

__all__ = ["METHODS", "SearchSettings", "ground_query", "prediction_record", "prediction_source",
           "MovieLibrary"]

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
