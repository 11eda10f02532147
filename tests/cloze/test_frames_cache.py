"""components.cloze.frames: a clip's frames are decoded once however many ask at once, and a
prefetch leaves the next question's views made before it is shown."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from components.cloze import frames
from components.cloze.data import load_dataset


@pytest.fixture
def caches() -> frames.FrameCaches:
    """Frames kept in memory by this test alone."""
    return frames.FrameCaches()


@pytest.fixture
def clip(cloze_examples, tmp_path):
    inst = next(iter(load_dataset(cloze_examples).instances.values()))
    copy = tmp_path / "GT.mp4"                 # a file no other test has decoded (own cache key)
    copy.write_bytes(inst.clip_path("GT").read_bytes())
    return copy


def test_many_asking_at_once_decode_the_clip_once(clip, decodes, caches):
    got, start = [], threading.Barrier(4)

    def ask():
        start.wait()
        got.append(frames.clip_frames(clip, 16, jpeg=False, caches=caches))
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(got) == 4 and all(len(g) == 16 for g in got)
    assert [p for _, p in decodes] == [clip]
    assert all(a.tobytes() == b.tobytes() for g in got[1:] for a, b in zip(got[0], g))


def test_a_prefetched_grid_is_shown_without_decoding(clip, decodes, caches):
    frames.prefetch([clip], 16, kind="grid", caches=caches)
    frames._prefetcher.submit(lambda: None).result(60)   # the worker is done with it
    assert [p for _, p in decodes] == [clip]
    grid = frames.clip_grid(clip, 16, caches=caches)
    assert [p for _, p in decodes] == [clip]              # shown from what the prefetch made
    # decoded at the tile height by the decoder's scaler: the same picture as the grid drawn from
    # the full frames a model is sent, within a few grey levels
    exact = frames.frame_grid(frames.clip_frames(clip, 16, jpeg=False, caches=caches))
    assert grid.size == exact.size
    diff = np.abs(np.asarray(grid, np.int16) - np.asarray(exact, np.int16))
    assert diff.mean() < 6


def test_a_grid_is_drawn_from_the_frames_a_model_was_sent_when_they_are_kept(clip, decodes, caches):
    sent = frames.clip_frames(clip, 16, jpeg=False, caches=caches)
    grid = frames.clip_grid(clip, 16, caches=caches)
    assert [p for _, p in decodes] == [clip]              # one decode for both
    assert grid.tobytes() == frames.frame_grid(sent).tobytes()


def test_a_questions_grids_are_made_side_by_side_and_a_missing_clip_is_named(cloze_examples, tmp_path, decodes, caches):
    inst = next(iter(load_dataset(cloze_examples).instances.values()))
    clips = []
    for k in range(6):
        copy = tmp_path / f"c{k}.mp4"
        copy.write_bytes(inst.clip_path("GT").read_bytes())
        clips.append(copy)
    grids = frames.clip_grids(clips, 16, caches=caches)
    assert len(grids) == 6 and len(decodes) == 6
    assert {name.split("_")[0] for name, _ in decodes} == {"cloze-decode"}
    assert all(g.tobytes() == grids[0].tobytes() for g in grids)
    with pytest.raises(frames.MediaError, match="gone.mp4"):
        frames.clip_grids([clips[0], tmp_path / "gone.mp4"], 16, caches=caches)


def test_a_prefetch_of_a_missing_clip_leaves_the_error_to_the_request(tmp_path, decodes, caches):
    gone = tmp_path / "gone.mp4"
    frames.prefetch([gone], 16, kind="jpeg", caches=caches)
    frames._prefetcher.submit(lambda: None).result(60)
    with pytest.raises(frames.MediaError, match="Clip not found"):
        frames.clip_jpegs(gone, 16, caches=caches)


def test_decoded_frames_are_kept_for_two_questions_only_and_the_jpegs_stay(cloze_examples, tmp_path, decodes, caches):
    inst = next(iter(load_dataset(cloze_examples).instances.values()))
    clips = []
    for k in range(frames.PIL_CACHE_SIZE + 3):          # more clips than the decoded frames kept
        copy = tmp_path / f"clip{k}.mp4"
        copy.write_bytes(inst.clip_path("GT").read_bytes())
        clips.append(copy)
        frames.clip_jpegs(copy, 16, caches=caches)
    assert len(caches.decoded) == frames.PIL_CACHE_SIZE   # ~11 MB each: bounded
    assert len(decodes) == len(clips)
    for copy in clips:                                    # the JPEGs of every clip are still kept
        frames.clip_jpegs(copy, 16, caches=caches)
    assert len(decodes) == len(clips)
    frames.clip_grid(clips[-1], 16, caches=caches)        # a recent clip's grid shares its decode
    assert len(decodes) == len(clips)


def test_a_warm_clip_asked_by_many_questions_is_read_not_decoded_nor_hashed_again(clip, decodes, monkeypatch):
    """A batch run at full size with the frames cache warm: each question that shows a clip no
    longer kept in memory reads its JPEGs from the disk cache (the same bytes), decoding nothing,
    and the clip file itself is not read again for its cache key while it is unchanged."""
    from components.media import cache

    first = frames.clip_jpegs(clip, 16, caches=frames.FrameCaches())
    assert [p for _, p in decodes] == [clip]
    opened = []
    real_open = open
    monkeypatch.setattr(cache, "open", lambda f, *a, **k: opened.append(str(f)) or real_open(f, *a, **k),
                        raising=False)
    for _ in range(3):                     # three questions, the clip evicted from memory between
        again = frames.clip_jpegs(clip, 16, caches=frames.FrameCaches())
        assert [e.data for e in again] == [e.data for e in first]
    assert [p for _, p in decodes] == [clip]
    assert str(clip) not in opened
