"""Every bad-media case gives a MediaError naming the file and saying the fix."""
from __future__ import annotations

import numpy as np
import pytest

from components.base.errors import MediaError
from components.media import VideoSource, cut_clip, open_video
from tests.media.videos import write_index_video


def _error(path) -> str:
    with pytest.raises(MediaError) as err:
        VideoSource(path)
    msg = str(err.value)
    assert path.name in msg
    return msg


def test_missing_file(tmp_path):
    msg = _error(tmp_path / "missing.mp4")
    assert "not found" in msg and "Check the path" in msg
    with pytest.raises(MediaError, match="not found"):
        open_video(tmp_path / "missing.mp4")
    with pytest.raises(MediaError, match="not found"):
        cut_clip(tmp_path / "missing.mp4", 0, 1, tmp_path / "o.mp4")


def test_empty_file(tmp_path):
    (tmp_path / "empty.mp4").write_bytes(b"")
    msg = _error(tmp_path / "empty.mp4")
    assert "empty (0 bytes)" in msg and "copy the file again" in msg


def test_directory_instead_of_file(tmp_path):
    (tmp_path / "dir.mp4").mkdir()
    assert "is not a file" in _error(tmp_path / "dir.mp4")


def test_truncated_faststart_file_reports_time(tmp_path):
    # 20 s at 24 fps, keyframe every 2 s; index at the front, so the file opens but data stops.
    full = write_index_video(tmp_path / "full.mp4", 480, fps=24, gop=48, faststart=True)
    data = full.read_bytes()
    cut = tmp_path / "movie_half.mp4"
    cut.write_bytes(data[: len(data) // 2])
    msg = _error(cut)
    assert "is truncated at 00:00:" in msg and "copy the complete file again" in msg
    seconds = int(msg.split("truncated at 00:00:")[1][:2])
    assert 5 <= seconds <= 15  # about half of 20 s


def test_truncated_file_without_index(tmp_path):
    full = write_index_video(tmp_path / "full2.mp4", 120, faststart=False)  # moov at the end
    cut = tmp_path / "partial.mp4"
    cut.write_bytes(full.read_bytes()[:-4000])
    msg = _error(cut)
    assert "incomplete MP4" in msg and "truncated" in msg and "Copy it again" in msg


def test_random_bytes_and_text_with_mp4_extension(tmp_path):
    (tmp_path / "noise.mp4").write_bytes(np.random.default_rng(0).bytes(20000))
    (tmp_path / "notes.mp4").write_text("this is not a video\n" * 50)
    for name in ("noise.mp4", "notes.mp4"):
        msg = _error(tmp_path / name)
        assert "cannot be decoded as a video" in msg
        assert "ffmpeg -i in.mp4 -c:v libx264" in msg


def test_audio_only_file(tmp_path):
    import av

    path = tmp_path / "speech.mp4"
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("aac", rate=16000)
        s.layout = "mono"
        rng = np.random.default_rng(0)
        for i in range(10):
            fr = av.AudioFrame.from_ndarray(rng.uniform(-0.1, 0.1, (1, 1024)).astype(np.float32),
                                            format="fltp", layout="mono")
            fr.sample_rate, fr.pts = 16000, i * 1024
            for p in s.encode(fr):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    msg = _error(path)
    assert "no video stream (audio only)" in msg and "video track" in msg


def test_frame_index_out_of_range(index_video):
    with pytest.raises(ValueError, match=r"frame index 120 outside \[0, 119\]"):
        VideoSource(index_video).frames_at_indices([0, 120])


def test_valid_file_still_opens_after_errors(tmp_path):
    # The diagnosis path must not leave anything behind that breaks later reads.
    good = write_index_video(tmp_path / "good.mp4", 10)
    assert VideoSource(good).info.num_frames == 10
