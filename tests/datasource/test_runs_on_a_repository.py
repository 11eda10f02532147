"""Batch commands on a dataset repository: they fetch only the files of the items they run, record
the commit in every output, refuse to mix two revisions in one output, and `fetch` mirrors a
repository for offline work."""
from __future__ import annotations

import json

import app
from components.cloze.data import clip_relpath, load_dataset
from components.cloze.questions import build_set
from tests.datasource.conftest import copy_tree


def _two_revisions(hub, cloze_examples, tmp_path) -> dict[str, str]:
    first = copy_tree(cloze_examples, tmp_path / "v1")
    second = copy_tree(cloze_examples, tmp_path / "v2")
    (second / "README.md").write_text("v2\n")
    hub.add_repo("test/tempcloze", {"v1": first, "v2": second})
    return hub.repo_commits("test/tempcloze")


def test_run_fetches_only_its_questions_and_records_the_commit(hub, cloze_examples, tmp_path, capsys):
    commits = _two_revisions(hub, cloze_examples, tmp_path)
    out = tmp_path / "edge.json"
    spec = "hf://datasets/test/tempcloze@v1"
    assert app.main(["run", "cloze", "--data", spec, "--out", str(out), "--limit", "2", "--no-progress"]) == 0
    qs = build_set(load_dataset(spec), "all", ("S", "A", "P"), limit=2).questions
    wanted = {f"choices/{q.stem}/{clip_relpath(n)}" for q in qs for n in ("before", "after", *q.options)}
    assert {p for p in hub.downloads() if p.endswith(".mp4")} == wanted
    results = json.loads(out.read_text())
    entries = [e for dims in results.values() for e in dims.values()]
    assert len(entries) == 2
    assert {e["data_revision"] for e in entries} == {f"hf://datasets/test/tempcloze@{commits['v1']}"}

    # the same output resumed on the other revision: refused, nothing written
    before = out.read_text()
    capsys.readouterr()
    code = app.main(["run", "cloze", "--data", "hf://datasets/test/tempcloze@v2", "--out", str(out),
                     "--limit", "4", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and out.read_text() == before
    assert commits["v1"] in err and commits["v2"] in err and "never mixes two revisions" in err
    assert len(err.splitlines()) == 1
    # the same revision resumes
    assert app.main(["run", "cloze", "--data", spec, "--out", str(out), "--limit", "4", "--no-progress"]) == 0
    assert sum(len(d) for d in json.loads(out.read_text()).values()) == 4


def test_fetch_mirrors_a_repository_and_runs_on_it_record_its_commit(hub, cloze_examples, tmp_path):
    commits = _two_revisions(hub, cloze_examples, tmp_path)
    mirror = tmp_path / "mirror"
    assert app.main(["fetch", "--data", "hf://datasets/test/tempcloze@v2", "--out", str(mirror),
                     "--no-progress"]) == 0
    served = hub.repos["test/tempcloze"].revisions["v2"]
    for path in served.files:
        assert (mirror / path).read_bytes() == (served.folder / path).read_bytes()
    again = len(hub.downloads())
    assert app.main(["fetch", "--data", "hf://datasets/test/tempcloze@v2", "--out", str(mirror),
                     "--no-progress"]) == 0
    assert len(hub.downloads()) == again                          # resumed: nothing downloaded twice
    out = tmp_path / "r.json"
    assert app.main(["run", "cloze", "--data", str(mirror), "--out", str(out), "--limit", "1",
                     "--no-progress"]) == 0
    entry = next(e for dims in json.loads(out.read_text()).values() for e in dims.values())
    assert entry["data_revision"] == f"hf://datasets/test/tempcloze@{commits['v2']}"


def test_run_impact_on_one_shard_fetches_its_clips_and_records_the_commit(hub, impact_examples, tmp_path):
    hub.add_repo("test/hapact", copy_tree(impact_examples, tmp_path / "hapact"))
    commit = hub.repo_commits("test/hapact")["main"]
    out = tmp_path / "impact-run"
    spec = "hf://datasets/test/hapact/annotations.json"
    assert app.main(["run", "impact", "--annotations", spec, "--out", str(out), "--tasks", "temporal",
                     "--shard", "1/3", "--no-progress"]) == 0
    lines = [json.loads(line) for line in (out / "temporal_pred.jsonl").read_text().splitlines()]
    assert lines and {r["data_revision"] for r in lines} == {f"hf://datasets/test/hapact@{commit}"}
    items = json.loads((tmp_path / "hapact" / "annotations.json").read_text())["items"]
    videos = {item["qid"]: item["video"] for item in items}
    assert 0 < len(lines) < len(items)
    fetched = sorted(p for p in hub.downloads() if p.endswith(".mp4"))
    assert fetched == sorted(videos[r["qid"]] for r in lines)    # its shard's clips, and no other
