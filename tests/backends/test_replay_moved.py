"""A trace recorded in one working directory replays from another one, with the data folder moved:
the batch command records against a real scripted OpenAI-compatible server, then replays offline."""
from __future__ import annotations

import hashlib
import json
import shutil

import app
from backends.trace_format import read_trace
from tests.helpers.openai_server import ScriptedOpenAIServer


def _answer(body: dict) -> str:
    """A letter that depends on the request (so a replay that mixed calls up would show)."""
    digest = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).digest()
    return json.dumps({"answer": "ABCD"[digest[0] % 4], "reason": f"scripted {digest[:3].hex()}"})


def _answers(result_file) -> dict:
    results = json.loads(result_file.read_text(encoding="utf-8"))
    return {(stem, dim): (r["answer"], r["raw"], r["expected"], r["correct"])
            for stem, dims in results.items() for dim, r in dims.items()}


def test_a_trace_replays_after_the_data_and_the_trace_moved(cloze_examples, tmp_path, monkeypatch):
    recorded_in = tmp_path / "laptop"
    shutil.copytree(cloze_examples, recorded_in / "data" / "cloze", symlinks=False)
    monkeypatch.chdir(recorded_in)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-moved-1")
    with ScriptedOpenAIServer(_answer) as server:
        code = app.main(["run", "cloze", "--data", "data/cloze", "--backend", "openai:scripted",
                         "--base-url", server.url, "--record", "traces/talk.jsonl",
                         "--out", "live.json", "--limit", "4", "--retry-sleep", "0",
                         "--no-progress"])
        asked = len(server.requests)
    assert code == 0 and asked == 4
    live = _answers(recorded_in / "live.json")
    assert len(live) == 4 and len({a for a, *_ in live.values()}) > 1  # not one canned letter

    for record in read_trace(recorded_in / "traces" / "talk.jsonl"):
        assert str(tmp_path) not in json.dumps(record)  # nothing names the laptop's folders

    stage = tmp_path / "stage"  # another machine: the data and the trace somewhere else
    shutil.move(recorded_in / "data", stage / "benchmarks")
    shutil.move(recorded_in / "traces", stage / "talk")
    shutil.rmtree(recorded_in)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("OPENAI_API_KEY")
    code = app.main(["run", "cloze", "--data", str(stage / "benchmarks" / "cloze"),
                     "--backend", f"replay:{stage / 'talk' / 'talk.jsonl'}", "--out", "replayed.json",
                     "--limit", "4", "--retry-sleep", "0", "--no-progress"])
    assert code == 0
    assert _answers(elsewhere / "replayed.json") == live
