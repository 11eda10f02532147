"""The Cloze tab's run panels: "What the runs answered" on the question on screen, and the
question list / overview across questions (HTML from components/cloze/runs_view.py). The runs are
read once per (data folder, --runs folders) on a background thread: a page never waits; while
they load the panel says so and a timer asks again. In a practice playthrough the panel stays
shut until the player has answered the question on screen, and for good in a blind one."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import gradio as gr

from components.cloze import runs_view
from components.cloze.human import latest_records, playthrough_blind
from components.cloze.metrics import PAPER_KEYS
from components.cloze.runs import ClozeRuns
from components.cloze.runs import loader_for
from components.cloze.ui.handlers.question import questions_for
from components.cloze.ui.session import ClozeSession
from components.base.io import read_jsonl
from components.common.runs import forget_runs_loaders


def forget_loaders() -> None:
    """Read the runs again on next use (tests; a folder whose run files changed)."""
    forget_runs_loaders()


def _practice_state(session: ClozeSession, stem: str, dim: str) -> str:
    """"open" once the player answered the question on screen; "blind" for a blind playthrough
    (the runs' answers would name the true middle, which it never does); else "unanswered"."""
    records = read_jsonl(session.file) if session.file else []
    if playthrough_blind(records, False):
        return "blind"
    return "open" if (stem, dim) in latest_records(records) else "unanswered"


def question_panel(session: ClozeSession, named: Sequence[str] = ()) -> str:
    """The panel's HTML for the question on screen (see the module's note)."""
    if not session.loaded or not session.data_dir:
        return runs_view.shut_html() if session.human else ""
    try:
        _ds, qs = questions_for(session)
    except Exception:  # noqa: BLE001 - the question panel reports a folder that cannot be read
        return ""
    if not qs.questions:
        return ""
    q = qs.questions[min(max(0, session.index), len(qs.questions) - 1)]
    if session.human:
        state = _practice_state(session, q.stem, q.dim)
        if state != "open":
            return runs_view.shut_html(blind=state == "blind")
    loader = loader_for(session.data_dir, named)
    loaded = loader.result()
    if loaded is None:
        return runs_view.loading_html(loader.files)
    refused = [r.line() for r in loaded.refusals]
    table: ClozeRuns = loaded.table
    return runs_view.question_html(table.question(q.stem, PAPER_KEYS.get(q.dim, q.dim), q.option_map), q.option_map,
                                   refused, table.scores())


def show_question(session: ClozeSession, named: Sequence[str] = ()) -> tuple[str, gr.Timer]:
    """The panel, and the timer that asks again while the runs load."""
    html = question_panel(session, named)
    return html, gr.Timer(active='data-state="loading"' in html)


def _right(value) -> int | None:
    """The "runs right" filter: a whole number, else any."""
    try:
        return None if value is None or str(value).strip() == "" else int(float(value))
    except (TypeError, ValueError):
        return None


def across(data_dir: str | Path, sort: str, overview: bool, find: str = "", dim: str = "", right=None,
           page=1, named: Sequence[str] = ()) -> tuple[str, str, gr.Timer]:
    """The question list in `sort`'s order, filtered (stems with a word of `find`, one dimension,
    exactly `right` runs right), page `page`, and (when asked) the overview grid."""
    loader = loader_for(data_dir, named)
    loaded = loader.result()
    if loaded is None:
        waiting = runs_view.loading_html(loader.files)
        return waiting, "", gr.Timer(active=True)
    table: ClozeRuns = loaded.table
    listed = runs_view.question_list_html(table, sort, find=find or "", dim=dim or "", right=_right(right),
                                          page=int(page or 1) if str(page or "").strip() else 1)
    return (listed + runs_view.refusals_html([r.line() for r in loaded.refusals]),
            runs_view.overview_html(table) if overview else "", gr.Timer(active=False))


def _linked_view(request: gr.Request | None) -> tuple[str, bool, str] | None:
    """(sort, overview, find) a link asks for with `sort=` (hardest, easiest, disagree, people,
    stem), `overview=1` and `find=` (stems: an overview column's link); None when it asks for
    none of them."""
    params: Mapping[str, str] = dict(request.query_params) if request is not None else {}
    sort = (params.get("sort") or "").strip().lower()
    overview = (params.get("overview") or "").strip().lower() in ("1", "true", "yes")
    find = (params.get("find") or "").strip()[:20_000]
    if sort not in runs_view.SORTS and not overview and not find:
        return None
    return (sort if sort in runs_view.SORTS else runs_view.DEFAULT_SORT), overview, find


def open_view(request: gr.Request | None = None) -> tuple:
    """A link's view opens the across-questions fold with it; any other page is left as it is."""
    linked = _linked_view(request)
    if linked is None:
        return gr.update(), gr.update(), gr.update(), gr.update()
    return gr.update(open=True), gr.update(value=linked[0]), gr.update(value=linked[1]), gr.update(value=linked[2])


def across_for_link(data_dir: str | Path, sort: str, overview: bool, find: str = "", request: gr.Request | None = None,
                    named: Sequence[str] = ()) -> tuple:
    """`across` for a page whose link asks for a view (the fold's own events draw it otherwise)."""
    if _linked_view(request) is None:
        return gr.update(), gr.update(), gr.update()
    return across(data_dir, sort, overview, find, named=named)
