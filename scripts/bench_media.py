#!/usr/bin/env python
"""Benchmark the media layer on a long 720p movie (not a test).

1. Writes an N-minute (default 30) 1280x720 H.264 video at 24 fps with a keyframe every 240
   frames (10 s), content: moving gradients over a noise texture (PyAV, libx264 veryfast crf 23;
   one minute is encoded and its packets repeated, see generate). Reused if present.
2. Times 1 fps sampling of the whole movie through VideoSource.iter_fps (full size, and decoded at
   max_side 448), against `ffmpeg -i in -vf fps=1 -f rawvideo -pix_fmt rgb24 -` producing the
   same number of frames (needs ffmpeg on PATH: apt-get install -y ffmpeg).
3. Times the DiskCache: first sampling (decode + JPEG write) vs a cached reopen.
4. Peak RSS (fresh process each) of sampling a third of the movie vs all of it: flat means the
   reading is bounded-memory.

Usage: python scripts/bench_media.py [--minutes 30] [--workdir /tmp/bench_media]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from bench_common import mux_repeated  # noqa: E402

WIDTH, HEIGHT, FPS, GOP = 1280, 720, 24, 240


def generate(path: Path, minutes: float, base_seconds: int = 60) -> float:
    """Write the benchmark movie; returns seconds taken (0 when it already exists).

    Encoding 30 min of 720p takes long on a small machine, so `base_seconds` (whole GOPs) are
    encoded once and their packets are muxed again with shifted timestamps until the movie is
    long enough: the file decodes exactly like a 30-minute encode (GOPs are closed), only its
    content repeats every `base_seconds`."""
    import av
    import numpy as np

    if path.exists():
        return 0.0
    t0 = time.perf_counter()
    total = int(minutes * 60 * FPS)
    base = min(total, base_seconds * FPS)
    base -= base % GOP if base >= GOP else 0
    # Precomputed wide gradients and a noise texture; each frame is a shifted window of them.
    xs = np.arange(WIDTH + 512)
    ys = np.arange(HEIGHT + 512)
    red = np.broadcast_to((xs % 512 < 256) * (xs % 256) + (xs % 512 >= 256) * (255 - xs % 256),
                          (HEIGHT, WIDTH + 512)).astype(np.uint8)
    green = np.broadcast_to(((ys % 256)[:, None]), (HEIGHT + 512, WIDTH)).astype(np.uint8)
    noise = np.random.default_rng(0).integers(0, 48, (HEIGHT + 64, WIDTH + 64), dtype=np.uint8)
    tmp = path.with_suffix(".tmp.mp4")
    with av.open(str(tmp), "w", format="mp4", options={"movflags": "+faststart"}) as c:
        s = c.add_stream("libx264", rate=FPS)
        s.width, s.height, s.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        s.codec_context.gop_size = GOP
        s.options = {"crf": "23", "preset": "veryfast",
                     "x264-params": f"keyint={GOP}:min-keyint={GOP}:scenecut=0:open-gop=0"}
        rgb = np.empty((HEIGHT, WIDTH, 3), np.uint8)
        kept = []

        def mux(packets):
            for p in packets:
                kept.append((bytes(p), p.pts, p.dts, p.time_base, p.is_keyframe))
                c.mux(p)

        for i in range(base):
            dx, dy, nx = (3 * i) % 512, (2 * i) % 512, i % 64
            rgb[..., 0] = red[:, dx:dx + WIDTH]
            rgb[..., 1] = green[dy:dy + HEIGHT]
            rgb[..., 2] = noise[nx:nx + HEIGHT, nx:nx + WIDTH] + (i // 24) % 200
            mux(s.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")))
        mux(s.encode())
        mux_repeated(c, s, kept, base, total, FPS)
    tmp.rename(path)
    return time.perf_counter() - t0


def time_videosource(path: Path, max_side: int | None) -> tuple[float, float, int]:
    """(open seconds, sampling seconds, frames) for 1 fps over the whole movie."""
    from components.media import VideoSource

    t0 = time.perf_counter()
    src = VideoSource(path)
    t1 = time.perf_counter()
    n = sum(1 for _ in src.iter_fps(0, src.info.duration, 1.0, max_side=max_side))
    t2 = time.perf_counter()
    src.close()
    return t1 - t0, t2 - t1, n


def time_ffmpeg(path: Path, frames: int) -> float:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-vf", "fps=1", "-frames:v",
           str(frames), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    got = 0
    while chunk := proc.stdout.read(1 << 22):
        got += len(chunk)
    proc.wait()
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or got != frames * WIDTH * HEIGHT * 3:
        raise RuntimeError(f"ffmpeg returned {got} bytes (rc {proc.returncode}), expected "
                           f"{frames} frames")
    return elapsed


def time_cache(path: Path, cache_dir: Path) -> tuple[float, float, int]:
    """(first run seconds, cached reopen seconds, frames) for 1 fps at max_side 448, cached."""
    from components.media import DiskCache, VideoSource

    shutil.rmtree(cache_dir, ignore_errors=True)
    calls = []

    def compute():
        calls.append(1)
        src = VideoSource(path)
        return src.iter_fps(0, src.info.duration, 1.0, max_side=448)

    params = {"fps": 1.0, "max_side": 448}
    t0 = time.perf_counter()
    first = DiskCache(cache_dir).get_or_compute_frames(path, params, compute)
    t1 = time.perf_counter()
    again = DiskCache(cache_dir).get_or_compute_frames(path, params, compute)
    t2 = time.perf_counter()
    assert len(calls) == 1 and len(again) == len(first)
    return t1 - t0, t2 - t1, len(again)


def child_peak_rss(path: Path, seconds: float) -> dict:
    """Run the sampling of [0, seconds] in a fresh process; returns its peak RSS (VmHWM, which
    belongs to the new process image; ru_maxrss would include the parent's memory at fork)."""
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "def hwm():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            return int(line.split()[1]) / 1024\n"
        "from components.media import VideoSource\n"
        "base = hwm()\n"
        f"src = VideoSource({str(path)!r})\n"
        f"n = sum(1 for _ in src.iter_fps(0, {float(seconds)!r}, 1.0))\n"
        "print(json.dumps({'frames': n, 'peak_rss_mb': hwm(), 'import_rss_mb': base}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="movie length (default 30)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/bench_media"))
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    movie = args.workdir / f"movie_{args.minutes:g}min_720p.mp4"

    gen = generate(movie, args.minutes)
    size_mb = movie.stat().st_size / 2**20
    print(f"movie: {movie} ({args.minutes:g} min, 1280x720, 24 fps, GOP 240, {size_mb:.0f} MB)"
          + (f", generated in {gen:.1f} s" if gen else ", reused"))

    open_s, full_s, n = time_videosource(movie, None)
    print(f"VideoSource open (decord indexes the file): {open_s:.2f} s")
    print(f"VideoSource 1 fps full size : {n} frames in {full_s:.2f} s ({n / full_s:.1f} frames/s)")
    _, small_s, n_small = time_videosource(movie, 448)
    print(f"VideoSource 1 fps max_side=448 (decoded small): {n_small} frames in {small_s:.2f} s")
    if shutil.which("ffmpeg"):
        ff = time_ffmpeg(movie, n)
        print(f"ffmpeg -vf fps=1 rawvideo rgb24: {n} frames in {ff:.2f} s")
        print(f"ratio VideoSource(open+sample) / ffmpeg: {(open_s + full_s) / ff:.2f}")
    else:
        print("ffmpeg not found: install it with apt-get install -y ffmpeg to compare")

    first, again, n_cached = time_cache(movie, args.workdir / "cache")
    print(f"DiskCache 1 fps @448: first {first:.2f} s, cached reopen {again:.2f} s "
          f"({n_cached} frames, {first / again:.0f}x faster)")

    third = max(1.0, args.minutes * 60 / 3)
    part = child_peak_rss(movie, third)
    whole = child_peak_rss(movie, args.minutes * 60)
    print(f"peak RSS sampling {third / 60:g} min: {part['peak_rss_mb']:.0f} MB ({part['frames']} "
          f"frames); {args.minutes:g} min: {whole['peak_rss_mb']:.0f} MB ({whole['frames']} frames); "
          f"ratio {whole['peak_rss_mb'] / part['peak_rss_mb']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
