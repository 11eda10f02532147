"""The address is the view (components/common/page.py, components/common/ui.py): every event a tab
wires through TabEvents ends with the link to the view its answer shows, read back by the same
tab's link reader; an event that failed or shows no session leaves the address alone."""
from __future__ import annotations

from types import SimpleNamespace
from urllib.parse import parse_qsl

import pytest

gr = pytest.importorskip("gradio")

from components.base.errors import UserError  # noqa: E402 - after the gradio skip
from components.common.ui import SKIP, TabEvents  # noqa: E402
from components.window_search.data import load_annotations  # noqa: E402
from components.window_search.ui import handlers  # noqa: E402
from components.window_search.ui.session import WindowSearchTab  # noqa: E402
from components.window_search.ui.session import RESOURCES, WindowSearchResources, WindowSearchSession  # noqa: E402
from components.window_search.ui.views import LinkView, MovieView, PlayheadView, QueryView  # noqa: E402


@pytest.fixture(scope="module")
def tab(grounding_examples) -> WindowSearchTab:
    return WindowSearchTab(load_annotations(grounding_examples / "annotations.json"))


def _visitor() -> SimpleNamespace:
    return SimpleNamespace(session_hash="address-visitor")


def _events(tab) -> TabEvents:
    return TabEvents(tab, RESOURCES, message=None, address=(gr.Textbox(render=False), handlers.view_address))


def test_a_wired_event_ends_with_the_link_to_the_view_it_shows(tab):
    fn = _events(tab).fn(handlers.pick_movie, MovieView, addressed=True)
    out = fn(_visitor(), WindowSearchSession(), "m01", 180)
    assert len(out) == MovieView.size() + 2 and out[-2] == ""
    address = dict(parse_qsl(out[-1]))
    assert address == {"tab": "window-search", "movie": "m01", "qid": tab.queries_of("m01")[0].qid}
    session = out[0]   # MovieView's first field
    picked = _events(tab).fn(handlers.pick_query, QueryView, addressed=True)(_visitor(), session, "p0005_t")
    assert dict(parse_qsl(picked[-1]))["qid"] == "p0005_t"
    moved = _events(tab).fn(handlers.scrubbed, PlayheadView, addressed=True)(_visitor(), picked[0], 400)
    assert dict(parse_qsl(moved[-1])) == {"tab": "window-search", "movie": "m01", "qid": "p0005_t", "t": "400"}


def test_the_address_reopens_the_same_view(tab):
    res = WindowSearchResources()
    page = handlers.open_page(tab, res, WindowSearchSession(), 180,
                              {"tab": "window-search", "qid": "p0005_t", "t": "400"})
    again = handlers.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180,
                               dict(parse_qsl(handlers.view_address(tab, page.session))))
    assert (again.session.movie.movie_id, again.session.picked.qid, again.session.playhead) == ("m01", "p0005_t", 400)
    assert handlers.view_address(tab, WindowSearchSession()) == "tab=window-search"


def test_a_failed_event_and_a_view_without_a_session_leave_the_address_alone(tab):
    def refused(tab, res, session):
        raise UserError("Movie: pick a movie first.")

    out = _events(tab).fn(refused, MovieView, addressed=True)(_visitor(), WindowSearchSession())
    assert out[-1] is SKIP and out[-2] == "⚠ Movie: pick a movie first."
    session = handlers.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180, {}).session
    copied = _events(tab).fn(handlers.copy_link, LinkView, addressed=True)(_visitor(), session)
    assert copied[0]["value"].startswith("movie=m01") and copied[-1] is SKIP   # no session: no new address
    unwired = _events(tab).fn(handlers.pick_query, QueryView)(_visitor(), WindowSearchSession(), "p0002_t")
    assert len(unwired) == QueryView.size() + 1   # without `addressed` (a timer's tick) the outputs are as before


def test_a_view_that_leaves_its_session_unchanged_leaves_the_address_alone_quietly(tab, caplog):
    def query_only(tab, res, session):
        return QueryView(query="Harry and Mary sit together in the kitchen.")   # session UNCHANGED

    with caplog.at_level("ERROR"):
        out = _events(tab).fn(query_only, QueryView, addressed=True)(_visitor(), WindowSearchSession())
    assert out[-1] is SKIP and out[-2] == ""
    assert not [r for r in caplog.records if "address" in r.getMessage()]
