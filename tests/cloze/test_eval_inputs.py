"""Issue 28, "Eval inputs that still score silently", for `eval cloze`: what it refuses (rc 2, one
line naming file and key) and what it scores but counts and names. Real files, `app.main`."""
from __future__ import annotations

import json

import pytest

OM = {"A": "GT", "B": "Early", "C": "Late", "D": "Wide"}


def run_main(argv, capsys) -> tuple[int, str, str]:
    from app import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def write(path, data):
    path.write_text(json.dumps(data))
    return path


def entry(answer="A", **extra):
    return {"answer": answer, "option_map": dict(OM), "expected": "A", "correct": answer == "A", **extra}


def stems(n=3, **override):
    out = {f"s{i}": {"S": entry(), "A": entry("B"), "C": entry()} for i in range(n)}
    for key, value in override.items():
        stem, dim = key.split("_")
        out[stem][dim] = value
    return out


def test_a_contradicting_correct_flag_is_scored_by_the_flag_and_named(tmp_path, capsys):
    # s1's S says correct: true while its answer B names "Early" in its own option map
    results = write(tmp_path / "R.json", stems(s1_S={"answer": "B", "option_map": dict(OM), "correct": True}))
    code, out, err = run_main(["eval", "cloze", "--results", str(results), "--json"], capsys)
    m = json.loads(out)
    assert code == 0 and m["contradictions"] == 1 and m["contradicting_entries"] == ["s1/S"]
    assert m["S"] == 100.0  # the released analysis scores the flag
    assert any("contradicts" in n and "s1/S" in n for n in m["notes"])
    assert "note: 1 entr(ies) have a 'correct' flag that contradicts" in err and "s1/S" in err
    code, out, _ = run_main(["eval", "cloze", "--results", str(results)], capsys)
    assert code == 0 and "contradictions" in out


def test_an_entry_with_nothing_to_score_it_by_is_invalid_not_wrong(tmp_path, capsys):
    results = write(tmp_path / "R.json", stems(s0_A={"answer": "C"}))
    code, out, err = run_main(["eval", "cloze", "--results", str(results), "--json"], capsys)
    m = json.loads(out)
    assert code == 0 and m["invalid_entries_skipped"] == 1 and m["invalid_kinds"]["unscorable"] == 1
    assert m["A"] == 0.0 and m["error_source"]["A"]["Early"] == 100.0  # two valid A entries, both B
    assert m["parse_rate"] == pytest.approx(100 * 8 / 9)
    assert "1 entr(ies) have an answer but no 'correct', 'expected' or option_map GT" in err


def test_an_option_map_with_several_gt_is_refused(tmp_path, capsys):
    results = write(tmp_path / "R.json", stems(s2_C=entry(option_map={k: "GT" for k in "ABCD"})))
    code, out, err = run_main(["eval", "cloze", "--results", str(results), "--json"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "R.json: stem 's2' dimension C key 'option_map': 4 options (A, B, C, D) are GT" in err


def test_an_empty_result_file_is_refused(tmp_path, capsys):
    results = write(tmp_path / "R.json", {})
    code, out, err = run_main(["eval", "cloze", "--results", str(results), "--json"], capsys)
    assert code == 2 and out == "" and "R.json: no S, A, C or Mixed entry to score" in err


# -- human-study files -------------------------------------------------------------------------------

def human_line(stem="s0", dim="A", answer="A", **extra):
    return json.dumps({"stem": stem, "dim": dim, "answer": answer, "option_map": OM, **extra}) + "\n"


def human(paths, capsys):
    return run_main(["eval", "cloze", "--human", "--json", "--results", *map(str, paths)], capsys)


def test_a_torn_last_line_is_refused(tmp_path, capsys):
    path = tmp_path / "a1.jsonl"
    path.write_text(human_line("s0", task_index=0) + human_line("s1", task_index=1)
                    + human_line("s2", task_index=2)[:25])
    code, out, err = human([path], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "a1.jsonl: line 3 is not valid JSON (a torn last line" in err


def test_a_task_index_outside_the_released_schedule_is_refused(tmp_path, capsys):
    data = {"dataset_id": "set_1", "schedule": [{"stem": "s0", "dim": "A"}, {"stem": "s1", "dim": "A"}],
            "responses": {"0": {"task_index": 0, "stem": "s0", "dim": "A", "answer": "A", "option_map": OM},
                          "999": {"task_index": 999, "stem": "s1", "dim": "A", "answer": "A", "option_map": OM}}}
    path = write(tmp_path / "set_1.json", data)
    code, out, err = human([path], capsys)
    assert code == 2 and out == ""
    assert "set_1.json: responses['999'] key 'task_index': 999 is not a question of the file's schedule (0-1)" in err


@pytest.mark.parametrize("index", [-1, "3", 1.5])
def test_a_task_index_that_is_no_question_number_is_refused(tmp_path, capsys, index):
    path = tmp_path / "a1.jsonl"
    path.write_text(human_line("s0", task_index=0) + human_line("s1", task_index=index))
    code, _, err = human([path], capsys)
    assert code == 2 and "a1.jsonl line 2 key 'task_index'" in err


def test_one_task_index_for_two_questions_is_refused(tmp_path, capsys):
    path = tmp_path / "a1.jsonl"
    path.write_text(human_line("s0", task_index=4) + human_line("s1", task_index=4))
    code, _, err = human([path], capsys)
    assert code == 2 and "task_index': 4 names stem 's1' A here and stem 's0' A at" in err


def test_annotator_ids_differing_only_by_case_are_one_annotator_under_the_first_spelling(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    a, b = tmp_path / "Ann1.jsonl", tmp_path / "x" / "ann1.jsonl"
    a.write_text(human_line("s0", task_index=0, answered_at_utc="2026-01-01T10:00:00+00:00"))
    b.write_text(human_line("s0", answer="B", task_index=0, answered_at_utc="2026-01-01T11:00:00+00:00")
                 + human_line("s1", task_index=1))
    code, out, err = human([a, b], capsys)
    m = json.loads(out)
    # one person: their newer answer to s0 (B, wrong) replaces the older one; not two judgments
    assert code == 0 and m["A"] == 50.0 and m["entries"] == 2
    assert "annotator 'ann1'" in err and "counted as 'Ann1'" in err and "ann1.jsonl line 1" in err


def test_clean_human_files_still_score(tmp_path, capsys):
    a, b = tmp_path / "ann1.jsonl", tmp_path / "ann2.jsonl"
    a.write_text(human_line("s0", task_index=0) + human_line("s0", task_index=0, answer="B"))  # a redo
    b.write_text(human_line("s0", task_index=3))
    code, out, err = human([a, b], capsys)
    assert code == 0 and json.loads(out)["A"] == 0.0 and err == ""
