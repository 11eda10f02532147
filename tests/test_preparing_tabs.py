"""Each tab while its data is still being made (a Space's first start builds the example data
behind the page, components/common/preparing.py): the tab says how far it is on its message line,
keeps asking, and opens normally once the part is ready."""
from __future__ import annotations

import pytest

from components.common import preparing
from components.common.ui import UNCHANGED
from components.common.preparing import BUILDING, PartStatus


@pytest.fixture
def building(monkeypatch):
    state = {"waiting": True}

    def status(part):
        if state["waiting"]:
            return PartStatus(part, BUILDING, 0.4, f"Making the {part} example data", "examples")
        return PartStatus(part, preparing.READY, 1.0, "", "examples")
    monkeypatch.setattr(preparing, "status", status)
    return state


def test_window_search_says_it_is_being_prepared_then_opens(building, example_data_dir):
    from components.window_search.ui import handlers as h
    from components.window_search.ui.session import tab_source
    from components.window_search.ui.session import WindowSearchResources, WindowSearchSession

    tab = tab_source(example_data_dir).get()
    waiting = h.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180, {})
    assert "Making the grounding example data (40%)" in waiting.message and waiting.poll.active is True
    assert waiting.session is UNCHANGED and waiting.movie_pick is UNCHANGED   # nothing else is touched
    building["waiting"] = False
    ready = h.open_page(tab, WindowSearchResources(), WindowSearchSession(), 180, {})
    assert ready.poll.active is False and ready.session.movie is not None and ready.message == ""


def test_cloze_and_impact_say_it_is_being_prepared_then_open(building, example_data_dir):
    from components.cloze.ui import handlers as ch
    from components.cloze.ui.session import ClozeSession, ClozeTab
    from components.common.sessions import Resources
    from components.impact.ui import handlers as ih
    from components.impact.ui.session import tab_source
    from components.impact.ui.session import ImpactResources, ImpactSession

    session = ClozeSession(data_dir=str(example_data_dir))
    waiting = ch.open_page(ClozeTab(str(example_data_dir)), Resources(), session, "frames", {})
    assert "Making the cloze example data" in waiting.message and waiting.poll.active is True
    data = tab_source(example_data_dir).get()
    held = ih.on_load(data, ImpactResources(), ImpactSession(), {})
    assert "Making the impact example data" in held.message and held.poll.active is True
    building["waiting"] = False
    assert ch.open_page(ClozeTab(str(example_data_dir)), Resources(), session, "frames", {}).poll.active is False
    opened = ih.on_load(data, ImpactResources(), ImpactSession(), {})
    assert opened.poll.active is False and opened.clip.value == data.first.qid
