"""Stop, said where the visitor looks: the button reads "Stopping…" from the click (in the page,
at once) until the visitor's running work has stopped (the run ends before its next step: a model
call under way is waited for), then "Stop" again. Every tab's Stop button is wired here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from components.common.sessions import Resources
from components.common.ui import TabEvents, Update, View

STOPPING = "Stopping…"
#: the longest the button waits for the run to end (a model call that hangs is the API timeout's)
STOP_WAIT_S = 120.0


@dataclass
class StopView(View):
    """The Stop button's label, given back once the run has stopped."""

    stop: Update


def stop_and_wait(label: str, wait_s: float = STOP_WAIT_S):
    """A Stop handler `(tab, res, session, ...) -> StopView`: asks the visitor's running work to
    stop, waits until it has (at most `wait_s`), and gives the button back `label`."""
    def stop(tab: Any, res: Resources, session: Any = None, *_: Any) -> StopView:
        res.ask_stop()
        res.wait_idle(wait_s)
        return StopView(stop=gr.update(value=label))
    stop.__qualname__ = "stop_and_wait.stop"
    return stop


def wire_stop(events: TabEvents, button: gr.Button, session: Any, *, api_name: str,
              wait_s: float = STOP_WAIT_S) -> None:
    """`button` (a tab's Stop) stops the visitor's running work through `events` (the tab's
    TabEvents): it reads "Stopping…" from the click until the work has stopped."""
    label = str(button.value or "Stop")
    button.click(None, None, [button], js=f"() => '{STOPPING}'", queue=False, api_name=False,
                 show_progress="hidden")
    events.over({"stop": button}).on(button.click, stop_and_wait(label, wait_s), [session], StopView, queue=False,
                                     api_name=api_name, show_progress="hidden")
