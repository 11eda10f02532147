"""No answer is lost: a released-format `set_N.json` at an annotator's result path is read back and
resumed, merged with the durable JSONL, kept when it belongs to another run, and never rewritten
with fewer answers than it held; the released app and this app writing one file in turn never lose
an answer. The other writer is tests/helpers/released_study.py (the released app's file handling,
written out independently of the code under test)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from components.cloze.study import handlers as h
from components.cloze.study import store as store_mod
from components.cloze.study.merge import conflicts
from components.cloze.study.protocol import set_seed
from components.base.io import read_jsonl
from tests.cloze.test_study_flow import make_study, start
from tests.helpers.released_study import ReleasedApp

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def study(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    store_mod.forget_stores()
    return h.Study(str(make_study(cloze_examples, tmp_path, stems=6, display="frames")))


def files(study: h.Study, who: str) -> tuple[Path, Path]:
    cfg = study.config
    folder = cfg.results / cfg.study_id
    return folder / who / f"{cfg.set_name}.json", folder / f"{who}.jsonl"


def responses(path: Path) -> dict[str, dict]:
    return json.loads(path.read_text())["responses"]


def restart() -> None:
    """The study server restarted: nothing kept in memory."""
    store_mod.forget_stores()


def test_a_released_file_is_resumed_at_its_first_unanswered_question_and_keeps_every_answer(study):
    result, jsonl = files(study, "ann1")
    released = ReleasedApp(study.config.set_folder, result.parent).start()
    for letter in "ABCDABCDA":
        released.answer(letter)                              # tasks 0..8
    released.answer("B", index=10)                           # and 10, from its navigator
    assert "choices_dir" not in json.loads(result.read_text())   # as the released app writes it now
    view = start(study, "ann1")
    assert view.session.index == 9 and view.session.answered == 10
    view = h.choose(study, view.session, "C")                # task 9
    assert view.session.index == 11                          # the next unanswered after it
    h.choose(study, view.session, "D")
    kept = responses(result)
    assert sorted(map(int, kept)) == list(range(12))
    assert [kept[str(i)]["answer"] for i in range(11)] == [*"ABCDABCDA", "C", "B"]
    recs = read_jsonl(jsonl)
    assert len(recs) == 12 and sum(r.get("source") == "result_file" for r in recs) == 10
    again = ReleasedApp(study.config.set_folder, result.parent).start()   # the released app reuses it
    assert len(again.data["responses"]) == 12 and again.index == 12


def test_an_older_released_file_with_a_list_of_responses_and_another_machines_path_is_resumed(study):
    """The older released app wrote `choices_dir` (its own path); responses may be a list."""
    result, _ = files(study, "ann2")
    released = ReleasedApp(study.config.set_folder, result.parent).start()
    for letter in "ABC":
        released.answer(letter)
    data = json.loads(result.read_text())
    data["choices_dir"] = "/home/someone/choices_human/set_1"
    data["result_path"] = "/home/someone/human_eval_results/set_1.json"
    data["responses"] = list(data["responses"].values())
    result.write_text(json.dumps(data, indent=2))
    view = start(study, "ann2")
    assert view.session.index == 3 and view.session.answered == 3
    assert [responses(result)[str(i)]["answer"] for i in range(3)] == list("ABC")
    assert json.loads(result.read_text())["started_at_utc"] == data["started_at_utc"]


def test_the_result_file_is_written_at_start_as_released(study):
    result, _ = files(study, "ann3")
    start(study, "ann3")
    data = json.loads(result.read_text())
    assert data["responses"] == {} and data["seed"] == set_seed("set_1") and len(data["schedule"]) == 18


def test_alternating_writers_never_lose_an_answer(study, monkeypatch):
    """The released app keeps the run in memory from its Start and rewrites the whole file, so each
    of its writes drops what this app added since; this app reads the file back before each write."""
    result, jsonl = files(study, "ann4")
    real_write = store_mod.write_result_file
    held_before: list[tuple[int, int]] = []

    def watched(path, header, records):          # the real write, its sizes noted
        before = len(responses(Path(path))) if Path(path).exists() else 0
        held_before.append((before, len(records)))
        return real_write(path, header, records)
    monkeypatch.setattr(store_mod, "write_result_file", watched)

    released = ReleasedApp(study.config.set_folder, result.parent).start()
    for letter in "ABCDA":
        released.answer(letter)                       # 0-4 by the released app
    view = start(study, "ann4")                       # reads them back
    view = h.choose(study, view.session, "B")         # 5
    view = h.choose(study, view.session, "C")         # 6
    released.answer("D", index=9)                     # its stale copy: the file loses 5 and 6
    assert set(responses(result)) == {"0", "1", "2", "3", "4", "9"}
    released.answer("C", index=0)                     # a redo of task 0 there
    view = h.choose(study, view.session, "A")         # 7: reads 9 and the redo back first
    assert sorted(map(int, responses(result))) == [0, 1, 2, 3, 4, 5, 6, 7, 9]
    assert view.session.index == 8
    released.answer("B", index=12)                    # stale again: drops 5, 6, 7
    view = h.choose(study, view.session, "D")         # 8
    restart()
    final = responses(result)
    assert sorted(map(int, final)) == [*range(10), 12]
    assert final["0"]["answer"] == "C" and final["0"]["redo_count"] == 1    # the redo is not undone
    assert [final[str(i)]["answer"] for i in (5, 6, 7, 8, 9, 12)] == list("BCADDB")
    assert all(after >= before for before, after in held_before), held_before   # never fewer
    by_task = {}
    for rec in read_jsonl(jsonl):
        by_task.setdefault(rec["task_index"], []).append(rec["answer"])
    assert sorted(by_task) == [*range(10), 12] and by_task[0] == ["A", "C"]   # both kept, in order
    assert conflicts(read_jsonl(jsonl)) == []
    assert len(ReleasedApp(study.config.set_folder, result.parent).start().data["responses"]) == 11


def test_two_writers_answering_one_question_keep_both_and_report_it(study, monkeypatch):
    result, jsonl = files(study, "ann5")
    view = start(study, "ann5")
    released = ReleasedApp(study.config.set_folder, result.parent).start()   # started before our answer
    view = h.choose(study, view.session, "A")         # task 0 here ...
    released.answer("B", index=0)                     # ... and there, neither knowing of the other
    released.answer("C", index=1)                     # task 1 there while it is on screen here ...
    h.choose(study, view.session, "D")                # ... and here: both kept, the later counts
    restart()
    start(study, "ann5")
    kept = responses(result)
    assert kept["0"]["answer"] == "B" and kept["1"]["answer"] == "D"
    assert [r["answer"] for r in read_jsonl(jsonl) if r["task_index"] == 0] == ["A", "B"]
    assert [r["answer"] for r in read_jsonl(jsonl) if r["task_index"] == 1] == ["C", "D"]
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "tok")
    summary = h.researcher(study, "tok").summary
    assert "question 1: answered A" in summary and "the later (B) counts, both are kept" in summary
    assert "question 2: answered C" in summary and "the later (D) counts" in summary


def test_a_file_of_another_run_is_set_aside_never_overwritten(study):
    result, _ = files(study, "ann6")
    result.parent.mkdir(parents=True)
    other = {"dataset_id": "set_1", "schedule_policy": "single_folder_navigation_v1", "seed": 1,
             "schedule": [], "responses": {"0": {"task_index": 0, "stem": "x", "dim": "S", "answer": "A"}}}
    result.write_text(json.dumps(other))
    start(study, "ann6")
    legacy = list(result.parent.glob("set_1.legacy-*.json"))
    assert len(legacy) == 1 and json.loads(legacy[0].read_text()) == other
    assert responses(result) == {}
    cfg = study.config
    store = store_mod.store_for(cfg, "ann6", h.study_set(cfg.set_folder, cfg.set_name, cfg.seed).questions)
    assert any("another run" in n and legacy[0].name in n for n in store.notes)


def test_an_unreadable_file_is_set_aside(study):
    result, _ = files(study, "ann7")
    result.parent.mkdir(parents=True)
    result.write_text('{"responses": {"0": ')            # cut off
    start(study, "ann7")
    kept = list(result.parent.glob("set_1.unreadable-*.json"))
    assert len(kept) == 1 and kept[0].read_text() == '{"responses": {"0": '


def test_answers_to_questions_the_set_no_longer_has_are_kept_in_a_copy(study):
    result, _ = files(study, "ann8")
    released = ReleasedApp(study.config.set_folder, result.parent).start()
    released.answer("A")
    data = json.loads(result.read_text())
    data["responses"]["17"] = {**data["responses"]["0"], "task_index": 17, "stem": "gone_stem"}
    result.write_text(json.dumps(data))
    start(study, "ann8")
    copies = list(result.parent.glob("set_1.legacy-*.json"))
    assert len(copies) == 1 and "17" in json.loads(copies[0].read_text())["responses"]
    assert set(responses(result)) == {"0"}


def test_elapsed_sec_is_rounded_to_3_decimals_and_timed_apart_from_loading(study):
    view = start(study, "ann9")
    stamp = json.dumps({"key": view.session.key, "load_ms": 3600000.0, "think_ms": 0.4567})
    h.choose(study, view.session, "A", stamp)
    rec = read_jsonl(files(study, "ann9")[1])[0]
    assert rec["timing"] == "server"               # the page says it spent more time than the server saw
    view = h.go(study, view.session, 1)
    view = h.choose(study, view.session, "A", json.dumps({"key": view.session.key, "load_ms": 0.5, "think_ms": 1.23456}))
    rec = read_jsonl(files(study, "ann9")[1])[1]
    assert rec["elapsed_sec"] == 0.001 and rec["load_sec"] == 0.001 and rec["timing"] == "page"
    assert rec["server_elapsed_sec"] == round(rec["server_elapsed_sec"], 3)


def test_a_released_run_is_adopted_by_the_command_line(study, tmp_path):
    cfg = study.config
    elsewhere = tmp_path / "from-the-released-app"
    released = ReleasedApp(cfg.set_folder, elsewhere).start()
    for letter in "ABCD":
        released.answer(letter)
    source = elsewhere / "set_1.json"
    before = source.read_bytes()
    out = subprocess.run([sys.executable, "-m", "components.cloze.study", "adopt", str(source), "--annotator",
                          "ann10", "--data-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ann10: 4 answers" in out.stdout and source.read_bytes() == before
    restart()
    view = start(study, "ann10")
    assert view.session.index == 4 and view.session.answered == 4


def test_a_released_file_at_the_results_root_is_reported(study, monkeypatch):
    cfg = study.config
    ReleasedApp(cfg.set_folder, cfg.results).start().answer("A")
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "tok")
    assert "belongs to no annotator here" in h.researcher(study, "tok").summary
