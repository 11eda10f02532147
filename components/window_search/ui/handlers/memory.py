"""The character-memory panel's handlers. Edits change the visitor's own copy of the memory
(private_memory.py) unless the app runs with APP_ADMIN=1; removing a reference asks first."""
from __future__ import annotations

import tempfile
from pathlib import Path
from collections.abc import Callable
from typing import Any

import gradio as gr

from components.base.admin import admin_mode
from components.base.errors import UserError
from components.common.ui import note
from components.settings.session import backend_for
from components.window_search import view
from components.window_search.memory import CharacterMemory, build_names_only
from components.window_search.solvers import solvers_for
from components.window_search.ui.handlers.search import WINDOW_FRAMES, memory_listing, memory_of, \
    search_settings
from components.window_search.ui.private_memory import editable_memory
from components.window_search.ui.session import WindowSearchResources, WindowSearchSession, WindowSearchTab
from components.window_search.ui.views import MemoryView, SelectionView


def _view(session: WindowSearchSession, message: str = "") -> MemoryView:
    """The memory as it now is, any open "remove?" question closed."""
    names, refs, chars = memory_listing(session)
    return MemoryView(session=session, memory_names=names, refs=refs, char_pick=chars,
                      confirm_row=gr.update(visible=False), confirm_text="", message=message)


def _editable(session: WindowSearchSession, res: WindowSearchResources) -> CharacterMemory:
    if session.movie is None or not session.movie.memory:
        raise UserError("Character memory: pick a movie first.")
    return editable_memory(session.movie, res)


def _refs(session: WindowSearchSession) -> list:
    mem = memory_of(session.movie) if session.movie else None
    return [(c, r) for c in mem.characters for r in c.references if Path(r.image).is_file()] if mem else []


def ref_selected(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession,
                 index: int | None) -> SelectionView:
    refs = _refs(session)
    if index is not None and 0 <= index < len(refs):
        session.sel_ref = refs[index][1].ref_id
    return SelectionView(session=session)


def remove_ref(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession) -> MemoryView:
    """Ask before removing: the confirmation names the reference and whose memory changes."""
    if not session.sel_ref:
        raise UserError("Remove reference: select a reference frame in the gallery first.")
    ref = next(((c, r) for c, r in _refs(session) if r.ref_id == session.sel_ref), None)
    if ref is None:
        raise UserError("Remove reference: the selected reference is gone; select another one.")
    session.pending_remove = session.sel_ref
    where = ("the shared memory file on the server, for every visitor (APP_ADMIN is on)" if admin_mode()
             and session.movie and not session.movie.memory_private else "your session's copy of the memory only")
    c, r = ref
    text = (f"Remove reference **{r.ref_id}** ({c.display_name}, {view.fmt_t(r.time)}) from {where}?")
    names, refs, chars = memory_listing(session)
    return MemoryView(session=session, memory_names=names, refs=refs, char_pick=chars,
                      confirm_row=gr.update(visible=True), confirm_text=text)


def confirm_remove(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession) -> MemoryView:
    ref_id, session.pending_remove = session.pending_remove, None
    if not ref_id:
        return _view(session)
    _editable(session, res).remove_reference(ref_id)
    session.sel_ref = None
    return _view(session)


def cancel_remove(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession) -> MemoryView:
    session.pending_remove = None
    return _view(session)


def frame_selected(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession,
                   index: int | None) -> SelectionView:
    trace = session.trace
    cand = view.candidate(trace, session.selected) if trace else None
    if cand is not None and index is not None:
        w = cand.span
        frames = res.movie(session.movie, session.chunk_seconds).frames(w[0], w[1], fps=1.0, cap=WINDOW_FRAMES)
        if 0 <= index < len(frames):
            session.sel_frame = frames[index].time
    return SelectionView(session=session)


def add_ref(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession,
            char_id: str | None) -> MemoryView:
    if session.sel_frame is None:
        raise UserError("Add reference: select a frame of the current window first (run a query and "
                        "pick a window).")
    if not char_id:
        raise UserError("Add reference: pick the character this frame shows (or find names in the "
                        "subtitles first).")
    t = float(session.sel_frame)
    frames = res.movie(session.movie, session.chunk_seconds).frames(t, t + 1.0, fps=1.0, cap=1)
    if not frames:
        raise UserError(f"Add reference: no frame at {t:.0f} s; select another frame.")
    _editable(session, res).add_reference(char_id, frames[0].image, time=frames[0].time)
    return _view(session)


def _known_names(mem: CharacterMemory) -> set[str]:
    return {n.lower() for c in mem.characters for n in c.names}


def find_names(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession) -> MemoryView:
    if session.movie is None:
        raise UserError("Find names: pick a movie first.")
    movie = res.movie(session.movie, session.chunk_seconds)
    mem = _editable(session, res)
    found = build_names_only(mem.movie_id, movie.all_cues)
    known = _known_names(mem)
    added = 0
    for c in found.characters:
        if not any(n.lower() in known for n in c.names):
            mem.add_character(c.display_name, c.names)
            added += 1
    if added == 0 and mem.path is not None and not mem.path.exists():
        mem.save()
    return _view(session, note(f"{added} new name(s) found in the subtitles."))


def build_refs(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession, settings: dict | None,
               progress: Callable[..., Any] | None = None) -> MemoryView:
    if not session.has_video:
        raise UserError("Build references: pick a movie first.")
    solvers = solvers_for(backend_for(settings), search_settings(settings, None, None, None))
    if solvers.memory_builder is None:
        raise UserError("Build references: the baseline has no vision model; choose a model in the Model "
                        "panel, or use 'Find names in the subtitles' and add frames by hand.")
    report = progress or (lambda *a, **kw: None)
    movie = res.movie(session.movie, session.chunk_seconds)
    report(0, desc="reference clips…")
    folder = Path(tempfile.mkdtemp(prefix="ws-vlm-mem-"))
    res.folders.append(folder)
    scratch = folder / "model-built.json"
    built, stats = solvers.memory_builder(movie, scratch,
                                          progress=lambda name, s: report(None, desc=f"{name}: {s['clips']} clips"))
    mem = _editable(session, res)
    known = _known_names(mem)
    for c in built.characters:
        if any(n.lower() in known for n in c.names):
            continue
        new = mem.add_character(c.display_name, c.names)
        for r in c.references:
            img = built.load_reference_image(r)
            if img is not None:
                mem.add_reference(new.char_id, img, time=r.time)
    return _view(session, note(
        f"{stats['kept']} character(s) kept, {stats['dropped']} dropped, {stats['calls']} model calls, "
        f"{stats['unparsed']} unparsed."))
