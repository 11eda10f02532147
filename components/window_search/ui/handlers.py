"""The Window search tab's handlers: each takes the tab's data, the session's resources, the typed
session and the inputs, and returns a typed view whose fields are the event's outputs in order
(layout.py wires them). They raise UserError for what the user can fix; layout turns it into
gr.Error. Tested directly (tests/window_search/test_ui_handlers.py)."""
from __future__ import annotations

import json
import queue
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

import gradio as gr
from gradio import processing_utils

from backends.registry import resolve_embedder
from components.common.errors import DataFormatError, UserError
from components.common.intervals import valid_interval
from components.common.io import atomic_write_text
from components.common.limits import check_video_duration
from components.settings import session as settings_session
from components.settings.session import SessionSettings, backend_for
from components.window_search import view
from components.window_search.annotations import GroundingAnnotations, Prediction, load_annotations
from components.window_search.memory import CharacterMemory, build_names_only, load_or_empty, memory_path
from components.window_search.metrics import evaluate, temporal_iou
from components.window_search.pipeline import SearchSettings, ground_query, prediction_record
from components.window_search.solvers import solvers_for
from components.window_search.types import SearchTrace, is_scored_source
from components.window_search.ui.session import MovieInfo, Partner, PickedQuery, SessionResources, \
    WindowSearchSession

VIDEO_TYPES = (".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v")
SUB_TYPES = (".srt", ".vtt")
WINDOW_FRAMES = 24  # frames of a window shown for picking a reference


# -- the tab's data ---------------------------------------------------------------------------------
@dataclass
class TabData:
    """The annotation file the tab offers (None, with the reason, when there is none)."""

    annotations: GroundingAnnotations | None
    error: str = ""

    def queries_of(self, movie_id: str | None) -> list:
        if self.annotations is None or movie_id is None:
            return []
        return [q for q in self.annotations.queries if q.movie_id == movie_id]

    def movie_choices(self) -> list[tuple[str, str]]:
        movies = self.annotations.movies.values() if self.annotations else []
        return [(f"{m.movie_id} · {m.extra.get('title', m.video.name)}", m.movie_id) for m in movies]

    def movie_info(self, movie_id: str) -> MovieInfo:
        entry = self.annotations.movie(movie_id)
        return MovieInfo(movie_id, str(entry.video), str(entry.subtitles) if entry.subtitles else None,
                         str(memory_path(Path(self.annotations.path).parent, movie_id)))


def load_tab_data(data_dir: Path) -> TabData:
    path = Path(data_dir) / "grounding" / "annotations.json"
    if not path.is_file():
        return TabData(None, f"No annotation file at {path}: generate the examples (`python -m "
                             "examples.generate`) or upload a movie.")
    try:
        return TabData(load_annotations(path))
    except UserError as exc:
        return TabData(None, str(exc))


# -- views: one dataclass per event, fields in the order of its outputs ---------------------------
@dataclass
class MemoryView:
    session: WindowSearchSession
    memory_names: str
    refs: list
    char_pick: Any


@dataclass
class MovieView:
    session: WindowSearchSession
    video: Any
    timeline: str
    query_pick: Any
    scrub: Any
    checklist: str
    result: str
    window_pick: Any
    memory_names: str
    refs: list
    char_pick: Any


@dataclass
class QueryView:
    session: WindowSearchSession
    query: Any
    partner: str


@dataclass
class RunView:
    session: WindowSearchSession
    timeline: str
    checklist: str
    progress: str
    result: str
    window_pick: Any
    cast: list
    frames: Any


@dataclass
class WindowView:
    session: WindowSearchSession
    timeline: Any
    checklist: Any
    video: Any
    frames: Any


@dataclass
class ScrubView:
    session: WindowSearchSession
    timeline: str
    checklist: Any
    video: Any
    window_pick: Any


@dataclass
class ExportView:
    export_file: Any


@dataclass
class LoadView:
    session: WindowSearchSession
    video: Any
    timeline: str
    checklist: str
    result: str
    window_pick: Any
    cast: list
    query: str
    scrub: Any


@dataclass
class BenchView:
    progress: str
    metrics: Any
    file: Any


# -- helpers ----------------------------------------------------------------------------------------
def player_value(video: str | None) -> str | None:
    """The path for gr.Video, or None when gradio would re-encode it (not browser-playable): a
    two-hour re-encode must never block the tab. The search itself reads any format."""
    if not video:
        return None
    try:
        if processing_utils.ffmpeg_installed() and not processing_utils.video_is_playable(video):
            gr.Warning(f"{Path(video).name} is not browser-playable (container/codec), so the player stays "
                       "empty; the search still works. To watch it, re-encode: ffmpeg -i in -c:v libx264 "
                       "-pix_fmt yuv420p -c:a aac out.mp4")
            return None
    except Exception:  # noqa: BLE001 - probing failed: let the player try the file as it is
        pass
    return video


def _memory(info: MovieInfo) -> CharacterMemory:
    return load_or_empty(info.memory, info.movie_id)


def _timeline(session: WindowSearchSession, playhead: float | None = None) -> str:
    if session.movie is None:
        return view.timeline_html(None, 0.0)
    cs, dur = float(session.chunk_seconds), float(session.movie.duration)
    n = max(1, int(-(-dur // cs)))
    return view.timeline_html(session.trace, dur, n_chunks=n, chunk_seconds=cs, playhead=playhead,
                              selected=session.selected)


def _cast_gallery(trace: SearchTrace | None) -> list:
    if trace is None:
        return []
    return [(c.image, f"{c.name} ({c.ref_id})") for c in trace.cast if c.image and Path(c.image).is_file()]


def _window_pick(trace: SearchTrace | None, selected: int | None) -> Any:
    choices = [f"#{c.rank}" for c in trace.candidates] if trace else []
    return gr.update(choices=choices, value=f"#{selected}" if selected else None)


def _iou(trace: SearchTrace) -> float | None:
    """The IoU the benchmark gives this prediction: a fallback or unparsed item scores 0."""
    if trace.ground_truth is None:
        return None
    scored = trace.prediction if is_scored_source(trace.source) else None
    return temporal_iou(scored, trace.ground_truth)


def _localizer_backend(settings: dict | None, backend: Any) -> Any:
    """The session's localizer choice (components.settings: empty = the verifier's backend)."""
    pick = getattr(settings_session, "localizer_backend_for", None)
    chosen = str(getattr(SessionSettings.from_state(settings), "localizer", "") or "").strip()
    if pick is None or not chosen:  # no choice (or no such setting): the verifier localizes
        return backend
    return pick(settings) or backend


def _result(session: WindowSearchSession, trace: SearchTrace | None) -> str:
    if trace is None:
        return ""
    partner = None
    if session.partner is not None and trace.qid:
        pq = session.partner
        partner = (pq.qid, pq.query, session.ious.get(pq.qid))
    return view.result_markdown(trace, iou=_iou(trace), partner=partner)


def _default_rank(trace: SearchTrace) -> int | None:
    last = trace.candidates[-1].rank if trace.candidates else None
    return trace.accepted_rank or trace.selected_rank or last


def _window_frames(res: SessionResources, session: WindowSearchSession,
                   window: tuple[float, float]) -> list:
    if not session.has_video:
        return []
    frames = res.movie(session.movie, session.chunk_seconds).frames(window[0], window[1], fps=1.0,
                                                                   cap=WINDOW_FRAMES)
    return [(f.image, f"{f.time:.0f} s") for f in frames]


def _memory_view(session: WindowSearchSession) -> MemoryView:
    mv = session.movie
    if mv is None or not mv.memory:
        return MemoryView(session, "No movie.", [], gr.update(choices=[], value=None))
    mem = _memory(mv)
    if not mem.characters:
        md = "No characters yet: find names in the subtitles, or add frames after a run."
    else:
        md = "\n".join(f"- **{c.char_id} {c.display_name}** — names: {', '.join(c.names)} · "
                       f"{len(c.references)} reference(s)" for c in mem.characters)
    gallery = [(r.image, f"{c.display_name} · {r.ref_id} · {view.fmt_t(r.time)}")
               for c in mem.characters for r in c.references if Path(r.image).is_file()]
    choices = [(f"{c.char_id} {c.display_name}", c.char_id) for c in mem.characters]
    return MemoryView(session, md, gallery, gr.update(choices=choices, value=choices[0][1] if choices else None))


def _movie_view(tab: TabData, session: WindowSearchSession) -> MovieView:
    mv = session.movie
    dur = float(mv.duration) if mv else 1.0
    video = gr.update(value=player_value(mv.video) if mv else None, playback_position=0,
                      subtitles=mv.subtitles if mv else None)
    memory = _memory_view(session)
    return MovieView(session, video, _timeline(session),
                     gr.update(choices=view.query_choices(tab.queries_of(mv.movie_id if mv else None)),
                               value=None),
                     gr.update(maximum=max(1, int(dur)), value=0), view.checklist_html(None, None), "",
                     gr.update(choices=[], value=None), memory.memory_names, memory.refs, memory.char_pick)


def _opened(res: SessionResources, info: MovieInfo, chunk: float | None,
            session: WindowSearchSession) -> WindowSearchSession:
    """A fresh session on `info` (the IoUs of earlier runs are kept for the pair line)."""
    chunk_seconds = float(chunk or 180)
    info.duration = res.movie(info, chunk_seconds).duration
    return WindowSearchSession(movie=info, chunk_seconds=chunk_seconds, ious=session.ious)


def search_settings(settings: dict | None, k: float | None, m: float | None,
                    delta: float | None, thinking_off: bool | None = True) -> SearchSettings:
    """The budget typed in the tab, with the Model panel's frames-per-request cap; the thinking
    switch is off as in CoM2 §5 unless the tab's "thinking off" box is unticked (then no switch
    is sent: the server's default)."""
    state = SessionSettings.from_state(settings)
    return SearchSettings(k=int(k or 5), m=int(m or 0), delta_max=float(delta or 30),
                          max_frames=int(state.max_frames) or None,
                          thinking=False if thinking_off is not False else None)


def baseline_label(settings: dict | None) -> str:
    s = SessionSettings.from_state(settings)
    if s.backend == "baseline":
        return f"**{view.BASELINE_LABEL}** — pick a model in the Model panel for visual inspection."
    return f"Model: `{s.backend}`"


# -- picking a movie and a query --------------------------------------------------------------------
def pick_movie(tab: TabData, res: SessionResources, movie_id: str | None, chunk: float | None,
               session: WindowSearchSession) -> MovieView:
    if not movie_id or tab.annotations is None:
        return _movie_view(tab, session)
    return _movie_view(tab, _opened(res, tab.movie_info(movie_id), chunk, session))


def upload_movie(tab: TabData, res: SessionResources, files: list | None, chunk: float | None,
                 session: WindowSearchSession) -> MovieView:
    if not files:
        return _movie_view(tab, session)
    paths = [Path(f if isinstance(f, str) else f.name) for f in files]
    vids = [p for p in paths if p.suffix.lower() in VIDEO_TYPES]
    subs = [p for p in paths if p.suffix.lower() in SUB_TYPES]
    if len(vids) != 1:
        raise UserError("Upload exactly one video (.mp4, .mkv, .webm, .mov), optionally with one .srt/.vtt file.")
    mem_dir = Path(tempfile.mkdtemp(prefix="ws-memory-"))
    info = MovieInfo(vids[0].stem, str(vids[0]), str(subs[0]) if subs else None,
                     str(mem_dir / f"{vids[0].stem}.json"))
    opened = _opened(res, info, chunk, session)
    check_video_duration(vids[0], info.duration)
    return _movie_view(tab, opened)


def pick_query(tab: TabData, res: SessionResources, qid: str | None,
               session: WindowSearchSession) -> QueryView:
    if not qid or tab.annotations is None:
        session.partner = None
        return QueryView(session, gr.update(), "")
    q = tab.annotations.query(qid)
    p = tab.annotations.query(q.partner_qid)
    session.picked = PickedQuery(q.qid, q.query, tuple(q.interval))
    session.partner = Partner(p.qid, p.query)
    md = (f"**contrast attribute:** {q.contrast_attribute} · **ground truth** "
          f"[{q.interval[0]:.0f} s, {q.interval[1]:.0f} s] · **confusable partner** {p.qid}: “{p.query}”")
    return QueryView(session, q.query, md)


# -- running a search -------------------------------------------------------------------------------
def _search_in_thread(work: Callable[[Callable[[SearchTrace], None]], SearchTrace]) -> Iterator[tuple[str, Any]]:
    """Start `work(on_update)` in a thread now; the returned iterator yields ("update", trace dict)
    snapshots, then ("done", ...); an exception raised there is raised by the iterator."""
    updates: queue.Queue = queue.Queue()

    def target() -> None:
        try:
            trace = work(lambda t: updates.put(("update", t.to_dict())))
            updates.put(("done", trace.to_dict()))
        except Exception as exc:  # noqa: BLE001 - re-raised by the iterator
            updates.put(("error", exc))

    threading.Thread(target=target, daemon=True).start()
    return _drained(updates)


def _drained(updates: queue.Queue) -> Iterator[tuple[str, Any]]:
    while True:
        kind, payload = updates.get()
        if kind == "error":
            raise payload
        yield kind, payload
        if kind == "done":
            return


def run(tab: TabData, res: SessionResources, session: WindowSearchSession, settings: dict | None,
        text: str | None, chunk: float | None, k: float | None, m: float | None,
        delta: float | None, method: str, thinking_off: bool | None = True) -> Iterator[RunView]:
    """Ground the query in the session's movie, yielding the views as the search goes."""
    if not session.has_video:
        raise UserError("Pick a movie (or upload one) first.")
    text = (text or "").strip()
    if not text:
        raise UserError("Type a query or pick one from the annotation file.")
    picked = session.picked
    gt = tuple(picked.interval) if picked is not None and picked.query == text else None
    qid = picked.qid if gt is not None else None
    if qid is None:
        session.partner = None
    backend = backend_for(settings)
    search = search_settings(settings, k, m, delta, thinking_off)
    session.chunk_seconds = float(chunk or 180)
    movie = res.movie(session.movie, session.chunk_seconds)
    memory = _memory(session.movie)
    embedder = resolve_embedder("minilm")
    res.stop.clear()

    solvers = solvers_for(backend, search, embedder=embedder,
                          localizer_backend=_localizer_backend(settings, backend))

    def work(on_update: Callable[[SearchTrace], None]) -> SearchTrace:
        return ground_query(text, movie, backend, embedder=embedder, memory=memory, method=method,
                            settings=search, ground_truth=gt, qid=qid, stop=res.stop, on_update=on_update,
                            solvers=solvers)

    updates = _search_in_thread(work)
    session.trace, session.selected = None, None
    yield RunView(session, _timeline(session), view.checklist_html(None, None), "Retrieving chunks…", "",
                  gr.update(choices=[], value=None), [], [])
    for kind, payload in updates:
        yield _run_view(res, session, SearchTrace.from_dict(payload), search.k, done=kind == "done")


def _run_view(res: SessionResources, session: WindowSearchSession, trace: SearchTrace, k: int, *,
              done: bool) -> RunView:
    session.trace = trace
    session.selected = sel = _default_rank(trace)
    if done and trace.qid is not None and trace.prediction is not None:
        session.ious[trace.qid] = _iou(trace)
    cand = view.candidate(trace, sel) if done else None
    frames = _window_frames(res, session, cand.span) if cand is not None else gr.update()
    return RunView(session, _timeline(session), view.checklist_html(trace, sel),
                   view.progress_text(trace, k, done), _result(session, trace) if done else "",
                   _window_pick(trace, sel), _cast_gallery(trace), frames)


def stop(tab: TabData, res: SessionResources) -> None:
    res.stop.set()


# -- browsing a trace -------------------------------------------------------------------------------
def select_window(tab: TabData, res: SessionResources, choice: str | None,
                  session: WindowSearchSession) -> WindowView:
    trace = session.trace
    if not choice or trace is None:
        return WindowView(session, gr.update(), gr.update(), gr.update(), [])
    rank = int(str(choice).lstrip("#"))
    session.selected = rank
    cand = view.candidate(trace, rank)
    w = cand.span if cand else (0, 0)
    return WindowView(session, _timeline(session, playhead=w[0]), view.checklist_html(trace, rank),
                      gr.update(playback_position=float(w[0])), _window_frames(res, session, w))


def scrubbed(tab: TabData, res: SessionResources, t: float, session: WindowSearchSession) -> ScrubView:
    trace = session.trace
    rank = view.candidate_at(trace, float(t)) if trace else None
    if rank is not None:
        session.selected = rank
    return ScrubView(session, _timeline(session, playhead=float(t)),
                     view.checklist_html(trace, rank) if trace else gr.update(),
                     gr.update(playback_position=float(t)), gr.update(value=f"#{rank}") if rank else gr.update())


def export(tab: TabData, res: SessionResources, session: WindowSearchSession) -> ExportView:
    trace = session.trace
    if trace is None:
        raise UserError("Nothing to export yet: run a query first.")
    out = Path(tempfile.mkdtemp(prefix="ws-trace-")) / f"trace-{trace.qid or 'query'}.json"
    movie = session.movie.exported() if session.movie else {}
    atomic_write_text(out, json.dumps({"trace": trace.to_dict(), "movie": movie,
                                       "chunk_seconds": session.chunk_seconds}, indent=1))
    return ExportView(gr.update(value=str(out), visible=True))


def _read_trace_file(path: Path, want_qid: str | None) -> tuple[dict, SearchTrace]:
    """(the saved data, its trace) from an exported .json or a `run grounding --traces` .jsonl line."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() == ".jsonl":  # a `run grounding --traces` file: the picked query's line
            lines = [json.loads(x) for x in text.splitlines() if x.strip()]
            data = next((x for x in lines if x.get("qid") == want_qid), lines[0] if lines else {})
        else:
            data = json.loads(text)
        return data, SearchTrace.from_dict(data.get("trace", data))
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError, KeyError, AttributeError, ValueError) as exc:
        raise DataFormatError(f"{path.name} is not a saved window-search trace ({exc}).") from None


def load(tab: TabData, res: SessionResources, file: Any, session: WindowSearchSession) -> LoadView:
    path = Path(file if isinstance(file, str) else file.name)
    data, trace = _read_trace_file(path, session.picked.qid if session.picked else None)
    mv = data.get("movie") if isinstance(data, dict) else None
    if mv and mv.get("video") and Path(mv["video"]).is_file():
        session.movie = MovieInfo(mv.get("movie_id", "?"), mv["video"], mv.get("subtitles"),
                                  session.movie.memory if session.movie else "", float(mv.get("duration", 0.0)))
    elif session.movie is None:
        dur = max([c.end for c in trace.chunks] + [trace.window[1] if trace.window else 0] + [1.0])
        session.movie = MovieInfo("?", None, duration=float(mv.get("duration", dur) if mv else dur))
    session.chunk_seconds = float(data.get("chunk_seconds", session.chunk_seconds))
    session.trace = trace
    sel = trace.accepted_rank or trace.selected_rank or (trace.candidates[0].rank if trace.candidates else None)
    session.selected = sel
    vid = session.movie.video
    return LoadView(session, gr.update(value=player_value(vid)) if vid else gr.update(), _timeline(session),
                    view.checklist_html(trace, sel), _result(session, trace), _window_pick(trace, sel),
                    _cast_gallery(trace), trace.query, gr.update(maximum=max(1, int(session.movie.duration))))


# -- character memory -------------------------------------------------------------------------------
def ref_selected(tab: TabData, res: SessionResources, session: WindowSearchSession,
                 index: int | None) -> WindowSearchSession:
    mem = _memory(session.movie) if session.movie else None
    refs_all = [r for c in mem.characters for r in c.references if Path(r.image).is_file()] if mem else []
    if index is not None and 0 <= index < len(refs_all):
        session.sel_ref = refs_all[index].ref_id
    return session


def remove_ref(tab: TabData, res: SessionResources, session: WindowSearchSession) -> MemoryView:
    if not session.sel_ref:
        raise UserError("Select a reference frame first.")
    _memory(session.movie).remove_reference(session.sel_ref)
    session.sel_ref = None
    return _memory_view(session)


def frame_selected(tab: TabData, res: SessionResources, session: WindowSearchSession,
                   index: int | None) -> WindowSearchSession:
    trace = session.trace
    cand = view.candidate(trace, session.selected) if trace else None
    if cand is not None and index is not None:
        w = cand.span
        frames = res.movie(session.movie, session.chunk_seconds).frames(w[0], w[1], fps=1.0, cap=WINDOW_FRAMES)
        if 0 <= index < len(frames):
            session.sel_frame = frames[index].time
    return session


def add_ref(tab: TabData, res: SessionResources, session: WindowSearchSession,
            char_id: str | None) -> MemoryView:
    if session.sel_frame is None:
        raise UserError("Select a frame of the current window first (run a query and pick a window).")
    if not char_id:
        raise UserError("Pick the character this frame shows (or find names in the subtitles first).")
    t = float(session.sel_frame)
    frames = res.movie(session.movie, session.chunk_seconds).frames(t, t + 1.0, fps=1.0, cap=1)
    if not frames:
        raise UserError(f"No frame at {t:.0f} s.")
    _memory(session.movie).add_reference(char_id, frames[0].image, time=frames[0].time)
    return _memory_view(session)


def _known_names(mem: CharacterMemory) -> set[str]:
    return {n.lower() for c in mem.characters for n in c.names}


def find_names(tab: TabData, res: SessionResources, session: WindowSearchSession) -> MemoryView:
    if session.movie is None:
        raise UserError("Pick a movie first.")
    movie = res.movie(session.movie, session.chunk_seconds)
    mem = _memory(session.movie)
    found = build_names_only(mem.movie_id, movie.all_cues)
    known = _known_names(mem)
    added = 0
    for c in found.characters:
        if not any(n.lower() in known for n in c.names):
            mem.add_character(c.display_name, c.names)
            added += 1
    if added == 0 and mem.path is not None and not mem.path.exists():
        mem.save()
    gr.Info(f"{added} new name(s) found in the subtitles.")
    return _memory_view(session)


def build_refs(tab: TabData, res: SessionResources, session: WindowSearchSession, settings: dict | None,
               progress: Callable[..., Any] | None = None) -> MemoryView:
    if not session.has_video:
        raise UserError("Pick a movie first.")
    solvers = solvers_for(backend_for(settings), search_settings(settings, None, None, None))
    if solvers.memory_builder is None:
        raise UserError("The baseline has no vision model: choose a model in the Model panel, or use "
                        "'Find names in the subtitles' and add frames by hand.")
    report = progress or (lambda *a, **kw: None)
    movie = res.movie(session.movie, session.chunk_seconds)
    report(0, desc="reference clips…")
    built, stats = solvers.memory_builder(movie, Path(tempfile.mkdtemp(prefix="ws-vlm-mem-")) / "m.json",
                                          progress=lambda name, s: report(None, desc=f"{name}: {s['clips']} clips"))
    mem = _memory(session.movie)
    known = _known_names(mem)
    for c in built.characters:
        if any(n.lower() in known for n in c.names):
            continue
        new = mem.add_character(c.display_name, c.names)
        for r in c.references:
            img = built.load_reference_image(r)
            if img is not None:
                mem.add_reference(new.char_id, img, time=r.time)
    gr.Info(f"{stats['kept']} character(s) kept, {stats['dropped']} dropped, {stats['calls']} model calls, "
            f"{stats['unparsed']} unparsed.")
    return _memory_view(session)


# -- the benchmark ----------------------------------------------------------------------------------
def bench(tab: TabData, res: SessionResources, session: WindowSearchSession, settings: dict | None,
          chunk: float | None, k: float | None, m: float | None, delta: float | None,
          method: str, thinking_off: bool | None = True) -> Iterator[BenchView]:
    """Every query of the annotation file, the metrics after each (missing ones count as failures)."""
    ann = tab.annotations
    if ann is None:
        raise UserError(tab.error or "No annotation file.")
    backend = backend_for(settings)
    search = search_settings(settings, k, m, delta, thinking_off)
    embedder = resolve_embedder("minilm")
    solvers = solvers_for(backend, search, embedder=embedder,
                          localizer_backend=_localizer_backend(settings, backend))
    res.stop.clear()
    records: list[dict] = []
    out = Path(tempfile.mkdtemp(prefix="ws-bench-")) / "predictions.jsonl"
    queries = ann.queries
    label = f"{backend.backend_id}" + (f" — {view.BASELINE_LABEL}" if solvers.text_only else "")
    for i, q in enumerate(queries, 1):
        if res.stop.is_set():
            break
        info = tab.movie_info(q.movie_id)
        trace = ground_query(q.query, res.movie(info, float(chunk or 180)), backend, embedder=embedder,
                             memory=_memory(info), method=method, settings=search, ground_truth=q.interval,
                             qid=q.qid, stop=res.stop, solvers=solvers)
        if trace.stopped:
            break
        records.append(prediction_record(trace))
        preds = {r["qid"]: Prediction(r["qid"], valid_interval(r["interval"]), valid_interval(r.get("window")),
                                      source=r.get("source")) for r in records}
        atomic_write_text(out, "".join(json.dumps(r) + "\n" for r in records))
        yield BenchView(f"{label}: {i} of {len(queries)} queries (missing ones count as failures)",
                        view.metrics_rows(evaluate(ann, preds)), str(out))
    yield BenchView(f"{label}: {'stopped after' if res.stop.is_set() else 'done,'} {len(records)} of "
                    f"{len(queries)} queries", gr.update(), str(out) if records else None)
