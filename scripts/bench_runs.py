#!/usr/bin/env python
"""Benchmark: the Cloze tab's run collection at TempCloze's released size (components/common/runs.py,
components/cloze/runs.py). 30 run files in the released result format (quirks included) for the
stems of the real-size data (`scripts/make_realsize.py`: 1,521 stems; read from `--data` when it
holds them, else the same names made without any media), about 137k records.

Measured, each also as a ratio to `json.load` of the same 30 files in the same run (a slower or
busier machine shows the same ratios), as wall time and as CPU time (the CPU time of this process
or thread: on a shared machine the wall time also holds the time other processes had the cores;
the goals are judged on the CPU time):
- cold load: find, read, validate and compact every file, write the disk cache (goal: < 3 s, in
  the background);
- warm load: the same from the disk cache;
- one question's panel: every run's answer on the shown option map, the letter counts, the
  summary (goal: < 50 ms of server time), median and worst over random questions;
- the question list: every question's figures, then a sort;
- page work while the background load runs: a page-sized task's time during the load vs idle.
Prints; asserts nothing.

    python scripts/bench_runs.py [--data data/realsize] [--runs 30] [--questions 300]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, loadavg, print_rows  # noqa: E402

LOAD_GOAL_S = 3.0
PANEL_GOAL_MS = 50.0
REALSIZE_STEMS = 1521
EXAMPLE_KINDS = ("ball_roll", "bar_fill", "block_stack", "clock_hand", "colour_path", "growing_disc")


def realsize_stems(data: Path | None) -> list[str]:
    """The real-size data's stems: from its choices/ when there, else make_realsize's names."""
    choices = data / "cloze" / "choices" if data else None
    if choices and choices.is_dir():
        return sorted(p.name for p in choices.iterdir() if p.is_dir())
    return [f"{EXAMPLE_KINDS[n % len(EXAMPLE_KINDS)]}_{n:04d}" for n in range(REALSIZE_STEMS)]


def _page_task() -> float:
    """A page-sized piece of server work (~ a few ms): JSON of a small table, many times."""
    t = time.perf_counter()
    table = [{"run": f"model{i:02d}", "letter": "ABCD"[i % 4], "reason": "x" * 80} for i in range(30)]
    for _ in range(60):
        json.dumps(table)
    return time.perf_counter() - t


def _page_times(seconds: float, stop=None) -> list[float]:
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end and not (stop and stop()):
        times.append(_page_task())
        time.sleep(0.005)
    return times


def run(data: Path | None, runs: int, questions: int) -> list[Row]:
    from components.cloze.runs import CLOZE_READER, ClozeRuns
    from components.common.runs import BackgroundRuns, ContentCache, collect
    from examples.released_runs import write_released_runs

    rows = []
    stems = realsize_stems(data)
    with tempfile.TemporaryDirectory(prefix="bench-runs-") as tmp:
        folder = Path(tmp) / "eval_results_all"
        paths = write_released_runs(stems, folder, runs)
        records = sum(len(d) for p in paths for d in json.loads(p.read_text()).values())
        size_mb = sum(p.stat().st_size for p in paths) / 1e6

        t, c = time.perf_counter(), time.process_time()
        for p in paths:
            with open(p, encoding="utf-8") as fh:
                json.load(fh)
        ref, ref_cpu = time.perf_counter() - t, time.process_time() - c
        rows.append(Row("runs", f"reference: json.load of {runs} files ({size_mb:.0f} MB, {len(stems)} stems, "
                                f"{records} records)", f"{ref:.3f} s wall, {ref_cpu:.3f} s CPU"))

        cache = ContentCache(Path(tmp) / "cache")
        t, c = time.perf_counter(), time.process_time()
        loaded = collect(CLOZE_READER, [folder], (), cache)
        cold, cold_cpu = time.perf_counter() - t, time.process_time() - c
        assert len(loaded.runs) == runs and not loaded.refusals, loaded.status_line()
        rows.append(Row("runs", "cold load (read, validate, compact, write the cache)",
                        f"{cold:.3f} s wall ({cold / ref:.1f}x ref), {cold_cpu:.3f} s CPU "
                        f"({cold_cpu / ref_cpu:.1f}x ref)", f"< {LOAD_GOAL_S:g} s", cold_cpu < LOAD_GOAL_S))
        t, c = time.perf_counter(), time.process_time()
        warm_loaded = collect(CLOZE_READER, [folder], (), cache)
        warm, warm_cpu = time.perf_counter() - t, time.process_time() - c
        assert warm_loaded.from_cache == runs
        rows.append(Row("runs", "warm load (from the disk cache)",
                        f"{warm:.3f} s wall ({warm / ref:.2f}x ref), {warm_cpu:.3f} s CPU "
                        f"({warm_cpu / ref_cpu:.2f}x ref)", f"< {LOAD_GOAL_S:g} s", warm_cpu < LOAD_GOAL_S))

        t = time.perf_counter()
        table = ClozeRuns(loaded.runs)
        build = time.perf_counter() - t
        keys = table.question_keys()
        rng = random.Random(0)
        shown = {"A": "GT", "B": "Wide", "C": "Early", "D": "Late"}
        panel, panel_cpu = [], []
        for stem, dim in rng.sample(keys, min(questions, len(keys))):
            t, c = time.perf_counter(), time.thread_time()
            q = table.question(stem, dim, option_map=shown)
            q.letter_counts()
            q.summary()
            [a.distractor for a in q.answers]
            panel.append(time.perf_counter() - t)
            panel_cpu.append(time.thread_time() - c)
        worst = max(panel_cpu) * 1000
        rows.append(Row("runs", f"table built from the loaded runs ({len(keys)} questions)",
                        f"{build * 1000:.1f} ms ({build / ref:.2f}x ref)"))
        rows.append(Row("runs", f"one question's panel, median / worst of {len(panel)}",
                        f"wall {statistics.median(panel) * 1000:.3f} / {max(panel) * 1000:.3f} ms, CPU "
                        f"{statistics.median(panel_cpu) * 1000:.3f} / {worst:.3f} ms", f"< {PANEL_GOAL_MS:g} ms",
                        worst < PANEL_GOAL_MS))
        t, c = time.perf_counter(), time.process_time()
        table.stats()
        first, first_cpu = time.perf_counter() - t, time.process_time() - c
        t, c = time.perf_counter(), time.process_time()
        table.questions("disagreement", descending=True)
        table.questions("share_right", dim="A")
        sort, sort_cpu = (time.perf_counter() - t) / 2, (time.process_time() - c) / 2
        rows.append(Row("runs", "question list: every question's figures (once; in the background), then a sort",
                        f"{first * 1000:.0f} ms wall, {first_cpu * 1000:.0f} ms CPU ({first_cpu / ref_cpu:.2f}x "
                        f"ref); sort {sort * 1000:.1f} ms wall, {sort_cpu * 1000:.1f} ms CPU"))
        t, c = time.perf_counter(), time.process_time()
        table.matrix()
        rows.append(Row("runs", "runs-by-questions matrix (30 x 4,563)",
                        f"{(time.perf_counter() - t) * 1000:.0f} ms wall, {(time.process_time() - c) * 1000:.0f} ms CPU"))

        idle = _page_times(1.0)
        loader_cpu = []

        def load():
            c = time.thread_time()
            out = collect(CLOZE_READER, [folder], (), ContentCache(Path(tmp) / "cache2"))
            loader_cpu.append(time.thread_time() - c)
            return out

        bg = BackgroundRuns(load)
        t = time.perf_counter()
        bg.start()
        busy = _page_times(30.0, stop=bg.ready)
        bg.wait()
        background = time.perf_counter() - t
        rows.append(Row("runs", "cold load on the background thread, beside page work",
                        f"{background:.3f} s wall ({background / ref:.1f}x ref), loader thread "
                        f"{loader_cpu[0]:.3f} s CPU ({loader_cpu[0] / ref_cpu:.1f}x ref)", f"< {LOAD_GOAL_S:g} s",
                        loader_cpu[0] < LOAD_GOAL_S))
        rows.append(Row("runs", "page task during the load vs idle, median (worst)",
                        f"{statistics.median(busy) * 1000:.2f} ({max(busy) * 1000:.1f}) vs "
                        f"{statistics.median(idle) * 1000:.2f} ({max(idle) * 1000:.1f}) ms; "
                        f"{statistics.median(busy) / statistics.median(idle):.2f}x"))
    for row in rows:
        row.load = loadavg()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "realsize",
                    help="real-size data (its cloze/choices stems); absent: make_realsize's stem names")
    ap.add_argument("--runs", type=int, default=30, help="run files (TempCloze released 30)")
    ap.add_argument("--questions", type=int, default=300, help="questions timed")
    args = ap.parse_args(argv)
    print_rows(run(args.data, args.runs, args.questions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
