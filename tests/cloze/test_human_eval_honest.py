"""Issue 38, items 4-6: `eval cloze --human` says what it did with every line. A record it cannot
score is invalid (counted, with its file and line), never wrong; a `correct` flag that contradicts
the answer is said; a question answered twice counts its newest answer (`answered_at_utc`, as the
study page's store resolves a redo); every refusal names its file and line; the study page's
practice and attention-check files, which `<results>/<study>/*.jsonl` takes in, are skipped and
counted. Real files through `app.main`; the study folder is written by the study page's handlers."""
from __future__ import annotations

import json

import pytest

from components.cloze.study import handlers as h
from components.cloze.study import store as store_mod
from components.cloze.study.practice import ANSWER
from tests.cloze.test_study_flow import make_study, start

OM = {"A": "GT", "B": "Early", "C": "Late", "D": "Wide"}


def run_main(argv, capsys) -> tuple[int, str, str]:
    from app import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def line(stem="s0", dim="A", answer="A", **extra) -> str:
    return json.dumps({"stem": stem, "dim": dim, "answer": answer, "option_map": OM, "expected": "A",
                       "correct": answer == "A", **extra}) + "\n"


def nine_right(**replace_last) -> str:
    """One annotator, 3 stems x S/A/C, every answer right; the last record's keys replaced."""
    lines = [json.loads(line(f"s{i}", dim, task_index=3 * i + k))
             for i in range(3) for k, dim in enumerate("SAC")]
    for key, value in replace_last.items():
        if value is None:
            lines[-1].pop(key, None)
        else:
            lines[-1][key] = value
    return "".join(json.dumps(r) + "\n" for r in lines)


def human(paths, capsys):
    code, out, err = run_main(["eval", "cloze", "--human", "--json", "--results", *map(str, paths)], capsys)
    return code, (json.loads(out) if code == 0 else None), err


def test_a_record_with_nothing_to_score_it_by_is_invalid_and_named_never_wrong(tmp_path, capsys):
    path = tmp_path / "a1.jsonl"
    path.write_text(nine_right(option_map=None, expected=None, correct=None))
    code, m, err = human([path], capsys)
    # the old scoring: 8 of 9 right, acc 88.89 with no word; a result file counts the same entry invalid
    assert code == 0 and m["acc"] == 100.0 and m["P"] == 100.0
    assert m["invalid_kinds"]["unscorable"] == 1 and m["entries"] == 9 and m["parse_rate"] == pytest.approx(800 / 9)
    assert "1 human answer(s) cannot be scored" in err and f"{path} line 9" in err


def test_a_correct_flag_that_contradicts_the_answer_is_scored_by_the_answer_and_said(tmp_path, capsys):
    path = tmp_path / "a1.jsonl"
    path.write_text(nine_right(answer="B", correct=True))       # B names "Early": wrong, whatever the flag
    code, m, err = human([path], capsys)
    assert code == 0 and m["acc"] == pytest.approx(800 / 9)
    assert "1 human answer(s) have a 'correct' flag that contradicts the answer" in err
    assert f"{path} line 9" in err and "scored by the answer" in err


def test_a_question_answered_twice_counts_the_newest_answer_not_the_last_line(tmp_path, capsys):
    path = tmp_path / "a1.jsonl"
    newer = line("s0", "A", "A", task_index=0, answered_at_utc="2026-05-17T12:00:00+00:00", redo_count=1)
    older = line("s0", "A", "B", task_index=0, answered_at_utc="2026-05-17T11:00:00+00:00", redo_count=0)
    path.write_text(newer + older)                              # the older answer written after the newer
    code, m, _ = human([path], capsys)
    assert code == 0 and m["A"] == 100.0 and m["entries"] == 1
    path.write_text(older + newer)
    assert human([path], capsys)[1]["A"] == 100.0
    untimed = tmp_path / "a2.jsonl"                             # no times: the later line is the redo
    untimed.write_text(line("s0", "A", "A", task_index=0) + line("s0", "A", "B", task_index=0))
    assert human([untimed], capsys)[1]["A"] == 0.0


@pytest.mark.parametrize("key", ["stem", "dim", "answer"])
def test_a_record_lacking_a_key_is_refused_naming_file_line_and_key(tmp_path, capsys, key):
    path = tmp_path / "a1.jsonl"
    broken = json.loads(line("s1", task_index=1))
    broken.pop(key)
    path.write_text(line("s0", task_index=0) + json.dumps(broken) + "\n")
    code, _, err = human([path], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path} line 2 lacks key '{key}'" in err


def test_a_dimension_that_is_not_s_a_or_c_is_refused_not_dropped(tmp_path, capsys):
    path = tmp_path / "a1.jsonl"
    path.write_text(line("s0", task_index=0) + line("s1", "X", task_index=1))
    code, _, err = human([path], capsys)
    assert code == 2 and f"{path} line 2 key 'dim': 'X'" in err


@pytest.fixture
def study_folder(cloze_examples, tmp_path, monkeypatch):
    """A study with practice on and attention checks, answered on the study page by two annotators
    (every question); its folder holds <id>.jsonl, <id>.practice.jsonl and <id>.catch.jsonl."""
    monkeypatch.delenv("APP_STUDY", raising=False)
    store_mod.forget_stores()
    s = h.Study(str(make_study(cloze_examples, tmp_path, stems=4, display="frames", practice=True, catch_every=2)))
    for who in ("ann1", "ann2"):
        view = start(s, who)
        assert view.session.stage == "intro"
        session, _ = h.practice(s, view.session, ANSWER)
        _, view = h.begin(s, session)
        for _ in range(40):
            if view.session.stage == "check":
                view = h.choose(s, view.session, view.session.check.expected)
                continue
            _, sset, store = s.parts(who)
            if len(store.latest) == len(sset.questions):
                break
            view = h.choose(s, view.session, sset.questions[view.session.index].expected)
    cfg = s.config
    folder = cfg.results / cfg.study_id
    assert sorted(p.name for p in folder.glob("*.jsonl")) == [
        "ann1.catch.jsonl", "ann1.jsonl", "ann1.practice.jsonl", "ann2.catch.jsonl", "ann2.jsonl",
        "ann2.practice.jsonl"]
    return folder


def test_the_readmes_glob_over_a_study_with_practice_scores_it_and_counts_what_it_skips(study_folder, capsys):
    files = sorted(study_folder.glob("*.jsonl"))                 # <results>/<study>/*.jsonl, as the README
    code, m, err = human(files, capsys)
    assert code == 0, err
    assert m["acc"] == 100.0 and m["entries"] == 12 and m["practice_answers_skipped"] == 2
    assert m["check_answers_skipped"] >= 2
    assert "note: 2 practice answers not scored" in err
    assert f"note: {m['check_answers_skipped']} attention-check answers not scored" in err
    only_practice = [p for p in files if p.name.endswith(".practice.jsonl")]
    code, _, err = human(only_practice, capsys)
    assert code == 2 and "2 practice" in err and "ann1.practice.jsonl" in err
