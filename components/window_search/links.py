"""Deep links to a moment of the Window search tab (pure; no gradio):
`?tab=window-search&movie=<movie id>&qid=<query id>&t=<seconds>` (movie optional when the qid is
unique). `view_link` writes the query string, `read_link` reads one back into what to open."""
from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from components.window_search.spec import SPEC
from components.common.links import view_link  # noqa: F401 - the tab's links are written by it

TAB = SPEC.url   # the link's ?tab= (the tab's registry row)
OWN_KEYS = SPEC.link_keys


@dataclass
class LinkRequest:
    """What a link asks the tab to open; `problems` are readable lines about values not understood."""

    movie: str | None = None
    qid: str | None = None
    t: str | None = None   # as written in the link; read_time checks it against the movie
    problems: list[str] = field(default_factory=list)


def is_for_this_tab(params: Mapping[str, str]) -> bool:
    """The link names this tab, or names no tab and carries this tab's parameters."""
    tab = (params.get("tab") or "").strip()
    return tab == TAB or (not tab and any(params.get(k) for k in OWN_KEYS))


def read_link(params: Mapping[str, str], movies: Collection[str], queries: Mapping[str, str],
              first_movie: str | None) -> LinkRequest:
    """Check a link's movie and qid against the data (`queries`: qid -> movie id); `t` is read
    by `read_time` once the movie's duration is known. A bad value is dropped with one readable
    line saying what is shown instead."""
    req = LinkRequest()
    movie = (params.get("movie") or "").strip()
    qid = (params.get("qid") or "").strip()
    raw_t = (params.get("t") or "").strip()
    if movie and movie not in movies:
        req.problems.append(f"The link's movie `{movie}` is not in this data; showing `{first_movie}`."
                            if first_movie else f"The link's movie `{movie}` is not in this data.")
        movie = ""
    if qid:
        if qid not in queries:
            req.problems.append(f"The link's qid `{qid}` is not in this data; showing the first query.")
            qid = ""
        elif movie and queries[qid] != movie:
            req.problems.append(f"The link's qid `{qid}` belongs to movie `{queries[qid]}`, not `{movie}`; "
                                f"showing it in `{queries[qid]}`.")
    req.qid = qid or None
    req.movie = (queries[qid] if qid else movie) or first_movie
    req.t = raw_t or None
    return req


def read_time(raw_t: str | None, duration: float) -> tuple[float | None, str | None]:
    """(seconds, None) for a time inside [0, duration], else (None, the line saying why)."""
    if not raw_t:
        return None, None
    try:
        t = float(str(raw_t).strip().rstrip("s"))
    except ValueError:
        t = math.nan
    if not math.isfinite(t) or t < 0:
        return None, f"The link's t `{raw_t}` is not a time in seconds; starting at 0 s."
    if duration and t > duration:
        return None, f"The link's t `{raw_t}` is past the end of the movie ({duration:.0f} s); starting at 0 s."
    return t, None
