"""`run impact --tasks spatial`: each clip is read once for all its annotated frames (not once per
frame), and the model sees exactly the frames a per-frame decode gives."""
from __future__ import annotations

import json
import threading
import time
from collections import Counter
from types import SimpleNamespace

import pytest

from app import build_parser
from backends.trace_format import image_sha256
from components.base.io import read_jsonl
from components.impact import pipeline
from components.impact.data import load_annotations
from components.impact.pipeline import annotated_frames, frame_images
from tests.helpers.openai_server import ScriptedOpenAIServer


@pytest.mark.parametrize("concurrency", [1, 4])
def test_each_clip_is_read_once_and_every_frame_is_the_one_asked(impact_examples, tmp_path,
                                                                  monkeypatch, concurrency):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))  # empty: every clip decoded here
    opened: Counter = Counter()
    real_open = pipeline.open_video

    def counting_open(path, *args, **kwargs):
        opened[str(path)] += 1
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(pipeline, "open_video", counting_open)
    ann_path = impact_examples / "annotations.json"
    items = load_annotations(ann_path).items
    units = {(it.qid, f) for it in items for f in annotated_frames(it)}
    assert len(units) > len(items)  # several frames per clip: one read each would repeat
    out, trace = tmp_path / "run", tmp_path / "trace.jsonl"
    with ScriptedOpenAIServer(["The affected body regions are head."]) as server:
        args = build_parser().parse_args([
            "run", "impact", "--annotations", str(ann_path), "--backend", "openai:test-vlm",
            "--base-url", server.url, "--tasks", "spatial", "--out", str(out), "--record", str(trace),
            "--concurrency", str(concurrency), "--no-progress"])
        assert args.func(args) == 0
    records = read_jsonl(out / "spatial_pred.jsonl")
    assert {(r["qid"], r["frame"]) for r in records} == units
    assert all(r["regions"] == ["head"] for r in records)
    assert sorted(opened.values()) == [1] * len(items)  # one read per clip
    assert set(opened) == {str(it.video) for it in items}
    monkeypatch.setattr(pipeline, "open_video", real_open)
    by_item = {it.qid: it for it in items}
    sent = {}
    for line in read_jsonl(trace):
        images = [p for m in line["messages"] for p in m["content"] if p["type"] == "image"]
        assert len(images) == 1
        sent[line["ref"]] = images[0]["sha256"]
    assert set(sent) == {f"{q}#{f}" for q, f in units}
    for qid, frame in sorted(units):  # the same pixels as decoding that frame alone
        alone = frame_images(by_item[qid], [frame])[frame]
        assert sent[f"{qid}#{frame}"] == image_sha256(alone), (qid, frame)


def test_a_resumed_run_reads_only_the_frames_still_pending(impact_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    ann_path = impact_examples / "annotations.json"
    items = load_annotations(ann_path).items
    first = items[0]
    frames = annotated_frames(first)
    out = tmp_path / "run"
    out.mkdir()
    done = {"key": f"{first.qid}#{frames[0]}", "qid": first.qid, "frame": frames[0],
            "regions": ["torso"], "raw": "kept from the first run"}
    (out / "spatial_pred.jsonl").write_text(json.dumps(done) + "\n")
    asked: list[list[int]] = []
    real = pipeline.frame_images

    def recording(item, wanted):
        asked.append((item.qid, list(wanted)))
        return real(item, wanted)

    monkeypatch.setattr(pipeline, "frame_images", recording)
    with ScriptedOpenAIServer(["The affected body regions are head."]) as server:
        args = build_parser().parse_args([
            "run", "impact", "--annotations", str(ann_path), "--backend", "openai:test-vlm",
            "--base-url", server.url, "--tasks", "spatial", "--out", str(out), "--no-progress",
            "--adopt"])   # the line written above has no stamp (issue 38: adopted only when asked)
        assert args.func(args) == 0
    assert (first.qid, frames[1:]) in asked and len(asked) == len(items)
    kept = [r for r in read_jsonl(out / "spatial_pred.jsonl") if r["key"] == done["key"]]
    assert len(kept) == 1 and {k: kept[0][k] for k in done} == done


@pytest.mark.parametrize(("lookahead", "ahead_units", "clips_started"), [(2, 0, 3), (2, 10, 5), (1, 7, 4)])
def test_the_clips_decoded_ahead_hold_the_units_in_flight(monkeypatch, lookahead, ahead_units,
                                                          clips_started):
    """Asking the first unit starts its clip and the clips after it: at least `lookahead` of
    them, and more until they hold `ahead_units` units (so many workers at the front of the run
    find their frames decoded); never the whole run."""
    started: list[str] = []
    lock = threading.Lock()

    def fake_decode(item, frames):
        with lock:
            started.append(item.qid)
        return {f: f"{item.qid}#{f}" for f in frames}

    monkeypatch.setattr(pipeline, "frame_images", fake_decode)
    clips = [SimpleNamespace(qid=f"c{n:02d}") for n in range(20)]
    units = [(clip, frame) for clip in clips for frame in (1, 2, 3)]  # three units a clip
    with pipeline.ClipFrames(units, lookahead=lookahead, ahead_units=ahead_units) as frames:
        assert frames.image(clips[0], 2) == "c00#2"
        deadline = time.monotonic() + 10
        while len(started) < clips_started and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # a clip started beyond the window would be decoded by now
        assert sorted(started) == [f"c{n:02d}" for n in range(clips_started)]
        for clip, frame in units:  # every unit still gets its own frame, each clip decoded once
            assert frames.image(clip, frame) == f"{clip.qid}#{frame}"
    assert sorted(started) == [clip.qid for clip in clips]
