"""What the Cloze tab's handlers return: one view per event. Every field is named after the layout
component it fills (layout.py's `ui` namespace), defaults to UNCHANGED (that component left as it
is) and is given by name, so a handler names only what it changes; an event's outputs, in the
fields' order, come from these classes alone (components/common/ui.py: `View.components`). A field's
type is what its component takes: text for HTML, Markdown and Textbox, `Update` for a gradio update
of a component's properties (`gr.update(visible=False)`, `gr.update(choices=..., value=...)`)."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from components.cloze.ui.session import ClozeSession
from components.common.ui import Update, View, several

UNCHANGED_CLIPS = 12  # BEGINNING/END images, BEGINNING/END videos, A-D images, A-D videos


@dataclass
class AnswerBoxes(View):
    """The Model panel's answer for the question on screen: `render` puts `AnswerBoxes.cleared()`
    in every new question's view, so another question's answer never stays beside it (a view that
    leaves the boxes alone leaves this field out of its QuestionView)."""

    raw: str
    parsed: str          # the letter read from the reply
    reason: str
    option_map: dict[str, str] | None
    #: the model's reasoning (collapsed, with token counts) and, with "compare with", both
    #: models' answers side by side (components/cloze/view.py)
    beside: str
    #: the answer in one line where the question's buttons are (letter, mark, reason's start)
    headline: str

    @classmethod
    def cleared(cls) -> AnswerBoxes:
        """Every box emptied (a new question: no answer yet)."""
        return cls(raw="", parsed="", reason="", option_map=None, beside="", headline="")


@dataclass
class QuestionView(View):
    #: UNCHANGED_CLIPS updates (images shown for "frames", videos for "video"), in ui.clips' order
    clips: tuple = several(UNCHANGED_CLIPS)
    progress: str             # "**Question i of n · 00:00** · answered k/n"
    navigator: str | Update   # the value, or gr.update(choices=["1 ✓", "2", ...], value=...)
    answer: AnswerBoxes       # the Model panel's boxes: the old question's answer never stays


@dataclass
class ClockView(View):
    """The progress line's clock; it never touches the message line."""

    progress: str
    message: str | None = None


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
    annotator: str  # the id the practice runs under (an anonymous one when the box was empty)


@dataclass
class ModeView(View):
    """The panels and buttons each mode shows (page.mode_view)."""

    question_group: Update
    model_group: Update
    compare_group: Update
    practice_row: Update
    answer_row: Update
    export_row: Update
    start: Update
    run_row: Update            # Run this question / Run the set / Stop, the question order (Model mode)
    progress_box: Update       # "Question i of n": not in Compare mode, where no question is shown
    # Compare mode shows only what applies to it: no strip for the status line, no display
    # choice, no question link, no fold of the runs' answers to a question that is not shown
    status_line: Update
    display: Update
    copy_link: Update
    runs_fold: Update


@dataclass
class SourceView(View):
    session: ClozeSession
    root: str
    status: str


@dataclass
class RootView(View):
    set_name: Update
    status: str


@dataclass
class RunOneView(View):
    session: ClozeSession
    question: QuestionView   # the question answered, on screen (no "Load the question set" first)
    summary: str


@dataclass
class RunSetView(View):
    summary: str
    results_file: Update


@dataclass
class LeaderboardView(View):
    leaderboard: Update
    human_vs_model: Update


@dataclass
class RunOpened(View):
    """A leaderboard row's run opened whole (handlers/compare_panel.py, show_run)."""

    run_view: str


@dataclass
class ModePick(View):
    panels: ModeView
    board: LeaderboardView
    session: ClozeSession    # the question on screen, numbered in the new mode's order (UNCHANGED: as it was)
    question: QuestionView
    feedback: str            # the last answer's verdict goes with the mode it was given in


@dataclass
class LinkView(View):
    """A page opened from a link to a question: the question shown, the controls it was built from."""

    session: ClozeSession
    question: QuestionView
    feedback: str
    mode: str | None
    root: str
    set_name: str | Update
    dims: str
    seed: int
    panels: ModeView
    order: str        # Model mode: the question order the link asks for (the Order dropdown)
    poll: gr.Timer   # the preparation timer (on while the data is made)
    board: LeaderboardView   # `mode=compare`: the leaderboard the link opens on


@dataclass
class LinkBoxView(View):
    link: Update  # the query string (the page adds its own address), in the now visible link box


@dataclass
class BuildView(View):
    session: ClozeSession
    build_out: str
    root: str


@dataclass
class ExportView(View):
    export_file: Update


@dataclass
class TimerView(View):
    """The practice clock's timer: on while a practice playthrough is started."""

    timer: gr.Timer
    message: str | None = None


@dataclass
class OrderView(View):
    """Order sensitivity: the run's line."""

    order_out: str


@dataclass
class RunsPanelView(View):
    """What the runs answered on the question on screen (handlers/runs_panel.py), and the timer
    that asks again while the run files load; it follows the session: the tab's line stays."""

    runs_html: str
    runs_timer: gr.Timer
    message: str | None = None


@dataclass
class AcrossView(View):
    """The question list across questions (and, asked for, the runs-by-questions overview)."""

    runs_list: str
    runs_grid: str
    runs_across_timer: gr.Timer
    message: str | None = None


@dataclass
class FirstPageView(View):
    """A new filter of the question list starts at page 1."""

    runs_page: int
    message: str | None = None


@dataclass
class BlindView(View):
    """Blind on: the across-questions fold shut, its list and grid gone."""

    runs_across: Update
    runs_list: str
    runs_grid: str
    message: str | None = None


@dataclass
class RunsLinkView(View):
    """A link's view of the run panels (`sort=`, `overview=1`, `find=`): the fold opened with it."""

    runs_across: Update
    runs_sort: str
    runs_overview: bool
    runs_find: str
    lists: AcrossView          # the list (and overview) it asks for, drawn in the same answer
    message: str | None = None


@dataclass
class RunPicked(View):
    """A leaderboard row clicked: its run named, page 1 (the name's change opens it)."""

    run_name: str
    run_page: int
    message: str | None = None
