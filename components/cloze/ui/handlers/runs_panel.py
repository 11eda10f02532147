"""The Cloze tab's run panels: "What the runs answered" on the question on screen, and the
question list / overview across questions (HTML from components/cloze/runs_view.py). The runs are
read once per (data folder, --runs folders) on a background thread: a page never waits; while
they load the panel counts them ("Reading run files… 12 of 30") and a timer asks again. In a practice
playthrough the panel stays shut until the player has answered the question on screen, and for good
in a blind one (the across-questions view too)."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import gradio as gr

from components.cloze import runs_view
from components.cloze.human import latest_records, playthrough_blind
from components.cloze.metrics import PAPER_KEYS
from components.cloze.runs import ClozeRuns
from components.cloze.runs import loader_for
from components.cloze.ui.handlers.practice import runs_shut
from components.cloze.ui.handlers.question import questions_for
from components.cloze.ui.session import ClozeResources, ClozeSession, ClozeTab
from components.cloze.ui.views import AcrossView, BlindView, FirstPageView, RunsLinkView, RunsPanelView
from components.base.io import read_jsonl
from components.common.runs import forget_runs_loaders, reading_line


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
        return runs_view.loading_html(reading_line(loader))
    refused = [r.line() for r in loaded.refusals]
    table: ClozeRuns = loaded.table
    return runs_view.question_html(table.question(q.stem, PAPER_KEYS.get(q.dim, q.dim), q.option_map), q.option_map,
                                   refused, table.scores())


def show_question(tab: ClozeTab, res: ClozeResources, session: ClozeSession, *,
                  named: Sequence[str] = ()) -> RunsPanelView:
    """The panel, and the timer that asks again while the runs load."""
    html = question_panel(session, named)
    return RunsPanelView(runs_html=html, runs_timer=gr.Timer(active='data-state="loading"' in html))


def _right(value) -> int | None:
    """The "runs right" filter: a whole number, else any."""
    try:
        return None if value is None or str(value).strip() == "" else int(float(value))
    except (TypeError, ValueError):
        return None


def across_lists(data_dir: str | Path, sort: str, overview: bool, find: str = "", dim: str = "", right=None,
                 page=1, named: Sequence[str] = ()) -> AcrossView:
    """The question list in `sort`'s order, filtered (stems with a word of `find`, one dimension,
    exactly `right` runs right), page `page`, and (when asked) the overview grid."""
    loader = loader_for(data_dir, named)
    loaded = loader.result()
    if loaded is None:
        return AcrossView(runs_list=runs_view.loading_html(reading_line(loader)), runs_grid="",
                          runs_across_timer=gr.Timer(active=True))
    table: ClozeRuns = loaded.table
    listed = runs_view.question_list_html(table, sort, find=find or "", dim=dim or "", right=_right(right),
                                          page=int(page or 1) if str(page or "").strip() else 1)
    return AcrossView(runs_list=listed + runs_view.refusals_html([r.line() for r in loaded.refusals]),
                      runs_grid=runs_view.overview_html(table) if overview else "",
                      runs_across_timer=gr.Timer(active=False))


def _unless_blind(session: ClozeSession, blind: bool, lists: Callable[[], AcrossView]) -> AcrossView:
    """The across-questions view (`lists()`), or its shut note in a blind playthrough
    (practice.runs_shut)."""
    if runs_shut(session, blind):
        return AcrossView(runs_list=runs_view.shut_html(blind=True), runs_grid="",
                          runs_across_timer=gr.Timer(active=False))
    return lists()


def across(tab: ClozeTab, res: ClozeResources, session: ClozeSession, blind: bool, sort: str, overview: bool,
           find: str, dim: str, right, page, *, named: Sequence[str] = ()) -> AcrossView:
    """The across-questions fold's view (any of its controls changed, or its timer while the runs load)."""
    return _unless_blind(session, blind, lambda: across_lists(tab.data_dir, sort, overview, find, dim, right, page,
                                                              named=named))


def first_page(tab: ClozeTab, res: ClozeResources) -> FirstPageView:
    """A new filter starts the list at page 1 (the page's change then draws it)."""
    return FirstPageView(runs_page=1)


def close_when_blind(tab: ClozeTab, res: ClozeResources, session: ClozeSession, blind: bool) -> BlindView:
    """Blind ticked (or a blind playthrough started): the across-questions fold closes and its
    list and grid go; otherwise nothing changes."""
    if not runs_shut(session, blind):
        return BlindView(message=None)
    return BlindView(runs_across=gr.update(open=False), runs_list=runs_view.shut_html(blind=True), runs_grid="")


def _linked_view(params: Mapping[str, str]) -> tuple[str, bool, str] | None:
    """(sort, overview, find) a link asks for with `sort=` (hardest, easiest, disagree, people,
    stem), `overview=1` and `find=` (stems: an overview column's link); None when it asks for
    none of them."""
    sort = (params.get("sort") or "").strip().lower()
    overview = (params.get("overview") or "").strip().lower() in ("1", "true", "yes")
    find = (params.get("find") or "").strip()[:20_000]
    if sort not in runs_view.SORTS and not overview and not find:
        return None
    return (sort if sort in runs_view.SORTS else runs_view.DEFAULT_SORT), overview, find


def open_view(tab: ClozeTab, res: ClozeResources, session: ClozeSession, blind: bool, params: Mapping[str, str], *,
              named: Sequence[str] = ()) -> RunsLinkView:
    """A link's view opens the across-questions fold with it, its list drawn (shut in a blind
    playthrough); any other page is left as it is."""
    linked = _linked_view(params)
    if linked is None:
        return RunsLinkView(message=None)
    sort, overview, find = linked
    lists = _unless_blind(session, blind, lambda: across_lists(tab.data_dir, sort, overview, find, named=named))
    return RunsLinkView(runs_across=gr.update(open=True), runs_sort=sort, runs_overview=overview, runs_find=find,
                        lists=lists, message=None)
