"""Runs as a collection (components/common/runs.py): finding the files, refusing malformed ones
one by one, the content-keyed disk cache and the background loader."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.helpers.runs import collect_cloze_runs
from components.cloze.runs import CLOZE_READER, ClozeRuns, cloze_runs_folders
from components.common.runs import BackgroundRuns, ContentCache, collect, find_run_files, named_runs_folders
from examples.released_runs import write_released_runs

STEMS = [f"stem{i}" for i in range(6)]


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("APP_CLOZE_RUNS_DIR", raising=False)
    monkeypatch.delenv("APP_RUNS_DIR", raising=False)
    write_released_runs(STEMS, tmp_path / "data" / "cloze" / "results", 3)
    return tmp_path / "data"


def test_malformed_files_are_refused_by_name_and_the_others_load(data_dir):
    results = data_dir / "cloze" / "results"
    (results / "torn.json").write_text('{"stem0": {"S": {"answer": "A"')
    (results / "list.json").write_text("[1, 2]")
    (results / "badentry.json").write_text(json.dumps({"stem0": {"S": "A"}}))
    loaded = collect_cloze_runs(data_dir)
    assert sorted(loaded.runs) == ["model00_results", "model01_results", "model02_results"]
    lines = {Path(r.path).name: r.line() for r in loaded.refusals}
    assert set(lines) == {"torn.json", "list.json", "badentry.json"}
    for name, line in lines.items():
        assert line.startswith(f"run file {results / name} not loaded: ")
    assert "not valid JSON" in lines["torn.json"]
    assert "stem0" in lines["badentry.json"]   # names the record
    assert "3 refused" in loaded.status_line()


def test_app_runs_are_read_but_never_a_visitors_folder(data_dir, tmp_path, monkeypatch):
    runs = data_dir / "cloze" / "runs"
    write_released_runs(STEMS[:5], runs, 1)
    write_released_runs(STEMS[:5], runs / "visitors" / "abc123", 1)
    (runs / "model00_results.json").rename(runs / "mine.json")
    assert sorted(collect_cloze_runs(data_dir).runs) == [
        "mine", "model00_results", "model01_results", "model02_results"]
    elsewhere = tmp_path / "elsewhere"
    write_released_runs(STEMS[:5], elsewhere, 1)
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(elsewhere))
    assert cloze_runs_folders(data_dir) == [data_dir / "cloze" / "results", elsewhere]
    # the same file name in two folders: told apart by the folder
    assert "model00_results (elsewhere)" in collect_cloze_runs(data_dir).runs


def test_named_folders_files_and_absent_ones(data_dir, tmp_path, monkeypatch):
    extra = tmp_path / "released"
    write_released_runs(STEMS[:5], extra, 2)
    monkeypatch.setenv("APP_RUNS_DIR", str(tmp_path / "nowhere"))
    named = named_runs_folders([extra, extra / "model01_results.json", data_dir])
    assert named[-1] == str(tmp_path / "nowhere")
    files, refusals = find_run_files(CLOZE_READER, [], named)
    # a data folder named with --runs is searched in its cloze/results too; each file once
    assert len(files) == len({f.path for f in files}) == 5
    assert [(r.path, r.reason) for r in refusals] == [(str(tmp_path / "nowhere"), "no such file or folder")]
    empty = tmp_path / "empty"
    empty.mkdir()
    _, refusals = find_run_files(CLOZE_READER, [tmp_path / "absent-default"], [empty])
    assert [r.path for r in refusals] == [str(empty)] and "no cloze run file" in refusals[0].reason


def test_the_disk_cache_is_keyed_by_content(data_dir, tmp_path):
    cache = ContentCache(tmp_path / "cache")
    first = collect_cloze_runs(data_dir, cache=cache)
    assert first.from_cache == 0
    second = collect_cloze_runs(data_dir, cache=cache)
    assert second.from_cache == 3 and second.runs == first.runs
    # a changed file is read again; the others still come from the cache
    path = data_dir / "cloze" / "results" / "model01_results.json"
    data = json.loads(path.read_text())
    entry = data["stem5"]["S"]
    entry["answer"] = next(k for k, v in entry["option_map"].items() if v == "GT")
    entry["correct"] = True
    path.write_text(json.dumps(data))
    third = collect_cloze_runs(data_dir, cache=cache)
    assert third.from_cache == 2
    assert third.runs["model01_results"]["q"]["stem5"]["S"][2] == 1
    # a refused file's reason is cached too, and still refused when read from the cache
    (data_dir / "cloze" / "results" / "bad.json").write_text("[]")
    collect_cloze_runs(data_dir, cache=cache)
    again = collect_cloze_runs(data_dir, cache=cache)
    assert again.from_cache == 4 and [Path(r.path).name for r in again.refusals] == ["bad.json"]
    # a damaged cache entry is no entry: the file is read again
    for entry_file in (tmp_path / "cache" / "cloze").glob("*.bin"):
        entry_file.write_bytes(entry_file.read_bytes()[:10])
    assert collect_cloze_runs(data_dir, cache=cache).from_cache == 0


def test_background_loading_never_blocks_the_caller(data_dir, tmp_path):
    gate = threading.Event()

    def load():
        gate.wait(10)
        return collect(CLOZE_READER, cloze_runs_folders(data_dir), (), ContentCache(tmp_path / "c"))

    bg = BackgroundRuns(load).start()
    assert not bg.ready() and bg.result() is None and bg.status_line() == "reading the run files…"
    gate.set()
    loaded = bg.wait(10)
    assert bg.ready() and sorted(loaded.runs) == ["model00_results", "model01_results", "model02_results"]
    assert ClozeRuns(loaded.runs).question("stem3", "S").answers
    failing = BackgroundRuns(lambda: 1 / 0).start()
    assert failing.wait(10).runs == {} and "could not be listed" in failing.status_line()


def test_the_tab_loaders_run_in_the_background(data_dir, tmp_path, monkeypatch):
    from components.impact.runs import impact_runs_loader
    from components.window_search.runs import grounding_runs_loader
    from components.cloze.runs import cloze_runs_loader
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "appcache"))
    study = tmp_path / "study"
    study.mkdir()
    (study / "ann1.jsonl").write_text(json.dumps({"stem": "stem2", "dim": "S", "answer": "A",
                                                 "option_map": {"A": "GT", "B": "Rand1"}}) + "\n")
    extra = tmp_path / "extra"
    write_released_runs(STEMS, extra, 1)
    (extra / "model00_results.json").rename(extra / "from_env.json")
    monkeypatch.setenv("APP_RUNS_DIR", str(extra))
    loaded = cloze_runs_loader(data_dir, study_folder=study).wait(30)
    assert sorted(loaded.runs) == ["from_env", "model00_results", "model01_results", "model02_results"]
    assert loaded.table.question("stem2", "S").human.correct is True
    assert list((tmp_path / "appcache" / "runs" / "cloze").glob("*.bin"))   # the default cache
    # APP_RUNS_DIR holds Cloze runs only: nothing for the other tabs, and no error either
    for other in (grounding_runs_loader(data_dir).wait(30), impact_runs_loader(data_dir).wait(30)):
        assert other.runs == {} and other.refusals == []


def test_a_runs_loader_counts_its_files_and_builds_a_view_once_per_key(data_dir, tmp_path, monkeypatch):
    from components.common.runs import RunsLoader, forget_runs_loaders, runs_loader
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "appcache"))
    made: list[str] = []
    loader = runs_loader("test", data_dir, (), lambda: made.append("loader") or RunsLoader(
        CLOZE_READER, cloze_runs_folders(data_dir)))
    assert runs_loader("test", data_dir, (), lambda: made.append("again")) is loader and made == ["loader"]
    loaded = loader.wait(30)
    assert loader.files == 3 and sorted(loaded.runs) == ["model00_results", "model01_results", "model02_results"]
    builds: list[object] = []
    first, second = object(), object()
    view = loader.derived(first, lambda runs: builds.append(first) or len(runs.runs))
    assert view == 3 and loader.derived(first, lambda runs: builds.append(first) or 0) == 3
    assert loader.derived(second, lambda runs: builds.append(second) or -1) == -1
    assert builds == [first, second]                      # one build per key, again for another key
    forget_runs_loaders()
    assert runs_loader("test", data_dir, (), lambda: "fresh") == "fresh"
    forget_runs_loaders()


def test_every_tab_names_its_runs_folders_through_its_reader(tmp_path, monkeypatch):
    """One runs-folder rule for the three tabs (RunReader.folders): the data's subfolders, the last
    one (where `run` writes) replaced by the tab's variable when it is set."""
    from components.impact.runs import IMPACT_READER
    from components.window_search.runs import GROUNDING_READER
    for env in ("APP_CLOZE_RUNS_DIR", "APP_GROUNDING_RUNS_DIR"):
        monkeypatch.delenv(env, raising=False)
    data = tmp_path / "data"
    assert IMPACT_READER.folders(data) == [data / "impact" / "runs"]
    assert GROUNDING_READER.folders(data) == [data / "grounding" / "runs"]
    assert CLOZE_READER.folders(data) == [data / "cloze" / "results", data / "cloze" / "runs"]
    assert [r.folders(None) for r in (IMPACT_READER, GROUNDING_READER, CLOZE_READER)] == [[], [], []]
    monkeypatch.setenv("APP_GROUNDING_RUNS_DIR", str(tmp_path / "g"))
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(tmp_path / "c"))
    assert GROUNDING_READER.folders(data) == GROUNDING_READER.folders(None) == [tmp_path / "g"]
    assert CLOZE_READER.folders(data) == [data / "cloze" / "results", tmp_path / "c"]
    assert CLOZE_READER.folders(None) == [tmp_path / "c"]
    assert IMPACT_READER.folders(None) == []
