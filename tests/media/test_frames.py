"""Pure sampling maths, checked against hand-computed indices."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from components.media import bin_centred_indices, endpoint_indices, fps_times, resize_max_height, \
    resize_max_side, to_jpeg_bytes
from components.media.frames import index_to_time, time_to_index


def test_bin_centred_50_frames_hand_computed():
    # n = 16, (total-2)/n = 3: idx_i = 1 + floor(3i + 1.5) = 3i + 2
    assert bin_centred_indices(50) == [2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38, 41, 44, 47]


def test_bin_centred_20_frames_hand_computed():
    # (total-2)/n = 18/16 = 1.125: 1 + floor((i + 0.5) * 1.125)
    assert bin_centred_indices(20) == [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18]


def test_bin_centred_small_totals():
    assert bin_centred_indices(5) == [1, 2, 3]  # n = min(16, 3) = 3
    assert bin_centred_indices(3) == [1]
    assert bin_centred_indices(2) == []
    assert bin_centred_indices(1) == []
    assert bin_centred_indices(0) == []


def test_bin_centred_never_touches_first_or_last_frame():
    for total in range(3, 400):
        idx = bin_centred_indices(total)
        assert len(idx) == min(16, total - 2)
        assert idx == sorted(set(idx))
        assert idx[0] >= 1 and idx[-1] <= total - 2


def test_endpoint_indices_hand_computed():
    # floor(i * 49 / 15)
    assert endpoint_indices(50) == [0, 3, 6, 9, 13, 16, 19, 22, 26, 29, 32, 35, 39, 42, 45, 49]
    assert endpoint_indices(5) == [0, 1, 2, 3, 4]  # n capped at total
    assert endpoint_indices(1) == [0]
    assert endpoint_indices(0) == []
    assert endpoint_indices(10, n=2) == [0, 9]


def test_fps_times_plain_and_capped():
    assert fps_times(0, 3, 1) == [0.0, 1.0, 2.0]
    assert fps_times(0.5, 2.6, 2) == [0.5, 1.0, 1.5, 2.0, 2.5]
    assert fps_times(0, 10, 1, cap=4) == [0.0, 2.5, 5.0, 7.5]
    assert fps_times(0, 3, 1, cap=10) == [0.0, 1.0, 2.0]  # cap not reached
    assert fps_times(5, 5, 1) == []
    with pytest.raises(ValueError):
        fps_times(0, 1, 0)


def test_time_to_index_rounds_half_up_and_clamps():
    assert time_to_index(1.0, 24) == 24
    assert time_to_index(1.02, 24) == 24    # 24.48
    assert time_to_index(1.021, 24) == 25   # 24.504
    assert time_to_index(0.5 / 24, 24) == 1  # exactly half a frame: up (Python round() gives 0)
    assert time_to_index(2.5 / 24, 24) == 3  # Python round() would give 2
    assert time_to_index(100.0, 24, num_frames=200) == 199
    assert time_to_index(-3.0, 24, num_frames=200) == 0
    assert index_to_time(36, 24) == 1.5


def test_resize_keeps_aspect_and_never_upscales():
    im = Image.new("RGB", (1280, 720))
    assert resize_max_side(im, 448).size == (448, 252)
    assert resize_max_height(im, 360).size == (640, 360)
    tall = Image.new("RGB", (300, 600))
    assert resize_max_side(tall, 100).size == (50, 100)
    small = Image.new("RGB", (64, 48))
    assert resize_max_side(small, 448) is small
    assert resize_max_height(small, 360) is small


def test_to_jpeg_bytes_quality_changes_size():
    rng = np.random.default_rng(0)
    im = Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8))
    low, high = to_jpeg_bytes(im, quality=30), to_jpeg_bytes(im, quality=95)
    assert low[:2] == b"\xff\xd8" and len(low) < len(high)
    assert Image.open(io.BytesIO(high)).size == (64, 64)
