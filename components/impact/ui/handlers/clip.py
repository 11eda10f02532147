"""The clip panel: the clip picked from the list (or typed: a qid or words of its query), and the
page's first view, the clip and frame a deep link names."""
from __future__ import annotations

import gradio as gr

from components import datasource
from components.impact.spec import SPEC
from components.base.errors import UserError
from components.common.ui import poll, preparing_note
from components.impact import links, view
from components.impact.ui.handlers.body import frame_view
from components.impact.ui.handlers.frame import timeline_for
from components.impact.ui.session import ImpactResources, ImpactSession, ImpactTab
from components.impact.ui.views import ClipView, LoadView


def on_clip(tab: ImpactTab, res: ImpactResources, session: ImpactSession, typed: str,
            shown: dict | None = None) -> ClipView:
    """A clip chosen from the list, or typed into it: a qid, or words of its query."""
    qid = view.find_clip(tab.annotations, typed) if tab.annotations is not None else None
    if qid is None and typed:
        raise UserError(f"No clip matches “{view.md_text(str(typed))[:80]}”: type a qid (e.g. "
                        f"{tab.first.qid if tab.first else 'h0001'}) or words of a clip's query.")
    item = tab.item(qid)
    start = view.first_frame(item)
    return ClipView(clip=gr.Dropdown(choices=view.clip_choices(tab.annotations, qid), value=qid),
                    video=gr.Video(value=str(datasource.local(item.video)), playback_position=(start - 1) / item.fps),
                    frame=gr.Slider(minimum=1, maximum=item.num_frames, value=start),
                    timeline=timeline_for(item, session, start),
                    body=frame_view(tab, session, qid, start, shown=shown), status="")


def on_load(tab: ImpactTab, res: ImpactResources, session: ImpactSession, params: dict[str, str]) -> LoadView:
    """The page opened: the clip and frame a deep link names (`?tab=impact&clip=&frame=`), else
    the first clip at its first moment, with one line about a link value that was not understood."""
    note = preparing_note(SPEC.data)
    if note is not None:
        return LoadView(poll=poll(True), message=note)
    if tab.first is None:
        return LoadView(poll=poll(False), message=f"⚠ {tab.load_error}")
    qid, frame, link_note = links.read_link(params, tab.annotations.items if tab.annotations else [])
    item = tab.item(qid or (tab.first.qid if tab.first else None))
    frame = frame or view.first_frame(item)
    return LoadView(clip=gr.Dropdown(choices=view.clip_choices(tab.annotations, item.qid), value=item.qid),
                    video=gr.Video(value=str(datasource.local(item.video)), playback_position=(frame - 1) / item.fps),
                    frame=gr.Slider(minimum=1, maximum=item.num_frames, value=frame),
                    timeline=timeline_for(item, session, frame), body=frame_view(tab, session, item.qid, frame),
                    status="", split=gr.Dropdown(choices=["all", *tab.splits()], value="all"), poll=poll(False),
                    message=f"⚠ {link_note}" if link_note else "")
