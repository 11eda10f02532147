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

`--only` picks the parts (comma-separated; `all`: every one):
  cloze      the two `run cloze` runs above;
  impact     `run impact` (temporal: `--impact-frames` sampled frames a clip; spatial: one call a
             annotated frame) twice, models A and B, on `--impact-clips` distinct 1280x720 clips
             made from the example clips (each its own grain): the frames each run sends are kept
             on disk (components.common.sent_frames);
  grounding  `run grounding --method rag` twice on the example movie's 14 queries (window search
             keeps the movie's sampled windows, and the pictures its localizer sends, on disk);
  window     the localizer's request pictures on 8 windows of the example movie, warm caches:
             read as sent (Movie.sent_frames) against made per request as before (the stored q=92
             frames decoded, then encoded at q=85 by the backend), the same bytes checked.
`--released-eval PATH`: the released TempCloze evaluation script (a checkout of the public
repository the user gives; its eval.py is not part of this project) run as it is, in a process of
its own, on the same clips against the same server, after the cloze runs; its client CPU (the
child's rusage, its start-up subtracted the same way) against the first model's run (goal <= 0.20,
issue 35). It needs its own dependencies importable (opencv-python, openai, python-dotenv, tqdm).
`--clips grainy|crf18`: how the 720p cloze clips are encoded (x264 ultrafast crf 23 with strong
grain, ~27 Mbit/s, the default; or medium crf 18 as the released clips with light grain, ~5
Mbit/s); the clips' bitrate is printed with every cloze figure.

    python scripts/bench_frame_cache.py [--stems 8] [--concurrency 8] [--delay 0.05]
        [--only cloze,impact,grounding,window] [--impact-clips 14] [--impact-frames 32]
        [--released-eval CHECKOUT] [--clips grainy|crf18]
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
#: the first model's run against the released eval.py on the same clips (issue 30: 0.25; issue 35)
RELEASED_GOAL = 0.20
WIDTH, HEIGHT = 1280, 720


#: how the benchmark's clips are encoded: x264 preset, crf, film grain strength (ffmpeg noise)
ENCODINGS = {"grainy": ("ultrafast", 23, 10), "crf18": ("medium", 18, 4)}


def make_data(examples: Path, stems: int, out: Path, encoding: str = "grainy") -> Path:
    """`stems` stems of distinct 720p clips (reused when already made with the same count).
    `encoding`: "grainy" (x264 ultrafast, crf 23, strong grain: ~27 Mbit/s) or "crf18" (x264
    medium, crf 18 as the released clips, light grain: ~5 Mbit/s)."""
    preset, crf, grain = ENCODINGS[encoding]
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
                            f"scale={WIDTH}:{HEIGHT}:flags=bicubic,noise=alls={grain}:allf=t:all_seed={seed}",
                            "-t", "3", "-c:v", "libx264", "-preset", preset, "-crf", str(crf),
                            "-pix_fmt", "yuv420p", "-threads", "2", "-f", "mp4", str(tmp)], check=True)
            os.replace(tmp, dest)
        if f"{base}.mp4" in meta:
            new_meta[f"{stem}.mp4"] = meta[f"{base}.mp4"]
    (out / "meta.json").write_text(json.dumps(new_meta) + "\n")
    (out / "sets.json").write_text(json.dumps({"first_100": names[:100]}) + "\n")
    marker.write_text(json.dumps({"stems": stems}))
    return out


def clip_bitrate(data: Path) -> float:
    """The clips' mean bitrate in Mbit/s (bytes over duration, every clip of choices/)."""
    from components.media import open_video

    bits = seconds = 0.0
    for clip in (data / "choices").rglob("*.mp4"):
        source = open_video(clip)
        try:
            seconds += source.info.num_frames / source.info.fps
        finally:
            source.close()
        bits += 8 * clip.stat().st_size
    return bits / max(seconds, 1e-9) / 1e6


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
    ratio = b / a if a else float("inf")
    print(f"run grounding --method rag (window search), the example movie's {queries} queries:")
    print(f"{'':24s}{'first model':>14s}{'second model':>14s}")
    print(f"{'client CPU s (steady)':24s}{a:14.2f}{b:14.2f}")
    print(f"{'CPU ms per query':24s}{1000 * a / queries:14.0f}{1000 * b / queries:14.0f}")
    print(f"{'video frames decoded':24s}{da:14d}{db:14d}")
    print(f"ratio second / first client CPU: {ratio:.3f} (goal <= {GOAL:.2f})")
    return [Row("frame cache", f"run grounding {queries} q: 2nd model / 1st model client CPU",
                f"{ratio:.3f} ({b:.2f} / {a:.2f} s)", f"<= {GOAL:.2f}", ratio <= GOAL)]


def released_pair(released: Path, data: Path, url: str, tmp: Path, first: dict, mbps: float) -> list[Row]:
    """The released TempCloze evaluation script (a checkout the user gives: its eval.py, or the
    folder holding it; not part of this project) run as it is, in a process of its own, on the
    same clips against the same local server; its client CPU against the first model's run.
    The script file is copied unchanged into a temporary folder, beside links to the clips where
    the released versions look for them (./choices, ./video-cloze/choices), so the checkout is not
    written to. It needs its own dependencies importable (opencv-python, openai, python-dotenv,
    tqdm), e.g. through PYTHONPATH."""
    import resource

    script = released if released.is_file() else next(
        (p for p in (released / "TempCloze" / "eval.py", released / "video-cloze" / "eval.py", released / "eval.py")
         if p.is_file()), None)
    if script is None:
        raise SystemExit(f"--released-eval {released}: no eval.py there (give the file, or the folder holding it)")
    home = tmp / "released"
    (home / "video-cloze").mkdir(parents=True)
    shutil.copyfile(script, home / "eval.py")
    for link in (home / "choices", home / "video-cloze" / "choices"):
        link.symlink_to((data / "choices").resolve())
    env = {**os.environ, "OPENAI_API_KEY": "x", "OPENAI_BASE_URL": url}

    def once() -> tuple[float, float, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "eval.py", "video-cloze"], cwd=home, env=env,
                              capture_output=True, text=True, timeout=3600)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"the released eval.py exited {done.returncode}:\n{done.stderr[-2000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return time.perf_counter() - t0, cpu, done.stdout + done.stderr

    wall, cpu, said = once()
    answered = sum(len(dims) for f in (home / "video-cloze").rglob("eval_results*/*.json")
                   for dims in json.loads(f.read_text()).values())
    questions = 3 * sum(1 for p in (data / "choices").iterdir() if (p / "GT.mp4").exists())
    if answered != questions:
        raise RuntimeError(f"the released eval.py answered {answered} of {questions} questions:\n{said[-2000:]}")
    _, fixed, _ = once()  # finished: only its start-up is left
    steady = max(0.0, cpu - fixed)
    ratio = first["steady_cpu"] / steady if steady else float("inf")
    print(f"released eval.py ({script}), the same {questions} questions (clips {mbps:.1f} Mbit/s): "
          f"client CPU {steady:.2f} s steady "
          f"({cpu:.2f} s raw, {fixed:.2f} s start-up), wall {wall:.1f} s")
    print(f"ratio run cloze first model / released eval.py client CPU: {ratio:.3f} (goal <= {RELEASED_GOAL:.2f}); "
          f"raw {first['cpu'] / cpu if cpu else float('inf'):.3f}")
    return [Row("frame cache", f"run cloze {questions} q ({mbps:.1f} Mbit/s 720p clips), first model / released "
                "eval.py client CPU",
                f"{ratio:.3f} ({first['steady_cpu']:.2f} / {steady:.2f} s)", f"<= {RELEASED_GOAL:.2f}",
                ratio <= RELEASED_GOAL)]


def make_impact_data(examples: Path, clips: int, out: Path) -> Path:
    """`clips` distinct 1280x720 Impact clips made from the example clips (each scaled up and
    given its own film grain), their annotations copied under new qids; reused when made."""
    marker = out / "made.json"
    if marker.is_file() and json.loads(marker.read_text()).get("clips") == clips:
        return out / "annotations.json"
    ann = json.loads((examples / "annotations.json").read_text())
    items = []
    for n in range(clips):
        base = ann["items"][n % len(ann["items"])]
        item = {**base, "qid": f"{base['qid']}_{n:03d}", "video": f"clips/{base['qid']}_{n:03d}.mp4"}
        dest = out / item["video"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.is_file():
            tmp = dest.with_name(f".tmp-{dest.name}")
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(examples / base["video"]), "-vf",
                            f"scale={WIDTH}:{HEIGHT}:flags=bicubic,noise=alls=10:allf=t:all_seed={n + 1}",
                            "-c:v", "libx264", "-preset", "ultrafast", "-crf", "23", "-pix_fmt", "yuv420p",
                            "-threads", "2", "-f", "mp4", str(tmp)], check=True)
            os.replace(tmp, dest)
        items.append(item)
    (out / "annotations.json").write_text(json.dumps({**ann, "items": items}) + "\n")
    marker.write_text(json.dumps({"clips": clips}))
    return out / "annotations.json"


def impact_pair(annotations: Path, url: str, tmp: Path, concurrency: int, max_frames: int) -> list[Row]:
    """`run impact` (temporal: `max_frames` sampled frames a clip; spatial: one call per annotated
    frame) model A then model B, one cache."""
    from components.impact.data import load_annotations
    from components.impact.pipeline import scored_frames

    clips = len(load_annotations(annotations).items)
    units = len(scored_frames(load_annotations(annotations)))
    results = []
    for model in ("model-a", "model-b"):
        out = tmp / f"impact-{model}"
        argv = ["run", "impact", "--annotations", str(annotations), "--backend", f"openai:{model}",
                "--base-url", url, "--out", str(out), "--max-frames", str(max_frames),
                "--concurrency", str(concurrency), "--no-progress"]
        wall, cpu, decoded = run_app(argv)
        done = len((out / "spatial_pred.jsonl").read_text().splitlines())
        if done != units:
            raise RuntimeError(f"run impact {model}: {done} of {units} frames answered")
        _, fixed, _ = run_app(argv)
        results.append((max(0.0, cpu - fixed), decoded, fixed))
    (a, da, fa), (b, db, fb) = results
    ratio = b / a if a else float("inf")
    print(f"run impact, {clips} clips of 1280x720 ({max_frames} temporal frames each, {units} spatial frames):")
    print(f"{'':24s}{'first model':>14s}{'second model':>14s}")
    print(f"{'client CPU s (steady)':24s}{a:14.2f}{b:14.2f}")
    print(f"{'  fixed start':24s}{fa:14.2f}{fb:14.2f}")
    print(f"{'video frames decoded':24s}{da:14d}{db:14d}")
    print(f"ratio second / first client CPU: {ratio:.3f} (goal <= {GOAL:.2f})")
    return [Row("frame cache", f"run impact {clips} clips: 2nd model / 1st model client CPU",
                f"{ratio:.3f} ({b:.2f} / {a:.2f} s)", f"<= {GOAL:.2f}", ratio <= GOAL)]


def window_requests(examples: Path, windows: int = 8, repeats: int = 3) -> list[Row]:
    """Window search's localizer requests on the example movie (32 frames a window, the stored
    frames already on disk): the pictures made per request as before (the stored q92 frames
    decoded, then encoded at q85 by the backend) against read as sent (Movie.sent_frames, made
    once): client CPU of building the requests' wire messages, the same windows, warm caches."""
    from backends.images import jpeg_data_url
    from backends.openai_api import to_openai_messages
    from components.window_search import prompts
    from components.window_search.movie import Movie

    video = next((examples / "grounding" / "movies").glob("*.mp4"))
    movie = Movie(video)
    step = max(1.0, (movie.duration - 90.0) / windows)
    spans = [(i * step, min(movie.duration, i * step + 90.0)) for i in range(windows)]

    def wire(frames_of) -> list[str]:
        """Each window's request as the OpenAI backend puts it on the wire: its image URLs."""
        urls = []
        for s, e in spans:
            messages = prompts.localize_messages("q", (s, e), frames_of(s, e, fps=1.0, cap=32), 1.0)
            urls += [p["image_url"]["url"] for m in to_openai_messages(messages) if isinstance(m["content"], list)
                     for p in m["content"] if p.get("type") == "image_url"]
        return urls

    def before() -> list[str]:
        return wire(movie.frames)

    def after() -> list[str]:
        return wire(movie.sent_frames)

    if before() != after():  # both warm now: stored frames and sent pictures on disk
        raise RuntimeError("the pictures read as sent differ from the ones made per request")
    del jpeg_data_url
    cpu = {}
    for name, fn in (("before", before), ("after", after)):
        best = float("inf")
        for _ in range(repeats):
            c0 = time.process_time()
            fn()
            best = min(best, time.process_time() - c0)
        cpu[name] = best
    movie.close()
    ratio = cpu["after"] / cpu["before"] if cpu["before"] else float("inf")
    print(f"window search localizer, {windows} windows x 32 frames (warm disk cache): client CPU per request "
          f"{1000 * cpu['before'] / windows:.1f} ms decoded+re-encoded, {1000 * cpu['after'] / windows:.1f} ms "
          f"read as sent; ratio {ratio:.3f}")
    return [Row("frame cache", "window search request pictures: read as sent / decode + re-encode (CPU)",
                f"{ratio:.3f} ({1000 * cpu['after'] / windows:.1f} / {1000 * cpu['before'] / windows:.1f} ms)")]


def run(stems: int = 8, concurrency: int = 8, delay: float = 0.05, examples: Path | None = None,
        grounding: bool = False, only: tuple[str, ...] = ("cloze",), impact_clips: int = 14,
        impact_frames: int = 32, released_eval: Path | None = None, encoding: str = "grainy") -> list[Row]:
    from bench_batch import bench_server
    from make_realsize import ensure_examples

    examples = Path(examples or ROOT / "data")
    ensure_examples(examples)
    suffix = "" if encoding == "grainy" else f"-{encoding}"
    data = make_data(examples / "cloze", stems, cache_dir() / f"frame-cache-720p-{stems}{suffix}", encoding)
    mbps = clip_bitrate(data)
    questions = 3 * stems
    tmp = Path(tempfile.mkdtemp(prefix="bench-frame-cache-"))
    old = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "APP_CACHE_DIR")}
    os.environ["OPENAI_API_KEY"] = "x"
    os.environ["APP_CACHE_DIR"] = str(tmp / "cache")
    first = second = None
    extra: list[Row] = []
    try:
        with bench_server(delay) as url:
            if "cloze" in only:
                first = one_model("model-a", data, url, tmp / "a.json", concurrency, questions)
                second = one_model("model-b", data, url, tmp / "b.json", concurrency, questions)
                if released_eval is not None:
                    extra += released_pair(released_eval, data, url, tmp, first, mbps)
            if grounding or "grounding" in only:
                extra += grounding_pair(examples, url, tmp, concurrency)
            if "impact" in only:
                ann = make_impact_data(examples / "impact", impact_clips, cache_dir() / f"frame-cache-impact-{impact_clips}")
                extra += impact_pair(ann, url, tmp, concurrency, impact_frames)
        if "window" in only:
            extra += window_requests(examples)
        stored = sum(f.stat().st_size for f in (tmp / "cache" / "frames").rglob("*") if f.is_file()) \
            if (tmp / "cache" / "frames").exists() else 0
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(tmp, ignore_errors=True)
    if first is None or second is None:
        return extra
    ratio = second["steady_cpu"] / first["steady_cpu"] if first["steady_cpu"] else float("inf")
    print(f"run cloze, {questions} questions ({stems} stems of distinct 3 s 1280x720 clips, {encoding}: "
          f"{mbps:.1f} Mbit/s), "
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
    ap.add_argument("--only", default="cloze",
                    help="comma-separated: cloze, impact, grounding, window (default cloze); all: every one")
    ap.add_argument("--impact-clips", type=int, default=14, help="distinct 720p Impact clips (default 14)")
    ap.add_argument("--impact-frames", type=int, default=32, help="temporal frames a clip (--max-frames)")
    ap.add_argument("--released-eval", type=Path, default=None, metavar="PATH",
                    help="a checkout of the released TempCloze evaluation (its eval.py, not part of this "
                         "project): run as it is on the same clips against the same local server, and "
                         "its client CPU compared with the first model's run")
    ap.add_argument("--clips", choices=sorted(ENCODINGS), default="grainy",
                    help="how the 720p cloze clips are encoded: grainy (x264 ultrafast crf 23, strong grain, "
                         "~27 Mbit/s; the default) or crf18 (x264 medium crf 18 as the released clips, "
                         "light grain, ~5 Mbit/s)")
    args = ap.parse_args(argv)
    only = ("cloze", "impact", "grounding", "window") if args.only == "all" else \
        tuple(x.strip() for x in args.only.split(",") if x.strip())
    print_rows(run(args.stems, args.concurrency, args.delay, args.examples, args.grounding, only,
                   args.impact_clips, args.impact_frames, args.released_eval, args.clips))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
