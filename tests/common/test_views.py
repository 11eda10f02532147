"""Views by named fields (components/common/ui.py): every field defaults to "unchanged" and is
keyword-only, a handler names only what it changes, and an event's outputs come from the field
names once."""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

gr = pytest.importorskip("gradio")

from components.common.ui import SKIP, UNCHANGED, TabEvents, View, outputs, several  # noqa: E402
from components.common.sessions import Resources, SessionRegistry  # noqa: E402


@dataclass
class Painting(View):
    body: Any
    legend: str


@dataclass
class Frame(View):
    frame: Any
    painting: Painting
    clips: tuple = several(3)   # a field filling three components
    note: str = ""   # an explicit default stays what it says


@dataclass
class Done(View):
    """One component's value (the adapter's tests)."""

    value: str


@dataclass
class Shown(View):
    """A text box's value (the adapter's browser tests)."""

    shown: str


def test_a_view_names_only_what_it_changes_and_the_rest_is_left_alone():
    view = Frame(frame=46, message="Frame 46")
    assert outputs(view) == [46, SKIP, SKIP, SKIP, SKIP, SKIP, ""]
    assert view.message == "Frame 46"
    assert Frame().painting is UNCHANGED and not UNCHANGED
    assert outputs(Frame(painting=Painting(legend="L"), clips=("a", "b", "c"))) == [SKIP, SKIP, "L", "a", "b", "c", ""]


def test_no_view_is_built_from_positions():
    with pytest.raises(TypeError):
        Frame(46)   # the point: a list of positions is refused
    with pytest.raises(TypeError):
        Painting("body", "legend")


def test_the_outputs_are_derived_from_the_field_names_once():
    ns = SimpleNamespace(frame="F", body="B", legend="L", clips=["c1", "c2", "c3"], note="N")
    assert Frame.components(ns) == ["F", "B", "L", "c1", "c2", "c3", "N"]
    assert Frame.size() == 7 == len(outputs(Frame()))
    # a nested view may find its components in a namespace of its own
    nested = SimpleNamespace(frame="F", painting=SimpleNamespace(body="b2", legend="l2"), clips=["x"] * 3, note="N")
    assert Frame.components(nested)[1:3] == ["b2", "l2"]
    with pytest.raises(KeyError, match="Frame.note"):
        Frame.components(SimpleNamespace(frame="F", body="B", legend="L", clips=[]))


def test_an_event_wired_with_a_view_class_spreads_by_name_and_refuses_another_view():
    with gr.Blocks():
        ns = SimpleNamespace(frame=gr.Number(), body=gr.HTML(), legend=gr.HTML(), clips=[gr.HTML() for _ in range(3)],
                             note=gr.Markdown())
        message = gr.Markdown()
    events = TabEvents("the tab", SessionRegistry(Resources), message, components=ns)
    outs = events.outputs_of(Frame)
    assert outs == [ns.frame, ns.body, ns.legend, *ns.clips, ns.note]
    with pytest.raises(TypeError, match="View class"):
        events.outputs_of([ns.frame])   # no bare output list

    def right(tab, res, session):
        return Frame(frame=3)

    def wrong(tab, res, session):
        return Painting(legend="not this event's view")

    request = SimpleNamespace(session_hash="views-test")
    shown = events.fn(right, Frame)(request, None)
    assert shown == [3, SKIP, SKIP, SKIP, SKIP, SKIP, "", ""]
    refused = events.fn(wrong, Frame)(request, None)
    assert refused[:7] == [SKIP] * 7 and "Something went wrong" in refused[7]
