"""One playhead drives the tab (handlers called directly, baseline backend, the example movie):
a page opens on the first query or on what a deep link names; Run, timeline clicks, the window
radio and the slider all move the player, the slider and the timeline together."""
from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from components.common.ui import UNCHANGED
from components.window_search.data import load_annotations
from components.window_search.ui import handlers
from components.window_search.ui.session import WindowSearchTab
from components.window_search.ui.session import WindowSearchResources, WindowSearchSession


@pytest.fixture(scope="module")
def tab(grounding_examples) -> WindowSearchTab:
    return WindowSearchTab(load_annotations(grounding_examples / "annotations.json"))


@pytest.fixture(scope="module")
def ran(tab):
    """p0005_t run with the baseline: every candidate rejected, Select's fallback chosen."""
    res = WindowSearchResources()
    page = handlers.open_page(tab, res, WindowSearchSession(), 180, {"qid": "p0005_t"})
    views = list(handlers.run(tab, res, page.session, None, page.query, 180, 5, 3, 30, "aws"))
    return res, views[-1]


def test_a_new_page_has_the_first_query_picked_so_run_works_at_once(tab):
    page = handlers.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180, {})
    first = tab.queries_of("m01")[0]
    assert page.movie_pick["value"] == "m01" and page.query_pick["value"] == first.qid
    assert page.query == first.query and first.partner_qid in page.partner
    assert page.session.picked.qid == first.qid and page.message == ""


def test_a_deep_link_opens_that_query_at_that_time(tab):
    page = handlers.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180, {"tab": "window-search", "movie": "m01", "qid": "p0005_t", "t": "400"})
    assert page.query == tab.annotations.query("p0005_t").query and page.query_pick["value"] == "p0005_t"
    assert page.session.playhead == 400 and page.scrub["value"] == 400
    assert page.video["playback_position"] == 400 and "data-t='400.0'" in page.timeline
    assert page.message == ""


@pytest.mark.parametrize("params, says", [
    ({"tab": "window-search", "qid": "p9999"}, "The link's qid `p9999` is not in this data; showing the first query."),
    ({"tab": "window-search", "qid": "p0005_t", "t": "99999"}, "past the end of the movie"),
    ({"tab": "window-search", "movie": "nope"}, "The link's movie `nope` is not in this data"),
])
def test_a_bad_deep_link_opens_the_default_view_with_one_readable_line(tab, params, says):
    page = handlers.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180, params)
    assert says in page.message and page.movie_pick["value"] == "m01" and page.session.movie is not None
    assert page.session.playhead == 0


def test_a_link_for_another_tab_changes_nothing_here(tab):
    page = handlers.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180, {"tab": "impact", "qid": "p0005_t"})
    assert page.query_pick["value"] == tab.queries_of("m01")[0].qid and page.message == ""


def test_after_run_the_player_and_slider_jump_to_the_window_handed_on(ran):
    _, last = ran
    trace = last.session.trace
    assert last.progress == "Done." and trace.selected_rank is not None
    start = trace.window[0]
    assert last.video["playback_position"] == start and last.scrub["value"] == start
    assert f"data-t='{start:.1f}'" in last.timeline and f"data-selected='{trace.selected_rank}'" in last.timeline


def test_clicks_the_radio_and_the_slider_move_all_four_views(tab, ran):
    res, last = ran
    session = last.session
    other = next(c for c in session.trace.candidates if c.rank != session.trace.selected_rank)
    click = handlers.timeline_click(tab, res, session, {"rank": other.rank, "start": other.span[0]})
    assert f"Window rank #{other.rank} " in click.checklist and click.window_pick["value"] == f"#{other.rank}"
    assert click.scrub["value"] == other.span[0] == click.video["playback_position"]
    session.playhead = other.span[0] + 50          # the player moved on; the same chunk again seeks back
    again = handlers.timeline_click(tab, res, session, {"rank": other.rank, "start": other.span[0]})
    assert again.video["playback_position"] == other.span[0]
    radio = handlers.select_window(tab, res, session, f"#{session.trace.selected_rank}")
    assert radio.scrub["value"] == session.trace.window[0]
    scrub = handlers.scrubbed(tab, res, session, other.span[0] + 10)
    assert f"Window rank #{other.rank} " in scrub.checklist and scrub.video["playback_position"] == other.span[0] + 10


def test_scrubbing_or_clicking_onto_a_chunk_never_inspected_says_so(tab, grounding_examples):
    res = WindowSearchResources()
    page = handlers.open_page(tab, res, WindowSearchSession(), 180, {"qid": "p0001_t"})
    last = list(handlers.run(tab, res, page.session, None, page.query, 180, 5, 3, 30, "aws"))[-1]
    session = last.session
    seen = {c.chunk.index for c in session.trace.candidates}
    unseen = next(i for i in range(5) if i not in seen)
    scrub = handlers.scrubbed(tab, res, session, unseen * 180 + 20)
    assert f"Chunk {unseen + 1} " in scrub.checklist and "not inspected" in scrub.checklist
    assert "Window rank" not in scrub.checklist and session.selected is None and scrub.window_pick["value"] is None
    click = handlers.timeline_click(tab, res, session, {"rank": None, "start": unseen * 180})
    assert "not inspected" in click.checklist and click.video["playback_position"] == unseen * 180


def test_copy_link_names_the_movie_query_and_time(tab, ran):
    res, last = ran
    last.session.playhead = 412.4
    query = handlers.copy_link(tab, res, last.session).link["value"]
    assert dict(parse_qsl(query)) == {"movie": "m01", "qid": "p0005_t", "t": "412", "tab": "window-search"}
    assert handlers.copy_link(tab, res, last.session, "77.6").link["value"].endswith("t=78&tab=window-search")


def test_the_pair_line_never_mixes_numbers_from_different_backends(tab, ran):
    res, last = ran
    session = last.session
    handlers.pick_query(tab, res, session, "p0005_c")
    session.ious[("p0005_t", "openai:other", "aws")] = 0.9   # the partner, run with another model
    done = list(handlers.run(tab, res, session, None, tab.annotations.query("p0005_c").query, 180, 5, 3, 30,
                             "aws"))[-1]
    assert "0.90" not in done.result
    assert "pair (`baseline` · aws)" in done.result          # the baseline run of p0005_t is paired


# -- the timeline and the checklist follow the playing player (ui/playback.py) ----------------------
def _shown(timeline: str) -> tuple[float, float]:
    import re

    m = re.search(r"class='ws-play-map' hidden data-rev='\d+' data-shown-start='([\d.]+)' data-shown-end='([\d.]+)'", timeline)
    assert m, "the timeline carries the span its checklist shows"
    return float(m.group(1)), float(m.group(2))


@pytest.fixture
def fresh(tab):
    """p0005_t just run with the baseline (its own session: other tests change `ran`'s)."""
    res = WindowSearchResources()
    page = handlers.open_page(tab, res, WindowSearchSession(), 180, {"qid": "p0005_t"})
    return res, list(handlers.run(tab, res, page.session, None, page.query, 180, 5, 3, 30, "aws"))[-1]


def test_the_timeline_names_the_span_its_checklist_shows(tab, fresh):
    res, last = fresh
    session = last.session
    trace = session.trace
    shown = handlers.select_window(tab, res, session, f"#{trace.selected_rank}")
    cand = next(c for c in trace.candidates if c.rank == trace.selected_rank)
    assert _shown(shown.timeline) == (float(cand.span[0]), float(cand.span[1]))
    res = WindowSearchResources()             # p0001_t is accepted early: chunks stay unseen
    page = handlers.open_page(tab, res, WindowSearchSession(), 180, {"qid": "p0001_t"})
    session = list(handlers.run(tab, res, page.session, None, page.query, 180, 5, 3, 30, "aws"))[-1].session
    covered = [c.span for c in session.trace.candidates]
    free = next(t for t in range(0, int(session.movie.duration), 10) if not any(a <= t <= b for a, b in covered))
    scrub = handlers.scrubbed(tab, res, session, free)
    start, end = _shown(scrub.timeline)
    assert start <= free <= end and not any(a < end and b > start for a, b in covered)
    assert "not inspected" in scrub.checklist


def test_playing_into_another_window_moves_the_checklist_but_never_the_player(tab, fresh):
    res, last = fresh
    session = last.session
    trace = session.trace
    first, other = trace.candidates[0], trace.candidates[1]
    handlers.timeline_click(tab, res, session, {"rank": first.rank, "start": first.span[0]})
    inside = handlers.timeline_click(tab, res, session, {"played": other.span[0] + 5})
    assert f"Window rank #{other.rank} " in inside.checklist and inside.window_pick["value"] == f"#{other.rank}"
    assert inside.video is UNCHANGED and "data-seek" not in inside.timeline
    assert f"data-t='{other.span[0] + 5:.1f}'" in inside.timeline and inside.scrub["value"] == other.span[0] + 5
    assert inside.frames and session.playhead == other.span[0] + 5
    again = handlers.timeline_click(tab, res, session, {"played": other.span[0] + 6})
    assert again.frames is UNCHANGED                  # the same window: its frames are not decoded again
    past = handlers.timeline_click(tab, res, session, {"played": 10 ** 6})
    assert session.playhead == session.movie.duration and "data-seek" not in past.timeline


def test_a_player_time_that_is_not_a_number_is_one_readable_line(tab, fresh):
    res, last = fresh
    from components.base.errors import UserError

    with pytest.raises(UserError, match="player time must be a number"):
        handlers.timeline_click(tab, res, last.session, {"played": "soon"})


def test_a_loaded_trace_of_another_query_shows_its_own_query_truth_and_partner(tab):
    """A p0005_t trace loaded while p0001_t is picked: the header, the ground truth and the
    partner are p0005_t's (the views never mix two queries)."""
    res = WindowSearchResources()
    page = handlers.open_page(tab, res, WindowSearchSession(), 180, {"qid": "p0005_t"})
    done = list(handlers.run(tab, res, page.session, None, page.query, 180, 2, 1, 30, "aws"))[-1]
    exported = handlers.export(tab, res, done.session).export_file["value"]
    other = handlers.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180, {"qid": "p0001_t"})
    assert other.session.picked.qid == "p0001_t"
    loaded = handlers.load(tab, WindowSearchResources(), other.session, exported)
    assert loaded.query_pick["value"] == "p0005_t" and loaded.query == done.session.trace.query
    assert "p0005_c" in loaded.partner and "p0001" not in loaded.partner
    truth = tab.annotations.query("p0005_t").interval
    assert loaded.session.picked.qid == "p0005_t" and tuple(loaded.session.picked.interval) == tuple(truth)
    assert "IoU" in loaded.result and "p0005_c" in loaded.result
