#!/usr/bin/env python
"""All benchmarks in sequence (`make bench`), then one summary table. Prints numbers; asserts nothing.

    python scripts/bench.py [--quick] [--only realsize,media,start,idle,render,metrics,parsers,faults,sessions,batch,framecache,memory,ui,hub,hfbatch]
                            [--minutes 30] [--data-dir data] [--realsize data/realsize]
                            [--cache-dir test-artifacts/bench-cache]

  realsize data of the real benchmarks' size (scripts/make_realsize.py: a two-hour 720p movie as
           46 movies with 3,014 queries, 1,521 cloze stems, 433 impact clips; reused when present)
  media    1 fps sampling of an N-minute 720p H.264 movie (GOP 10 s) vs `ffmpeg -vf fps=1`
           (goal <= 1.0x) and the DiskCache reopen (scripts/bench_media.py; the movie is cached
           under <cache-dir>/media, so reruns do not encode it again)
  start    app start to first HTTP 200 vs a bare gradio Blocks app, on the example and the
           real-size data (goal <= 1.3x; bench_app_start.py)
  idle     CPU of an idle app after a browsing session, from /proc (goal < 1 %; bench_idle.py)
  render   36-frame 512x512 turntable vs 36 x one frame (goal <= 1.2x), the 3D view's bytes per painting vs a GLB (bench_render.py)
  metrics  temporal metrics 433 q x 10 preds, cloze scoring 1,521 stems x 3 (goal < 1 s; bench_metrics.py)
  parsers  every reply parser on its worst 64 kB replies and on every reply of its adversarial
           corpus, against a regex scan of the same text, and Impact's interval merge against a
           sort (goal < 100 ms each; bench_parsers.py)
  faults   the API backend past a timeout, a Stop during a Retry-After wait and a Retry-After,
           against one plain call (bench_faults.py)
  sessions one visitor's quick action while other sessions run baseline work or retry a model
           call, against the action alone (goal <= 12x; bench_sessions.py)
  batch    the three run commands at concurrency 1/4/16/64 against a 200 ms server, and
           `run impact --tasks spatial` over 433 clips at 16 (goal >= 0.8 x c; bench_batch.py)
  framecache  a second model's `run cloze` vs the first's on 24 questions of distinct 720p clips,
           and a second `run impact` on 14 distinct 720p clips: client CPU side by side, the disk
           frames cache between them (goal <= 0.10); window search's request pictures read as
           sent vs decoded and encoded again (bench_frame_cache.py; --quick: 6 questions, 4 clips)
  memory   peak RSS of Movie.prepare, 30 vs 10 min (goal ~1.0, flat; bench_memory.py)
  ui       server time of the UI's actions on the real-size data, handlers called in process:
           window search (open the 46-movie file, prepare a movie, AWS with the baseline and a
           scripted server: time to the first checklist) and cloze at 1,521 stems (tab load, set
           build, one answer, one model question; goal < 150 ms each), against an empty gradio
           event measured in the same run (bench_ui.py)
  hub      TempCloze at 1,521 stems from a dataset repository on the local Hub server at +50 ms a
           request: the first question from nothing against the local folder, a restart, and the
           bytes 10 questions need against the whole repository (bench_hub.py)
  hfbatch  `hf:` calls generated together vs one at a time from 8 threads, on CPU, for the six
           tiny families: items/s, CPU per item, answers equal (bench_hf_batching.py)

--quick shrinks the sizes (3-minute media movie, 6/18-minute memory movies, a 2-minute real-size
movie, concurrency up to 16, 64 impact clips, fewer repeats) so everything runs in minutes on a
small machine. The machine may be shared: every result carries the load average (1/5/15 min) at the
time; ratios are measured in the same run as their reference.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, cache_dir, loadavg, print_rows  # noqa: E402

ALL = ("realsize", "media", "start", "idle", "render", "metrics", "parsers", "faults", "sessions", "batch",
       "framecache", "memory", "ui", "hub", "hfbatch")


def _stream(cmd: list[str]) -> tuple[int, str]:
    """Run a benchmark script, echoing its output; returns (exit code, output)."""
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1",
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        print("  " + line, end="", flush=True)
        lines.append(line)
    return proc.wait(), "".join(lines)


def _num(pattern: str, text: str) -> float | None:
    match = re.search(pattern, text)
    return float(match.group(1)) if match else None


def bench_media(args) -> list[Row]:
    minutes = args.minutes if args.minutes is not None else (3.0 if args.quick else 30.0)
    rc, out = _stream([sys.executable, str(ROOT / "scripts" / "bench_media.py"), "--minutes",
                       f"{minutes:g}", "--workdir", str(cache_dir(args.cache_dir) / "media")])
    if rc != 0:
        raise RuntimeError(f"bench_media.py exited {rc}")
    ratio = _num(r"ratio VideoSource\(open\+sample\) / ffmpeg: ([\d.]+)", out)
    vs = _num(r"VideoSource 1 fps full size : \d+ frames in ([\d.]+) s", out)
    ff = _num(r"ffmpeg -vf fps=1 rawvideo rgb24: \d+ frames in ([\d.]+) s", out)
    first = _num(r"DiskCache 1 fps @448: first ([\d.]+) s", out)
    again = _num(r"cached reopen ([\d.]+) s", out)
    rss = re.search(r"; ratio ([\d.]+)\s*$", out, re.M)
    rows = [Row("media", f"1 fps sampling {minutes:g} min 720p / ffmpeg fps=1",
                f"{ratio:.2f}x ({vs:.1f} s / {ff:.1f} s)" if ratio and vs and ff else "see output",
                "<= 1.0x", None if ratio is None else ratio <= 1.0)]
    if first is not None and again is not None:
        rows.append(Row("media", "DiskCache cached reopen (1 fps @448)",
                        f"{again:.2f} s (first {first:.1f} s, {first / again:.0f}x faster)"))
    if rss:
        rows.append(Row("media", "peak RSS sampling whole / third", f"{float(rss.group(1)):.2f}",
                        "flat"))
    return rows


def bench_realsize(args) -> list[Row]:
    cmd = [sys.executable, str(ROOT / "scripts" / "make_realsize.py"), "--out", str(args.realsize),
           "--examples", str(args.data_dir)] + (["--small"] if args.quick else [])
    t0 = time.perf_counter()
    rc, out = _stream(cmd)
    if rc != 0:
        raise RuntimeError(f"make_realsize.py exited {rc}")
    took = time.perf_counter() - t0
    hours = 2 / 60 if args.quick else 2.0
    return [Row("realsize", f"real-size data ({hours:g} h movie, 46 movies, 3,014 q, 1,521 stems, "
                "433 clips)" if not args.quick else "real-size data (--small)",
                f"{took:.0f} s" + (" (reused)" if '"reused": true' in out else ""), "minutes")]


def bench_start(args) -> list[Row]:
    repeats = 2 if args.quick else 3
    cmd = [sys.executable, str(ROOT / "scripts" / "bench_app_start.py"), "--data-dir",
           str(args.data_dir), "--repeats", str(repeats)]
    if (Path(args.realsize) / "grounding" / "annotations.json").is_file():
        cmd += ["--realsize", str(args.realsize)]
    rc, out = _stream(cmd)
    if rc != 0:
        raise RuntimeError(f"bench_app_start.py exited {rc}")
    rows = []
    pattern = (r"\((\w+) data\): app ([\d.]+) s, bare gradio Blocks ([\d.]+) s, ratio ([\d.]+)x.*?"
               r"reads (\d+) syscalls")
    for label, app_s, bare_s, ratio, calls in re.findall(pattern, out):
        rows.append(Row("start", f"app start to HTTP 200 / bare Blocks ({label} data)",
                        f"{float(ratio):.2f}x ({float(app_s):.2f} s / {float(bare_s):.2f} s, best of "
                        f"{repeats}; {calls} read calls)", "<= 1.3x", float(ratio) <= 1.3))
    return rows or [Row("start", "app start to first HTTP 200", "see output", "<= 1.3x")]


def bench_idle(args) -> list[Row]:
    import bench_idle as module
    return module.run(Path(args.data_dir), seconds=15.0 if args.quick else 30.0)


def bench_render(args) -> list[Row]:
    import bench_render as module
    return module.run(quick=args.quick, repeats=1 if args.quick else 2)


def bench_metrics(args) -> list[Row]:
    import bench_metrics as module
    return module.run(quick=args.quick)


def bench_parsers(args) -> list[Row]:
    import bench_parsers as module
    repeats = 1 if args.quick else 3
    return module.run(repeats=repeats) + module.run_corpus(repeats=repeats) + module.run_merge(repeats=repeats)


def bench_faults(args) -> list[Row]:
    import bench_faults as module
    return module.run(repeats=1 if args.quick else 3)


def bench_sessions(args) -> list[Row]:
    import bench_sessions as module
    return module.run(Path(args.data_dir), quick=args.quick)


def bench_batch(args) -> list[Row]:
    import bench_batch as module
    return module.run(quick=args.quick, examples=Path(args.data_dir))


def bench_frame_cache(args) -> list[Row]:
    import bench_frame_cache as module
    return module.run(stems=2 if args.quick else 8, examples=Path(args.data_dir),
                      only=("cloze", "impact", "window"), impact_clips=4 if args.quick else 14)


def bench_memory(args) -> list[Row]:
    import bench_memory as module
    return module.run(quick=args.quick, cache=args.cache_dir)


def bench_ui(args) -> list[Row]:
    import bench_ui as module
    return module.run(quick=args.quick, realsize=args.realsize, cache=args.cache_dir)


def bench_hub(args) -> list[Row]:
    import bench_hub as module
    return module.run(stems=60 if args.quick else 1521)


def bench_hf_batching(args) -> list[Row]:
    import bench_hf_batching as module
    from tests.helpers.tiny_families import FAMILIES
    return module.run(items=16 if args.quick else 32, concurrency=8, max_tokens=16, families=list(FAMILIES))


def ensure_data(data_dir: Path) -> None:
    """The example data (`make data` does the same; a no-op when it is complete)."""
    from examples.generate import example_parts, is_complete

    if all(is_complete(data_dir, part) for part in example_parts()):
        return
    print(f"generating the example data in {data_dir} ...", flush=True)
    subprocess.run([sys.executable, "-m", "examples.generate", "--out", str(data_dir)], cwd=ROOT,
                   check=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="\n".join(__doc__.splitlines()[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(ALL), help=f"comma list of {', '.join(ALL)}")
    ap.add_argument("--quick", action="store_true", help="small sizes: the whole run in minutes")
    ap.add_argument("--minutes", type=float, default=None,
                    help="length of the media benchmark movie (default 30, 3 with --quick)")
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data",
                    help="example data (generated when missing; default data)")
    ap.add_argument("--realsize", type=Path, default=None,
                    help="where the real-size data is made (default data/realsize, with --quick "
                         "data/realsize-small; git-ignored)")
    ap.add_argument("--cache-dir", type=Path, default=None,
                    help="generated movies are kept here (default test-artifacts/bench-cache "
                         "or $BENCH_CACHE_DIR)")
    args = ap.parse_args(argv)
    chosen = [b.strip() for b in args.only.split(",") if b.strip()]
    unknown = [b for b in chosen if b not in ALL]
    if unknown:
        ap.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(ALL)}")
    args.cache_dir = cache_dir(args.cache_dir)
    args.realsize = args.realsize or ROOT / "data" / ("realsize-small" if args.quick else "realsize")
    if any(b in chosen for b in ("realsize", "start", "idle", "sessions", "batch", "framecache")):
        ensure_data(args.data_dir)
    runners = {"realsize": bench_realsize, "media": bench_media, "start": bench_start,
               "idle": bench_idle, "render": bench_render, "metrics": bench_metrics,
               "parsers": bench_parsers, "faults": bench_faults, "sessions": bench_sessions,
               "batch": bench_batch, "framecache": bench_frame_cache,
               "memory": bench_memory, "ui": bench_ui,
               "hub": bench_hub, "hfbatch": bench_hf_batching}
    rows: list[Row] = []
    started = time.perf_counter()
    print(f"{os.cpu_count()} CPUs; load average (1/5/15 min) at start: {loadavg()}"
          + ("; --quick sizes" if args.quick else ""))
    for name in ALL:
        if name not in chosen:
            continue
        print(f"\n== {name} (load {loadavg()})", flush=True)
        t0 = time.perf_counter()
        try:
            got = runners[name](args)
        except Exception as exc:  # one broken benchmark must not hide the others' numbers
            got = [Row(name, "ERROR", f"{type(exc).__name__}: {exc}"[:160], met=False)]
            print(f"  {name} failed: {type(exc).__name__}: {exc}")
        load = loadavg()
        for row in got:
            row.load = load
        rows += got
        print(f"== {name} done in {time.perf_counter() - t0:.0f} s (load {load})", flush=True)
    print(f"\nSummary ({time.perf_counter() - started:.0f} s; {os.cpu_count()} CPUs; ratios measured "
          "in this run against their reference; numbers on a loaded machine are noisy):")
    print_rows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
