"""The synthetic impact clips: layout (docs/formats.md), exact moments and regions, determinism."""
from __future__ import annotations

import json

import numpy as np
import pytest

from components.impact.solvers import baseline_regions
from components.impact.regions import REGION_LABELS
from examples import impact_clips


def _flash_pixels(frame: np.ndarray) -> int:
    """Pixels of the flash colour (#ff4020 under any shading): strongly red, little green/blue."""
    f = frame.astype(int)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    return int(((r > 120) & (r > 1.8 * g) & (r > 2.5 * b)).sum())


@pytest.fixture(scope="module")
def annotations(impact_examples):
    return json.loads((impact_examples / "annotations.json").read_text())


def test_layout_follows_formats_md(impact_examples, annotations):
    assert annotations["fps"] == 24
    items = annotations["items"]
    assert len(items) >= 6
    assert len({item["qid"] for item in items}) == len(items)
    counts = [len(item["moments"]) for item in items]
    assert 2 in counts and max(counts) >= 3
    for item in items:
        assert set(item) >= {"qid", "video", "query", "split", "num_frames", "moments", "frames"}
        assert (impact_examples / item["video"]).is_file()
        assert item["video"] == f"clips/{item['qid']}.mp4"
        assert 6 * 24 <= item["num_frames"] <= 8 * 24
        assert item["query"][0].isupper() and item["query"].endswith(".")
        covered = []
        for fs, fe in item["moments"]:
            assert 1 <= fs <= fe <= item["num_frames"]
            covered += range(fs, fe + 1)
        assert sorted(int(k) for k in item["frames"]) == sorted(covered)
        for frame in item["frames"].values():
            assert frame["regions"] and set(frame["regions"]) <= set(REGION_LABELS)
    lengths = [fe - fs + 1 for item in items for fs, fe in item["moments"]]
    assert min(lengths) <= 2 and any(3 <= n <= 6 for n in lengths) and max(lengths) >= 7


def test_temporal_gt_in_qvhighlights_seconds(impact_examples, annotations):
    lines = [json.loads(x) for x in (impact_examples / "temporal_gt.jsonl").read_text().splitlines()]
    by_qid = {line["qid"]: line for line in lines}
    for item in annotations["items"]:
        windows = by_qid[item["qid"]]["relevant_windows"]
        assert windows == [[(fs - 1) / 24, fe / 24] for fs, fe in item["moments"]]
        assert by_qid[item["qid"]]["query"] == item["query"]


def test_queries_name_the_annotated_regions(annotations):
    for item in annotations["items"]:
        truth = {label for frame in item["frames"].values() for label in frame["regions"]}
        assert set(baseline_regions(item["query"])) == truth, item["query"]


def test_the_struck_region_flashes_exactly_during_the_moments(impact_examples, annotations):
    from components.media import open_video

    for item in annotations["items"]:
        inside = {f for fs, fe in item["moments"] for f in range(fs, fe + 1)}
        with open_video(impact_examples / item["video"]) as video:
            assert video.num_frames == item["num_frames"]
            assert abs(video.fps - 24) < 1e-6
            frames = video.frames_at_indices(list(range(video.num_frames)))
        counts = [_flash_pixels(np.asarray(frame.image)) for frame in frames]
        during = min(counts[f - 1] for f in inside)
        outside = max(c for f, c in enumerate(counts, 1) if f not in inside)
        assert during >= 15 and during > 2 * outside + 5, (item["qid"], during, outside)


def test_generation_is_deterministic(tmp_path):
    # (pyrender sums lights in set order; render.py pins that order, so even a second run in the
    # same process, after other GL work, gives the same bytes)
    first, second = tmp_path / "a", tmp_path / "b"
    impact_clips.generate(first, seed=0, qids=("h0001",))
    impact_clips.generate(second, seed=0, qids=("h0001",))
    for path in sorted(p for p in first.rglob("*") if p.is_file()):
        assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path.name


def test_falls_back_to_the_silhouette_renderer_without_gl(tmp_path, monkeypatch, capsys):
    from components.impact import render

    def no_gl(*args, **kwargs):
        raise render.RenderUnavailable("no offscreen GL (test)")

    monkeypatch.setattr(render, "BodyScene", no_gl)
    if hasattr(impact_clips, "BodyScene"):  # the generator may hold its own reference
        monkeypatch.setattr(impact_clips, "BodyScene", no_gl)
    impact_clips.generate(tmp_path, seed=0, qids=("h0002",))
    assert "numpy silhouette" in (tmp_path / "README.txt").read_text()
    assert "silhouette" in capsys.readouterr().err
    from components.media import open_video

    item = json.loads((tmp_path / "annotations.json").read_text())["items"][0]
    with open_video(tmp_path / item["video"]) as video:
        frames = video.frames_at_indices([0, item["moments"][0][0] - 1])
    still, hit = (np.asarray(f.image) for f in frames)
    assert (np.abs(still.astype(int) - 247).max(axis=2) > 30).mean() > 0.03  # a body is drawn
    assert _flash_pixels(hit) > 15 and _flash_pixels(still) == 0
