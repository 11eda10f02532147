"""The Window search tab: run Agentic Window Search on a movie and browse every window's checklist.

Layout follows design/ui.md. Handlers parse inputs, call pipeline/memory/metrics, and format with
view.py. Per-session data lives in a gr.State dict; the Stop events live in a dict keyed by the
session hash, removed on unload. Movies (decoded-frame caches) are shared by path: not user data.
"""
from __future__ import annotations

import json
import queue
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

import gradio as gr

from components.common.errors import UserError
from components.common.ui import TabContext, user_errors
from components.window_search import view
from components.window_search.types import SearchTrace

_STOPS: dict[str, threading.Event] = {}
_MOVIES: "OrderedDict[tuple, object]" = OrderedDict()
_LOCK = threading.Lock()
VIDEO_TYPES = (".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v")
SUB_TYPES = (".srt", ".vtt")


# ----------------------------------------------------------------------------- helpers

def _stop_event(request: gr.Request | None) -> threading.Event:
    key = getattr(request, "session_hash", None) or "default"
    with _LOCK:
        return _STOPS.setdefault(key, threading.Event())


def _forget_session(request: gr.Request) -> None:
    with _LOCK:
        _STOPS.pop(getattr(request, "session_hash", None) or "default", None)


def _annotations(data_dir: Path):
    from components.window_search.annotations import load_annotations

    path = Path(data_dir) / "grounding" / "annotations.json"
    if not path.is_file():
        return None, f"No annotation file at {path}: generate the examples (`python -m examples.generate`) or upload a movie."
    try:
        return load_annotations(path), ""
    except UserError as exc:
        return None, str(exc)


def _movie(info: dict, chunk_seconds: float):
    from components.window_search.movie import Movie

    key = (info["video"], info.get("subtitles"), float(chunk_seconds))
    with _LOCK:
        if key in _MOVIES:
            _MOVIES.move_to_end(key)
            return _MOVIES[key]
    movie = Movie(info["video"], info.get("subtitles"), movie_id=info["movie_id"], chunk_seconds=chunk_seconds)
    with _LOCK:
        _MOVIES[key] = movie
        while len(_MOVIES) > 6:
            _MOVIES.popitem(last=False)
    return movie


def _player_value(video: str | None) -> str | None:
    """The path for gr.Video, or None when gradio would re-encode it (not browser-playable): a
    two-hour re-encode must never block the tab. The search itself reads any format."""
    if not video:
        return None
    from gradio import processing_utils

    try:
        if processing_utils.ffmpeg_installed() and not processing_utils.video_is_playable(video):
            gr.Warning(f"{Path(video).name} is not browser-playable (container/codec), so the player stays "
                       "empty; the search still works. To watch it, re-encode: ffmpeg -i in -c:v libx264 "
                       "-pix_fmt yuv420p -c:a aac out.mp4")
            return None
    except Exception:  # noqa: BLE001 - probing failed: let the player try the file as it is
        pass
    return video


def _memory(info: dict):
    from components.window_search.memory import load_or_empty

    return load_or_empty(info["memory"], info["movie_id"])


def _trace(state: dict) -> SearchTrace | None:
    d = (state or {}).get("trace")
    return SearchTrace.from_dict(d) if d else None


def _duration(state: dict) -> float:
    return float((state or {}).get("movie", {}).get("duration", 0.0))


def _timeline(state: dict, playhead: float | None = None) -> str:
    movie = (state or {}).get("movie")
    if not movie:
        return view.timeline_html(None, 0.0)
    cs = float(state.get("chunk_seconds", 180.0))
    dur = float(movie["duration"])
    n = max(1, int(-(-dur // cs)))
    return view.timeline_html(_trace(state), dur, n_chunks=n, chunk_seconds=cs, playhead=playhead,
                              selected=state.get("selected"))


def _cast_gallery(trace: SearchTrace | None) -> list:
    if trace is None:
        return []
    return [(c.image, f"{c.name} ({c.ref_id})") for c in trace.cast if c.image and Path(c.image).is_file()]


def _window_choices(trace: SearchTrace | None) -> list[str]:
    return [f"#{c.rank}" for c in trace.candidates] if trace else []


def _iou(trace: SearchTrace) -> float | None:
    from components.window_search.metrics import temporal_iou

    if trace.ground_truth is None:
        return None
    return temporal_iou(trace.prediction, trace.ground_truth)


def _result(state: dict, trace: SearchTrace | None) -> str:
    if trace is None:
        return ""
    partner = None
    pq = state.get("partner")
    if pq and trace.qid:
        partner = (pq["qid"], pq["query"], state.get("ious", {}).get(pq["qid"]))
    return view.result_markdown(trace, iou=_iou(trace), partner=partner)


# ----------------------------------------------------------------------------- the tab

def build_tab(ctx: TabContext) -> None:
    ann, ann_error = _annotations(ctx.data_dir)
    movie_choices = [(f"{m.movie_id} · {m.extra.get('title', m.video.name)}", m.movie_id)
                     for m in (ann.movies.values() if ann else [])]
    first_movie = movie_choices[0][1] if movie_choices else None
    first_queries = [q for q in (ann.queries if ann else []) if q.movie_id == first_movie]

    gr.Markdown("Find the moment a query describes in a full movie, when a near-identical moment "
                "happens elsewhere: the top-K retrieved chunks are checked statement by statement, "
                "expanded past chunk edges when evidence is cut off, and the accepted window goes to "
                "the localizer." + (f"\n\n⚠ {ann_error}" if ann_error else ""), elem_id="ws-intro")
    state = gr.State({})
    with gr.Row():
        movie_pick = gr.Dropdown(movie_choices, value=first_movie, label="Movie", elem_id="ws-movie-pick", scale=3)
        upload = gr.File(label="…or upload a video (+ .srt/.vtt)", file_count="multiple",
                         file_types=list(VIDEO_TYPES + SUB_TYPES), elem_id="ws-upload", scale=2, height=90)
    with gr.Row():
        chunk_s = gr.Number(180, label="chunk seconds", minimum=10, elem_id="ws-chunk", scale=1)
        k_in = gr.Number(5, label="K candidates", minimum=1, precision=0, elem_id="ws-k", scale=1)
        m_in = gr.Number(3, label="M expansions", minimum=0, precision=0, elem_id="ws-m", scale=1)
        delta_in = gr.Number(30, label="Δmax seconds", minimum=1, elem_id="ws-delta", scale=1)
        method = gr.Radio([("Agentic Window Search", "aws"), ("Movie RAG (top-1)", "rag"),
                           ("oracle chunk", "oracle-chunk")], value="aws", label="window selection",
                          elem_id="ws-method", scale=3)
    with gr.Row():
        query_pick = gr.Dropdown(view.query_choices(first_queries), value=None,
                                 label="Query from the annotation file (qid · contrast · query)",
                                 elem_id="ws-query-pick", scale=3)
        query = gr.Textbox(label="…or type a query", placeholder="Lloyd and Harry walk on a snowy street at night.",
                           elem_id="ws-query", scale=3)
    partner_md = gr.Markdown("", elem_id="ws-partner")
    with gr.Row():
        run_btn = gr.Button("Run", variant="primary", elem_id="ws-run")
        stop_btn = gr.Button("Stop", variant="stop", elem_id="ws-stop")
        load_trace = gr.UploadButton("Load trace", file_types=[".json", ".jsonl"], elem_id="ws-load-trace")
        export_btn = gr.Button("Export trace", elem_id="ws-export")
    baseline_md = gr.Markdown(_baseline_label(ctx.settings.value), elem_id="ws-baseline-label")
    progress_md = gr.Markdown("", elem_id="ws-progress")
    with gr.Row():
        with gr.Column(scale=3):
            video = gr.Video(label="Movie", elem_id="ws-movie", interactive=False, height=320)
        with gr.Column(scale=2):
            checklist = gr.HTML(view.checklist_html(None, None), elem_id="ws-checklist", js_on_load=None)
            cast = gr.Gallery(label="Cast references used", elem_id="ws-cast", columns=4, height=170,
                              allow_preview=False)
    timeline = gr.HTML(view.timeline_html(None, 0.0), elem_id="ws-timeline", js_on_load=_TIMELINE_JS)
    window_pick = gr.Radio([], label="Window", elem_id="ws-window-pick")
    scrub = gr.Slider(0, 1, value=0, step=1, label="scrub (seconds)", elem_id="ws-scrub")
    result_md = gr.Markdown("", elem_id="ws-result")
    export_file = gr.File(label="trace JSON", elem_id="ws-export-file", visible=False)

    with gr.Accordion("Character memory (names, reference frames)", open=False, elem_id="ws-memory"):
        memory_md = gr.Markdown("", elem_id="ws-memory-names")
        refs = gr.Gallery(label="Reference frames (select one to remove it)", elem_id="ws-memory-refs",
                          columns=6, height=150, allow_preview=False)
        remove_btn = gr.Button("Remove selected reference", elem_id="ws-memory-remove", size="sm")
        frames_gal = gr.Gallery(label="Frames of the selected window (select one, pick a character, add)",
                                elem_id="ws-window-frames", columns=8, height=150, allow_preview=False)
        with gr.Row():
            char_pick = gr.Dropdown([], label="character", elem_id="ws-memory-char")
            add_btn = gr.Button("Add selected frame as reference", elem_id="ws-memory-add", size="sm")
            names_btn = gr.Button("Find names in the subtitles", elem_id="ws-memory-build", size="sm")
            vlm_btn = gr.Button("Build references with the session model", elem_id="ws-memory-vlm", size="sm")

    with gr.Accordion("Benchmark (all queries of the annotation file)", open=False, elem_id="ws-bench"):
        with gr.Row():
            bench_run = gr.Button("Run all queries", elem_id="ws-bench-run")
            bench_stop = gr.Button("Stop", elem_id="ws-bench-stop", variant="stop")
        bench_progress = gr.Markdown("", elem_id="ws-bench-progress")
        bench_table = gr.Dataframe(headers=["metric", "value"], elem_id="ws-bench-metrics", interactive=False)
        bench_file = gr.File(label="predictions JSONL", elem_id="ws-bench-export")

    # -- handlers --------------------------------------------------------------------------------
    def movie_outputs(st: dict):
        mv = st.get("movie")
        dur = float(mv["duration"]) if mv else 1.0
        qs = [q for q in (ann.queries if ann else []) if mv and q.movie_id == mv["movie_id"]]
        video_value = _player_value(mv["video"]) if mv else None
        return (st, gr.update(value=video_value, playback_position=0,
                              subtitles=mv.get("subtitles") if mv else None),
                _timeline(st), gr.update(choices=view.query_choices(qs), value=None),
                gr.update(maximum=max(1, int(dur)), value=0), view.checklist_html(None, None), "",
                gr.update(choices=[], value=None), *memory_outputs(st))

    movie_outs = [state, video, timeline, query_pick, scrub, checklist, result_md, window_pick,
                  memory_md, refs, char_pick]

    @user_errors
    def pick_movie(movie_id, chunk, st):
        if not movie_id or ann is None:
            return movie_outputs(st or {})
        entry = ann.movie(movie_id)
        from components.window_search.memory import memory_path
        info = {"movie_id": movie_id, "video": str(entry.video),
                "subtitles": str(entry.subtitles) if entry.subtitles else None,
                "memory": str(memory_path(Path(ann.path).parent, movie_id))}
        movie = _movie(info, float(chunk or 180))
        info["duration"] = movie.duration
        return movie_outputs({"movie": info, "chunk_seconds": float(chunk or 180), "ious": (st or {}).get("ious", {})})

    @user_errors
    def upload_movie(files, chunk, st):
        if not files:
            return movie_outputs(st or {})
        paths = [Path(f if isinstance(f, str) else f.name) for f in files]
        vids = [p for p in paths if p.suffix.lower() in VIDEO_TYPES]
        subs = [p for p in paths if p.suffix.lower() in SUB_TYPES]
        if len(vids) != 1:
            raise UserError("Upload exactly one video (.mp4, .mkv, .webm, .mov), optionally with one .srt/.vtt file.")
        mem_dir = Path(tempfile.mkdtemp(prefix="ws-memory-"))
        info = {"movie_id": vids[0].stem, "video": str(vids[0]), "subtitles": str(subs[0]) if subs else None,
                "memory": str(mem_dir / f"{vids[0].stem}.json")}
        from components.common.limits import check_video_duration

        movie = _movie(info, float(chunk or 180))
        check_video_duration(vids[0], movie.duration)
        info["duration"] = movie.duration
        return movie_outputs({"movie": info, "chunk_seconds": float(chunk or 180), "ious": (st or {}).get("ious", {})})

    movie_pick.change(pick_movie, [movie_pick, chunk_s, state], movie_outs)
    upload.upload(upload_movie, [upload, chunk_s, state], movie_outs)

    def pick_query(qid, st):
        st = dict(st or {})
        if not qid or ann is None:
            st.pop("partner", None)
            return st, gr.update(), ""
        q = ann.query(qid)
        p = ann.query(q.partner_qid)
        st["picked"] = {"qid": q.qid, "query": q.query, "interval": list(q.interval)}
        st["partner"] = {"qid": p.qid, "query": p.query}
        md = (f"**contrast attribute:** {q.contrast_attribute} · **ground truth** "
              f"[{q.interval[0]:.0f} s, {q.interval[1]:.0f} s] · **confusable partner** {p.qid}: “{p.query}”")
        return st, q.query, md

    query_pick.change(pick_query, [query_pick, state], [state, query, partner_md])

    @user_errors
    def run(st, settings, text, chunk, k, m, delta, meth, request: gr.Request):
        from components.settings.session import backend_for
        from components.window_search.pipeline import SearchSettings, ground_query

        st = dict(st or {})
        if not st.get("movie") or not st["movie"].get("video"):
            raise UserError("Pick a movie (or upload one) first.")
        text = (text or "").strip()
        if not text:
            raise UserError("Type a query or pick one from the annotation file.")
        picked = st.get("picked") or {}
        gt = tuple(picked["interval"]) if picked.get("query") == text else None
        qid = picked.get("qid") if gt is not None else None
        if qid is None:
            st.pop("partner", None)
        backend = backend_for(settings)
        search = SearchSettings(k=int(k or 5), m=int(m or 0), delta_max=float(delta or 30))
        st["chunk_seconds"] = float(chunk or 180)
        movie = _movie(st["movie"], st["chunk_seconds"])
        memory = _memory(st["movie"])
        from backends.registry import resolve_embedder
        embedder = resolve_embedder("minilm")
        stop = _stop_event(request)
        stop.clear()
        updates: queue.Queue = queue.Queue()

        def work():
            try:
                tr = ground_query(text, movie, backend, embedder=embedder, memory=memory, method=meth,
                                  settings=search, ground_truth=gt, qid=qid, stop=stop,
                                  on_update=lambda t: updates.put(("update", t.to_dict())))
                updates.put(("done", tr.to_dict()))
            except Exception as exc:  # noqa: BLE001 - reported to the user below
                updates.put(("error", exc))

        threading.Thread(target=work, daemon=True).start()
        st["trace"], st["selected"] = None, None
        yield (st, _timeline(st), view.checklist_html(None, None), "Retrieving chunks…", "",
               gr.update(choices=[], value=None), [], [])
        while True:
            kind, payload = updates.get()
            if kind == "error":
                raise payload
            trace = SearchTrace.from_dict(payload)
            st["trace"] = payload
            last = trace.candidates[-1].rank if trace.candidates else None
            sel = trace.accepted_rank or trace.selected_rank or last
            st["selected"] = sel
            done = kind == "done"
            if done and qid is not None and trace.prediction is not None:
                st.setdefault("ious", {})[qid] = _iou(trace)
            cand = view.candidate(trace, sel) if done else None
            frames = _window_frames(st, cand.final_window or (cand.chunk.start, cand.chunk.end)) \
                if cand is not None else gr.update()
            yield (st, _timeline(st), view.checklist_html(trace, sel),
                   view.progress_text(trace, search.k, done), _result(st, trace) if done else "",
                   gr.update(choices=_window_choices(trace), value=f"#{sel}" if sel else None),
                   _cast_gallery(trace), frames)
            if done:
                return

    run_btn.click(run, [state, ctx.settings, query, chunk_s, k_in, m_in, delta_in, method],
                  [state, timeline, checklist, progress_md, result_md, window_pick, cast, frames_gal],
                  concurrency_limit=4)
    def stop_now(request: gr.Request):
        _stop_event(request).set()

    stop_btn.click(stop_now, None, None, queue=False)
    bench_stop.click(stop_now, None, None, queue=False)

    def select_window(choice, st):
        trace = _trace(st)
        if not choice or trace is None:
            return st, gr.update(), gr.update(), gr.update(), []
        st = dict(st)
        rank = int(str(choice).lstrip("#"))
        st["selected"] = rank
        cand = view.candidate(trace, rank)
        w = (cand.final_window or (cand.chunk.start, cand.chunk.end)) if cand else (0, 0)
        return (st, _timeline(st, playhead=w[0]), view.checklist_html(trace, rank),
                gr.update(playback_position=float(w[0])), _window_frames(st, w))

    # .input: user clicks (radio or timeline block) only, so programmatic updates do not re-seek
    window_pick.input(select_window, [window_pick, state], [state, timeline, checklist, video, frames_gal])

    def scrubbed(t, st):
        trace = _trace(st)
        st = dict(st or {})
        rank = view.candidate_at(trace, float(t)) if trace else None
        if rank is not None:
            st["selected"] = rank
        return (st, _timeline(st, playhead=float(t)), view.checklist_html(trace, rank) if trace else gr.update(),
                gr.update(playback_position=float(t)), gr.update(value=f"#{rank}") if rank else gr.update())

    scrub.release(scrubbed, [scrub, state], [state, timeline, checklist, video, window_pick])

    @user_errors
    def export(st):
        trace = _trace(st)
        if trace is None:
            raise UserError("Nothing to export yet: run a query first.")
        out = Path(tempfile.mkdtemp(prefix="ws-trace-")) / f"trace-{trace.qid or 'query'}.json"
        mv = {k: v for k, v in st.get("movie", {}).items() if k in ("movie_id", "video", "subtitles", "duration")}
        out.write_text(json.dumps({"trace": trace.to_dict(), "movie": mv,
                                   "chunk_seconds": st.get("chunk_seconds", 180.0)}, indent=1))
        return gr.update(value=str(out), visible=True)

    export_btn.click(export, [state], [export_file])

    @user_errors
    def load(file, st):
        from components.common.errors import DataFormatError

        path = Path(file if isinstance(file, str) else file.name)
        try:
            text = path.read_text(encoding="utf-8")
            if path.suffix.lower() == ".jsonl":  # a `run grounding --traces` file: the picked query's line
                lines = [json.loads(x) for x in text.splitlines() if x.strip()]
                want = (st or {}).get("picked", {}).get("qid")
                data = next((x for x in lines if x.get("qid") == want), lines[0] if lines else {})
            else:
                data = json.loads(text)
            trace = SearchTrace.from_dict(data.get("trace", data))
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError, KeyError, AttributeError, ValueError) as exc:
            raise DataFormatError(f"{path.name} is not a saved window-search trace ({exc}).") from None
        st = dict(st or {})
        mv = data.get("movie") if isinstance(data, dict) else None
        if mv and mv.get("video") and Path(mv["video"]).is_file():
            st["movie"] = {**mv, "memory": st.get("movie", {}).get("memory", "")}
        elif not st.get("movie"):
            dur = max([c.end for c in trace.chunks] + [trace.window[1] if trace.window else 0] + [1.0])
            st["movie"] = {"movie_id": "?", "video": None, "duration": mv.get("duration", dur) if mv else dur}
        st["chunk_seconds"] = float(data.get("chunk_seconds", st.get("chunk_seconds", 180.0)))
        st["trace"] = trace.to_dict()
        sel = trace.accepted_rank or trace.selected_rank or (trace.candidates[0].rank if trace.candidates else None)
        st["selected"] = sel
        vid = st["movie"].get("video")
        return (st, gr.update(value=_player_value(vid)) if vid else gr.update(), _timeline(st),
                view.checklist_html(trace, sel),
                _result(st, trace), gr.update(choices=_window_choices(trace), value=f"#{sel}" if sel else None),
                _cast_gallery(trace), trace.query, gr.update(maximum=max(1, int(_duration(st)))))

    load_trace.upload(load, [load_trace, state],
                      [state, video, timeline, checklist, result_md, window_pick, cast, query, scrub])

    # -- character memory ------------------------------------------------------------------------
    def _window_frames(st, w):
        mv = st.get("movie") or {}
        if not mv.get("video"):
            return []
        movie = _movie(mv, float(st.get("chunk_seconds", 180.0)))
        frames = movie.frames(w[0], w[1], fps=1.0, cap=24)
        return [(f.image, f"{f.time:.0f} s") for f in frames]

    def memory_outputs(st):
        mv = (st or {}).get("movie")
        if not mv or not mv.get("memory"):
            return "No movie.", [], gr.update(choices=[], value=None)
        mem = _memory(mv)
        if not mem.characters:
            md = "No characters yet: find names in the subtitles, or add frames after a run."
        else:
            md = "\n".join(f"- **{c.char_id} {c.display_name}** — names: {', '.join(c.names)} · "
                           f"{len(c.references)} reference(s)" for c in mem.characters)
        gallery = [(r.image, f"{c.display_name} · {r.ref_id} · {view.fmt_t(r.time)}")
                   for c in mem.characters for r in c.references if Path(r.image).is_file()]
        choices = [(f"{c.char_id} {c.display_name}", c.char_id) for c in mem.characters]
        return md, gallery, gr.update(choices=choices, value=choices[0][1] if choices else None)

    def ref_selected(st, evt: gr.SelectData):
        st = dict(st or {})
        mv = st.get("movie")
        mem = _memory(mv) if mv else None
        refs_all = [r for c in mem.characters for r in c.references if Path(r.image).is_file()] if mem else []
        if evt is not None and 0 <= evt.index < len(refs_all):
            st["sel_ref"] = refs_all[evt.index].ref_id
        return st

    refs.select(ref_selected, [state], [state])

    @user_errors
    def remove_ref(st):
        if not (st or {}).get("sel_ref"):
            raise UserError("Select a reference frame first.")
        mem = _memory(st["movie"])
        mem.remove_reference(st["sel_ref"])
        st = dict(st)
        st.pop("sel_ref", None)
        return (st, *memory_outputs(st))

    remove_btn.click(remove_ref, [state], [state, memory_md, refs, char_pick])

    def frame_selected(st, evt: gr.SelectData):
        st = dict(st or {})
        trace = _trace(st)
        cand = view.candidate(trace, st.get("selected")) if trace else None
        if cand is not None and evt is not None:
            w = cand.final_window or (cand.chunk.start, cand.chunk.end)
            frames = _movie(st["movie"], float(st.get("chunk_seconds", 180.0))).frames(w[0], w[1], fps=1.0, cap=24)
            if 0 <= evt.index < len(frames):
                st["sel_frame"] = frames[evt.index].time
        return st

    frames_gal.select(frame_selected, [state], [state])

    @user_errors
    def add_ref(st, char_id):
        st = dict(st or {})
        if st.get("sel_frame") is None:
            raise UserError("Select a frame of the current window first (run a query and pick a window).")
        if not char_id:
            raise UserError("Pick the character this frame shows (or find names in the subtitles first).")
        movie = _movie(st["movie"], float(st.get("chunk_seconds", 180.0)))
        t = float(st["sel_frame"])
        frames = movie.frames(t, t + 1.0, fps=1.0, cap=1)
        if not frames:
            raise UserError(f"No frame at {t:.0f} s.")
        mem = _memory(st["movie"])
        mem.add_reference(char_id, frames[0].image, time=frames[0].time)
        return (st, *memory_outputs(st))

    add_btn.click(add_ref, [state, char_pick], [state, memory_md, refs, char_pick])

    @user_errors
    def find_names(st):
        from components.window_search.memory import build_names_only

        st = dict(st or {})
        if not st.get("movie"):
            raise UserError("Pick a movie first.")
        movie = _movie(st["movie"], float(st.get("chunk_seconds", 180.0)))
        mem = _memory(st["movie"])
        found = build_names_only(mem.movie_id, movie.all_cues)
        known = {n.lower() for c in mem.characters for n in c.names}
        added = 0
        for c in found.characters:
            if not any(n.lower() in known for n in c.names):
                mem.add_character(c.display_name, c.names)
                added += 1
        if added == 0 and mem.path is not None and not mem.path.exists():
            mem.save()
        gr.Info(f"{added} new name(s) found in the subtitles.")
        return (st, *memory_outputs(st))

    names_btn.click(find_names, [state], [state, memory_md, refs, char_pick])

    @user_errors
    def build_refs(st, settings, progress=gr.Progress()):
        from components.settings.session import backend_for
        from components.window_search.memory import build_with_vlm

        st = dict(st or {})
        if not st.get("movie") or not st["movie"].get("video"):
            raise UserError("Pick a movie first.")
        backend = backend_for(settings)
        if backend.is_baseline:
            raise UserError("The baseline has no vision model: choose a model in the Model panel, or use "
                            "'Find names in the subtitles' and add frames by hand.")
        movie = _movie(st["movie"], float(st.get("chunk_seconds", 180.0)))
        progress(0, desc="reference clips…")
        built, stats = build_with_vlm(movie, backend, Path(tempfile.mkdtemp(prefix="ws-vlm-mem-")) / "m.json",
                                      progress=lambda name, s: progress(None, desc=f"{name}: {s['clips']} clips"))
        mem = _memory(st["movie"])
        known = {n.lower() for c in mem.characters for n in c.names}
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
        return (st, *memory_outputs(st))

    vlm_btn.click(build_refs, [state, ctx.settings], [state, memory_md, refs, char_pick])

    # -- benchmark -------------------------------------------------------------------------------
    @user_errors
    def bench(st, settings, chunk, k, m, delta, meth, request: gr.Request):
        from backends.registry import resolve_embedder
        from components.settings.session import backend_for
        from components.window_search.annotations import Prediction, valid_interval
        from components.window_search.metrics import evaluate
        from components.window_search.pipeline import SearchSettings, ground_query, prediction_record

        if ann is None:
            raise UserError(ann_error or "No annotation file.")
        backend = backend_for(settings)
        search = SearchSettings(k=int(k or 5), m=int(m or 0), delta_max=float(delta or 30))
        embedder = resolve_embedder("minilm")
        stop = _stop_event(request)
        stop.clear()
        records: list[dict] = []
        out = Path(tempfile.mkdtemp(prefix="ws-bench-")) / "predictions.jsonl"
        queries = ann.queries
        label = f"{backend.backend_id}" + (f" — {view.BASELINE_LABEL}" if backend.is_baseline else "")
        for i, q in enumerate(queries, 1):
            if stop.is_set():
                break
            entry = ann.movie(q.movie_id)
            from components.window_search.memory import memory_path
            info = {"movie_id": q.movie_id, "video": str(entry.video),
                    "subtitles": str(entry.subtitles) if entry.subtitles else None,
                    "memory": str(memory_path(Path(ann.path).parent, q.movie_id))}
            movie = _movie(info, float(chunk or 180))
            trace = ground_query(q.query, movie, backend, embedder=embedder, memory=_memory(info), method=meth,
                                 settings=search, ground_truth=q.interval, qid=q.qid, stop=stop)
            if trace.stopped:
                break
            records.append(prediction_record(trace))
            preds = {r["qid"]: Prediction(r["qid"], valid_interval(r["interval"]), valid_interval(r.get("window")))
                     for r in records}
            metrics = evaluate(ann, preds)
            out.write_text("".join(json.dumps(r) + "\n" for r in records))
            yield (f"{label}: {i} of {len(queries)} queries (missing ones count as failures)",
                   view.metrics_rows(metrics), str(out))
        yield (f"{label}: {'stopped after' if stop.is_set() else 'done,'} {len(records)} of {len(queries)} queries",
               gr.update(), str(out) if records else None)

    bench_run.click(bench, [state, ctx.settings, chunk_s, k_in, m_in, delta_in, method],
                    [bench_progress, bench_table, bench_file], concurrency_limit=2)

    ctx.settings.change(_baseline_label, [ctx.settings], [baseline_md])
    if ctx.demo is not None:
        ctx.demo.unload(_forget_session)
        if first_movie is not None:  # open the first example movie for every new page
            ctx.demo.load(pick_movie, [movie_pick, chunk_s, state], movie_outs)


def _baseline_label(settings) -> str:
    from components.settings.session import SessionSettings

    s = SessionSettings.from_state(settings)
    if s.backend == "baseline":
        return f"**{view.BASELINE_LABEL}** — pick a model in the Model panel for visual inspection."
    return f"Model: `{s.backend}`"


# Clicking a ranked chunk on the timeline clicks the matching "#r" choice of the Window radio.
_TIMELINE_JS = """
element.addEventListener('click', (e) => {
  const block = e.target.closest('[data-rank]');
  if (!block) return;
  const want = '#' + block.dataset.rank;
  const labels = document.querySelectorAll('#ws-window-pick label');
  for (const l of labels) { if (l.textContent.trim() === want) { l.click(); break; } }
});
"""
