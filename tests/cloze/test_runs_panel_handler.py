"""The Cloze runs panel's handler (components/cloze/ui/handlers/runs_panel.py) on the example data:
a `--runs` folder's runs join the data's, a malformed file is listed with its line, and a practice
playthrough keeps the panel shut until the question on screen is answered."""
from __future__ import annotations

import json

import pytest

from components.cloze.human import record_answer
from components.cloze.ui.handlers import questions_for, runs_panel
from components.cloze.ui.session import HUMAN, MODEL, ClozeSession
from examples.released_runs import write_released_runs


@pytest.fixture
def extra(tmp_path, cloze_examples):
    stems = sorted(p.name for p in (cloze_examples / "choices").iterdir() if p.is_dir())
    folder = tmp_path / "extra"
    write_released_runs(stems, folder, 1, seed=7, prefix="named-run", quirks=False)
    (folder / "broken.json").write_text("{not json")
    runs_panel.forget_loaders()
    yield folder
    runs_panel.forget_loaders()


def _ready(session: ClozeSession, named) -> str:
    runs_panel.loader_for(session.data_dir, named).wait(120)
    return runs_panel.question_panel(session, named)


def test_a_named_folder_joins_and_its_broken_file_is_listed(cloze_examples, extra):
    named = (str(extra),)
    session = ClozeSession(data_dir=str(cloze_examples.parent), root=str(cloze_examples), mode=MODEL)
    html = _ready(session, named)
    assert 'data-state="ready"' in html
    assert 'data-run="named-run00_results"' in html and 'data-run="example-model02_results"' in html
    # the first question's stem has no entry in example-model00 (a released quirk): no row, no count
    assert 'data-run="example-model00_results"' not in html
    assert "broken.json not loaded: not valid JSON" in html


def test_practice_is_shut_until_the_question_is_answered(cloze_examples, extra, tmp_path):
    named = (str(extra),)
    answers = tmp_path / "anon.jsonl"
    session = ClozeSession(data_dir=str(cloze_examples.parent), root=str(cloze_examples), mode=HUMAN,
                           file=str(answers), annotator="anon", session_id="s1")
    assert 'data-state="shut"' in _ready(session, named)
    _, qs = questions_for(session)
    record_answer(answers, qs.questions[0], task_index=0, answer="A", annotator="anon", session="s1",
                  set_name=qs.name, order_seed=session.seed, display_mode="frames", answer_flow="immediate",
                  elapsed_sec=1.0)
    html = runs_panel.question_panel(session, named)
    assert 'data-state="ready"' in html and "runs chose the true middle" in html
    assert json.loads(answers.read_text().splitlines()[0])["stem"] == qs.questions[0].stem
    # the next question, not answered, stays shut
    assert 'data-state="shut"' in runs_panel.question_panel(session.__class__(**{**session.__dict__, "index": 1}), named)


def test_a_blind_playthrough_never_opens_the_panel_not_even_after_the_answer(cloze_examples, extra, tmp_path):
    named = (str(extra),)
    answers = tmp_path / "blind.jsonl"
    session = ClozeSession(data_dir=str(cloze_examples.parent), root=str(cloze_examples), mode=HUMAN,
                           file=str(answers), annotator="blind", session_id="s1")
    _ready(session, named)
    _, qs = questions_for(session)
    record_answer(answers, qs.questions[0], task_index=0, answer="A", annotator="blind", session="s1",
                  set_name=qs.name, order_seed=session.seed, display_mode="frames", answer_flow="immediate",
                  elapsed_sec=1.0, blind=True)
    html = runs_panel.question_panel(session, named)
    assert 'data-state="shut"' in html and "Blind playthrough" in html
    assert "true middle" not in html                                   # nothing names it
    assert "data-run=" not in html


def test_a_runs_link_opens_the_fold_with_its_list_drawn_in_the_same_answer(cloze_examples, extra):
    """`?tab=cloze&sort=hardest&overview=1&find=...`: one answer opens the fold, sets its controls
    and draws the list; a blind playthrough gets the fold's shut note; a link asking for no runs
    view changes nothing."""
    from components.cloze.ui.session import ClozeTab
    from components.common.sessions import Resources
    from components.common.ui import UNCHANGED

    named = (str(extra),)
    tab, res = ClozeTab(str(cloze_examples.parent)), Resources()
    session = ClozeSession(data_dir=str(cloze_examples.parent), mode=MODEL)
    runs_panel.loader_for(session.data_dir, named).wait(120)
    stem = sorted(p.name for p in (cloze_examples / "choices").iterdir() if p.is_dir())[0]
    view = runs_panel.open_view(tab, res, session, False, {"tab": "cloze", "sort": "hardest", "overview": "1",
                                                         "find": stem}, named=named)
    assert view.runs_across["open"] is True and (view.runs_sort, view.runs_overview, view.runs_find) == \
        ("hardest", True, stem)
    assert stem in view.lists.runs_list and view.lists.runs_grid
    shut = runs_panel.open_view(tab, res, ClozeSession(data_dir=str(cloze_examples.parent), mode=HUMAN), True,
                                {"sort": "hardest"}, named=named)
    assert 'data-state="shut"' in shut.lists.runs_list and shut.lists.runs_grid == ""
    nothing = runs_panel.open_view(tab, res, session, False, {"tab": "cloze", "q": "1"}, named=named)
    assert nothing.runs_across is UNCHANGED and nothing.lists is UNCHANGED and nothing.message is None
