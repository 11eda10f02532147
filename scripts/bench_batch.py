"""Benchmark: batch throughput of the three `run` commands against a local OpenAI-compatible server
answering in 200 ms (scripts/bench_server.py, its own process), at concurrency 1/4/16/64.

Paths (each the real command through app.main in this process, frame decoding included):
  - core:      components.common.batch.run_resumable, work = one backend call with a text prompt
               (the ceiling: no media work at all);
  - grounding: `run grounding --method rag` (retrieval over the prepared movie, 32 frames of the
               window decoded and JPEG-encoded, one localizer call) on the example movie, its 7
               pairs repeated under new qids;
  - cloze:     `run cloze` (6 clips x 16 frames decoded and encoded, one call of 96 images) on
               copies of the example stems, each clip a distinct file (its own cache identity:
               hard links share one, so only the first of each would decode): every level is a
               first run, cold (no frames cache, on disk or in memory);
  - impact:    `run impact --tasks spatial` (each clip's annotated frames decoded once, one call
               per frame) on the example clips repeated;
  - impact433: the same at concurrency 16 over a HAPACT-sized file (433 clips; data/realsize/impact
               when scripts/make_realsize.py made it, else hard links of the example clips).
  - cloze4563: `run cloze` at concurrency 64 over TempCloze's full size, 4,563 questions (1,521
               stems, S/A/P), warm frames: the stems are hard links of the example stems, whose
               frames are put in the disk cache before the run (a hard link shares its file's
               cache identity), so every clip's JPEGs are read from the disk cache and none is
               decoded. Prints the flat-cost ratio, the client CPU of the last 10 % of the
               questions over that of the first 10 % (goal <= 1.2x: the cost per question does not
               grow with the result file), and the rate (goal >= half the ideal 320 q/s), beside a
               reference measured in the same run: the released eval.py's request path (the openai
               SDK's `chat.completions.create` posting the same 96 JPEGs as data URLs, base64-encoded
               for each question as the released script does, from 64 threads; no frames cache, no
               result file), so a rate read at one load can be compared with one read at another.
A command's fixed start-up (loading annotations, the embedder, the prepared movie) is measured by
running the finished command again (it has nothing left to do) and subtracted, so the rates are
items per second of steady work. Goal: rate >= 0.8 x c x the concurrency-1 rate. Where a path
stops scaling the client's CPU per item says why: N cores cannot do more than N / (CPU s per item)
items a second.

    python scripts/bench_batch.py [--quick] [--examples data] [--only core,grounding,cloze,impact,impact433,cloze4563]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, loadavg, print_rows  # noqa: E402

DELAY = 0.2
LEVELS = (1, 4, 16, 64)
QUICK_LEVELS = (1, 4, 16)
GOAL = 0.8
PATHS = ("core", "grounding", "cloze", "impact", "impact433", "cloze4563")
#: TempCloze's full size (questions), and the flat-cost goal: the client CPU of the last 10 % of
#: them over the first 10 % at most this
FULL_CLOZE = 4563
FLAT_GOAL = 1.2
SERVER_PID = [0]  # the benchmark server's process, whose CPU time is read from /proc


def server_cpu() -> float:
    """CPU seconds the benchmark server has used so far (0 when /proc cannot say)."""
    try:
        text = Path(f"/proc/{SERVER_PID[0]}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def with_server_cpu(measure, *args):
    """(wall, client CPU) of `measure(*args)` plus the server's CPU over it."""
    before = server_cpu()
    wall, cpu = measure(*args)
    return wall, cpu, server_cpu() - before


@contextlib.contextmanager
def bench_server(delay: float = DELAY):
    """scripts/bench_server.py in its own process (its threads do not compete for our GIL)."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "bench_server.py"), "--delay",
                             str(delay)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError("the benchmark server did not start")
        SERVER_PID[0] = proc.pid
        yield url
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def items_for(concurrency: int, quick: bool) -> int:
    """Enough items that `concurrency` of them stay in flight for most of the run."""
    return max(16, 4 * concurrency) if quick else max(24, 6 * concurrency)


# -- one timed command -------------------------------------------------------------------------------

def run_app(argv: list[str]) -> tuple[int, float, float]:
    """app.main(argv) in this process, output swallowed: (exit code, wall s, process CPU s)."""
    import app

    t0, c0 = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        rc = app.main(argv)
    return rc, time.perf_counter() - t0, time.process_time() - c0


def timed(argv: list[str], count_done) -> tuple[float, float]:
    """Steady-work (wall s, CPU s) of a run command: its time minus that of the finished rerun."""
    rc, wall, cpu = run_app(argv)
    if rc != 0:
        raise RuntimeError(f"exit {rc}: {' '.join(argv[:2])}")
    count_done()
    rc, fixed_wall, fixed_cpu = run_app(argv)  # everything done: only the fixed start-up is left
    if rc != 0:
        raise RuntimeError(f"rerun exit {rc}: {' '.join(argv[:2])}")
    return max(1e-6, wall - fixed_wall), max(0.0, cpu - fixed_cpu)


# -- the paths ------------------------------------------------------------------------------------------

def core_run(url: str, items: int, concurrency: int, out: Path) -> tuple[float, float]:
    from backends.base import GenerationParams, GenerationRequest, Message
    from backends.config import ApiSettings
    from backends.registry import resolve
    from components.common.batch import run_resumable
    from components.base.io import read_jsonl

    backend = resolve("openai:bench", api=ApiSettings(base_url=url, api_key="x"))

    def work(i: int) -> dict:
        result = backend.generate(GenerationRequest(
            messages=[Message(role="user", content=[f"Question {i}: which body region is hit?"])],
            params=GenerationParams(temperature=0.0, max_tokens=64), task="bench", ref=str(i)))
        if not result.ok:
            raise RuntimeError(result.error)
        return {"qid": str(i), "text": result.text}

    t0, c0 = time.perf_counter(), time.process_time()
    counts = run_resumable(range(items), key=str, work=work, out_path=out, concurrency=concurrency,
                           progress=False)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if counts["done"] != items or len(read_jsonl(out)) != items:
        raise RuntimeError(f"core batch: {counts} for {items} items")
    return elapsed, cpu


def profile_core(url: str, items: int, concurrency: int, out: Path, top: int = 30,
                 dump: Path | None = None) -> None:
    """`core_run` under cProfile (timer: each thread's own CPU time) in every thread (the batch's own and each worker's: cProfile sees
    one thread only), merged; prints the functions with the most own CPU time and the total CPU per
    item, so where the client's milliseconds an item go can be named."""
    import cProfile
    import pstats
    import threading

    from components.common import batch

    profiles, lock = [], threading.Lock()
    local = threading.local()
    real_pool = batch.ThreadPoolExecutor

    def start_profiling() -> None:
        prof = cProfile.Profile(time.thread_time)
        with lock:
            profiles.append(prof)
        local.prof = prof
        prof.enable()

    class ProfiledPool(real_pool):  # each worker thread profiled from its start to its end
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("initializer", start_profiling)
            super().__init__(*args, **kwargs)

    main = cProfile.Profile(time.thread_time)
    batch.ThreadPoolExecutor = ProfiledPool
    try:
        c0 = time.process_time()
        main.enable()
        wall, _ = core_run(url, items, concurrency, out)
        main.disable()
        cpu = time.process_time() - c0
    finally:
        batch.ThreadPoolExecutor = real_pool
    stream = io.StringIO()
    stats = pstats.Stats(main, stream=stream)
    for prof in profiles:
        stats.add(prof)
    print(f"core c={concurrency}: {items} items, {items / wall:.1f} items/s, client CPU "
          f"{1000 * cpu / items:.2f} ms/item (profiled: the profiler adds its own)")
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    print(stream.getvalue())
    if dump is not None:
        stats.dump_stats(dump)
        print(f"profile written to {dump} (python -m pstats {dump})")


def grounding_annotations(source: Path, queries: int, out: Path) -> None:
    """The example pairs repeated under new ids until there are `queries` queries."""
    raw = json.loads(source.read_text())
    pairs, n = [], 0
    while 2 * len(pairs) < queries:
        for p in raw["pairs"]:
            if 2 * len(pairs) >= queries:
                break
            pid = f"{p['pair_id']}-r{n}"
            pairs.append(dict(p, pair_id=pid, target=dict(p["target"], qid=f"{pid}_t"),
                              confusable=dict(p["confusable"], qid=f"{pid}_c")))
        n += 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(raw, pairs=pairs)))
    for name in ("movies", "memory"):
        link = out.parent / name
        if not link.exists() and (source.parent / name).exists():
            link.symlink_to((source.parent / name).resolve())


def grounding_run(url: str, ann: Path, items: int, concurrency: int, out: Path) -> tuple[float, float]:
    from components.base.io import read_jsonl

    argv = ["run", "grounding", "--annotations", str(ann), "--backend", "openai:bench", "--base-url",
            url, "--method", "rag", "--out", str(out), "--concurrency", str(concurrency),
            "--limit", str(items), "--no-progress"]

    def check() -> None:
        records = read_jsonl(out)
        if len(records) != items or any(r.get("interval") is None for r in records):
            raise RuntimeError(f"run grounding: {len(records)} of {items} answered")
    return timed(argv, check)


def cloze_data(examples: Path, stems: int, out: Path, *, distinct: bool = True) -> Path:
    """`stems` stems copied from the example stems; `distinct`: each clip its own file with its own
    modification time (its own cache identity), else hard links (one identity per example clip)."""
    from make_realsize import make_cloze

    make_cloze(out, examples, stems)
    if distinct:
        for n, clip in enumerate(sorted((out / "choices").rglob("*.mp4"))):
            data = clip.read_bytes()
            clip.unlink()             # the hard link
            clip.write_bytes(data)
            stamp = 1_700_000_000_000_000_000 + n * 1000
            os.utime(clip, ns=(stamp, stamp))
    return out


def cloze_run(url: str, data: Path, items: int, concurrency: int, out: Path) -> tuple[float, float]:
    from components.cloze import frames

    # every level decodes: no clip cache of an earlier level, in memory or on disk
    frames.FRAMES.clear()
    os.environ["APP_CACHE_DIR"] = str(out.parent / f"cache-{out.stem}")
    argv = ["run", "cloze", "--data", str(data), "--backend", "openai:bench", "--base-url", url,
            "--out", str(out), "--limit", str(items), "--retry-sleep", "0",
            "--concurrency", str(concurrency), "--no-progress"]

    def check() -> None:
        results = json.loads(out.read_text())
        answered = [e for dims in results.values() for e in dims.values() if e.get("answer") == "B"]
        if len(answered) != items:
            raise RuntimeError(f"run cloze: {len(answered)} of {items} answered")
    return timed(argv, check)


def impact_annotations(source: Path, units: int, out: Path) -> int:
    """The example clips repeated (new qids, same files) until they hold >= `units` spatial units."""
    from components.impact.data import load_annotations
    from components.impact.pipeline import annotated_frames

    raw = json.loads(source.read_text())
    per_item = [len(annotated_frames(it)) for it in load_annotations(source).items]
    items, total, n = [], 0, 0
    while total < units:
        for base, count in zip(raw["items"], per_item):
            if total >= units or not count:
                continue
            items.append(dict(base, qid=f"{base['qid']}-r{n}"))
            total += count
        n += 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(raw, items=items)))
    for item in raw["items"]:  # the clips are reached through symlinks next to the copy
        link = out.parent / item["video"]
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to((source.parent / item["video"]).resolve())
    return total


def impact_run(url: str, ann: Path, units: int, concurrency: int, out: Path) -> tuple[float, float]:
    from components.base.io import read_jsonl

    argv = ["run", "impact", "--annotations", str(ann), "--backend", "openai:bench", "--base-url", url,
            "--tasks", "spatial", "--out", str(out), "--concurrency", str(concurrency), "--no-progress"]

    def check() -> None:
        records = read_jsonl(out / "spatial_pred.jsonl")
        if len(records) != units or any(r.get("regions") != ["head"] for r in records):
            raise RuntimeError(f"run impact: {len(records)} of {units} answered")
    return timed(argv, check)


# -- reporting ---------------------------------------------------------------------------------------

def _rows(path: str, results: dict[int, tuple]) -> list[Row]:
    """`results`: concurrency -> (items, steady wall s, client CPU s, server CPU s)."""
    rows = []
    n1, w1 = results[1][:2]
    base = n1 / w1
    stop = None
    for c, (n, wall, cpu, srv) in sorted(results.items()):
        rate = n / wall
        speedup = rate / base
        print(f"{path:9s} c={c:2d}: {n} items in {wall:.2f} s = {rate:.2f} items/s, {speedup:.2f}x c=1 "
              f"({speedup / c:.2f} of ideal; ideal {c / DELAY:.0f} items/s); CPU per item: client "
              f"{1000 * cpu / n:.0f} ms, server {1000 * srv / n:.0f} ms")
        if c > 1 and stop is None and speedup < GOAL * c:
            stop = (c, rate, cpu / n, srv / n)
        rows.append(Row("batch", f"{path} c={c}: {rate:.2f} items/s", f"{speedup:.2f}x c=1 ({speedup / c:.2f} of ideal)",
                        f">= {GOAL * c:.1f}x" if c > 1 else "", speedup >= GOAL * c if c > 1 else None))
    if stop is not None:
        c, rate, cpu, srv = stop
        why = limit_reason(cpu, srv)
        print(f"{path}: stops scaling at c={c} ({rate:.1f} items/s vs ideal {c / DELAY:.0f}); {why}")
        rows.append(Row("batch", f"{path}: stops scaling at c={c}", why))
    else:
        print(f"{path}: scales to c={max(results)}")
    return rows


def limit_reason(cpu: float, srv: float) -> str:
    """What bounds the rate, from the CPU seconds per item of the client and of the server: each
    is one Python process (one GIL), and both share this machine's cores."""
    cores = len(os.sched_getaffinity(0))
    gil = 1 / cpu if cpu else float("inf")
    server = 1 / srv if srv else float("inf")
    shared = cores / (cpu + srv) if cpu + srv else float("inf")
    limits = sorted([(gil, "the client's GIL"), (server, "the 200 ms server's own GIL"),
                     (shared, f"{cores} cores shared by client and server")])
    return (f"client {1000 * cpu:.0f} + server {1000 * srv:.0f} ms CPU/item: at most {limits[0][0]:.0f} "
            f"items/s ({limits[0][1]}; then {limits[1][0]:.0f}, {limits[1][1]})")


def run(quick: bool = False, examples: Path | None = None, only: tuple[str, ...] = PATHS,
        levels: tuple[int, ...] | None = None) -> list[Row]:
    levels = levels or (QUICK_LEVELS if quick else LEVELS)
    examples = Path(examples or ROOT / "data")
    rows: list[Row] = []
    old_env = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "APP_CACHE_DIR")}
    tmp = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    os.environ["OPENAI_API_KEY"] = "x"
    os.environ["APP_CACHE_DIR"] = str(tmp / "cache")
    try:
        with bench_server() as url:
            if "core" in only:
                results = {}
                for c in levels:
                    n = items_for(c, quick)
                    results[c] = (n, *with_server_cpu(core_run, url, n, c, tmp / f"core-{c}.jsonl"))
                rows += _rows("core", results)
            for path in ("grounding", "cloze", "impact"):
                if path not in only:
                    continue
                try:
                    rows += _path_rows(path, url, examples, levels, quick, tmp)
                except Exception as exc:  # keep the other paths' numbers
                    print(f"{path} path failed: {type(exc).__name__}: {exc}")
                    rows.append(Row("batch", f"{path} ERROR", f"{type(exc).__name__}: {exc}"[:160], met=False))
            if "impact433" in only:
                rows += impact_433(url, examples, quick, tmp)
            if "cloze4563" in only:
                rows += cloze_full(url, examples, quick, tmp)
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _path_rows(path: str, url: str, examples: Path, levels, quick: bool, tmp: Path) -> list[Row]:
    most = items_for(max(levels), quick)
    results = {}
    if path == "grounding":
        ann = tmp / "grounding" / "annotations.json"
        grounding_annotations(examples / "grounding" / "annotations.json", most, ann)
        # prepares the movie, and samples every distinct window once (the pairs repeat), so every
        # level reads the same prepared frames, as a real run does after preparation
        grounding_run(url, ann, 14, 4, tmp / "grounding-warm.jsonl")
        for c in levels:
            n = items_for(c, quick)
            results[c] = (n, *with_server_cpu(grounding_run, url, ann, n, c,
                                              tmp / f"grounding-{c}.jsonl"))
    elif path == "cloze":
        data = cloze_data(examples / "cloze", -(-most // 3), tmp / "cloze-data")
        for c in levels:
            n = items_for(c, quick)
            results[c] = (n, *with_server_cpu(cloze_run, url, data, n, c, tmp / f"cloze-{c}.json"))
    else:
        for c in levels:
            ann = tmp / f"impact-{c}" / "annotations.json"
            n = impact_annotations(examples / "impact" / "annotations.json", items_for(c, quick), ann)
            results[c] = (n, *with_server_cpu(impact_run, url, ann, n, c, tmp / f"impact-{c}-out"))
    return _rows(path, results)


def impact_433(url: str, examples: Path, quick: bool, tmp: Path) -> list[Row]:
    """`run impact --tasks spatial` over a 433-clip file at c=16 vs a c=1 run on its first units."""
    from make_realsize import make_impact
    from components.impact.data import load_annotations
    from components.impact.pipeline import annotated_frames

    clips = 64 if quick else 433
    full = tmp / "impact-433"
    made = ROOT / "data" / "realsize" / "impact"  # scripts/make_realsize.py's copy, when present
    made_raw = json.loads((made / "annotations.json").read_text()) if (made / "annotations.json").is_file() \
        else {"items": []}
    if len(made_raw["items"]) >= clips:
        full.mkdir()
        (full / "clips").symlink_to((made / "clips").resolve())
        (full / "annotations.json").write_text(json.dumps(dict(made_raw, items=made_raw["items"][:clips])))
    else:
        make_impact(full, examples / "impact", clips)
    units = sum(len(annotated_frames(it)) for it in load_annotations(full / "annotations.json").items)
    wall16, cpu16, srv16 = with_server_cpu(impact_run, url, full / "annotations.json", units, 16,
                                           tmp / "impact-433-c16")
    raw = json.loads((full / "annotations.json").read_text())
    small = tmp / "impact-433-c1"
    small.mkdir()
    (small / "clips").symlink_to((full / "clips").resolve())
    (small / "annotations.json").write_text(json.dumps(dict(raw, items=raw["items"][:10])))
    units1 = sum(len(annotated_frames(it)) for it in load_annotations(small / "annotations.json").items)
    wall1, _ = impact_run(url, small / "annotations.json", units1, 1, tmp / "impact-433-c1-out")
    rate16, rate1 = units / wall16, units1 / wall1
    speedup = rate16 / rate1
    print(f"impact at {clips} clips: {units} frames at c=16 in {wall16:.1f} s = {rate16:.1f} items/s; "
          f"c=1 {rate1:.2f} items/s; {speedup:.1f}x (goal >= {GOAL * 16:.1f}x); client CPU "
          f"{1000 * cpu16 / units:.0f} ms/item; {limit_reason(cpu16 / units, srv16 / units)}")
    return [Row("batch", f"run impact --tasks spatial, {clips} clips, c=16 / c=1",
                f"{speedup:.1f}x ({rate16:.1f} vs {rate1:.2f} items/s)", f">= {GOAL * 16:.1f}x",
                speedup >= GOAL * 16)]


class AnswerClock:
    """Samples (wall s, process CPU s, answers so far) while a run appends to its sidecar JSONL,
    every `every_s` (a thread reading only the bytes added since its last look)."""

    def __init__(self, sidecar: Path, every_s: float = 0.02):
        import threading

        self.sidecar, self.every_s = sidecar, every_s
        self.samples: list[tuple[float, float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        offset, lines = 0, 0
        while not self._stop.wait(self.every_s):
            try:
                with open(self.sidecar, "rb") as fh:
                    fh.seek(offset)
                    chunk = fh.read()
            except FileNotFoundError:
                continue
            offset += len(chunk)
            lines += chunk.count(b"\n")
            self.samples.append((time.perf_counter(), time.process_time(), lines))

    def __enter__(self) -> AnswerClock:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def at(self, answers: int) -> tuple[float, float]:
        """(wall, CPU) of the first sample that saw at least `answers` answers."""
        for wall, cpu, n in self.samples:
            if n >= answers:
                return wall, cpu
        raise RuntimeError(f"the run never reached {answers} answers")


def cloze_full(url: str, examples: Path, quick: bool, tmp: Path) -> list[Row]:
    """`run cloze` at c=64 over 4,563 questions with warm frames: the flat-cost ratio and the rate."""
    from components.cloze import frames
    from components.cloze.data import load_dataset

    questions = 912 if quick else FULL_CLOZE
    data = cloze_data(examples / "cloze", -(-questions // 3), tmp / "cloze-full", distinct=False)
    os.environ["APP_CACHE_DIR"] = str(tmp / "cache-cloze-full")
    frames.FRAMES.clear()
    ds = load_dataset(examples / "cloze")      # warm: every example clip's JPEGs in the disk cache
    for inst in ds.instances.values():
        for clip in sorted(inst.folder.rglob("*.mp4")):
            frames.clip_jpegs(clip, 16)
    frames.FRAMES.clear()
    out = tmp / "cloze-full.json"
    argv = ["run", "cloze", "--data", str(data), "--backend", "openai:bench", "--base-url", url,
            "--out", str(out), "--limit", str(questions), "--retry-sleep", "0", "--concurrency", "64",
            "--no-progress"]
    srv0 = server_cpu()
    with AnswerClock(tmp / "cloze-full.json.progress.jsonl") as clock:
        rc, wall, cpu = run_app(argv)
    srv = server_cpu() - srv0
    if rc != 0:
        raise RuntimeError(f"run cloze exit {rc}")
    answered = sum(len(d) for d in json.loads(out.read_text()).values())
    if answered != questions:
        raise RuntimeError(f"run cloze: {answered} of {questions} answered")
    tenth = questions // 10
    w0, c0 = clock.at(1)
    w1, c1 = clock.at(tenth + 1)
    w9, c9 = clock.at(questions - tenth)
    w10, c10 = clock.at(questions)
    first_ms, last_ms = 1000 * (c1 - c0) / tenth, 1000 * (c10 - c9) / tenth
    ratio = last_ms / first_ms
    rate = (questions - 1) / (w10 - w0)
    ideal = 64 / DELAY
    load = loadavg()
    ref_n = min(questions, REFERENCE_QUESTIONS)
    ref_rate, ref_cpu = released_style_rate(url, examples, ref_n, 64)
    print(f"cloze at {questions} questions, c=64, warm frames: client CPU per question first 10 % "
          f"{first_ms:.1f} ms, last 10 % {last_ms:.1f} ms: {ratio:.2f}x (goal <= {FLAT_GOAL}x); "
          f"{rate:.1f} questions/s from the first answer to the last ({rate / ideal:.2f} of the ideal "
          f"{ideal:.0f}; goal >= 0.5); whole command {wall:.1f} s, {1000 * cpu / questions:.1f} ms "
          f"CPU per question; {limit_reason(cpu / questions, srv / questions)}; load average {load}")
    print(f"reference (the released eval.py's request path: the SDK's chat.completions.create, 96 data "
          f"URLs a question, c=64; {ref_n} questions, right after): {ref_rate:.1f} questions/s, "
          f"{1000 * ref_cpu:.1f} ms CPU per question; run cloze / reference: rate {rate / ref_rate:.2f}x, "
          f"CPU {1000 * cpu / questions / (1000 * ref_cpu):.2f}x; load average {loadavg()}")
    return [Row("batch", f"run cloze, {questions} questions, c=64, warm: CPU last 10 % / first 10 %",
                f"{ratio:.2f}x ({last_ms:.1f} vs {first_ms:.1f} ms)", f"<= {FLAT_GOAL}x", ratio <= FLAT_GOAL),
            Row("batch", f"run cloze, {questions} questions, c=64, warm: rate",
                f"{rate:.1f} q/s ({rate / ideal:.2f} of ideal {ideal:.0f})", ">= 0.5 of ideal",
                rate >= 0.5 * ideal),
            Row("batch", f"run cloze, {questions} questions, c=64, warm: rate / the released request path",
                f"{rate / ref_rate:.2f}x ({rate:.1f} vs {ref_rate:.1f} q/s)", "reported")]


#: questions the same-run reference asks (its rate is steady well before)
REFERENCE_QUESTIONS = 640


def released_style_rate(url: str, examples: Path, questions: int, concurrency: int) -> tuple[float, float]:
    """(questions/s, client CPU s a question) of the released eval.py's way of asking, on the same
    server: each question's 6 clips x 16 JPEGs (the example clips' model frames, in memory)
    base64-encoded into data URLs and posted with the openai SDK's `chat.completions.create`,
    `concurrency` questions at once from a thread pool, the answer's text read. What it leaves
    out (decoding, the frames cache, the result files) is what the app adds; its rate is what
    this machine's load allows the SDK's request path at that moment."""
    import base64
    from concurrent.futures import ThreadPoolExecutor

    import openai

    from components.cloze import frames
    from components.cloze.data import load_dataset

    ds = load_dataset(examples / "cloze")
    clips = [[image.data for image in frames.clip_jpegs(clip, 16)]
             for inst in ds.instances.values() for clip in sorted(inst.folder.rglob("*.mp4"))]
    client = openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=60)

    def ask(i: int) -> str:
        content = [{"type": "text", "text": "[Before]"}]
        for c in range(6):
            content.append({"type": "text", "text": f"[Candidate {'ABCDEF'[c]}]"})
            for jpeg in clips[(6 * i + c) % len(clips)]:
                url = f"data:image/jpeg;base64,{base64.b64encode(jpeg).decode('utf-8')}"
                content.append({"type": "image_url", "image_url": {"url": url}})
        reply = client.chat.completions.create(model="bench", messages=[{"role": "user", "content": content}],
                                               temperature=0, max_tokens=512)
        return reply.choices[0].message.content or ""

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(ask, range(concurrency)))        # connections opened, imports made
        t0, c0 = time.perf_counter(), time.process_time()
        answers = list(pool.map(ask, range(questions)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    client.close()
    if not all('"answer": "B"' in a for a in answers):
        raise RuntimeError("the reference's questions were not answered")
    return questions / wall, cpu / questions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="concurrency 1/4/16 and fewer items")
    ap.add_argument("--examples", type=Path, default=ROOT / "data", help="example data directory")
    ap.add_argument("--only", default=",".join(PATHS), help=f"comma list of {', '.join(PATHS)}")
    ap.add_argument("--levels", default=None, help="comma list of concurrency levels (default 1,4,16,64)")
    ap.add_argument("--profile-core", type=int, metavar="C", default=None,
                    help="only profile the batch core at concurrency C (cProfile, every thread)")
    ap.add_argument("--profile-out", type=Path, default=None, help="with --profile-core: write the stats here")
    args = ap.parse_args(argv)
    if args.profile_core:
        os.environ.setdefault("OPENAI_API_KEY", "x")
        with tempfile.TemporaryDirectory() as tmp, bench_server() as url:
            n = items_for(args.profile_core, args.quick)
            core_run(url, 8, 4, Path(tmp) / "warm.jsonl")  # imports and the first connection
            profile_core(url, n, args.profile_core, Path(tmp) / "core.jsonl", dump=args.profile_out)
        return 0
    only = tuple(p.strip() for p in args.only.split(",") if p.strip())
    levels = tuple(int(x) for x in args.levels.split(",")) if args.levels else None
    if levels and 1 not in levels:
        ap.error("--levels must include 1 (the reference)")
    print_rows(run(quick=args.quick, examples=args.examples, only=only, levels=levels))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
