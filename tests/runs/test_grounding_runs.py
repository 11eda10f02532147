"""The grounding table of every run (components/window_search/runs.py) and `eval grounding
--items` against `eval grounding`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.runs import collect_grounding_runs
from components.common.intervals import iou
from tests.helpers.runs import mean_score, read_item_rows
from components.window_search.data import load_annotations
from components.window_search.runs import GroundingRuns
from tests.runs.test_cloze_runs import run_cli


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def ann_path(grounding_examples) -> Path:
    return grounding_examples / "annotations.json"


@pytest.fixture
def runs_dir(tmp_path, ann_path) -> Path:
    """Three runs: one exact, one on every partner's moment, one with a fallback, an unparsed
    line, a missing query and a shifted answer."""
    ann = load_annotations(ann_path)
    qs = ann.queries
    by = {q.qid: q for q in qs}
    folder = tmp_path / "data" / "grounding" / "runs"
    write_jsonl(folder / "exact.jsonl", [{"qid": q.qid, "interval": list(q.interval), "source": "emitted"}
                                        for q in qs])
    write_jsonl(folder / "swapped.jsonl", [{"qid": q.qid, "interval": list(by[q.partner_qid].interval),
                                            "source": "selected"} for q in qs])
    mixed = []
    for i, q in enumerate(qs):
        s, e = q.interval
        if i == 0:
            mixed.append({"qid": q.qid, "interval": None, "fallback_interval": [s, e],
                          "source": "fallback:localizer-unparsed"})
        elif i == 1:
            mixed.append({"qid": q.qid, "interval": None, "source": "unparsed"})
        elif i == 2:
            continue  # no line
        else:
            mixed.append({"qid": q.qid, "interval": [s + (e - s) / 2, e + (e - s) / 2], "source": "emitted"})
    write_jsonl(folder / "mixed.jsonl", mixed)
    write_jsonl(folder / "mixed.trace.jsonl", [{"qid": qs[0].qid, "query": "x", "statements": []}])
    return folder


def test_each_run_on_a_query(runs_dir, ann_path):
    ann = load_annotations(ann_path)
    loaded = collect_grounding_runs(runs_dir.parent.parent, cache=None)
    assert sorted(loaded.runs) == ["exact", "mixed", "swapped"] and loaded.refusals == []  # trace skipped
    table = GroundingRuns(loaded.runs, ann)
    first = ann.queries[0]
    q = table.query(first.qid)
    runs = {a.run: a for a in q.answers}
    # the fallback is shown with its interval, marked, and scored IoU 0 as eval does
    assert runs["mixed"].fallback and runs["mixed"].interval == first.interval and runs["mixed"].iou == 0.0
    assert runs["exact"].iou == pytest.approx(1.0) and not runs["exact"].on_partner
    assert runs["swapped"].on_partner and runs["swapped"].iou_partner == pytest.approx(1.0)
    assert q.reach == 1 and q.on_partner == 1 and q.on_partner_05 == 1
    assert q.summary() == "1 of 3 runs reach IoU ≥ 0.5; 1 put it on its partner's moment"
    assert {a.run: a.source for a in table.query(ann.queries[2].qid).answers}["mixed"] == "missing"
    later = ann.queries[5]
    shifted = {a.run: a for a in table.query(later.qid).answers}["mixed"]
    s, e = later.interval
    assert shifted.iou == pytest.approx(iou((s + (e - s) / 2, e + (e - s) / 2), later.interval))
    assert table.query(later.qid).reach == 1 + (shifted.iou >= 0.5)


def test_a_trace_named_as_a_run_is_refused(runs_dir, ann_path):
    write_jsonl(runs_dir / "other.jsonl", [{"qid": "p0001_t", "query": "x", "statements": []}])
    loaded = collect_grounding_runs(runs_dir.parent.parent, cache=None)
    assert [Path(r.path).name for r in loaded.refusals] == ["other.jsonl"]
    assert "not a predictions file" in loaded.refusals[0].line()
    assert sorted(loaded.runs) == ["exact", "mixed", "swapped"]


def test_items_mean_is_the_eval_miou(runs_dir, ann_path, tmp_path, capsys):
    out = tmp_path / "items.jsonl"
    code, printed, _ = run_cli(["eval", "grounding", "--annotations", str(ann_path), "--predictions",
                                str(runs_dir / "mixed.jsonl"), "--json", "--items", str(out),
                                str(runs_dir / "exact.jsonl"), str(runs_dir / "swapped.jsonl")], capsys)
    assert code == 0
    rows = read_item_rows(out)
    n = len(load_annotations(ann_path).queries)
    assert len(rows) == 3 * n
    for name in ("mixed", "exact", "swapped"):
        _, one, _ = run_cli(["eval", "grounding", "--annotations", str(ann_path), "--predictions",
                             str(runs_dir / f"{name}.jsonl"), "--json"], capsys)
        assert mean_score(rows, name) == pytest.approx(json.loads(one)["mIoU"])
    assert json.loads(printed)["mIoU"] == pytest.approx(mean_score(rows, "mixed"))
    sources = {r["source"] for r in rows if r["run"] == "mixed"}
    assert {"fallback:localizer-unparsed", "unparsed", "missing", "emitted"} <= sources
