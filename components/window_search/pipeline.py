"""One query end to end, the function both the UI and the CLI call (pure; no gradio):

    retrieve top-K chunks -> window selection -> localize in the window -> SearchTrace

Window selection methods:
- "aws":          Agentic Window Search (Algorithm 1) over the top K chunks;
- "rag":          Movie RAG: the top-1 chunk straight to the localizer (paper §3, Table 2 row 2);
- "oracle-chunk": the chunk with the largest GT overlap (Table 2 row 6; needs the ground truth).
With the baseline backend (`is_baseline`) the text-only baseline solver and localizer are used and
the trace says so (`text_only_baseline`).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from components.common.errors import UserError
from components.window_search.types import CandidateTrace, SearchTrace

if TYPE_CHECKING:
    from backends.base import EmbeddingBackend, VLMBackend
    from components.window_search.memory import CharacterMemory
    from components.window_search.movie import Movie

METHODS = ("aws", "rag", "oracle-chunk")


@dataclass
class SearchSettings:
    k: int = 5
    m: int = 3
    delta_max: float = 30.0
    max_new_frames: int = 32      # frames per expansion (paper §5)
    frame_cap: int | None = None  # frames per Inspect window (None: the agent's default)
    localize_fps: float = 1.0
    localize_cap: int = 32

    def __post_init__(self):
        if self.k < 1:
            raise UserError(f"K must be at least 1 (got {self.k}).")
        if self.m < 0:
            raise UserError(f"M must be 0 or more (got {self.m}).")
        if self.delta_max <= 0:
            raise UserError(f"Δmax must be > 0 seconds (got {self.delta_max}).")


def _solver_for(backend: "VLMBackend", embedder: "EmbeddingBackend | None"):
    from components.window_search.solvers import ModelWindowSolver, TextOnlyBaselineSolver

    if backend.is_baseline:
        return TextOnlyBaselineSolver(embedder=embedder)
    return ModelWindowSolver(backend)


def ground_query(query: str, movie: "Movie", backend: "VLMBackend", *,
                 embedder: "EmbeddingBackend", memory: "CharacterMemory | None" = None,
                 method: str = "aws", settings: SearchSettings | None = None,
                 ground_truth: tuple[float, float] | None = None, qid: str | None = None,
                 on_update: Callable[[SearchTrace], None] | None = None,
                 stop: threading.Event | None = None,
                 captions: dict[int, str] | None = None) -> SearchTrace:
    """Ground one query in one movie; the returned trace carries window, prediction and GT.
    `captions` (chunk index -> text, e.g. from retrieval.caption_chunks) join the chunk texts."""
    from components.window_search.localizer import localize
    from components.window_search.memory import CharacterMemory
    from components.window_search.retrieval import oracle_chunk, retrieve

    settings = settings or SearchSettings()
    if method not in METHODS:
        raise UserError(f"unknown method '{method}'; choose one of {', '.join(METHODS)}.")
    if not query or not query.strip():
        raise UserError("the query is empty; type a description of the moment to find.")
    started = time.perf_counter()
    memory = memory if memory is not None else CharacterMemory(movie.movie_id)
    ranked = retrieve(query, movie, embedder, k=settings.k, captions=captions)

    if method == "aws":
        from components.window_search.agent import agentic_window_search

        trace = agentic_window_search(
            query, ranked, movie, memory, _solver_for(backend, embedder), K=settings.k, M=settings.m,
            delta_max=settings.delta_max, max_new_frames=settings.max_new_frames,
            frame_cap=settings.frame_cap, on_update=on_update, stop=stop, qid=qid)
    else:
        if method == "rag":
            chosen = ranked[0]
        else:
            if ground_truth is None:
                raise UserError("the oracle-chunk method needs the query's ground truth (pick a query "
                                "from an annotation file).")
            chosen = oracle_chunk(movie, ground_truth)
        trace = SearchTrace(query=query, qid=qid, chunks=ranked)
        trace.candidates = [CandidateTrace(rank=chosen.rank or 1, chunk=chosen,
                                           final_window=(chosen.start, chosen.end), outcome="selected")]
        trace.selected_rank = chosen.rank
        trace.window = (chosen.start, chosen.end)
    trace.backend = backend.backend_id
    trace.text_only_baseline = bool(backend.is_baseline)
    trace.ground_truth = tuple(ground_truth) if ground_truth is not None else None
    if on_update:
        on_update(trace)

    if trace.window is not None and not trace.stopped and not (stop is not None and stop.is_set()):
        result = localize(query, trace.window, movie, None if backend.is_baseline else backend,
                          fps=settings.localize_fps, cap=settings.localize_cap, embedder=embedder,
                          stop=stop, ref=qid or "")
        trace.calls["localize"] = trace.calls.get("localize", 0) + 1
        trace.prediction = tuple(result.interval) if result.interval is not None else None
        if result.error:
            trace.errors.append(f"localize: {result.error}")
    elif stop is not None and stop.is_set():
        trace.stopped = True
    trace.elapsed_s = time.perf_counter() - started
    if on_update:
        on_update(trace)
    return trace


def prediction_record(trace: SearchTrace) -> dict:
    """The predictions.jsonl line of a trace (formats.md), window included for the diagnostics."""
    rec: dict = {"qid": trace.qid, "interval": list(trace.prediction) if trace.prediction else None}
    if trace.window is not None:
        rec["window"] = list(trace.window)
    rec["trace"] = trace.qid
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

    def embedder(self) -> "EmbeddingBackend":
        from backends.registry import resolve_embedder
        return resolve_embedder(self.embedder_spec)

    def movie(self, entry) -> "Movie":
        from components.window_search.movie import Movie

        key = (str(entry.video), self.chunk_seconds)
        with self._lock:
            if key not in self._movies:
                self._movies[key] = Movie(entry.video, entry.subtitles, movie_id=entry.movie_id,
                                          chunk_seconds=self.chunk_seconds)
            return self._movies[key]

    def memory(self, movie_id: str) -> "CharacterMemory":
        from components.window_search.memory import load_or_empty

        with self._lock:
            if movie_id not in self._memories:
                if self.memory_dir is None:
                    from components.window_search.memory import CharacterMemory
                    self._memories[movie_id] = CharacterMemory(movie_id)
                else:
                    self._memories[movie_id] = load_or_empty(Path(self.memory_dir) / f"{movie_id}.json", movie_id)
            return self._memories[movie_id]
