"""Benchmark: batch throughput against a local OpenAI-compatible server answering in 200 ms.

Two paths, each at concurrency 1, 4 and 16 (goal: throughput >= 0.8 x concurrency x the
concurrency-1 throughput):
  - core: components.common.batch.run_resumable, work = one real backend call
    (backends.registry.resolve("openai:bench")) with a text prompt;
  - impact: the real `python app.py run impact --tasks spatial --backend openai:bench` code
    (app.main in this process), on a copy of the example impact annotations whose items are
    repeated until there are enough (item, frame) units: each unit decodes one frame, sends it
    with the paper's region prompt, parses the answer and appends a JSONL line.
The server is tests/helpers/openai_server.py (a ThreadingHTTPServer: one thread per request).

    python scripts/bench_batch.py [--items 48] [--annotations data/impact/annotations.json]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, print_rows  # noqa: E402

DELAY = 0.2
LEVELS = (1, 4, 16)
GOAL = 0.8
ANSWER = "The affected body regions are head."


SERVER = """
import http.server, sys, time
sys.path.insert(0, {root!r})
# 16 clients connect at once: the default listen backlog of 5 could drop connections
http.server.ThreadingHTTPServer.request_queue_size = 128
from tests.helpers.openai_server import ScriptedOpenAIServer
with ScriptedOpenAIServer([{{"content": {answer!r}, "delay": {delay!r}}}]) as server:
    print(server.url, flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
"""


@contextlib.contextmanager
def scripted_server(delay: float = DELAY):
    """ScriptedOpenAIServer in its own process, so its threads do not compete with the client
    for this process's GIL; yields its base URL."""
    import subprocess

    code = SERVER.format(root=str(ROOT), answer=ANSWER, delay=delay)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError("the scripted OpenAI server did not start")
        yield url
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def core_run(url: str, items: int, concurrency: int, out: Path) -> float:
    from backends.base import GenerationParams, GenerationRequest, Message
    from backends.config import ApiSettings
    from backends.registry import resolve
    from components.common.io import read_jsonl
    from components.common.batch import run_resumable

    backend = resolve("openai:bench", api=ApiSettings(base_url=url, api_key="x"))

    def work(i: int) -> dict:
        result = backend.generate(GenerationRequest(
            messages=[Message(role="user", content=[f"Question {i}: which body region is hit?"])],
            params=GenerationParams(temperature=0.0, max_tokens=64), task="bench", ref=str(i)))
        if not result.ok:
            raise RuntimeError(result.error)
        return {"qid": str(i), "text": result.text, "latency_s": result.latency_s}

    t0, c0 = time.perf_counter(), time.process_time()
    counts = run_resumable(range(items), key=str, work=work, out_path=out, concurrency=concurrency,
                           progress=False)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if counts["done"] != items or len(read_jsonl(out)) != items:
        raise RuntimeError(f"core batch: {counts} for {items} items")
    return elapsed, cpu


def bench_annotations(source: Path, units: int, out: Path) -> int:
    """Repeat the example items (new qids, same clips) until they hold >= `units` spatial units."""
    from components.impact.cli import annotated_frames
    from components.impact.annotations import load_annotations

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
    out.write_text(json.dumps(dict(raw, items=items)))
    for item in raw["items"]:  # the clips are reached through symlinks next to the copy
        link = out.parent / item["video"]
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to((source.parent / item["video"]).resolve())
    return total


def impact_run(url: str, annotations: Path, concurrency: int, out: Path, units: int) -> float:
    import app
    from components.common.io import read_jsonl

    argv = ["run", "impact", "--annotations", str(annotations), "--backend", "openai:bench",
            "--tasks", "spatial", "--out", str(out), "--concurrency", str(concurrency),
            "--base-url", url, "--no-progress"]
    old_key = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "x"
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            rc = app.main(argv)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        if old_key is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = old_key
    records = read_jsonl(out / "spatial_pred.jsonl")
    if rc != 0 or len(records) != units or any(r.get("regions") != ["head"] for r in records):
        raise RuntimeError(f"run impact: exit {rc}, {len(records)} of {units} records")
    return elapsed, cpu


def _rows(path: str, items: int, times: dict[int, tuple[float, float]]) -> list[Row]:
    """`times`: concurrency -> (wall s, client-process CPU s)."""
    rows = []
    base = items / times[1][0]
    for c in LEVELS:
        wall, cpu = times[c]
        rate = items / wall
        speedup = rate / base
        print(f"{path:6s} concurrency {c:2d}: {items} items in {wall:.2f} s = {rate:.2f} items/s, "
              f"{speedup:.2f}x concurrency-1 (ideal {c}x = {c / DELAY:.0f} items/s); client CPU "
              f"{1000 * cpu / items:.0f} ms/item")
        rows.append(Row("batch", f"{path} c={c}: {rate:.2f} items/s",
                        f"{speedup:.2f}x c=1 ({speedup / c:.2f} of ideal)",
                        f">= {GOAL * c:.1f}x", speedup >= GOAL * c if c > 1 else None))
    return rows


def run(quick: bool = False, items: int | None = None, annotations: Path | None = None) -> list[Row]:
    items = items or (32 if quick else 48)  # c=16 needs > 16 items to show
    rows: list[Row] = []
    with scripted_server() as url, tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        tmp = Path(tmp)
        times = {c: core_run(url, items, c, tmp / f"core-{c}.jsonl") for c in LEVELS}
        rows += _rows("core", items, times)
        if annotations is None or not Path(annotations).is_file():
            print(f"impact path skipped: no annotations file at {annotations} (run `make data`)")
            return rows
        ann = tmp / "impact" / "annotations.json"
        ann.parent.mkdir()
        try:
            units = bench_annotations(Path(annotations), items, ann)
            times = {c: impact_run(url, ann, c, tmp / f"impact-{c}", units) for c in LEVELS}
        except Exception as exc:  # keep the core numbers
            print(f"impact path failed: {type(exc).__name__}: {exc}")
            return rows + [Row("batch", "impact ERROR", f"{type(exc).__name__}: {exc}"[:160], met=False)]
        rows += _rows("impact", units, times)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=48)
    ap.add_argument("--annotations", type=Path, default=ROOT / "data" / "impact" / "annotations.json")
    args = ap.parse_args(argv)
    print_rows(run(items=args.items, annotations=args.annotations))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
