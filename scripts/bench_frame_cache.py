"""Benchmark: client CPU of a second model's `run cloze` on the same questions as a first model's,
with the disk frames cache (components.media.DiskCache, frames/) between them (issue 30).

Data: `--stems` stems (default 8, x 3 dimensions = 24 questions) of distinct 3-second 1280x720
H.264 clips, made from the example cloze stems (scaled up, each clip given its own film grain so
no two clips share content), kept in the bench cache folder (test-artifacts/bench-cache; reused).
Server: scripts/bench_server.py in its own process (answers every question "B" after `--delay`).

Both runs are the real `run cloze` through app.main in this process, each starting as a new process
would (no frames kept in memory), against one APP_CACHE_DIR that starts empty:
  first:  model A, every clip decoded, resized, JPEG-encoded (and stored);
  second: model B, the same questions.
A run's fixed start-up (parsing, loading the data) is measured by running it again once finished
(nothing left to ask) and subtracted. Printed side by side: client CPU of each, the ratio
(goal <= 0.10), and the video frames each decoded (components.media.frames_decoded).

`--grounding` also runs `run grounding --method rag` twice (models A and B) on the example movie's
14 queries with one cache (window search keeps the movie's sampled windows on disk: the first run
samples them, the second reads them).

    python scripts/bench_frame_cache.py [--stems 8] [--concurrency 8] [--delay 0.05] [--grounding]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, cache_dir, print_rows  # noqa: E402

GOAL = 0.10
WIDTH, HEIGHT = 1280, 720


def make_data(examples: Path, stems: int, out: Path) -> Path:
    """`stems` stems of distinct 720p clips (reused when already made with the same count)."""
    marker = out / "made.json"
    if marker.is_file() and json.loads(marker.read_text()).get("stems") == stems:
        return out
    meta = json.loads((examples / "meta.json").read_text())
    bases = sorted(p.name for p in (examples / "choices").iterdir() if p.is_dir())
    new_meta, names, seed = {}, [], 0
    for n in range(stems):
        base = bases[n % len(bases)]
        stem = f"{base}_{n:04d}"
        names.append(stem)
        for clip in sorted((examples / "choices" / base).rglob("*.mp4")):
            dest = out / "choices" / stem / clip.relative_to(examples / "choices" / base)
            dest.parent.mkdir(parents=True, exist_ok=True)
            seed += 1
            if dest.is_file():  # made by an earlier, interrupted call (written under a temp name)
                continue
            tmp = dest.with_name(f".tmp-{dest.name}")
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(clip), "-vf",
                            f"scale={WIDTH}:{HEIGHT}:flags=bicubic,noise=alls=10:allf=t:all_seed={seed}",
                            "-t", "3", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "23",
                            "-pix_fmt", "yuv420p", "-threads", "2", "-f", "mp4", str(tmp)], check=True)
            os.replace(tmp, dest)
        if f"{base}.mp4" in meta:
            new_meta[f"{stem}.mp4"] = meta[f"{base}.mp4"]
    (out / "meta.json").write_text(json.dumps(new_meta) + "\n")
    (out / "sets.json").write_text(json.dumps({"first_100": names[:100]}) + "\n")
    marker.write_text(json.dumps({"stems": stems}))
    return out


def as_new_process() -> None:
    """Forget the frames this process keeps in memory, as a new `run cloze` process starts."""
    from components.cloze import frames

    frames._prefetcher.submit(lambda: None).result(300)
    frames.FRAMES.clear()


def run_app(argv: list[str]) -> tuple[float, float, int]:
    """app.main(argv), output swallowed: (wall s, process CPU s, video frames decoded)."""
    import io

    import app
    from components.media import frames_decoded

    as_new_process()
    decoded, t0, c0 = frames_decoded(), time.perf_counter(), time.process_time()
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        rc = app.main(argv)
    if rc != 0:
        raise RuntimeError(f"exit {rc}: {' '.join(argv)}\n{said.getvalue()[-2000:]}")
    return time.perf_counter() - t0, time.process_time() - c0, frames_decoded() - decoded


def one_model(model: str, data: Path, url: str, out: Path, concurrency: int, questions: int) -> dict:
    argv = ["run", "cloze", "--data", str(data), "--backend", f"openai:{model}", "--base-url", url,
            "--out", str(out), "--retry-sleep", "0", "--concurrency", str(concurrency), "--no-progress"]
    wall, cpu, decoded = run_app(argv)
    answered = [e for dims in json.loads(out.read_text()).values() for e in dims.values() if e.get("answer") == "B"]
    if len(answered) != questions:
        raise RuntimeError(f"{model}: {len(answered)} of {questions} questions answered")
    fixed_wall, fixed_cpu, _ = run_app(argv)  # finished: only the fixed start-up is left
    return {"model": model, "wall": wall, "cpu": cpu, "fixed_cpu": fixed_cpu,
            "steady_cpu": max(0.0, cpu - fixed_cpu), "steady_wall": max(1e-6, wall - fixed_wall),
            "decoded": decoded}


def grounding_pair(examples: Path, url: str, tmp: Path, concurrency: int) -> list[Row]:
    """`run grounding --method rag` on the example movie's 14 queries, model A then model B, one
    cache: the movie's sampled windows are kept on disk (window search's own frames cache)."""
    from components.base.io import read_jsonl

    src = examples / "grounding"
    ann = tmp / "grounding" / "annotations.json"
    ann.parent.mkdir(parents=True)
    ann.write_text((src / "annotations.json").read_text())
    for name in ("movies", "memory"):
        if (src / name).exists():
            (ann.parent / name).symlink_to((src / name).resolve())
    queries = 2 * len(json.loads(ann.read_text())["pairs"])
    results = []
    for model in ("model-a", "model-b"):
        out = tmp / f"grounding-{model}.jsonl"
        argv = ["run", "grounding", "--annotations", str(ann), "--backend", f"openai:{model}", "--base-url",
                url, "--method", "rag", "--out", str(out), "--concurrency", str(concurrency), "--no-progress"]
        wall, cpu, decoded = run_app(argv)
        if len(read_jsonl(out)) != queries:
            raise RuntimeError(f"run grounding {model}: {len(read_jsonl(out))} of {queries} answered")
        _, fixed, _ = run_app(argv)
        results.append((max(0.0, cpu - fixed), decoded))
    (a, da), (b, db) = results
    print(f"run grounding --method rag, {queries} queries: client CPU first {a:.2f} s ({da} frames decoded), "
          f"second {b:.2f} s ({db} decoded), ratio {b / a if a else float('inf'):.3f}")
    return [Row("frame cache", f"run grounding {queries} q: 2nd model / 1st model client CPU",
                f"{b / a if a else float('inf'):.3f} ({b:.2f} / {a:.2f} s)")]


def run(stems: int = 8, concurrency: int = 8, delay: float = 0.05, examples: Path | None = None,
        grounding: bool = False) -> list[Row]:
    from bench_batch import bench_server
    from make_realsize import ensure_examples

    examples = Path(examples or ROOT / "data")
    ensure_examples(examples)
    data = make_data(examples / "cloze", stems, cache_dir() / f"frame-cache-720p-{stems}")
    questions = 3 * stems
    tmp = Path(tempfile.mkdtemp(prefix="bench-frame-cache-"))
    old = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "APP_CACHE_DIR")}
    os.environ["OPENAI_API_KEY"] = "x"
    os.environ["APP_CACHE_DIR"] = str(tmp / "cache")
    try:
        with bench_server(delay) as url:
            first = one_model("model-a", data, url, tmp / "a.json", concurrency, questions)
            second = one_model("model-b", data, url, tmp / "b.json", concurrency, questions)
            extra = grounding_pair(examples, url, tmp, concurrency) if grounding else []
        stored = sum(f.stat().st_size for f in (tmp / "cache" / "frames").rglob("*") if f.is_file())
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(tmp, ignore_errors=True)
    ratio = second["steady_cpu"] / first["steady_cpu"] if first["steady_cpu"] else float("inf")
    print(f"run cloze, {questions} questions ({stems} stems of distinct 3 s 1280x720 clips), "
          f"concurrency {concurrency}, server delay {delay} s")
    print(f"{'':24s}{'first model':>14s}{'second model':>14s}")
    print(f"{'client CPU s (steady)':24s}{first['steady_cpu']:14.2f}{second['steady_cpu']:14.2f}")
    print(f"{'client CPU s (raw)':24s}{first['cpu']:14.2f}{second['cpu']:14.2f}")
    print(f"{'  of which fixed start':24s}{first['fixed_cpu']:14.2f}{second['fixed_cpu']:14.2f}")
    print(f"{'CPU ms per question':24s}{1000 * first['steady_cpu'] / questions:14.0f}"
          f"{1000 * second['steady_cpu'] / questions:14.0f}")
    print(f"{'wall s (steady)':24s}{first['steady_wall']:14.2f}{second['steady_wall']:14.2f}")
    print(f"{'video frames decoded':24s}{first['decoded']:14d}{second['decoded']:14d}")
    print(f"ratio second / first client CPU: {ratio:.3f} (goal <= {GOAL:.2f}); frames cache on disk "
          f"{stored / 1e6:.1f} MB ({stored / 1e3 / max(1, first['decoded'] // 16):.0f} kB a clip)")
    return [Row("frame cache", f"run cloze {questions} q: 2nd model / 1st model client CPU",
                f"{ratio:.3f} ({second['steady_cpu']:.2f} / {first['steady_cpu']:.2f} s)", f"<= {GOAL:.2f}",
                ratio <= GOAL), *extra]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stems", type=int, default=8, help="stems (3 questions each; default 8)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--delay", type=float, default=0.05, help="the server's seconds per answer")
    ap.add_argument("--examples", type=Path, default=ROOT / "data", help="example data directory")
    ap.add_argument("--grounding", action="store_true",
                    help="also `run grounding --method rag` twice on the example movie (window search's cache)")
    args = ap.parse_args(argv)
    print_rows(run(args.stems, args.concurrency, args.delay, args.examples, args.grounding))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
