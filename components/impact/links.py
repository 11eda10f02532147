"""Deep links to a frame of the Impact tab (pure; no gradio): `?tab=impact&clip=<qid>&frame=<n>`
(1-based). `frame_link` writes the query string (the one place it is written: Copy link and the
address bar both take it), `read_link` reads one back into what to open."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from components.impact.spec import SPEC
from components.common.links import view_link

if TYPE_CHECKING:
    from components.impact.data import ImpactItem

TAB = SPEC.url   # the link's ?tab= (the tab's registry row)


def frame_link(clip: Any, frame: Any = None) -> str:
    """The query string of a link to `frame` of the clip `clip` (keys sorted: `clip=h0007&frame=46&tab=impact`).
    No clip: the tab alone; a frame that is not a whole number of at least 1 (an empty or absurd
    frame box) is left out."""
    clip = str(clip or "").strip()
    return view_link(tab=TAB, clip=clip or None, frame=_whole_frame(frame) if clip else None)


def _whole_frame(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() and number >= 1 else None


def shown_value(value: str) -> str:
    """A link's value quoted back to the user: short, and unable to break the Markdown around it."""
    text = "".join(ch for ch in str(value) if ch.isprintable() and ch != "`")
    return text[:40] + ("…" if len(text) > 40 else "")


def read_link(params: dict[str, str], items: Sequence[ImpactItem]) -> tuple[str | None, int | None, str]:
    """A page address's query -> (clip qid, 1-based frame, note), for `?tab=impact&clip=&frame=`.

    (None, None, "") when the link is not for this tab. A value this data cannot show falls back
    to the first clip / the clip's first moment, and the note says which parameter was not
    understood."""
    tab = (params.get("tab") or "").strip().lower()
    if (tab and tab != TAB) or (not tab and "clip" not in params and "frame" not in params) or not items:
        return None, None, ""
    by_qid = {item.qid: item for item in items}
    clip, raw_frame = (params.get("clip") or "").strip(), (params.get("frame") or "").strip()
    notes = []
    item = by_qid.get(clip)
    if clip and item is None:
        notes.append(f"The link's clip `{shown_value(clip)}` is not in this data; showing the first clip.")
    item = item or items[0]
    frame = None
    if raw_frame:
        frame = int(raw_frame) if raw_frame.isdigit() else None
        if frame is None or not 1 <= frame <= item.num_frames:
            notes.append(f"The link's frame `{shown_value(raw_frame)}` is not a frame of {item.qid} "
                         f"(1-{item.num_frames}); showing its first moment.")
            frame = None
    return item.qid, frame, " ".join(notes)
