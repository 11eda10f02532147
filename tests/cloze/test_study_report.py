"""The researcher's numbers: Fleiss' kappa (checked on Fleiss' worked example and by hand with
unequal raters), the Human row with bootstrap intervals over stems (its values those of the
released analysis), attention checks apart from the score, and the practice question."""
from __future__ import annotations

import json
import re

import pytest

from components.cloze.metrics import human_results, score_results
from components.cloze.study import handlers as h
from components.cloze.study import store as store_mod
from components.cloze.study.agreement import fleiss_kappa
from components.cloze.study.practice import ANSWER
from components.cloze.study.report import ROW_KEYS, human_row_intervals
from components.base.errors import UserError
from components.base.io import read_jsonl
from tests.cloze.test_study_flow import OPTION_NAMES, make_study, start, values

# Fleiss (1971) as tabulated on Wikipedia's "Fleiss' kappa": 10 subjects, 14 raters, 5 categories;
# kappa = 0.210
FLEISS_TABLE = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


def test_fleiss_kappa_on_the_worked_example():
    items = [[c for c, n in zip("12345", row) for _ in range(n)] for row in FLEISS_TABLE]
    k = fleiss_kappa(items)
    assert round(k.kappa, 3) == 0.210 and k.questions == 10 and k.judgments == 140


def test_fleiss_kappa_with_unequal_raters_by_hand():
    # P1 = (4-2)/2 = 1, P2 = (1+4-3)/6 = 1/3, P_bar = 2/3; p_a = 3/5, p_b = 2/5, P_e = 0.52
    k = fleiss_kappa([["a", "a"], ["a", "b", "b"], ["b"]])          # a single judgment does not count
    assert k.kappa == pytest.approx((2 / 3 - 0.52) / 0.48) and k.questions == 2
    assert fleiss_kappa([["a"], []]).kappa is None
    assert fleiss_kappa([["a", "a"], ["a", "a"]]).kappa is None       # P_e = 1: undefined


def _records(stems: list[str], wrong: set[tuple[str, str]]) -> list[dict]:
    out = []
    for who in ("x", "y"):
        for stem in stems:
            for dim in ("S", "A", "C"):
                pick = "Wide" if (who, stem, dim) in wrong else "GT"
                out.append({"annotator": who, "stem": stem, "dim": dim, "answer": "A",
                            "option_map": {"A": pick, "B": "Rand1", "C": "Rand2", "D": "Rand3"}})
    return out


def test_the_human_row_intervals_are_over_stems_and_keep_the_released_values():
    stems = [f"s{i}" for i in range(10)]
    recs = _records(stems, {("x", "s0", "A"), ("y", "s1", "C"), ("y", "s1", "S"), ("x", "s2", "S")})
    row = human_row_intervals(recs)
    released = score_results(human_results(recs))
    for key in ROW_KEYS:
        assert row[key].value == pytest.approx(released[key]), key
        assert 0 <= row[key].low <= row[key].value <= row[key].high <= 100 and row[key].units == 10
    assert row["acc"].value == pytest.approx(100 * 26 / 30) and row["3/3"].value == pytest.approx(70.0)
    assert human_row_intervals(recs)["acc"] == row["acc"]               # a fixed seed: the same interval
    assert human_row_intervals([])["acc"].value is None


@pytest.fixture
def study(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    store_mod.forget_stores()
    return lambda **kw: h.Study(str(make_study(cloze_examples, tmp_path, stems=6, display="frames", **kw)))


def test_a_check_comes_after_every_k_answers_from_a_video_already_answered_and_is_reported_apart(study,
                                                                                                monkeypatch):
    s = study(catch_every=2)
    cfg = s.config
    view = start(s, "c1")
    checks = []
    for _ in range(18):
        view = h.choose(s, view.session, "A")
        if view.session.stage == "check":
            check = view.session.check
            cfg_, sset, store = s.parts("c1")
            asked = [i for i, q in enumerate(sset.questions) if q.stem == check.stem]
            assert all(i in store.latest for i in asked)          # its video's questions are all answered
            assert not OPTION_NAMES.search(values(view).replace(str(cfg.media_cache), ""))
            assert "check" in view.progress and len(store.latest) >= 2 * check.number
            checks.append(check)
            view = h.choose(s, view.session, check.expected)     # answered right
        if view.session.stage == "done" or len(s.parts("c1")[2].latest) == 18:
            break
    assert checks, "no check was given"
    folder = cfg.results / cfg.study_id
    given = read_jsonl(folder / "c1.catch.jsonl")
    assert len(given) == len(checks) and all(r["correct"] and r["catch"] for r in given)
    answers = read_jsonl(folder / "c1.jsonl")
    assert not any(r.get("catch") for r in answers)
    released = json.loads((folder / "c1" / "set_1.json").read_text())["responses"]
    assert len(released) == len(s.parts("c1")[2].latest) and all("others" not in r for r in released.values())
    _, sset, store = s.parts("c1")
    locked = next(i for i, q in enumerate(sset.questions) if q.stem == checks[0].stem)
    with pytest.raises(UserError, match="final"):
        h.change(s, h.go(s, view.session, locked).session)
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "tok")
    shown = h.researcher(s, "tok")
    assert f"c1 {len(checks)}/{len(checks)}" in shown.summary
    assert "Attention checks (not part of the score)" in shown.summary


def test_the_instruction_and_practice_come_before_question_1_and_score_nothing(study):
    s = study(practice=True)
    layout, view, _ = h.start(s, h.StudySession(), "p1")
    assert view.session.stage == "intro" and layout.intro["visible"] and not layout.question_box["visible"]
    assert view.image is None and "before you start" in view.progress
    with pytest.raises(UserError, match="practice question first"):
        h.begin(s, view.session)
    session, told = h.practice(s, view.session, "A" if ANSWER != "A" else "B")
    assert f"**{ANSWER}**" in told and "Begin the study" in told
    session, told = h.practice(s, session, ANSWER)
    assert told.startswith(f"**{ANSWER} is right**")
    layout, view = h.begin(s, session)
    assert view.session.stage == "question" and view.session.index == 0 and layout.question_box["visible"]
    cfg = s.config
    folder = cfg.results / cfg.study_id
    assert [r["correct"] for r in read_jsonl(folder / "p1.practice.jsonl")] == [False, True]
    assert read_jsonl(folder / "p1.jsonl") == []
    store_mod.forget_stores()
    _, again, _ = h.start(s, h.StudySession(), "p1")     # practised once: straight to the question
    assert again.session.stage == "question"


def test_the_report_shows_each_annotators_time_apart_from_loading(study, monkeypatch):
    s = study()
    view = start(s, "t1")
    h.choose(s, view.session, "A", json.dumps({"key": view.session.key, "load_ms": 0.0, "think_ms": 0.0}))
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "tok")
    shown = h.researcher(s, "tok")
    headers = shown.annotators["headers"]
    row = dict(zip(headers, shown.annotators["value"][0]))
    assert row["annotator"] == "t1" and row["answered"] == 1 and row["timed in the page"] == "1/1"
    assert row["thinking time (s)"] == 0.0 and row["median load (s)"] == 0.0
    assert re.search(r"Human \(this study\), 95 % interval over stems \| ", shown.summary)
    assert "Fleiss' kappa" in shown.summary
