"""Small bad / odd media files written by the tests (PyAV)."""
from __future__ import annotations

import zlib
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np


def write_video(path: Path, frames: int = 12, width: int = 64, height: int = 48, fps: int = 12,
                faststart: bool = True) -> Path:
    import av

    options = {"movflags": "+faststart"} if faststart else {}
    with av.open(str(path), "w", format="mp4", options=options) as container:
        stream = container.add_stream("libx264", rate=Fraction(fps))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "ultrafast", "crf": "30"}
        rng = np.random.default_rng(0)
        for _ in range(frames):
            arr = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(arr, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def write_audio_only(path: Path, codec: str = "aac", fmt: str = "mp4", seconds: float = 0.5) -> Path:
    import av

    rate = 22050
    with av.open(str(path), "w", format=fmt) as container:
        stream = container.add_stream(codec, rate=rate)
        stream.layout = "mono"
        t = np.arange(int(rate * seconds)) / rate
        samples = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
        frame_size = stream.codec_context.frame_size or 1024
        fmt_name = stream.codec_context.format.name
        pts = 0
        for start in range(0, len(samples), frame_size):
            chunk = samples[start:start + frame_size]
            if len(chunk) < frame_size:
                chunk = np.pad(chunk, (0, frame_size - len(chunk)))
            dtype = {"flt": np.float32, "s16": np.int16, "s32": np.int32}[fmt_name.rstrip("p")]
            scale = 1.0 if dtype is np.float32 else float(np.iinfo(dtype).max)
            data = (chunk * scale).astype(dtype).reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(data, format=fmt_name, layout="mono")
            frame.sample_rate, frame.pts = rate, pts
            pts += frame_size
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def png_bytes(width: int = 8, height: int = 8) -> bytes:
    raw = b"".join(b"\x00" + bytes([200, 30, 30]) * width for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


SRT = "1\n00:00:01,000 --> 00:00:02,500\nCafé au lait, naïve señor\n\n2\n00:00:03,000 --> 00:00:04,000\nSecond line\n"
