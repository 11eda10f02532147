"""`run ... --shard i/N` splits a benchmark across machines; `eval` merges the shards' outputs.

Each run command is run three times with --shard 1/3, 2/3, 3/3 (baseline backend, example data)
and once unsharded: the merged eval must equal the unsharded one, and every item must be in
exactly one shard."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app import build_parser, main
from components.base.io import read_jsonl
from components.common.shards import Shard, parse_shard, shard_of

N = 3


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


def eval_json(argv: list[str], capsys) -> dict:
    capsys.readouterr()
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def shards() -> list[str]:
    return [f"{i}/{N}" for i in range(1, N + 1)]


def assert_partition(per_shard: list[list[str]], everything: list[str]) -> None:
    flat = [k for keys in per_shard for k in keys]
    assert sorted(flat) == sorted(everything)  # every item once: none lost, none duplicated
    assert sum(1 for keys in per_shard if keys) >= 2, per_shard  # really split


def test_shard_of_is_deterministic_and_covers_every_key():
    keys = [f"q{i}" for i in range(300)]
    assignment = [shard_of(k, 3) for k in keys]
    assert assignment == [shard_of(k, 3) for k in keys]
    assert set(assignment) == {1, 2, 3}
    assert all(sum(Shard(i, 3).holds(k) for i in (1, 2, 3)) == 1 for k in keys)
    assert all(70 <= assignment.count(i) <= 130 for i in (1, 2, 3))  # roughly even
    assert parse_shard(" 2/3 ") == Shard(2, 3) and parse_shard("1/1") == Shard(1, 1)


@pytest.mark.parametrize("value, why", [("0/3", "between 1 and N=3"), ("4/3", "between 1 and N=3"),
                                        ("1/0", "N must be at least 1"), ("x", "expected i/N"),
                                        ("1/3/2", "expected i/N"), ("one/3", "expected i/N")])
def test_a_bad_shard_is_a_cli_error_naming_the_flag(value, why, tmp_path, capsys):
    for argv in (["run", "grounding", "--annotations", "a.json", "--out", "p.jsonl"],
                 ["run", "cloze", "--data", "d", "--out", "r.json"],
                 ["run", "impact", "--annotations", "a.json", "--out", "o"]):
        with pytest.raises(SystemExit) as exc:
            build_parser().parse_args(argv + ["--shard", value])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "argument --shard" in err and why in err and "Traceback" not in err


def test_run_grounding_in_three_shards_merges_to_the_unsharded_eval(grounding_examples, tmp_path,
                                                                    capsys, monkeypatch):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    ann = grounding_examples / "annotations.json"
    base = ["run", "grounding", "--annotations", str(ann), "--backend", "baseline", "--no-progress"]
    assert run(base + ["--out", str(tmp_path / "all.jsonl")]) == 0
    folder = tmp_path / "shards"
    for shard in shards():
        assert run(base + ["--out", str(folder / f"p-{shard.replace('/', 'of')}.jsonl"),
                           "--shard", shard]) == 0
    everything = [r["qid"] for r in read_jsonl(tmp_path / "all.jsonl")]
    assert len(everything) == 14
    per_shard = [[r["qid"] for r in read_jsonl(p)] for p in sorted(folder.glob("*.jsonl"))]
    assert_partition(per_shard, everything)
    ev = ["eval", "grounding", "--annotations", str(ann), "--predictions"]
    unsharded = eval_json(ev + [str(tmp_path / "all.jsonl")], capsys)
    assert eval_json(ev + [str(folder)], capsys) == unsharded
    assert eval_json(ev + sorted(str(p) for p in folder.glob("*.jsonl")), capsys) == unsharded
    # one shard alone scores the others' queries as missing: the merge is what makes it whole
    alone = eval_json(ev + [str(sorted(folder.glob("*.jsonl"))[0])], capsys)
    assert alone["counts"]["missing"] == 14 - len(per_shard[0]) > 0


def test_grounding_shard_by_movie_keeps_a_movies_queries_together(grounding_examples, tmp_path,
                                                                  monkeypatch, capsys):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    ann = grounding_examples / "annotations.json"
    counts = []
    for shard in shards():
        out = tmp_path / f"{shard.replace('/', 'of')}.jsonl"
        assert run(["run", "grounding", "--annotations", str(ann), "--backend", "baseline",
                    "--method", "rag", "--no-progress", "--out", str(out), "--shard", shard,
                    "--shard-by", "movie"]) == 0
        counts.append(len(read_jsonl(out)) if out.exists() else 0)
    assert sorted(counts) == [0, 0, 14]  # the example data has one movie


def test_run_cloze_in_three_shards_merges_to_the_unsharded_eval(cloze_examples, tmp_path, capsys):
    base = ["run", "cloze", "--data", str(cloze_examples), "--backend", "baseline", "--no-progress"]
    assert run(base + ["--out", str(tmp_path / "all.json")]) == 0
    folder = tmp_path / "shards"
    for shard in shards():
        assert run(base + ["--out", str(folder / f"r-{shard.replace('/', 'of')}.json"), "--shard", shard]) == 0
    everything = json.loads((tmp_path / "all.json").read_text())
    per_shard = [list(json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))]
    assert_partition(per_shard, list(everything))
    for p in sorted(folder.glob("*.json")):  # a stem's three dimensions stay in one shard
        assert all(set(dims) == {"S", "A", "C"} for dims in json.loads(p.read_text()).values())
    unsharded = eval_json(["eval", "cloze", "--results", str(tmp_path / "all.json")], capsys)
    assert eval_json(["eval", "cloze", "--results", str(folder)], capsys) == unsharded
    files = sorted(str(p) for p in folder.glob("*.json"))
    assert eval_json(["eval", "cloze", "--results", *files], capsys) == unsharded


def test_run_impact_in_three_shards_merges_to_the_unsharded_evals(impact_examples, tmp_path, capsys):
    ann = impact_examples / "annotations.json"
    base = ["run", "impact", "--annotations", str(ann), "--backend", "baseline", "--no-progress"]
    assert run(base + ["--out", str(tmp_path / "all")]) == 0
    folder = tmp_path / "shards"
    for shard in shards():
        assert run(base + ["--out", str(folder / shard.replace("/", "of")), "--shard", shard]) == 0
    everything = [r["qid"] for r in read_jsonl(tmp_path / "all" / "temporal_pred.jsonl")]
    per_shard = [[r["qid"] for r in read_jsonl(d / "temporal_pred.jsonl")] for d in sorted(folder.iterdir())]
    assert_partition(per_shard, everything)
    for d in sorted(folder.iterdir()):  # a clip's ground truth and spatial answers stay with it
        qids = {r["qid"] for r in read_jsonl(d / "temporal_pred.jsonl")}
        assert {r["qid"] for r in read_jsonl(d / "temporal_gt.jsonl")} == qids
        assert {r["qid"] for r in read_jsonl(d / "spatial_pred.jsonl")} <= qids
    all_dir = tmp_path / "all"
    temporal = ["eval", "impact-temporal"]
    unsharded = eval_json(temporal + ["--gt", str(all_dir / "temporal_gt.jsonl"),
                                      "--pred", str(all_dir / "temporal_pred.jsonl")], capsys)
    assert unsharded["num_queries"] == 7
    assert eval_json(temporal + ["--gt", str(folder), "--pred", str(folder)], capsys) == unsharded
    spatial = ["eval", "impact-spatial", "--annotations", str(ann), "--pred"]
    unsharded = eval_json(spatial + [str(all_dir / "spatial_pred.jsonl")], capsys)
    assert eval_json(spatial + [str(folder)], capsys) == unsharded
    files = [str(d / "spatial_pred.jsonl") for d in sorted(folder.iterdir())]
    assert eval_json(spatial + files, capsys) == unsharded


def _two_shard_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    ann = tmp_path / "a.json"
    ann.write_text(json.dumps({"movies": [{"movie_id": "m", "video": "m.mp4"}], "pairs": [
        {"pair_id": "p1", "movie_id": "m", "contrast_attribute": "setting",
         "target": {"qid": "t1", "query": "q", "interval": [0, 10]},
         "confusable": {"qid": "c1", "query": "q", "interval": [20, 30]}}]}))
    one, two = tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"
    one.write_text('{"qid": "t1", "interval": [0, 10]}\n')
    two.write_text('{"qid": "c1", "interval": [20, 25]}\n')
    return ann, one, two


def test_an_identical_duplicate_is_counted_once_with_a_note(tmp_path, capsys):
    ann, one, two = _two_shard_files(tmp_path)
    copy = tmp_path / "copy-of-s1.jsonl"
    shutil.copy(one, copy)
    ev = ["eval", "grounding", "--annotations", str(ann), "--predictions"]
    merged = eval_json(ev + [str(one), str(two)], capsys)
    capsys.readouterr()
    assert main(ev + [str(one), str(two), str(copy), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == merged and merged["num_queries"] == 2
    assert "1 prediction for qid(s) appeared twice" in out.err and "t1" in out.err


def test_a_conflicting_duplicate_is_refused_naming_both_files(tmp_path, capsys):
    ann, one, two = _two_shard_files(tmp_path)
    other = tmp_path / "older-run.jsonl"
    other.write_text('{"qid": "t1", "interval": [3, 4]}\n')
    capsys.readouterr()
    code = main(["eval", "grounding", "--annotations", str(ann), "--predictions", str(one), str(two),
                 str(other), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "t1" in err and str(one) in err and str(other) in err and "exactly one shard" in err


def test_a_folder_without_outputs_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    capsys.readouterr()
    code = main(["eval", "impact-temporal", "--gt", str(tmp_path / "empty"), "--pred",
                 str(tmp_path / "empty"), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "--gt" in err and "temporal_gt.jsonl" in err and "Traceback" not in err
