"""What the Cloze tab's handlers return: one view per event. Every field is named after the layout
component it fills (layout.py's `ui` namespace), defaults to UNCHANGED (that component left as it
is) and is given by name, so a handler names only what it changes; an event's outputs, in the
fields' order, come from these classes alone (components/common/ui.py: `View.components`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.cloze.ui.session import ClozeSession
from components.common.ui import SKIP, View

UNCHANGED_CLIPS = 12  # BEGINNING/END images, BEGINNING/END videos, A-D images, A-D videos


@dataclass
class AnswerBoxes(View):
    """The Model panel's answer for the question on screen. Its "" / None defaults mean cleared,
    not unchanged: `render` puts an `AnswerBoxes()` in every new question's view, so another
    question's answer never stays beside it (a view that leaves the boxes alone leaves this
    field out of its QuestionView)."""

    raw: Any = ""
    parsed: Any = ""          # the letter read from the reply
    reason: Any = ""
    option_map: Any = None
    #: the model's reasoning (collapsed, with token counts) and, with "compare with", both
    #: models' answers side by side (components/cloze/view.py)
    beside: Any = ""
    #: the answer in one line where the question's buttons are (letter, mark, reason's start)
    headline: Any = ""


@dataclass
class QuestionView(View):
    #: UNCHANGED_CLIPS updates (images shown for "frames", videos for "video"), in ui.clips' order
    clips: tuple = field(default_factory=lambda: (SKIP,) * UNCHANGED_CLIPS)
    progress: Any             # "**Question i of n · 00:00** · answered k/n"
    navigator: Any            # gr.update(choices=["1 ✓", "2", ...], value=...)
    answer: AnswerBoxes       # the Model panel's boxes: the old question's answer never stays


@dataclass
class ClockView(View):
    """The progress line's clock; it never touches the message line."""

    progress: Any
    message: str | None = field(default=None, kw_only=True)


@dataclass
class NavView(View):
    session: ClozeSession
    question: QuestionView


@dataclass
class AnswerView(View):
    session: ClozeSession
    question: QuestionView
    feedback: str


@dataclass
class StartView(View):
    session: ClozeSession
    question: QuestionView
    feedback: str
    annotator: Any  # the id the practice runs under (an anonymous one when the box was empty)


@dataclass
class ModeView(View):
    """The panels and buttons each mode shows (page.mode_view)."""

    question_group: Any
    model_group: Any
    compare_group: Any
    practice_row: Any
    answer_row: Any
    export_row: Any
    start: Any
    run_row: Any            # Run this question / Run the set / Stop, the question order (Model mode)
    progress_box: Any       # "Question i of n": not in Compare mode, where no question is shown
    # Compare mode shows only what applies to it: no strip for the status line, no display
    # choice, no question link, no fold of the runs' answers to a question that is not shown
    status_line: Any
    display: Any
    copy_link: Any
    runs_fold: Any


@dataclass
class SourceView(View):
    session: ClozeSession
    root: Any
    status: Any


@dataclass
class RootView(View):
    set_name: Any
    status: str


@dataclass
class RunOneView(View):
    session: ClozeSession
    question: QuestionView   # the question answered, on screen (no "Load the question set" first)
    summary: str


@dataclass
class RunSetView(View):
    summary: str
    results_file: Any


@dataclass
class LeaderboardView(View):
    leaderboard: Any
    human_vs_model: Any


@dataclass
class RunOpened(View):
    """A leaderboard row's run opened whole (handlers/compare_panel.py, show_run)."""

    run_view: Any


@dataclass
class ModePick(View):
    panels: ModeView
    board: LeaderboardView
    session: ClozeSession    # the question on screen, numbered in the new mode's order (UNCHANGED: as it was)
    question: QuestionView
    feedback: Any            # the last answer's verdict goes with the mode it was given in


@dataclass
class LinkView(View):
    """A page opened from a link to a question: the question shown, the controls it was built from."""

    session: ClozeSession
    question: QuestionView
    feedback: Any
    mode: Any
    root: Any
    set_name: Any
    dims: Any
    seed: Any
    panels: ModeView
    order: Any        # Model mode: the question order the link asks for (the Order dropdown)
    poll: Any   # the preparation timer (on while the data is made)
    board: LeaderboardView   # `mode=compare`: the leaderboard the link opens on


@dataclass
class LinkBoxView(View):
    link: Any  # the query string (the page adds its own address), in the now visible link box


@dataclass
class BuildView(View):
    session: ClozeSession
    build_out: str
    root: str


@dataclass
class ExportView(View):
    export_file: Any
