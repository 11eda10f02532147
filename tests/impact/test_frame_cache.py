"""The frames an Impact run sends are kept on disk (components.common.sent_frames): a second model's
`run impact` on the same clips (a new run, nothing kept in memory) decodes no video and sends the
very same bytes, for the temporal task's sampled frames and the spatial task's annotated frames;
a damaged or half-written entry is never read. Decodes are counted by the media layer's own counter
(components.media.frames_decoded), on the real example clips."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app import build_parser
from components.common import sent_frames as sent_frames_module
from components.impact.data import load_annotations
from components.impact.pipeline import annotated_frames, scored_frames
from components.media import frames_decoded
from components.media.cache import PACK_MAGIC
from tests.helpers.openai_server import ScriptedOpenAIServer


def _answer(body: dict) -> str:
    if "body regions physically affected" in json.dumps(body):
        return "The affected body regions are head."
    return "The event happens in 3.417 - 3.583 seconds."


@pytest.fixture
def impact_copy(impact_examples, tmp_path, monkeypatch) -> Path:
    """A copy of the example Impact data and an empty disk cache of this test's own."""
    dest = tmp_path / "impact"
    shutil.copytree(impact_examples, dest)
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return dest / "annotations.json"


def _run(annotations: Path, model: str, out: Path, url: str) -> None:
    args = build_parser().parse_args([
        "run", "impact", "--annotations", str(annotations), "--backend", f"openai:{model}",
        "--base-url", url, "--out", str(out), "--max-frames", "16", "--concurrency", "2",
        "--no-progress"])
    assert args.func(args) == 0


def _sent(requests: list[dict]) -> list[tuple[str, ...]]:
    """Each request's image data URLs, sorted (requests arrive in any order)."""
    return sorted(tuple(p["image_url"]["url"] for m in body["messages"] if isinstance(m["content"], list)
                        for p in m["content"] if p.get("type") == "image_url") for body in requests)


def _sizes(annotations: Path) -> tuple[int, int]:
    """(clips, spatial units: annotated frames with regions) of the annotation file."""
    items = load_annotations(annotations).items
    return len(items), len(scored_frames(load_annotations(annotations)))


def _entries(cache: Path) -> list[Path]:
    return [p for p in (cache / "frames").iterdir() if not p.name.startswith(".")]


def _index(pack: Path) -> list[dict]:
    """The index line of an entry's pack file (components.media.cache)."""
    return json.loads(pack.read_bytes()[len(PACK_MAGIC):].split(b"\n", 1)[0])["frames"]


def test_a_second_models_run_decodes_no_video_and_sends_the_same_bytes(impact_copy, tmp_path):
    with ScriptedOpenAIServer(_answer) as server:
        before = frames_decoded()
        _run(impact_copy, "model-a", tmp_path / "a", server.url)
        first_decoded = frames_decoded() - before
        first_sent = _sent(server.requests)
        server.requests.clear()

        before = frames_decoded()
        _run(impact_copy, "model-b", tmp_path / "b", server.url)
        assert frames_decoded() - before == 0            # every frame from the disk
        second_sent = _sent(server.requests)
    clips, units = _sizes(impact_copy)
    assert first_decoded >= 16 * clips + units            # the first run did decode
    assert second_sent == first_sent                      # the very same bytes
    assert sorted(len(urls) for urls in first_sent) == [1] * units + [16] * clips
    for model in ("a", "b"):
        assert len((tmp_path / model / "spatial_pred.jsonl").read_text().splitlines()) == units
        assert len((tmp_path / model / "temporal_pred.jsonl").read_text().splitlines()) == clips


def test_a_damaged_entry_is_made_again_never_read(impact_copy, tmp_path):
    with ScriptedOpenAIServer(_answer) as server:
        _run(impact_copy, "model-a", tmp_path / "a", server.url)
        first_sent = _sent(server.requests)
        server.requests.clear()
        cache = tmp_path / "cache"
        damaged = 0
        for entry in _entries(cache):  # every entry's pictures cut short, as a torn write
            index = _index(entry)
            if index and "mime" in index[0]:
                entry.write_bytes(entry.read_bytes()[: -index[-1]["bytes"] // 2])
                damaged += 1
        assert damaged >= 2 * _sizes(impact_copy)[0]  # each clip's temporal and annotated frames

        before = frames_decoded()
        _run(impact_copy, "model-b", tmp_path / "b", server.url)
        assert frames_decoded() - before > 0              # made again from the video
        assert _sent(server.requests) == first_sent       # not the cut bytes


def test_a_run_stopped_while_writing_leaves_no_entry(impact_copy, tmp_path, monkeypatch):
    real = sent_frames_module.encode
    calls = []

    def dies_on_the_third_picture(frame, max_side, quality=85):
        calls.append(frame.index)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the process is stopped in the middle of an entry
        return real(frame, max_side, quality)

    monkeypatch.setattr(sent_frames_module, "encode", dies_on_the_third_picture)
    with ScriptedOpenAIServer(_answer) as server:
        with pytest.raises(KeyboardInterrupt):
            _run(impact_copy, "model-a", tmp_path / "a", server.url)
        for entry in _entries(tmp_path / "cache") if (tmp_path / "cache" / "frames").exists() else []:
            index = _index(entry)                                           # other clips': whole
            assert entry.stat().st_size == len(PACK_MAGIC) + len(entry.read_bytes().split(b"\n")[1]) + 1 \
                + sum(i["bytes"] for i in index)
            assert len(index) in (16, *(len(annotated_frames(it)) for it in load_annotations(impact_copy).items))
        monkeypatch.setattr(sent_frames_module, "encode", real)
        server.requests.clear()
        _run(impact_copy, "model-a", tmp_path / "a2", server.url)
    assert len(_sent(server.requests)) == sum(_sizes(impact_copy))
