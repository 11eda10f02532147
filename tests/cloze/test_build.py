"""Building instances from a video: explicit and automatic gaps, rejections, clip contents."""
import json
import random

import numpy as np
import pytest

from components.cloze.build import FLOW_THRESHOLD, build_instance, choose_gap
from components.cloze.gaps import distractor_intervals
from components.base.errors import UserError
from components.media import open_video
from tests.cloze.conftest import write_video


def _info(path):
    src = open_video(path)
    try:
        return src.info
    finally:
        src.close()


def _frame(path, index):
    src = open_video(path)
    try:
        return np.asarray(src.frames_at_indices([index])[0].image, dtype=np.float32)
    finally:
        src.close()


def test_explicit_gap_writes_every_clip_with_the_formula_lengths(tmp_path):
    video = write_video(tmp_path / "v.mp4", 12.0)
    entry = build_instance(video, tmp_path / "out", gap=(4.0, 7.0), seed=5)
    assert (entry["gap_start"], entry["gap_end"], entry["seed"]) == (4.0, 7.0, 5)
    folder = tmp_path / "out" / "choices" / "v"
    n = lambda rel: _info(folder / rel).num_frames  # noqa: E731
    fps = 24
    assert n("before.mp4") == 4 * fps and n("GT.mp4") == 3 * fps and n("after.mp4") == 5 * fps
    # D = 3: Early [2.5, 5.5], Late [5.5, 8.5], Wide [2.5, 8.5] (hand-computed)
    assert n("A/Early.mp4") == 72 and n("A/Late.mp4") == 72 and n("A/Wide.mp4") == 144
    assert n("C/Reverse.mp4") == 72 and n("C/Shuffle.mp4") == 72
    assert n("C/Loop.mp4") == 3 * 24          # middle third [5, 6] repeated 3 times
    assert entry["intervals"]["Early"] == [2.5, 5.5] and entry["intervals"]["Wide"] == [2.5, 8.5]
    # the Rand intervals are the seeded ones
    again = distractor_intervals(4.0, 7.0, 12.0, _rng_after_no_gap("5:v"))
    assert entry["intervals"]["Rand1"] == again["Rand1"].as_list(3)
    # Reverse starts where GT ends
    assert np.abs(_frame(folder / "C/Reverse.mp4", 0) - _frame(folder / "GT.mp4", 71)).mean() < 4
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["v.mp4"]["gap_start"] == 4.0


def _rng_after_no_gap(tag):
    return random.Random(tag)


def test_automatic_gap_is_rejected_on_a_still_video_with_reasons(tmp_path):
    video = write_video(tmp_path / "still.mp4", 12.0, moving=False)
    with pytest.raises(UserError) as err:
        build_instance(video, tmp_path / "out")
    msg = str(err.value)
    assert "still.mp4" in msg and msg.count("try ") == 3 and "1.0" in msg
    assert not (tmp_path / "out" / "choices" / "still").exists()


def test_automatic_gap_with_motion_is_accepted_on_the_first_try():
    calls = []

    def fake_flow(video, s, e):
        calls.append((s, e))
        return 0.5 if len(calls) < 3 else 2.0

    choice = choose_gap("v.mp4", 20.0, random.Random(1), flow_fn=fake_flow)
    assert len(calls) == 3 and choice.gap is not None and choice.flow == 2.0
    assert [t["accepted"] for t in choice.tries] == [False, False, True]


@pytest.mark.parametrize("seconds", [6.0])
def test_videos_outside_12_to_90_s_get_a_clear_message(tmp_path, seconds):
    video = write_video(tmp_path / "short.mp4", seconds)
    with pytest.raises(UserError, match="12-90 s"):
        build_instance(video, tmp_path / "out")


def test_bad_explicit_gap(tmp_path):
    video = write_video(tmp_path / "v.mp4", 12.0)
    with pytest.raises(UserError, match="gap"):
        build_instance(video, tmp_path / "out", gap=(8.0, 20.0))


def _burst_video(path, fps=24, seconds=8.0, burst=range(23, 28)):
    """A still textured frame that moves 4 px a frame only from frame 23 to 28 (5 of the gap's 83 pairs)."""
    from components.media import write_video_from_arrays

    w, h = 64, 48
    rng = np.random.default_rng(0)
    big = np.kron(rng.uniform(0, 255, (h // 4, 2 * w // 4)), np.ones((4, 4)))  # 4-px blocks

    def frames():
        for k in range(int(seconds * fps)):
            shift = 4 * (min(max(k, burst.start), burst.stop) - burst.start)
            v = big[:, shift:shift + w]
            yield np.stack([v, v, v], -1).clip(0, 255).astype(np.uint8)

    return write_video_from_arrays(frames(), path, fps)


def farneback_magnitude(prev_rgb, next_rgb) -> float:
    """The upstream call, transcribed: both frames grey, resized to height 256 (the first frame's
    aspect), Farneback flow (0.5, 3, 15, 3, 5, 1.2, 0), the mean flow magnitude."""
    import cv2

    a = cv2.cvtColor(np.asarray(prev_rgb), cv2.COLOR_RGB2GRAY)
    size = (max(1, int(round(256 * a.shape[1] / a.shape[0]))), 256)
    a = cv2.resize(a, size)
    b = cv2.resize(cv2.cvtColor(np.asarray(next_rgb), cv2.COLOR_RGB2GRAY), size)
    flow = cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 3, 15, 3, 5, 1.2, 0)
    return float(np.sqrt(flow[..., 0] ** 2 + flow[..., 1] ** 2).mean())


def test_motion_check_averages_every_frame_pair_of_the_gap(tmp_path):
    from components.cloze.build import gap_frame_range, mean_flow

    video = _burst_video(tmp_path / "burst.mp4")
    info = _info(video)
    frames = gap_frame_range(0.5, 4.0, info.fps, info.num_frames)
    assert (frames.start, frames.stop) == (12, 96)          # int(0.5 * 24), int(4.0 * 24)
    src = open_video(video)
    try:
        images = [np.asarray(f.image) for f in src.frames_at_indices(list(frames))]
    finally:
        src.close()
    pairs = [farneback_magnitude(a, b) for a, b in zip(images, images[1:])]
    assert len(pairs) == 83
    expected = sum(pairs) / len(pairs)
    # 5 moving pairs (~19 each) of 83: the released mean is ~1.16 > 1.0, accepted; the 8 pairs
    # sampled before (frames 12, 22, 33, ...) all fall in still stretches and rejected this gap
    assert expected > FLOW_THRESHOLD
    assert mean_flow(video, 0.5, 4.0) == pytest.approx(expected, rel=1e-6)


def test_meta_json_is_read_from_output_preset_beside_choices(cloze_copy):
    from components.cloze.data import load_dataset

    meta = json.loads((cloze_copy / "meta.json").read_text())
    (cloze_copy / "meta.json").unlink()
    released = {name: {"gap_start": e["gap_start"], "gap_end": e["gap_end"]} for name, e in meta.items()}
    (cloze_copy / "output" / "lvd").mkdir(parents=True)
    (cloze_copy / "output" / "lvd" / "meta.json").write_text(json.dumps(released))
    ds = load_dataset(cloze_copy)
    name, entry = next(iter(released.items()))
    assert ds.instances[name.removesuffix(".mp4")].meta == entry
    assert ds.meta == released


def test_meta_json_rejected_entries_are_skipped_and_conflicts_named(cloze_copy):
    from components.cloze.data import load_dataset

    meta = json.loads((cloze_copy / "meta.json").read_text())
    name = next(iter(meta))
    (cloze_copy / "output").mkdir()
    (cloze_copy / "output" / "meta.json").write_text(json.dumps(
        {"dropped.mp4": {"keep": False, "gap_start": None, "gap_end": None, "reason": "QUALITY_LOW"},
         name: {"gap_start": meta[name]["gap_start"], "gap_end": meta[name]["gap_end"]}}))
    ds = load_dataset(cloze_copy)
    assert "dropped.mp4" not in ds.meta
    (cloze_copy / "output" / "meta.json").write_text(json.dumps(
        {name: {"gap_start": 0.5, "gap_end": 1.5}}))
    with pytest.raises(UserError, match="keep one of them"):
        load_dataset(cloze_copy)
