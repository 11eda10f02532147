"""The set-up fold: which data folder (or uploaded zip) the tab reads, and building an instance
from a visitor's own video."""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import gradio as gr

from components.cloze.spec import SPEC
from components.cloze.build import build_instance
from components.cloze.data import find_root, load_dataset, safe_extract_zip, shared_dataset
from components.cloze.questions import set_names
from components.cloze.ui.handlers.model_panel import safe_name, visitor_folder
from components.cloze.ui.views import BuildView, RootView, SourceView
from components.cloze.ui.session import ClozeResources, ClozeSession, ClozeTab, resolve_root, shown_root
from components.base.errors import UserError
from components.common.fields import number, whole



def upload(tab: ClozeTab, res: ClozeResources, session: ClozeSession, file) -> SourceView:
    """An uploaded zip in the released layout, extracted safely into a folder of this visitor's
    (another visitor cannot open it; it is removed when the page closes, or at once when bad)."""
    if file is None:
        return SourceView(session=session)
    path = Path(file if isinstance(file, str) else file.name)
    dest = visitor_folder(res, Path(session.data_dir) / SPEC.data / "uploads")
    try:
        safe_extract_zip(path, dest)
        root = find_root(dest)
        ds = load_dataset(root)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    session = replace(session, own_roots=(*session.own_roots, str(dest)))
    return SourceView(session=session, root=shown_root(str(root), session.data_dir),
                      status=f"Loaded {len(ds.instances)} stems from {path.name}.")


def load_root(tab: ClozeTab, res: ClozeResources, session: ClozeSession, root: str) -> RootView:
    ds = shared_dataset(resolve_root(root, session.data_dir, session.own_roots))
    problems = ds.problems()
    note = f"{len(ds.instances)} stems." + (f" Problems: {'; '.join(problems[:4])}" if problems else "")
    return RootView(set_name=gr.update(choices=set_names(ds), value="all"), status=note)


def requested_gap(gap_start: float | None, gap_end: float | None) -> tuple[float, float] | None:
    """The gap typed, or None for an automatic one: both boxes empty, or both 0 (the page sends
    0 for a number box left empty)."""
    if gap_start in (None, 0) and gap_end in (None, 0):
        return None
    if gap_start is None or gap_end is None:
        raise UserError("Give both gap start and gap end, or leave both empty for an automatic gap.")
    start, end = number(gap_start, "Gap start", least=0), number(gap_end, "Gap end", least=0)
    if end <= start:
        raise UserError(f"Gap end ({end:g} s) must be after gap start ({start:g} s).")
    return start, end


def build(tab: ClozeTab, res: ClozeResources, session: ClozeSession, file, gap_start: float | None,
          gap_end: float | None, seed: float, *, progress=None) -> BuildView:
    """A TempCloze instance cut from the uploaded video; the data folder then points at it."""
    if file is None:
        raise UserError("Upload a video first.")
    path = Path(file if isinstance(file, str) else file.name)
    gap = requested_gap(gap_start, gap_end)
    out_root = visitor_folder(res, Path(session.data_dir) / SPEC.data / "built")
    if progress is not None:
        progress(0.1, desc="cutting clips")
    stem = safe_name(path.stem)
    entry = build_instance(path, out_root, stem=stem, gap=gap,
                           seed=whole(seed, "Distractor seed", default=0, least=0))
    tries = "; ".join(f"gap {t['gap'][0]}-{t['gap'][1]} s flow {t['flow']:.2f}" for t in entry["gap_tries"])
    built = (f"Built **{stem}**: gap {entry['gap_start']}-{entry['gap_end']} s of {entry['duration']} s, "
             f"seed {entry['seed']}" + (f" (tries: {tries})" if tries else " (explicit gap)")
             + f". Saved under `{shown_root(str(out_root), session.data_dir)}` (yours until this page "
               "closes); the tab now reads it.")
    return BuildView(session=replace(session, own_roots=(*session.own_roots, str(out_root))), build_out=built,
                     root=shown_root(str(out_root), session.data_dir))
