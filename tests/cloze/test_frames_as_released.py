"""The frames a model is sent are the released evaluation's frames, pixel for pixel (issue 35).

The released TempCloze eval.py reads each sampled frame with OpenCV (`cv2.VideoCapture`, a seek
to the frame, `read`) and, when it is taller than 360 px, resizes it with `cv2.resize(frame,
(int(w * scale), 360))` (OpenCV's default: bilinear). That reading is transcribed below as the
independent check. The app decodes with its own reader (components.media) and used to resize
with PIL's bicubic filter: up to 6-15 grey levels away on grainy clips. Clips are encoded here,
grainy so that the two filters differ, at 1280x720, 640x480 and 1000x562 (a width the released
rule truncates: int(640.57) = 640, where rounding gives 641)."""
from __future__ import annotations

import numpy as np
import pytest

from components.cloze import frames
from components.media import bin_centred_indices

FRAMES = 20


def write_grainy_clip(path, width: int, height: int) -> None:
    """A moving gradient under fresh film grain every frame, H.264 yuv420p, 24 fps."""
    import av

    rng = np.random.default_rng(width + height)
    y, x = np.mgrid[0:height, 0:width]
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "18", "preset": "ultrafast"}
        for k in range(FRAMES):
            base = np.stack([(x * 255 // width + 9 * k) % 256, (y * 255 // height) % 256,
                             ((x + y + 7 * k) // 3) % 256], axis=-1)
            grain = rng.integers(-40, 41, size=(height, width, 1))
            picture = np.clip(base + grain, 0, 255).astype(np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def released_frames(path, n: int = 16, max_height: int = 360) -> list[np.ndarray]:
    """Transcribed from the released eval.py's `sample_and_encode` (before its JPEG encode), with
    the bin-centred indices of the released TempCloze version; RGB instead of OpenCV's BGR."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    out = []
    for idx in bin_centred_indices(total, n):
        cap.set(cv2.CAP_PROP_POS_FRAMES, idx)
        ret, frame = cap.read()
        assert ret, f"OpenCV could not read frame {idx} of {path}"
        h, w = frame.shape[:2]
        if h > max_height:
            scale = max_height / h
            frame = cv2.resize(frame, (int(w * scale), max_height))
        out.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    cap.release()
    return out


@pytest.mark.parametrize("size", [(1280, 720), (640, 480), (1000, 562)])
def test_the_frames_sent_are_the_released_frames(tmp_path, size):
    path = tmp_path / f"clip_{size[0]}x{size[1]}.mp4"
    write_grainy_clip(path, *size)
    expected = released_frames(path)
    got = frames.clip_frames(path, 16, jpeg=False, caches=frames.FrameCaches())
    assert len(got) == len(expected) == 16
    assert [g.size for g in got] == [(e.shape[1], e.shape[0]) for e in expected]
    diff = np.abs(np.stack([np.asarray(g) for g in got]).astype(int) - np.stack(expected).astype(int))
    # the same filter on the same decoded pixels: equal (a decoder's rounding may move a level)
    assert diff.max() <= 1 and diff.mean() < 0.01, (diff.max(), diff.mean())


def test_the_jpegs_are_stored_under_the_filter_that_made_them(tmp_path, monkeypatch):
    """The disk cache key names the resize, so JPEGs made by the earlier bicubic resize are never
    sent as the released frames."""
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    assert frames._disk_params(16, 360)["resize"] == "opencv-linear"
