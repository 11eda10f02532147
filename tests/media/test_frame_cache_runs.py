"""The model frames of a cloze clip are kept on disk: a second `run cloze` (another model, a new
process: nothing kept in memory) decodes no video and sends the same bytes, and the Cloze tab's
grids for those questions are drawn from the same entries. Decodes are counted by the media
layer's own counter (components.media.frames_decoded)."""
from __future__ import annotations

import json
import shutil

import pytest

from app import build_parser
from components.cloze import frames
from components.cloze.data import load_dataset
from components.cloze.questions import build_set
from components.media import frames_decoded
from tests.helpers.openai_server import ScriptedOpenAIServer

QUESTIONS = 3


@pytest.fixture
def cloze_data(cloze_examples, tmp_path, monkeypatch):
    """A copy of the example cloze data and an empty disk cache of this test's own."""
    dest = tmp_path / "cloze"
    shutil.copytree(cloze_examples, dest, ignore=shutil.ignore_patterns("results"))
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return dest


def _new_process(monkeypatch) -> None:
    """What a new process starts with: no frames kept in memory."""
    frames._prefetcher.submit(lambda: None).result(120)
    frames.FRAMES.clear()


def _run_cloze(data, model: str, out, url: str) -> None:
    args = build_parser().parse_args([
        "run", "cloze", "--data", str(data), "--backend", f"openai:{model}", "--base-url", url,
        "--out", str(out), "--limit", str(QUESTIONS), "--retry-sleep", "0", "--concurrency", "2",
        "--no-progress"])
    assert args.func(args) == 0
    answered = [e for dims in json.loads(out.read_text()).values() for e in dims.values()]
    assert len(answered) == QUESTIONS and all(e["answer"] == "B" for e in answered)


def _images(requests: list[dict]) -> list[tuple[str, ...]]:
    """The data URLs of each request, sorted (requests arrive in any order)."""
    return sorted(tuple(p["image_url"]["url"] for p in body["messages"][-1]["content"]
                        if p.get("type") == "image_url") for body in requests)


def test_a_second_models_run_decodes_no_video(cloze_data, tmp_path, monkeypatch):
    with ScriptedOpenAIServer(['{"answer": "B", "reason": "r"}']) as server:
        _new_process(monkeypatch)
        before = frames_decoded()
        _run_cloze(cloze_data, "model-a", tmp_path / "a.json", server.url)
        first_decoded = frames_decoded() - before
        first_sent = _images(server.requests)
        server.requests.clear()

        _new_process(monkeypatch)
        before = frames_decoded()
        _run_cloze(cloze_data, "model-b", tmp_path / "b.json", server.url)
        assert frames_decoded() - before == 0                 # every clip's frames from the disk
        second_sent = _images(server.requests)
    assert first_decoded >= 16 * 6                            # the first run did decode
    assert len(first_sent) == QUESTIONS and second_sent == first_sent   # the very same bytes
    assert all(len(urls) == 96 for urls in second_sent)
    entries = [p for p in (tmp_path / "cache" / "frames").iterdir() if not p.name.startswith(".")]
    assert len(entries) >= 6


def test_the_cloze_tab_draws_a_run_questions_grids_without_decoding(cloze_data, tmp_path, monkeypatch):
    with ScriptedOpenAIServer(['{"answer": "B", "reason": "r"}']) as server:
        _new_process(monkeypatch)
        _run_cloze(cloze_data, "model-a", tmp_path / "a.json", server.url)
    ds = load_dataset(cloze_data)
    asked = json.loads((tmp_path / "a.json").read_text())
    q = next(q for q in build_set(ds).questions if q.dim in asked.get(q.stem, {}))
    inst = ds.instance(q.stem)
    clips = [inst.clip_path(n) for n in ("before", "after", *q.options)]

    _new_process(monkeypatch)
    before = frames_decoded()
    grids = frames.clip_grids(clips, 16)
    assert frames_decoded() == before                         # drawn from the stored JPEGs
    # the same picture as the grid drawn from the decoded frames, within a few grey levels
    import numpy as np

    _new_process(monkeypatch)
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "empty-cache"))
    decoded = frames.clip_grid(clips[0], 16)
    assert frames_decoded() > before
    assert grids[0].size == decoded.size
    diff = np.abs(np.asarray(grids[0], np.int16) - np.asarray(decoded, np.int16))
    assert diff.mean() < 6


def test_a_damaged_entry_is_decoded_again_and_replaced(cloze_data, monkeypatch):
    ds = load_dataset(cloze_data)
    clip = next(iter(ds.instances.values())).clip_path("GT")
    _new_process(monkeypatch)
    sent = frames.clip_jpegs(clip, 16)
    entry = next(p for p in (cloze_data.parent / "cache" / "frames").iterdir() if not p.name.startswith("."))
    entry.write_bytes(entry.read_bytes()[:-3000])             # cut short, as by a full disk

    _new_process(monkeypatch)
    before = frames_decoded()
    again = frames.clip_jpegs(clip, 16)
    assert frames_decoded() - before == 16                    # not read: decoded again
    assert [e.data for e in again] == [e.data for e in sent]
    _new_process(monkeypatch)
    before = frames_decoded()
    assert [e.data for e in frames.clip_jpegs(clip, 16)] == [e.data for e in sent]
    assert frames_decoded() == before                         # the replaced entry is read
