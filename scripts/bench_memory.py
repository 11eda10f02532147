"""Benchmark: peak memory of preparing a movie for window search, 20 minutes vs 2 hours, and the
cached reopen of the prepared movie.

Synthetic low-resolution movies (320x180, 24 fps, a keyframe every 10 s; one minute is encoded
and its packets repeated) are cached under the bench cache folder. Each length is prepared by
components.window_search.movie.Movie(...).prepare() (1 fps per 180 s chunk, JPEGs into a fresh
DiskCache; APP_CACHE_DIR points there too, so the video's timeline is stored beside the frames)
in a fresh subprocess. Peak RSS is read from outside (`/usr/bin/time -v`, maximum resident set;
the ratio) and inside (VmHWM, printed). Then a second fresh process reopens the prepared movie
(Movie(...) + prepare(), which finds every chunk cached) and times it. Goals: peak RSS 2 h within
1.2x of 20 min and below 1 GB; the cached reopen of the 2-hour movie under 1 s.

    python scripts/bench_memory.py [--minutes 20,120] [--cache-dir DIR]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, cache_dir, mux_repeated, print_rows  # noqa: E402

WIDTH, HEIGHT, FPS, GOP = 320, 180, 24, 240
GOAL = 1.2  # "flat": within 20%
RSS_LIMIT_MB = 1024
REOPEN_GOAL_S = 1.0


def generate(path: Path, minutes: float, base_seconds: int = 60) -> float:
    """Write the movie (reused when present); returns the seconds spent (0 when reused)."""
    import av
    import numpy as np

    if path.exists():
        return 0.0
    t0 = time.perf_counter()
    total = int(minutes * 60 * FPS)
    base = min(total, base_seconds * FPS)
    base -= base % GOP if base >= GOP else 0
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 64, (HEIGHT + 64, WIDTH + 64), dtype=np.uint8)
    xs = np.arange(WIDTH)[None, :]
    tmp = path.with_suffix(".tmp.mp4")
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(tmp), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=FPS)
        s.width, s.height, s.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        s.codec_context.gop_size = GOP
        s.options = {"crf": "28", "preset": "ultrafast",
                     "x264-params": f"keyint={GOP}:min-keyint={GOP}:scenecut=0:open-gop=0"}
        kept = []
        rgb = np.empty((HEIGHT, WIDTH, 3), np.uint8)
        for i in range(base):
            n = i % 64
            rgb[..., 0] = ((xs + 3 * i) % 256).astype(np.uint8)
            rgb[..., 1] = noise[n:n + HEIGHT, n:n + WIDTH] + (i // FPS) % 150
            rgb[..., 2] = (i * 5) % 256
            for p in s.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                kept.append((bytes(p), p.pts, p.dts, p.time_base, p.is_keyframe))
                c.mux(p)
        for p in s.encode():
            kept.append((bytes(p), p.pts, p.dts, p.time_base, p.is_keyframe))
            c.mux(p)
        mux_repeated(c, s, kept, base, total, FPS)
    tmp.rename(path)
    return time.perf_counter() - t0


CHILD = """
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) / 1024
from components.media import DiskCache
from components.window_search.movie import Movie
import av, decord, PIL.Image  # the readers, so the baseline below includes them
base = hwm()
t0 = time.perf_counter()
movie = Movie({video!r}, cache=DiskCache({cache!r}))
decoded = movie.prepare()
elapsed = time.perf_counter() - t0
print(json.dumps({{'frames': decoded, 'chunks': len(movie.chunks), 'seconds': elapsed,
                  'vmhwm_mb': hwm(), 'import_mb': base}}))
"""
_RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def prepare_peak(video: Path, cache: Path) -> dict:
    """Movie.prepare in a fresh process under /usr/bin/time -v (peak RSS from outside)."""
    code = CHILD.format(root=str(ROOT), video=str(video), cache=str(cache))
    env = dict(os.environ, APP_CACHE_DIR=str(cache))
    out = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", code], capture_output=True,
                         text=True, cwd=ROOT, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"Movie.prepare child failed:\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    match = _RSS.search(out.stderr)
    result["peak_rss_mb"] = int(match.group(1)) / 1024 if match else float("nan")
    return result


def run(quick: bool = False, minutes: tuple[float, float] | None = None,
        cache: Path | None = None) -> list[Row]:
    short, long = minutes or ((6, 18) if quick else (20, 120))  # >= 2 chunks of 180 s each
    folder = cache_dir(cache) / "memory"
    results, reopen = {}, {}
    for m in (short, long):
        video = folder / f"movie_{m:g}min_{WIDTH}x{HEIGHT}.mp4"
        gen = generate(video, m)
        frames_cache = folder / f"prepared_{m:g}min"
        shutil.rmtree(frames_cache, ignore_errors=True)
        r = results[m] = prepare_peak(video, frames_cache)
        again = reopen[m] = prepare_peak(video, frames_cache)
        shutil.rmtree(frames_cache, ignore_errors=True)
        print(f"{m:g}-min movie ({video.stat().st_size / 2**20:.1f} MB"
              + (f", generated in {gen:.1f} s" if gen else ", reused") + f"): prepare {r['chunks']} "
              f"chunks / {r['frames']} frames in {r['seconds']:.1f} s; peak RSS (outside, "
              f"/usr/bin/time -v) {r['peak_rss_mb']:.0f} MB, VmHWM {r['vmhwm_mb']:.0f} MB (after "
              f"imports {r['import_mb']:.0f} MB); cached reopen {again['seconds']:.2f} s "
              f"({again['frames']} frames decoded)")
    a, b = results[short], results[long]
    ratio = b["peak_rss_mb"] / a["peak_rss_mb"]
    da, db = a["vmhwm_mb"] - a["import_mb"], b["vmhwm_mb"] - b["import_mb"]
    print(f"peak RSS ratio {long:g} / {short:g} min: {ratio:.2f} (goal <= {GOAL}, proportional "
          f"would be {long / short:g}); growth above the imports: {da:.0f} -> {db:.0f} MB")
    return [Row("memory", f"peak RSS prepare {long:g} / {short:g} min",
                f"{ratio:.2f} ({b['peak_rss_mb']:.0f} / {a['peak_rss_mb']:.0f} MB)",
                f"<= {GOAL} (flat)", ratio <= GOAL),
            Row("memory", f"peak RSS prepare {long:g} min", f"{b['peak_rss_mb']:.0f} MB",
                f"< {RSS_LIMIT_MB} MB", b["peak_rss_mb"] < RSS_LIMIT_MB),
            Row("memory", f"cached reopen {long:g} min (Movie + prepare, all cached)",
                f"{reopen[long]['seconds']:.2f} s", f"< {REOPEN_GOAL_S:g} s",
                reopen[long]["seconds"] < REOPEN_GOAL_S and reopen[long]["frames"] == 0),
            Row("memory", f"prepare time {long:g} min", f"{b['seconds']:.1f} s ({b['frames']} frames)")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", default="20,120", help="two lengths, short,long (default 20,120)")
    ap.add_argument("--cache-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    short, long = (float(x) for x in args.minutes.split(","))
    print_rows(run(minutes=(short, long), cache=args.cache_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
