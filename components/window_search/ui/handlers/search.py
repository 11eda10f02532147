"""The Window search tab's handlers: each takes the tab's data, the session's resources, the typed
session and the inputs, and returns a typed view naming only the components it changes (its fields
are named after them; layout.py wires each event with its view class; a view's `message` goes to
the tab's message line). They raise UserError for what the user can fix; layout shows it on the
message line. Tested directly (tests/window_search/test_ui_handlers*.py). Memory edits: memory.py;
the benchmark: bench.py; the views: ../views.py."""
from __future__ import annotations

import html
import json
import math
import queue
import tempfile
import threading
import dataclasses
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator, Mapping

import gradio as gr
from gradio import processing_utils

from backends.registry import resolve_embedder
from components import datasource
from components.window_search.spec import SPEC
from components.base.errors import DataFormatError, UserError
from components.common import outcome
from components.common.fields import number, whole
from components.base.io import atomic_write_text
from components.common.limits import check_video_duration
from components.common import players
from components.common.ui import markdown_safe, poll, preparing_note
from components.settings import session as settings_session
from components.settings.session import SessionSettings, backend_for
from components.window_search import links, pair_view, view
from components.window_search.memory import CharacterMemory, load_or_empty
from components.window_search.metrics import temporal_iou
from components.window_search.pipeline import SearchSettings, ground_query
from components.window_search.solvers import solvers_for
from components.window_search.types import SearchTrace, is_scored_source
from components.window_search.ui import playback
from components.window_search.ui.session import MovieInfo, Partner, PickedQuery, WindowSearchResources, \
    WindowSearchSession, WindowSearchTab
from components.window_search.ui.views import BaselineView, ExportView, LinkView, LoadView, MovieView, PageView, PlayheadView, \
    QueryView, RunView

VIDEO_TYPES = (".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v")
SUB_TYPES = (".srt", ".vtt")
WINDOW_FRAMES = 24  # frames of a window shown for picking a reference


# -- helpers ----------------------------------------------------------------------------------------
def player_value(video: str | None) -> tuple[str | None, str]:
    """(the path for gr.Video, a line for the message line): no path, and a line saying why, when
    gradio would re-encode the file (not browser-playable): a two-hour re-encode must never block
    the tab. The search itself reads any format."""
    if not video:
        return None, ""
    video = str(datasource.local(video))   # a dataset repository's movie: fetched first
    try:
        if processing_utils.ffmpeg_installed() and not players.playable(video):
            return None, (f"⚠ {markdown_safe(Path(video).name)} is not browser-playable (container/codec), so the "
                          "player stays empty; the search still works. To watch it, re-encode: "
                          "`ffmpeg -i in -c:v libx264 -pix_fmt yuv420p -c:a aac out.mp4`")
    except Exception:  # noqa: BLE001 - probing failed: let the player try the file as it is
        pass
    return video, ""


def memory_of(info: MovieInfo) -> CharacterMemory:
    return load_or_empty(info.memory, info.movie_id)


def _timeline(session: WindowSearchSession, *, seek: bool = False) -> str:
    """The timeline at the session's playhead; `seek`: the page also moves the player there."""
    if session.movie is None:
        return view.timeline_html(None, 0.0)
    cs, dur = float(session.chunk_seconds), float(session.movie.duration)
    n = max(1, int(-(-dur // cs)))
    span = playback.shown_span(session.trace, session.playhead, session.selected, cs, dur)
    truth = tuple(session.picked.interval) if session.picked is not None else None
    return view.timeline_html(session.trace, dur, n_chunks=n, chunk_seconds=cs, playhead=session.playhead,
                              selected=session.selected, seek=seek, ground_truth=truth) + playback.map_html(span)


def _cast_gallery(trace: SearchTrace | None) -> list:
    if trace is None:
        return []
    return [(c.image, f"{c.name} ({c.ref_id})") for c in trace.cast if c.image and Path(c.image).is_file()]


def _window_pick(trace: SearchTrace | None, selected: int | None) -> Any:
    choices = [f"#{c.rank}" for c in trace.candidates] if trace else []
    return gr.update(choices=choices, value=f"#{selected}" if selected else None, visible=bool(choices))


def _scrub(session: WindowSearchSession) -> Any:
    dur = float(session.movie.duration) if session.movie else 1.0
    return gr.update(maximum=max(1, int(math.ceil(dur))), value=round(session.playhead, 1))


def _seek(session: WindowSearchSession) -> Any:
    return gr.update(playback_position=float(session.playhead))


def _iou(trace: SearchTrace) -> float | None:
    """The IoU the benchmark gives this prediction: a fallback or unparsed item scores 0."""
    if trace.ground_truth is None:
        return None
    scored = trace.prediction if is_scored_source(trace.source) else None
    return temporal_iou(scored, trace.ground_truth)


def _run_key(qid: str, trace: SearchTrace) -> tuple[str, str, str]:
    return (qid, trace.backend, trace.method)


def _localizer_backend(settings: dict | None, backend: Any) -> Any:
    """The session's localizer choice (components.settings: empty = the verifier's backend)."""
    pick = getattr(settings_session, "localizer_backend_for", None)
    chosen = str(getattr(SessionSettings.from_state(settings), "localizer", "") or "").strip()
    if pick is None or not chosen:  # no choice (or no such setting): the verifier localizes
        return backend
    return pick(settings) or backend


def _result(session: WindowSearchSession, trace: SearchTrace | None, *, reason_shown: bool = False) -> str:
    if trace is None:
        return ""
    partner = None
    if session.partner is not None and trace.qid:
        pq = session.partner
        partner = (pq.qid, pq.query, session.ious.get(_run_key(pq.qid, trace)))
    return view.result_markdown(trace, iou=_iou(trace), partner=partner, reason_shown=reason_shown)


def _default_rank(trace: SearchTrace) -> int | None:
    last = trace.candidates[-1].rank if trace.candidates else None
    return trace.accepted_rank or trace.selected_rank or last


def window_frames(res: WindowSearchResources, session: WindowSearchSession, window: tuple[float, float]) -> list:
    if not session.has_video:
        return []
    frames = res.movie(session.movie, session.chunk_seconds).frames(window[0], window[1], fps=1.0,
                                                                   cap=WINDOW_FRAMES)
    return [(f.image, f"{f.time:.0f} s") for f in frames]


def memory_listing(session: WindowSearchSession) -> tuple[str, list, Any]:
    """(names markdown, reference gallery, character dropdown update) of the session's memory."""
    mv = session.movie
    if mv is None or not mv.memory:
        return "No movie.", [], gr.update(choices=[], value=None)
    mem = memory_of(mv)
    scope = ("your session's copy (edits stay in this browser session)" if mv.memory_private
             else "the shared memory file")
    if not mem.characters:
        md = "No characters yet: find names in the subtitles, or add frames after a run."
    else:
        md = "\n".join(f"- **{c.char_id} {c.display_name}** — names: {', '.join(c.names)} · "
                       f"{len(c.references)} reference(s)" for c in mem.characters)
    md += f"\n\nShowing {scope}."
    gallery = [(r.image, f"{c.display_name} · {r.ref_id} · {view.fmt_t(r.time)}")
               for c in mem.characters for r in c.references if Path(r.image).is_file()]
    choices = [(f"{c.char_id} {c.display_name}", c.char_id) for c in mem.characters]
    return md, gallery, gr.update(choices=choices, value=choices[0][1] if choices else None)


def _picked(tab: WindowSearchTab, session: WindowSearchSession, qid: str | None) -> tuple[Any, str]:
    """Pick `qid` into the session: (the query text, the partner line)."""
    if not qid or tab.annotations is None:
        session.picked, session.partner = None, None
        return "", ""
    q = tab.annotations.query(qid)
    p = tab.annotations.query(q.partner_qid)
    session.picked = PickedQuery(q.qid, q.query, tuple(q.interval))
    session.partner = Partner(p.qid, p.query)
    md = (f"**contrast attribute:** {q.contrast_attribute} · **ground truth** "
          f"[{q.interval[0]:.0f} s, {q.interval[1]:.0f} s] · **confusable partner** {p.qid}: "
          f"“{view.md_text(p.query)}”")
    return q.query, md


def _movie_view(tab: WindowSearchTab, session: WindowSearchSession, qid: str | None = None, *,
                kind: type[MovieView] = MovieView, **more: Any) -> MovieView:
    """The view of a freshly opened movie, `qid` (default: its first annotated query) picked:
    a `kind` of movie view (PageView: with `more`, the movie dropdown and the timer)."""
    mv = session.movie
    queries = tab.queries_of(mv.movie_id if mv and not mv.uploaded else None)
    if qid is None and queries:
        qid = queries[0].qid
    text, partner = _picked(tab, session, qid)
    shown, unplayable = player_value(mv.video if mv else None)
    video = gr.update(value=shown, playback_position=session.playhead,
                      subtitles=mv.subtitles if mv else None,
                      label=f"Movie · {mv.movie_id}" if mv else "Movie")
    names, refs, chars = memory_listing(session)
    return kind(session=session, video=video, timeline=_timeline(session, seek=True),
                query_pick=gr.update(choices=view.query_choices(queries), value=qid), query=text, partner=partner,
                scrub=_scrub(session), checklist=view.checklist_html(None, None), result="",
                window_pick=gr.update(choices=[], value=None, visible=False), memory_names=names, refs=refs,
                char_pick=chars, calls="", message=unplayable, **more)


def _opened(res: WindowSearchResources, info: MovieInfo, chunk: float | None,
            session: WindowSearchSession) -> WindowSearchSession:
    """A fresh session on `info` (the IoUs of earlier runs are kept for the pair line)."""
    chunk_seconds = read_chunk(chunk)
    info.duration = res.movie(info, chunk_seconds).duration
    return WindowSearchSession(movie=info, chunk_seconds=chunk_seconds, ious=session.ious)


# -- the budget the visitor typed -------------------------------------------------------------------
def read_chunk(chunk: Any) -> float:
    x = number(chunk, "chunk seconds", default=180.0)
    if x < 10:
        raise UserError(f"chunk seconds must be at least 10 (got {x:g}); the paper uses 180.")
    return x


def search_settings(settings: dict | None, k: Any, m: Any, delta: Any,
                    thinking_off: bool | None = True) -> SearchSettings:
    """The budget typed in the tab (each field checked, never silently changed), with the Model
    panel's frames-per-request cap; the thinking switch is off as in CoM2 §5 unless the tab's
    "thinking off" box is unticked (then no switch is sent: the server's default)."""
    state = SessionSettings.from_state(settings)
    delta_max = number(delta, "Δmax seconds", default=30.0)
    if delta_max <= 0:
        raise UserError(f"Δmax seconds must be more than 0 (got {delta_max:g}); the paper uses 30.")
    return SearchSettings(k=whole(k, "K candidates", default=5, least=1),
                          m=whole(m, "M expansions", default=3, least=0), delta_max=delta_max,
                          max_frames=int(state.max_frames) or None,
                          thinking=False if thinking_off is not False else None)


def baseline_label(settings: dict | None) -> str:
    s = SessionSettings.from_state(settings)
    if s.backend == "baseline":
        return f"**{view.BASELINE_LABEL}** — pick a model in the Model panel for visual inspection."
    return f"Model: `{s.backend}`"


def settings_applied(tab: WindowSearchTab, res: WindowSearchResources, settings: dict | None) -> BaselineView:
    """The Model panel's Apply: the label under the stage names the backend now used."""
    return BaselineView(baseline_md=baseline_label(settings))


# -- opening the page, a movie and a query ----------------------------------------------------------
def open_page(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, chunk: Any,
              params: Mapping[str, str]) -> PageView:
    """A new page: the first movie and its first query, or what a deep link names
    (`?tab=window-search&movie=m01&qid=p0005_t&t=400`), with one line about any value not understood.
    While the tab's data is still being made, only that is said, and the page asks again."""
    note = preparing_note(SPEC.data)
    if note is not None:
        return PageView(poll=poll(True), message=note)
    queries = {q.qid: q.movie_id for q in tab.annotations.queries} if tab.annotations else {}
    movies = list(tab.annotations.movies) if tab.annotations else []
    req = links.read_link(params, movies, queries, tab.first_movie) if links.is_for_this_tab(params) \
        else links.LinkRequest(movie=tab.first_movie)
    if req.movie is None:
        return dataclasses.replace(_movie_view(tab, session, kind=PageView, movie_pick=gr.update(choices=[], value=None),
                                               poll=poll(False)), message=f"⚠ {tab.error}" if tab.error else "")
    opened = _opened(res, tab.movie_info(req.movie), chunk, session)
    t, problem = links.read_time(req.t, opened.movie.duration)
    opened.playhead = t or 0.0
    problems = req.problems + ([problem] if problem else [])
    page = _movie_view(tab, opened, req.qid, kind=PageView,
                       movie_pick=gr.update(choices=tab.movie_choices(), value=req.movie), poll=poll(False))
    return dataclasses.replace(page, message=" ".join([*problems, page.message]).strip())


def pick_movie(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, movie_id: str | None,
               chunk: Any) -> MovieView:
    if not movie_id or tab.annotations is None:
        return _movie_view(tab, session)
    return _movie_view(tab, _opened(res, tab.movie_info(movie_id), chunk, session))


def upload_movie(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, files: list | None,
                 chunk: Any) -> MovieView:
    if not files:
        return _movie_view(tab, session)
    paths = [Path(f if isinstance(f, str) else f.name) for f in files]
    vids = [p for p in paths if p.suffix.lower() in VIDEO_TYPES]
    subs = [p for p in paths if p.suffix.lower() in SUB_TYPES]
    if len(vids) != 1:
        raise UserError("Upload: choose exactly one video (.mp4, .mkv, .webm, .mov), optionally with one "
                        ".srt/.vtt subtitle file.")
    mem_dir = Path(tempfile.mkdtemp(prefix="ws-memory-"))
    res.folders.append(mem_dir)
    info = MovieInfo(vids[0].stem, str(vids[0]), str(subs[0]) if subs else None,
                     str(mem_dir / f"{vids[0].stem}.json"), memory_private=True, uploaded=True)
    try:
        opened = _opened(res, info, chunk, session)
    except UserError:
        raise UserError(f"Upload: {vids[0].name} could not be read as a video. Check that it plays, or "
                        "re-encode it (ffmpeg -i in -c:v libx264 -pix_fmt yuv420p out.mp4).") from None
    check_video_duration(vids[0], info.duration)
    return _movie_view(tab, opened)


def pick_query(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession,
               qid: str | None) -> QueryView:
    if not qid or tab.annotations is None:
        session.partner = None
        return QueryView(session=session, partner="")
    text, partner = _picked(tab, session, qid)
    if session.trace is None or session.trace.qid == qid:
        return QueryView(session=session, query=text, partner=partner, timeline=_timeline(session))
    session.trace, session.selected = None, None   # the old run's bars and checklist are another query's
    return QueryView(session=session, query=text, partner=partner, timeline=_timeline(session),
                     checklist=view.checklist_html(None, None), result="",
                     window_pick=gr.update(choices=[], value=None, visible=False), calls="")


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


def run(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, settings: dict | None,
        text: str | None, chunk: Any, k: Any, m: Any, delta: Any, method: str,
        thinking_off: bool | None = True) -> Iterator[RunView]:
    """Ground the query in the session's movie, yielding the views as the search goes; when it is
    done the playhead jumps to the window handed to the localizer."""
    if not session.has_video:
        raise UserError("Movie: pick a movie (or upload one) first.")
    text = (text or "").strip()
    if not text:
        raise UserError("Query: type a query or pick one from the annotation file.")
    search = search_settings(settings, k, m, delta, thinking_off)
    chunk_seconds = read_chunk(chunk)
    picked = session.picked
    gt = tuple(picked.interval) if picked is not None and picked.query == text else None
    qid = picked.qid if gt is not None else None
    if qid is None:
        session.partner = None
    backend = backend_for(settings)
    session.chunk_seconds = chunk_seconds
    movie = res.movie(session.movie, session.chunk_seconds)
    memory = memory_of(session.movie)
    embedder = resolve_embedder("minilm")
    res.fresh_stop()
    solvers = solvers_for(backend, search, embedder=embedder,
                          localizer_backend=_localizer_backend(settings, backend))

    def work(on_update: Callable[[SearchTrace], None]) -> SearchTrace:
        return ground_query(text, movie, backend, embedder=embedder, memory=memory, method=method,
                            settings=search, ground_truth=gt, qid=qid, stop=res.stop, on_update=on_update,
                            solvers=solvers)

    updates = _search_in_thread(work)
    session.trace, session.selected = None, None
    yield RunView(session=session, timeline=_timeline(session), checklist=view.checklist_html(None, None),
                  progress="Retrieving chunks…", result="", window_pick=gr.update(choices=[], value=None, visible=False),
                  cast=[], frames=[], calls="")
    for kind, payload in updates:
        yield _run_view(res, session, SearchTrace.from_dict(payload), search.k, done=kind == "done")


def _run_view(res: WindowSearchResources, session: WindowSearchSession, trace: SearchTrace, k: int, *,
              done: bool) -> RunView:
    session.trace = trace
    session.selected = sel = _default_rank(trace)
    if done and trace.qid is not None and trace.prediction is not None:
        session.ious[_run_key(trace.qid, trace)] = _iou(trace)
    cand = view.candidate(trace, sel) if done else None
    moved: dict[str, Any] = {}
    if cand is not None:  # done: the player, slider and timeline go to the window handed on
        session.playhead = float((trace.window or cand.span)[0])
        moved = {"frames": window_frames(res, session, cand.span), "video": _seek(session), "scrub": _scrub(session)}
    failed = done and not trace.stopped and trace.window is None and trace.errors
    # a model not reached is said once: on the message line when the search failed, else in the result
    missed = outcome.transport_errors(trace.errors) if failed else []
    why = outcome.step_not_reached(missed[0]) if missed else trace.errors[0] if failed else ""
    return RunView(session=session, timeline=_timeline(session, seek=cand is not None),
                   checklist=pair_view.checklist(trace, sel), progress=view.progress_text(trace, k, done),
                   result=_result(session, trace, reason_shown=bool(missed)) if done else "",
                   window_pick=_window_pick(trace, sel),
                   cast=_cast_gallery(trace), calls=pair_view.calls_html(trace), **moved,
                   message=f"⚠ The search failed: {html.escape(why, quote=False)}" if failed else "")


def stop(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession | None = None) -> None:
    res.ask_stop()


# -- one playhead: timeline clicks, the window radio, the slider, the presentation keys ------------
def _at_playhead(res: WindowSearchResources, session: WindowSearchSession, rank: int | None, *,
                 seek: bool = True) -> PlayheadView:
    """All four views at session.playhead, showing window `rank` (None: the chunk under the
    playhead, with its "not inspected" note when no Inspect call saw it). `seek=False`: the player
    is already there (it is playing), so it is left alone, and so are the frames of a window
    still shown."""
    trace = session.trace
    same = rank is not None and rank == session.selected
    session.selected = rank
    cand = view.candidate(trace, rank) if trace is not None and rank is not None else None
    changed: dict[str, Any] = {"video": _seek(session)} if seek else {}
    if cand is not None:
        checklist = pair_view.checklist(trace, rank)
        if seek or not same:
            changed["frames"] = window_frames(res, session, cand.span)
    else:
        i, s, e = view.chunk_at(session.playhead, session.chunk_seconds, session.movie.duration)
        checklist = view.not_inspected_html(trace, i, s, e)
        changed["frames"] = []
    return PlayheadView(session=session, timeline=_timeline(session, seek=seek), checklist=checklist,
                        scrub=_scrub(session), window_pick=_window_pick(trace, rank), **changed)


def timeline_click(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession,
                   data: Mapping[str, Any] | None) -> PlayheadView:
    """A click on a chunk (or the n / p keys): {rank: ranked chunk or None, start: its start}.
    Clicking the window already shown seeks the player back to its start. {played: t}: the
    playing player left the shown window (playback.PLAYBACK_JS)."""
    if session.movie is None:
        raise UserError("Movie: pick a movie first.")
    data = data or {}
    if data.get("played") is not None:
        return played(tab, res, session, data["played"])
    rank = data.get("rank")
    cand = view.candidate(session.trace, int(rank)) if session.trace is not None and rank is not None else None
    if cand is not None:
        session.playhead = float(cand.span[0])
        return _at_playhead(res, session, cand.rank)
    session.playhead = max(0.0, min(float(data.get("start") or 0.0), session.movie.duration))
    return _at_playhead(res, session, None)


def played(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, t: Any) -> PlayheadView:
    """The player reached `t` by itself (playing, or the visitor seeked in it): the timeline,
    the slider and the checklist follow it; the player is not moved."""
    if session.movie is None:
        raise UserError("Movie: pick a movie first.")
    session.playhead = max(0.0, min(number(t, "player time", default=0.0), session.movie.duration))
    rank = view.candidate_at(session.trace, session.playhead) if session.trace is not None else None
    return _at_playhead(res, session, rank, seek=False)


def select_window(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession,
                  choice: str | None) -> PlayheadView:
    if session.movie is None or session.trace is None or not choice:
        raise UserError("Window: run a query (or load a trace) first.")
    return timeline_click(tab, res, session, {"rank": int(str(choice).lstrip("#"))})


def scrubbed(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, t: Any) -> PlayheadView:
    if session.movie is None:
        raise UserError("Movie: pick a movie first.")
    session.playhead = max(0.0, min(number(t, "scrub", default=0.0), session.movie.duration))
    rank = view.candidate_at(session.trace, session.playhead) if session.trace is not None else None
    return _at_playhead(res, session, rank)


def copy_link(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, t: Any = None) -> LinkView:
    """The query string of a link to this view (the page adds its own address in the browser):
    the movie, the picked query and the player's time (`t` from the page, else the playhead)."""
    if session.movie is None:
        raise UserError("Movie: pick a movie first; then copy its link.")
    try:
        now = float(t) if t is not None else session.playhead
    except (TypeError, ValueError):
        now = session.playhead
    return LinkView(link=gr.update(value=view_address(tab, session, now, keep_zero=True), visible=True))


def view_address(tab: WindowSearchTab, session: WindowSearchSession, now: float | None = None, *,
                 keep_zero: bool = False) -> str:
    """The query string of a link to the view `session` shows (the page's address follows it):
    the movie and the picked query when they are in the annotation file, the playhead (`now`,
    else the session's; t=0 left out unless `keep_zero`)."""
    if session.movie is None:
        return links.view_link(tab=links.TAB)
    now = session.playhead if now is None else now
    annotations = tab.annotations if tab is not None else None   # None: the tab's data not read
    annotated = not session.movie.uploaded and session.movie.movie_id in (annotations.movies if annotations else {})
    qid = session.picked.qid if session.picked is not None and annotated else None
    t = int(round(max(0.0, now)))
    return links.view_link(tab=links.TAB, movie=session.movie.movie_id if annotated else None, qid=qid,
                           t=t if t or keep_zero else None)


# -- saved traces -----------------------------------------------------------------------------------
def export(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession) -> ExportView:
    trace = session.trace
    if trace is None:
        raise UserError("Export trace: nothing to export yet; run a query first.")
    out = Path(tempfile.mkdtemp(prefix="ws-trace-")) / f"trace-{trace.qid or 'query'}.json"
    movie = session.movie.exported() if session.movie else {}
    atomic_write_text(out, json.dumps({"trace": trace.to_dict(), "movie": movie,
                                       "chunk_seconds": session.chunk_seconds}, indent=1))
    return ExportView(export_file=gr.update(value=str(out), visible=True))


def _not_a_trace(name: str, why: str) -> DataFormatError:
    return DataFormatError(f"Load trace: {name} is not a saved window-search trace ({why}). Load a file "
                           "made by Export trace or by `app.py run grounding --traces`.")


def _read_trace_file(path: Path, want_qid: str | None) -> tuple[dict, SearchTrace]:
    """(the saved data, its trace) from an exported .json or a `run grounding --traces` .jsonl line."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() == ".jsonl":  # a `run grounding --traces` file: the picked query's line
            lines = [json.loads(x) for x in text.splitlines() if x.strip()]
            data = next((x for x in lines if isinstance(x, dict) and x.get("qid") == want_qid),
                        lines[0] if lines else {})
        else:
            data = json.loads(text)
    except UnicodeDecodeError:
        raise _not_a_trace(path.name, "it is not a text file") from None
    except json.JSONDecodeError as exc:
        raise _not_a_trace(path.name, f"not JSON: line {exc.lineno}, column {exc.colno}") from None
    body = data.get("trace", data) if isinstance(data, dict) else None
    if not isinstance(body, dict) or not isinstance(body.get("query"), str) or "candidates" not in body:
        raise _not_a_trace(path.name, "it has no 'query' and 'candidates'")
    try:
        return data, SearchTrace.from_dict(body)
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        raise _not_a_trace(path.name, f"a part of it is malformed: {type(exc).__name__}") from None


def load(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, file: Any) -> LoadView:
    if not file:
        raise UserError("Load trace: choose a trace file (.json or .jsonl).")
    path = Path(file if isinstance(file, str) else file.name)
    data, trace = _read_trace_file(path, session.picked.qid if session.picked else None)
    mv = data.get("movie") if isinstance(data.get("movie"), dict) else None
    if mv and mv.get("video") and Path(mv["video"]).is_file():
        session.movie = MovieInfo(mv.get("movie_id", "?"), mv["video"], mv.get("subtitles"),
                                  session.movie.memory if session.movie else "", float(mv.get("duration", 0.0)),
                                  session.movie.memory_private if session.movie else False)
    elif session.movie is None:
        dur = max([c.end for c in trace.chunks] + [trace.window[1] if trace.window else 0] + [1.0])
        session.movie = MovieInfo("?", None, duration=float(mv.get("duration", dur) if mv else dur))
    session.chunk_seconds = float(data.get("chunk_seconds", session.chunk_seconds))
    session.trace = trace
    query_pick, partner = _trace_query(tab, session, trace)
    sel = trace.accepted_rank or trace.selected_rank or (trace.candidates[0].rank if trace.candidates else None)
    session.selected = sel
    cand = view.candidate(trace, sel)
    session.playhead = float((trace.window or (cand.span if cand else (0.0, 0.0)))[0])
    vid = session.movie.video
    shown, unplayable = player_value(vid)
    player = {"video": gr.update(value=shown, playback_position=session.playhead)} if vid else {}
    return LoadView(session=session, timeline=_timeline(session, seek=True), checklist=pair_view.checklist(trace, sel),
                    result=_result(session, trace), window_pick=_window_pick(trace, sel), cast=_cast_gallery(trace),
                    query=trace.query, scrub=_scrub(session), query_pick=query_pick, partner=partner,
                    calls=pair_view.calls_html(trace), **player, message=unplayable)


def _trace_query(tab: WindowSearchTab, session: WindowSearchSession, trace: SearchTrace) -> tuple[Any, str]:
    """(query dropdown, partner line) for a loaded trace: its own query when the annotation file
    has it (header, ground truth and partner then are that query's), else no picked query."""
    known = tab.annotations is not None and trace.qid and trace.qid in {q.qid for q in tab.annotations.queries}
    if known:
        _, partner = _picked(tab, session, trace.qid)
        movie = tab.annotations.query(trace.qid).movie_id
        return gr.update(choices=view.query_choices(tab.queries_of(movie)), value=trace.qid), partner
    session.picked, session.partner = None, None
    return gr.update(value=None), ("Loaded a trace of a query that is not in this annotation file: "
                                   "no ground truth or partner is shown.")
