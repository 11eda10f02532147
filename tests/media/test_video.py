"""VideoSource on real PyAV-written videos whose frames encode their own index."""
from __future__ import annotations

import numpy as np
from PIL import Image

from components.media import VideoSource, bin_centred_indices, open_video
from tests.media.videos import index_image, read_index, write_index_video


def test_info(index_video):
    info = VideoSource(index_video).info
    assert (info.num_frames, info.fps, info.width, info.height) == (120, 24.0, 64, 48)
    assert abs(info.duration - 5.0) < 1e-9


def test_frames_at_returns_the_nearest_frame_with_its_time(index_video):
    src = VideoSource(index_video)
    frames = src.frames_at([0.0, 1.0, 1.02, 1.021, 2.5, 4.99, 60.0])
    assert [f.index for f in frames] == [0, 24, 24, 25, 60, 119, 119]
    assert [read_index(f.image) for f in frames] == [0, 24, 24, 25, 60, 119, 119]
    assert frames[4].time == 2.5 and frames[2].time == 1.0


def test_frames_at_indices_any_order_and_repeats(index_video):
    src = VideoSource(index_video)
    idx = [100, 3, 3, 57, 0, 119]
    assert [read_index(f.image) for f in src.frames_at_indices(idx)] == idx


def test_sample_fps_with_and_without_cap(index_video):
    src = VideoSource(index_video)
    frames = src.sample_fps(1.0, 3.0, fps=2)
    assert [f.index for f in frames] == [24, 36, 48, 60]
    assert [read_index(f.image) for f in frames] == [24, 36, 48, 60]
    capped = src.sample_fps(0.0, 5.0, fps=24, cap=4)  # 120 wanted, 4 spread: 0, 1.25, 2.5, 3.75 s
    assert [read_index(f.image) for f in capped] == [0, 30, 60, 90]
    assert [f.time for f in capped] == [0.0, 1.25, 2.5, 3.75]


def test_iter_fps_matches_sample_fps_and_clips_window(index_video):
    src = VideoSource(index_video)
    it = list(src.iter_fps(0.0, 100.0, fps=4, batch=3))
    assert [f.index for f in it] == list(range(0, 120, 6))
    assert [read_index(f.image) for f in it] == list(range(0, 120, 6))
    assert [f.index for f in src.sample_fps(0, 100, fps=4)] == [f.index for f in it]


def test_bin_centred_on_video(index_video):
    frames = VideoSource(index_video).bin_centred(16)
    assert [read_index(f.image) for f in frames] == bin_centred_indices(120)
    assert frames[0].index == 1 + int(0.5 * 118 / 16)


def test_long_gop_seeks_are_frame_accurate(long_gop_video):
    src = VideoSource(long_gop_video)
    idx = [719, 239, 240, 241, 5, 480, 601]
    assert [read_index(f.image) for f in src.frames_at_indices(idx)] == idx
    assert [read_index(f.image) for f in src.iter_fps(0, 30, fps=1)] == list(range(0, 720, 24))


def test_max_side_decodes_small_and_close_to_pil_resize(media_dir):
    # 320x180 frames with smooth content: decord's reduced-size decode vs PIL bicubic of full frame.
    path = media_dir / "smooth.mp4"
    h, w = 180, 320
    yy, xx = np.mgrid[0:h, 0:w]
    import av
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=24)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        for i in range(10):
            a = np.stack([(xx * 200 // w + i) % 256, yy * 255 // h, (xx + yy) * 100 // (w + h)],
                         -1).astype(np.uint8)
            for p in s.encode(av.VideoFrame.from_ndarray(a, format="rgb24")):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    src = VideoSource(path)
    full = src.frames_at_indices([2, 7])
    small = src.frames_at_indices([2, 7], max_side=160)
    assert [f.image.size for f in small] == [(160, 90), (160, 90)]
    for f, g in zip(full, small):
        ref = np.asarray(f.image.resize((160, 90), Image.Resampling.BICUBIC), dtype=float)
        assert np.abs(ref - np.asarray(g.image, dtype=float)).mean() <= 6.0
    default_small = VideoSource(path, max_side=100)
    assert default_small.frames_at([0.0])[0].image.size == (100, 56)


def test_odd_target_size(index_video):
    frames = VideoSource(index_video).frames_at_indices([9, 10], max_side=33)
    assert frames[0].image.size == (33, 25)
    assert [read_index(f.image) for f in frames] == [9, 10]


def test_open_video_reuses_source_until_file_changes(media_dir):
    path = write_index_video(media_dir / "reuse.mp4", 12)
    a, b = open_video(path), open_video(path)
    assert a is b
    write_index_video(path, 30)
    c = open_video(path)
    assert c is not a and c.info.num_frames == 30


def test_index_image_roundtrip_without_video():
    for i in (0, 1, 255, 256, 4321, 65535):
        assert read_index(index_image(i)) == i


def test_max_height_and_exact_resize(media_dir):
    path = write_index_video(media_dir / "wide.mp4", 6, width=128, height=96)
    src = VideoSource(path)
    a = src.frames_at_indices([4], max_height=48)[0]
    b = src.frames_at_indices([4], max_height=48, exact_resize=True)[0]
    assert a.image.size == b.image.size == (64, 48)
    assert read_index(a.image.resize((128, 96))) == read_index(b.image.resize((128, 96))) == 4
    full = src.frames_at_indices([4])[0].image
    ref = np.asarray(full.resize((64, 48), Image.Resampling.BICUBIC))
    assert np.array_equal(np.asarray(b.image), ref)  # exact: PIL bicubic of the full frame
    # Both limits: the stricter wins; small frames are never upscaled.
    assert src.frames_at([0.0], max_side=100, max_height=30)[0].image.size == (40, 30)
    assert src.frames_at([0.0], max_side=64, max_height=360)[0].image.size == (64, 48)
    assert src.bin_centred(2, max_height=24)[0].image.size == (32, 24)


def test_opencv_resize_is_cv2_resize_of_the_full_frame_with_the_width_truncated(media_dir):
    """exact_resize="opencv" (issue 35): the full frame through `cv2.resize` (bilinear), the width
    `int(w * max_height / h)` as TempCloze's released scripts compute it: 130x96 at 48 px high is
    65 wide, 150x98 73 (73.47), and 104x62 80 (80.52: rounding would give 81)."""
    import cv2

    for width, height in ((130, 96), (150, 98), (104, 62)):
        path = write_index_video(media_dir / f"cv_{width}x{height}.mp4", 6, width=width, height=height)
        src = VideoSource(path)
        full = np.asarray(src.frames_at_indices([3])[0].image)
        got = src.frames_at_indices([3], max_height=48, exact_resize="opencv")[0].image
        expected = cv2.resize(full, (int(width * (48 / height)), 48))
        assert got.size == (expected.shape[1], expected.shape[0])
        assert np.array_equal(np.asarray(got), expected)
        assert read_index(got.resize((width, height))) == 3
        # never upscaled; bin-centred sampling takes the same rule
        assert src.frames_at_indices([3], max_height=200, exact_resize="opencv")[0].image.size == (width, height)
        pooled = src.bin_centred(4, max_height=48, exact_resize="opencv")
        assert [f.image.size for f in pooled] == [got.size] * 4


def test_close_then_read_again(index_video):
    # open_video hands out shared sources; a caller closing one must not break the next caller.
    src = open_video(index_video)
    src.close()
    assert read_index(open_video(index_video).frames_at([1.0])[0].image) == 24
    with VideoSource(index_video) as s:
        assert s.frames_at_indices([7])[0].index == 7
