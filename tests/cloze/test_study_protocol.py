"""The released study protocol reproduced: a real-format `choices_human/set_N/` folder and
`human_eval_results/set_N.json` file, its seed, schedule, option maps and answers; the Human row."""
import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from components.cloze.human import record_answer
from components.cloze.data import DIM_CLIPS
from components.cloze.metrics import as_released, human_results, score_results
from components.cloze.study.protocol import (load_set, load_set_folder, released_questions, schedule, set_folders,
                                             set_seed)
from components.cloze.study.results_file import (load_human_files, records_from_result, released_record,
                                                 result_header, write_result_file)
from components.base.errors import UserError

ROOT = Path(__file__).resolve().parents[2]


def make_sets(cloze_examples: Path, dest: Path, sets: dict[str, list[str]]) -> Path:
    """choices_human/<set>/<stem>/... as hard links of the example clips."""
    root = dest / "choices_human"
    for name, stems in sets.items():
        for stem in stems:
            src = cloze_examples / "choices" / stem
            for clip in src.rglob("*.mp4"):
                target = root / name / stem / clip.relative_to(src)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(clip, target)
    return root


def released_app_reference(set_name: str, stems: list[str]):
    """The released app's rules written out independently of the code under test."""
    seed = int(hashlib.sha256(f"temporal-cloze-human-eval-folder-v1:{set_name}".encode()).hexdigest()[:16], 16)
    tasks = [(s, d) for s in sorted(stems) for d in ("S", "A", "C")]
    random.Random(seed).shuffle(tasks)
    maps = []
    for stem, dim in tasks:
        opts = ["GT", *DIM_CLIPS[dim]]
        random.Random(f"{seed}:{stem}:{dim}:options").shuffle(opts)
        maps.append(dict(zip("ABCD", opts)))
    return seed, tasks, maps


@pytest.fixture
def study_root(cloze_examples, tmp_path):
    stems = sorted(p.name for p in (cloze_examples / "choices").iterdir() if p.is_dir())
    return make_sets(cloze_examples, tmp_path, {"set_1": stems[:4], "set_2": stems[2:6]}), stems


def test_set_seed_is_the_released_one():
    assert set_seed("set_1") == 8800808831473759713


def test_schedule_and_option_maps_match_the_released_app(study_root):
    root, _ = study_root
    sets = set_folders(root.parent)
    assert list(sets) == ["set_1", "set_2"]
    for name, folder in sets.items():
        ds, dropped = load_set_folder(folder)
        assert not dropped
        seed, tasks, maps = released_app_reference(name, list(ds.instances))
        qs = released_questions(ds, name)
        assert [(q.stem, q.dim) for q in qs] == tasks
        assert [q.option_map for q in qs] == maps
        assert all(q.seed == seed for q in qs)
    assert list(set_folders(root / "set_1")) == ["set_1"]


def test_a_stem_missing_one_clip_is_dropped_whole(study_root):
    root, _ = study_root
    victim = sorted((root / "set_1").iterdir())[0]
    (victim / "A" / "Wide.mp4").unlink()
    ds, dropped = load_set_folder(root / "set_1")
    assert victim.name not in ds.instances and len(dropped) == 1 and "Wide" in dropped[0]
    qs = released_questions(ds, "set_1")
    assert victim.name not in {q.stem for q in qs} and len(qs) == 3 * len(ds.instances)


def test_no_set_folder_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="choices_human"):
        set_folders(tmp_path)


def _released_file(tmp_path, name, qs, answers, flow="confirm"):
    """A result file as the released app writes it (built by hand, not by the code under test)."""
    responses = {}
    for i, (q, letter) in enumerate(zip(qs, answers)):
        responses[str(i)] = {"task_index": i, "stem": q.stem, "dim": q.dim, "answer": letter,
                             "expected": q.expected, "correct": letter == q.expected,
                             "option_map": q.option_map, "display_mode": "frames", "answer_flow": flow,
                             "elapsed_sec": 3.5, "answered_at_utc": "2026-05-17T11:53:08+00:00",
                             "redo_count": 0}
    data = {"dataset_id": name, "schedule_policy": "single_folder_navigation_v1", "seed": set_seed(name),
            "choices_dir": f"choices_human/{name}", "result_path": f"human_eval_results/{name}.json",
            "started_at_utc": "x", "completed_at_utc": "y", "stems": sorted({q.stem for q in qs}),
            "schedule": [{"stem": q.stem, "dim": q.dim} for q in qs], "responses": responses}
    path = tmp_path / "human_eval_results" / f"{name}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_released_result_file_reads_back_and_gives_the_human_row(study_root, tmp_path):
    root, _ = study_root
    qs1 = released_questions(load_set_folder(root / "set_1")[0], "set_1")
    qs2 = released_questions(load_set_folder(root / "set_2")[0], "set_2")
    a1 = [q.expected for q in qs1]                      # annotator 1: all GT
    a2 = [("A" if q.expected != "A" else "B") if i == 0 else q.expected for i, q in enumerate(qs2)]
    f1, f2 = _released_file(tmp_path, "set_1", qs1, a1), _released_file(tmp_path, "set_2", qs2, a2)
    recs = records_from_result(json.loads(f1.read_text()), str(f1))
    assert [r["answer"] for r in recs] == a1 and [r["task_index"] for r in recs] == list(range(len(qs1)))
    assert {r["annotator"] for r in recs} == {"set_1"} and recs[0]["answer_flow"] == "confirm"
    results = human_results(load_human_files([f1, f2]))
    wrong = qs2[0]
    assert results[wrong.stem][wrong.dim]["correct"] is False   # one of its annotators missed it
    shared = {q.key for q in qs1} & {q.key for q in qs2}
    assert shared and all(results[k.split(":")[0]][k.split(":")[1]]["annotators"] == 2 for k in shared)
    assert sum(e["correct"] is False for dd in results.values() for e in dd.values()) == 1


def test_eval_cloze_human_accepts_both_file_kinds(study_root, tmp_path):
    root, _ = study_root
    qs1 = released_questions(load_set_folder(root / "set_1")[0], "set_1")
    f1 = _released_file(tmp_path, "set_1", qs1, [q.expected for q in qs1])
    jl = tmp_path / "anon-2.jsonl"
    for i, q in enumerate(qs1[:3]):
        record_answer(jl, q, task_index=i, answer=q.expected, annotator="anon-2", session="s",
                      set_name="set_1", order_seed=q.seed, display_mode="frames", answer_flow="confirm",
                      elapsed_sec=1.0)
    out = subprocess.run([sys.executable, "app.py", "eval", "cloze", "--human", "--json", "--results",
                          str(f1), str(jl)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m.pop("notes") == []  # nothing in these files is ignored or contradicts itself
    assert (m.pop("practice_answers_skipped"), m.pop("check_answers_skipped")) == (0, 0)
    assert m == as_released(score_results(human_results(load_human_files([f1, jl]))))   # 0 where nothing was valid
    assert m["acc"] == 100.0 and m["stems"] == 4


def _answered(root: Path, jl: Path, n: int, answer: str, **how) -> tuple[list, list[dict]]:
    """The set's questions and records of `n` answers written to `jl`."""
    ds, _ = load_set_folder(root / "set_1")
    qs = released_questions(ds, "set_1")
    recs = [record_answer(jl, q, task_index=i, answer=answer, annotator=jl.stem, session="s", set_name="set_1",
                          order_seed=q.seed, **how) for i, q in enumerate(qs[:n])]
    return qs, recs


def test_our_records_write_the_released_result_file(study_root, tmp_path):
    root, _ = study_root
    ds, _ = load_set_folder(root / "set_1")
    qs, recs = _answered(root, tmp_path / "anon-1.jsonl", 5, "B", display_mode="video",
                         answer_flow="select_then_submit", elapsed_sec=2.0)
    out = tmp_path / "human_eval_results" / "set_1.json"
    header = result_header("set_1", set_seed("set_1"), root / "set_1", out, qs)
    write_result_file(out, header, recs)
    data = json.loads(out.read_text())
    assert data["seed"] == 8800808831473759713 and data["schedule_policy"] == "single_folder_navigation_v1"
    assert data["schedule"] == [{"stem": s, "dim": d} for s, d in schedule(list(ds.instances), data["seed"])]
    assert sorted(data["responses"], key=int) == ["0", "1", "2", "3", "4"]
    assert data["responses"]["0"]["answer_flow"] == "confirm" and data["completed_at_utc"] is None
    assert oct(out.stat().st_mode & 0o777) == "0o644"


def test_the_result_file_is_the_header_and_the_answers_even_as_the_header_changes(study_root, tmp_path):
    root, _ = study_root
    qs, recs = _answered(root, tmp_path / "anon-2.jsonl", 3, "A", display_mode="frames",
                         answer_flow="immediate", elapsed_sec=1.0)
    out = tmp_path / "r" / "set_1.json"
    header = result_header("set_1", set_seed("set_1"), root / "set_1", out, qs)
    for n in (1, 2, 3):
        write_result_file(out, header, recs[:n])
        data = json.loads(out.read_text())
        assert data == {**header, "result_path": str(out), "completed_at_utc": None,
                        "responses": {str(i): released_record(r) for i, r in enumerate(recs[:n])}}
    header["started_at_utc"] = "2020-01-01T00:00:00+00:00"   # the header the file is written from changed
    header["annotator"] = "anon-2"
    write_result_file(out, header, recs)
    data = json.loads(out.read_text())
    assert data["started_at_utc"] == "2020-01-01T00:00:00+00:00" and data["annotator"] == "anon-2"
    assert list(data)[:len(header)] == list(header)   # the released key order


def test_a_hidden_stem_folder_and_an_empty_clip_give_the_released_schedule(study_root, tmp_path):
    """The released app keeps every sub-folder holding the twelve files by name (a hidden one, one
    with a 0-byte clip); dropping them would shift the whole schedule. Both are kept and warned of."""
    from tests.helpers.released_study import folder_seed, released_schedule, released_stems

    root, _ = study_root
    folder = root / "set_1"
    stems = sorted(p.name for p in folder.iterdir())
    (folder / stems[0]).rename(folder / f".{stems[0]}")          # hidden
    empty = folder / stems[1] / "C" / "Loop.mp4"
    empty.unlink()
    empty.write_bytes(b"")                                       # a 0-byte clip
    (folder / "notes").mkdir()                                   # not a stem: none of the files
    partial = folder / "half_copied"
    (partial / "A").mkdir(parents=True)
    os.link(folder / stems[2] / "GT.mp4", partial / "GT.mp4")    # a stem folder missing eleven files
    ds, found = load_set(folder)
    expected = released_stems(folder)
    assert list(found.stems) == expected and f".{stems[0]}" in expected and stems[1] in expected
    tasks = [(t["stem"], t["dim"]) for t in released_schedule(expected, folder_seed("set_1"))]
    assert [(q.stem, q.dim) for q in released_questions(ds, "set_1")] == tasks
    assert any(w.startswith(f".{stems[0]}: a hidden folder") for w in found.warnings)
    assert any(w.startswith(f"{stems[1]}: C/Loop.mp4 is empty") for w in found.warnings)
    assert found.dropped == ("half_copied: dropped, missing before.mp4, after.mp4, S/Rand1.mp4, S/Rand2.mp4, "
                             "S/Rand3.mp4, A/Early.mp4, A/Late.mp4, A/Wide.mp4, C/Reverse.mp4, C/Shuffle.mp4, "
                             "C/Loop.mp4",)
    data = tmp_path / "data"
    (data / "cloze").mkdir(parents=True)
    (data / "cloze" / "study.json").write_text(json.dumps({"data": str(folder), "access": "open"}))
    out = subprocess.run([sys.executable, "-m", "components.cloze.study", "check", "--data-dir", str(data)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != "APP_STUDY"})
    assert out.returncode == 0, out.stderr
    assert f"{len(expected)} stems, {3 * len(expected)} questions" in out.stdout
    assert f"warning: .{stems[0]}: a hidden folder" in out.stdout and "C/Loop.mp4 is empty" in out.stdout
    assert "warning: half_copied: dropped" in out.stdout
