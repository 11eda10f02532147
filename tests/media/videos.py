"""Real test videos written with PyAV whose frames say which frame they are.

Each frame carries its index as 16 bits: two rows of eight 8-px-wide blocks (row 0 = low byte),
a block bright (240) for a 1 bit and dark (16) for a 0 bit. `read_index` decodes it back.
"""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

BITS_W, BITS_H = 64, 48


def index_image(i: int, width: int = BITS_W, height: int = BITS_H) -> np.ndarray:
    """HxWx3 uint8 frame encoding `i` in its top-left 64x48 corner (the rest mid-grey)."""
    arr = np.full((height, width, 3), 128, np.uint8)
    for bit in range(16):
        row, col = divmod(bit, 8)
        value = 240 if (i >> bit) & 1 else 16
        arr[row * 24:(row + 1) * 24, col * 8:(col + 1) * 8] = value
    return arr


def read_index(image) -> int:
    """The index encoded by `index_image` in a decoded frame (PIL image or array) of any size."""
    arr = np.asarray(image.convert("L") if hasattr(image, "convert") else image, dtype=float)
    if arr.ndim == 3:
        arr = arr.mean(axis=2)
    h, w = arr.shape
    # Sample the centre of each block, in the frame's own scale when it was resized as a whole.
    scale_x = w / BITS_W if w < BITS_W else 1.0
    scale_y = h / BITS_H if h < BITS_H else 1.0
    value = 0
    for bit in range(16):
        row, col = divmod(bit, 8)
        y = int((row * 24 + 12) * scale_y)
        x = int((col * 8 + 4) * scale_x)
        if arr[y, x] > 128:
            value |= 1 << bit
    return value


def write_index_video(path: Path, num_frames: int, fps: int = 24, width: int = BITS_W,
                      height: int = BITS_H, gop: int | None = None, faststart: bool = True) -> Path:
    """H.264 MP4 whose frame i encodes i (see index_image)."""
    import av

    options = {"movflags": "+faststart"} if faststart else {}
    with av.open(str(path), "w", format="mp4", options=options) as container:
        stream = container.add_stream("libx264", rate=Fraction(fps))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "18", "preset": "ultrafast"}
        if gop:
            stream.codec_context.gop_size = gop
        for i in range(num_frames):
            frame = av.VideoFrame.from_ndarray(index_image(i, width, height), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path
