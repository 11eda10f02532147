"""Run files named by a dataset repository spec (`--runs hf://datasets/...`), through the real
huggingface_hub client against the local Hub stand-in (tests/helpers/hub_server.py)."""
from __future__ import annotations

import pytest

from tests.helpers.runs import collect_cloze_runs
from components.cloze.runs import ClozeRuns
from tests.helpers.hub_server import HubServer, hub_env
from examples.released_runs import write_released_runs

STEMS = [f"stem{i}" for i in range(6)]


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with HubServer() as server:
        hub_env(monkeypatch, server, tmp_path / "client")
        yield server


def test_a_repository_folder_of_released_runs(hub, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_CLOZE_RUNS_DIR", raising=False)
    repo = tmp_path / "repo"
    write_released_runs(STEMS, repo / "eval_results" / "overall" / "eval_results_all", 3)
    (repo / "eval_results" / "overall" / "eval_results_all" / "broken.json").write_text("{")
    hub.add_repo("test/released", repo)
    spec = "hf://datasets/test/released/eval_results/overall/eval_results_all"
    loaded = collect_cloze_runs(None, named=[spec])
    assert sorted(loaded.runs) == ["model00_results", "model01_results", "model02_results"]
    assert len(loaded.refusals) == 1 and "broken.json" in loaded.refusals[0].line()
    assert ClozeRuns(loaded.runs).question("stem3", "S").answers
    missing = collect_cloze_runs(None, named=["hf://datasets/test/nothing-here"])
    assert missing.runs == {} and missing.refusals and "test/nothing-here" in missing.refusals[0].line()

