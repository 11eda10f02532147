"""Where an event's busy state is drawn: on one component per event, not on all its outputs.

gradio's page keeps a busy state (pending, progress, done) for every component that was ever an
output of an event that ran, and at each change of any event's state it hands that state to every
one of them again, each update walking the page's component tree. On a page of ~260 components
whose page views write to most of them, that cost every click 0.15-0.3 s in the browser before
any of this app's work (a trivial button: 0.24 s on the explorer's page, 0.06 s on a bare page).
An event's `show_progress_on` replaces its outputs in that bookkeeping, so naming one component
per event keeps it to a handful for the whole page (the button: ~0.1 s).

What a visitor sees is unchanged where it mattered: a tab's events show their busy state on the
tab's message line, which is hidden while empty, so a quick click shows its result and nothing
else; an event with a progress bar (a whole-set run) shows it on the view its result goes to.
The study page shows its events' state on its progress line.
"""
from __future__ import annotations

import gradio as gr
from gradio.components import Component

# the class of the components a page shows its events' busy state on: each tab's message line
# (components/common/ui.py), the study page's progress line
BUSY_CLASS = "shows-busy"
_UNDRAWN = (gr.State, gr.BrowserState, gr.Timer)


def busy_on_one_component(demo: gr.Blocks) -> None:
    """Give each event of `demo` without a `show_progress_on` of its own one component to show
    its busy state on: for an event with a progress bar (a gr.Progress parameter) its first view
    drawn on the page, so the bar shows where its result will; else the first of its outputs of
    class BUSY_CLASS; else its first drawn output (none when its progress is hidden). Call it
    once the page is built, before it launches."""
    for fn in demo.fns.values():
        if fn.show_progress_on is not None:
            continue
        drawn = [b for b in fn.outputs if isinstance(b, Component) and not isinstance(b, _UNDRAWN)]
        lines = [b for b in drawn if BUSY_CLASS in (b.elem_classes or [])]
        views = [b for b in drawn if b not in lines]
        if fn.tracks_progress and views:
            fn.show_progress_on = views[:1]
        elif lines:
            fn.show_progress_on = lines[:1]
        elif fn.show_progress == "hidden":
            fn.show_progress_on = []
        else:
            fn.show_progress_on = drawn[:1]
