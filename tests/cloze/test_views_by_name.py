"""The Cloze tab's views by named fields: a handler names only what it changes (the rest is left
as it is on the page), and an event's outputs come from its view's field names, looked up in the
layout's one namespace (so ModeView's order lives in views.py alone)."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

gr = pytest.importorskip("gradio")

from components.cloze.ui import handlers, layout, views  # noqa: E402 - after the gradio skip
from components.cloze.ui.session import ClozeSession, ClozeTab  # noqa: E402
from components.common.sessions import Resources  # noqa: E402
from components.common.ui import SKIP, UNCHANGED, TabContext, outputs  # noqa: E402
from components.settings.session import SessionSettings  # noqa: E402

TAB, RES = ClozeTab(""), Resources()


def _built(data_dir, monkeypatch) -> tuple[gr.Blocks, SimpleNamespace]:
    """The tab built, and its `ui` namespace (caught where the runs panels are wired)."""
    caught: list[SimpleNamespace] = []
    wire_runs = layout._wire_runs
    monkeypatch.setattr(layout, "_wire_runs", lambda ui: (caught.append(ui), wire_runs(ui)))
    with gr.Blocks() as demo:
        layout.build_tab(TabContext(data_dir=data_dir, settings=gr.State(SessionSettings().to_state()), demo=demo))
    return demo, caught[0]


def test_picking_the_mode_shown_names_only_the_panels(cloze_examples):
    session = ClozeSession(data_dir=str(cloze_examples.parent))
    picked = handlers.pick_mode(TAB, RES, session, "practice", [], "")
    assert picked.board is UNCHANGED and picked.session is UNCHANGED and picked.question is UNCHANGED
    assert isinstance(picked.panels, views.ModeView) and picked.panels.answer_row["visible"] is True
    spread = outputs(picked)
    panels = views.ModeView.size()
    # after the panels: the leaderboard, the session and the whole question view left alone
    assert spread[panels:-1] == [SKIP] * (views.ModePick.size() - panels - 1) and spread[-1] == ""


def test_every_view_field_names_a_component_of_the_layout(cloze_examples, monkeypatch):
    _, ui = _built(cloze_examples.parent, monkeypatch)
    for view in (v for v in vars(views).values() if isinstance(v, type) and issubclass(v, views.View)
                 and v.__module__ == views.__name__):
        found = view.components(ui)
        assert len(found) == view.size() and all(isinstance(c, gr.blocks.Block) for c in found), view.__name__


def test_the_mode_events_outputs_are_derived_from_the_view_fields(cloze_examples, monkeypatch):
    demo, ui = _built(cloze_examples.parent, monkeypatch)
    wired = {fn.api_name: fn for fn in demo.fns.values()}
    on_mode = list(wired["on_mode"].outputs)
    assert on_mode == [*views.ModePick.components(ui), ui.message]
    # the panels in ModeView's field order, each the component of the same name
    assert on_mode[:views.ModeView.size()] == [getattr(ui, f.name) for f in dataclasses.fields(views.ModeView)
                                               if f.name != "message"]
    assert [c.elem_id for c in on_mode[:3]] == ["cloze-question", "cloze-model-panel", "cloze-compare"]
    # a link's page view carries the same panels, found by the same names
    link = list(wired["on_open_cloze_prepared"].outputs)
    assert link == [*views.LinkView.components(ui), ui.message]
    panels = views.ModeView.size()
    at = link.index(on_mode[0])
    assert link[at:at + panels] == on_mode[:panels] and link[at + panels:at + panels + 2] == [ui.order, ui.poll]
    # then the leaderboard a `mode=compare` link opens on, and the message line
    assert link[at + panels + 2:-1] == list(views.LeaderboardView.components(ui))
