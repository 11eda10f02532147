#!/usr/bin/env python
"""Benchmark the media layer on a long 720p movie (not a test; prints ratios, asserts nothing).

1. Writes an N-minute (default 10) 1280x720 H.264 video at 24 fps with a keyframe every 240
   frames (10 s), content: moving gradients over a noise texture (PyAV, libx264 veryfast crf 23;
   one minute is encoded and its packets repeated, see generate). Reused if present.
2. "Preparing a movie": 1 fps over the whole movie, each measurement in a fresh process pinned
   with `taskset` to 1, then 2, ... cores, against `ffmpeg -i in -vf fps=1 -f rawvideo -pix_fmt
   rgb24 -` pinned to the same cores in the same run (needs ffmpeg and taskset on PATH):
     pool      VideoSource.iter_fps as the app runs it (open + index + sampling; time-ordered
               requests are decoded by group of pictures in one thread per core, gop_pool.py)
     random    the same request through the random-access reader in batches of 32 (decord;
               the app's path before the pool), for comparison
     pool@448  the pool decoding at max_side 448 (what window search stores)
   Peak RSS of each process is read from outside (`/usr/bin/time -v`, maximum resident set).
3. Times the DiskCache: first sampling (decode + JPEG write) vs a cached reopen.
4. Peak RSS (outside, fresh process each) of sampling a third of the movie vs all of it: flat
   means the reading is bounded-memory.

Usage: python scripts/bench_media.py [--minutes 10] [--workdir /tmp/bench_media] [--cores 1,2]
       [--skip-random]
"""
from __future__ import annotations

import argparse
import json
import os
import re
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


MODES = {"pool": None, "random": None, "pool@448": 448}


def child(mode: str, path: Path, workers: int) -> None:
    """One measurement in this (fresh, pinned) process; prints a JSON line."""
    import components.media.video as video
    from components.media import VideoSource

    if mode == "random":
        video.POOL_MIN_FRAMES = 1 << 60  # every request through the random-access reader
    t0 = time.perf_counter()
    src = VideoSource(path, workers=workers, index_cache=False)
    t1 = time.perf_counter()
    n = sum(1 for _ in src.iter_fps(0, src.info.duration, 1.0, max_side=MODES[mode]))
    t2 = time.perf_counter()
    print(json.dumps({"frames": n, "open_s": t1 - t0, "sample_s": t2 - t1, "seconds": t2 - t0,
                      "backend": src.backend}))


_RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
_CPU = re.compile(r"(?:User|System) time \(seconds\): ([\d.]+)")


def _rss_cpu(stderr: str) -> tuple[float, float]:
    """(peak RSS MB, user + system CPU seconds) from /usr/bin/time -v's report."""
    match = _RSS.search(stderr)
    return (int(match.group(1)) / 1024 if match else float("nan"),
            sum(float(x) for x in _CPU.findall(stderr)))


def _outside(cmd: list[str], cpus: str) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run `cmd` pinned to `cpus` under /usr/bin/time -v; (process, peak RSS MB, CPU s)."""
    timed = ["taskset", "-c", cpus, "/usr/bin/time", "-v", *cmd]
    proc = subprocess.run(timed, capture_output=True, cwd=ROOT)
    return (proc, *_rss_cpu(proc.stderr.decode(errors="replace")))


def run_child(mode: str, path: Path, cpus: str, workers: int) -> dict:
    proc, rss, cpu = _outside([sys.executable, str(Path(__file__).resolve()), "--child", mode,
                               "--path", str(path), "--workers", str(workers)], cpus)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} child failed: {proc.stderr.decode(errors='replace')[-1500:]}")
    result = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    result["peak_rss_mb"], result["cpu_s"] = rss, cpu
    return result


def time_ffmpeg(path: Path, frames: int, cpus: str) -> tuple[float, float, float]:
    """(seconds, peak RSS MB, CPU s) of ffmpeg producing `frames` RGB frames at 1 fps, pinned."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-vf", "fps=1", "-frames:v",
           str(frames), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    timed = ["taskset", "-c", cpus, "/usr/bin/time", "-v", *cmd]
    t0 = time.perf_counter()
    proc = subprocess.Popen(timed, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    got = 0
    while chunk := proc.stdout.read(1 << 22):
        got += len(chunk)
    err = proc.stderr.read().decode(errors="replace")
    proc.wait()
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or got != frames * WIDTH * HEIGHT * 3:
        raise RuntimeError(f"ffmpeg returned {got} bytes (rc {proc.returncode}), expected "
                           f"{frames} frames")
    return (elapsed, *_rss_cpu(err))


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


RSS_CHILD = (
    "import sys; sys.path.insert(0, {root!r})\n"
    "from components.media import VideoSource\n"
    "src = VideoSource({path!r}, index_cache=False)\n"
    "print(sum(1 for _ in src.iter_fps(0, {seconds!r}, 1.0)))\n"
)


def child_peak_rss(path: Path, seconds: float, cpus: str) -> dict:
    """Sampling [0, seconds] in a fresh process; its peak RSS read from outside."""
    code = RSS_CHILD.format(root=str(ROOT), path=str(path), seconds=float(seconds))
    proc, rss, _ = _outside([sys.executable, "-c", code], cpus)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode(errors="replace")[-1500:])
    return {"frames": int(proc.stdout.decode().split()[-1]), "peak_rss_mb": rss}


def _cpu_sets(wanted: list[int]) -> list[tuple[int, str]]:
    usable = sorted(os.sched_getaffinity(0))
    return [(c, ",".join(str(x) for x in usable[:c])) for c in wanted if c <= len(usable)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="movie length (default 10)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/bench_media"))
    ap.add_argument("--cores", default="1,2", help="core counts to pin to (default 1,2)")
    ap.add_argument("--skip-random", action="store_true", help="leave out the random-access path")
    ap.add_argument("--child", choices=sorted(MODES), help=argparse.SUPPRESS)
    ap.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.path, args.workers)
        return 0
    for tool in ("ffmpeg", "taskset"):
        if not shutil.which(tool):
            print(f"{tool} not found: install it (apt-get install -y ffmpeg util-linux time)")
            return 1
    args.workdir.mkdir(parents=True, exist_ok=True)
    movie = args.workdir / f"movie_{args.minutes:g}min_720p.mp4"

    gen = generate(movie, args.minutes)
    size_mb = movie.stat().st_size / 2**20
    print(f"movie: {movie} ({args.minutes:g} min, 1280x720, 24 fps, GOP 240, {size_mb:.0f} MB)"
          + (f", generated in {gen:.1f} s" if gen else ", reused"))
    print("wall ratios need a quiet machine; CPU ratios (user + system, /usr/bin/time -v) "
          "compare the work done")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores; a busy machine slows both sides of each ratio)")
    frames = int(args.minutes * 60)
    sets = _cpu_sets([int(c) for c in args.cores.split(",")])
    for cores, cpus in sets:
        ff, ff_rss, ff_cpu = time_ffmpeg(movie, frames, cpus)
        print(f"[{cores} core(s), taskset -c {cpus}] ffmpeg -vf fps=1 rawvideo rgb24: {frames} "
              f"frames in {ff:.2f} s (CPU {ff_cpu:.1f} s), peak RSS {ff_rss:.0f} MB; load "
              f"{os.getloadavg()[0]:.1f}")
        for mode in MODES:
            if mode == "random" and args.skip_random:
                continue
            r = run_child(mode, movie, cpus, workers=cores)
            how = "decord" if mode == "random" else "PyAV GOP pool"
            print(f"[{cores} core(s)] {mode:8s} {r['frames']} frames in {r['seconds']:.2f} s "
                  f"(open {r['open_s']:.2f} s; CPU {r['cpu_s']:.1f} s; {how}, {cores} worker(s)), "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB; ratio / ffmpeg: wall "
                  f"{r['seconds'] / ff:.2f}, CPU {r['cpu_s'] / ff_cpu:.2f}")
            if mode == "pool" and cores == sets[-1][0]:
                last = (r, ff)
    r, ff = last
    # the lines scripts/bench.py reads (the most cores measured)
    print(f"VideoSource open (index from the packets): {r['open_s']:.2f} s")
    print(f"VideoSource 1 fps full size : {r['frames']} frames in {r['seconds']:.2f} s "
          f"({r['frames'] / r['seconds']:.1f} frames/s)")
    print(f"ffmpeg -vf fps=1 rawvideo rgb24: {r['frames']} frames in {ff:.2f} s")
    print(f"ratio VideoSource(open+sample) / ffmpeg: {r['seconds'] / ff:.2f}")

    first, again, n_cached = time_cache(movie, args.workdir / "cache")
    print(f"DiskCache 1 fps @448: first {first:.2f} s, cached reopen {again:.2f} s "
          f"({n_cached} frames, {first / again:.0f}x faster)")

    cpus = sets[-1][1]
    third = max(1.0, args.minutes * 60 / 3)
    part = child_peak_rss(movie, third, cpus)
    whole = child_peak_rss(movie, args.minutes * 60, cpus)
    print(f"peak RSS sampling {third / 60:g} min: {part['peak_rss_mb']:.0f} MB ({part['frames']} "
          f"frames); {args.minutes:g} min: {whole['peak_rss_mb']:.0f} MB ({whole['frames']} frames); "
          f"ratio {whole['peak_rss_mb'] / part['peak_rss_mb']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
