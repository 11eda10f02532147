#!/usr/bin/env python
"""Benchmark: the Cloze tab's run collection at TempCloze's released size (components/common/runs.py,
components/cloze/runs.py). 30 run files shaped like the released ones
(examples/released_runs.py `write_real_format_runs`: the released quirks, each run its own option
order per question, error records with the released error texts, `raw` / `raw_original` replies in
8 of the 30 files, two runs with nothing valid) for the stems of the real-size data
(`scripts/make_realsize.py`: 1,521 stems; read from `--data` when it holds them, else the same
names made without any media), about 137k records.

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
- page work while the background load runs: a page-sized task's time during the load vs idle;
- the leaderboard's rows of every run (each scored as `eval cloze`, with its bootstrap interval)
  and the table with every test against the next row, as the Compare panel makes them.
With `--served` (needs the real-size data with its clips, made in `--data` by make_realsize when
missing, and Chromium), the app served in this process on those runs, in headless Chromium at
1440x900, each time from the page's open to:
- the runs panel ready on a linked question (`?tab=cloze&mode=model&stem=...&q=S`): right after a
  start with an empty runs cache (cold), on a second page of the same server, and right after a
  start with the disk cache filled (warm);
- the overview grid on screen from `?tab=cloze&overview=1`;
- the leaderboard holding every run (Compare clicked until its caption counts them all).
Prints; asserts nothing.

    python scripts/bench_runs.py [--data data/realsize] [--runs 30] [--questions 300] [--served]
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
    from examples.released_runs import write_real_format_runs

    rows = []
    stems = realsize_stems(data)
    with tempfile.TemporaryDirectory(prefix="bench-runs-") as tmp:
        folder = Path(tmp) / "eval_results_all"
        paths = write_real_format_runs(stems, folder, runs)
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
        rows += leaderboard_rows(warm_loaded, ref_cpu)
    for row in rows:
        row.load = loadavg()
    return rows


def leaderboard_rows(loaded, ref_cpu: float) -> list[Row]:
    """The Compare panel's work for a collection: every run's row (eval's scores and bootstrap
    intervals), then the table with each row's test against the next (handlers/compare_panel.py)."""
    from components.cloze.leaderboard import reference_rows, run_rows, significance, table
    from components.cloze.runs import ClozeRuns

    loaded.table = ClozeRuns(loaded.runs).prepare()
    t, c = time.perf_counter(), time.process_time()
    made = run_rows(loaded)
    first, first_cpu = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    rows = made + reference_rows()
    table(rows, tests=significance(rows))
    drawn, drawn_cpu = time.perf_counter() - t, time.process_time() - c
    t = time.perf_counter()
    table(rows, tests=significance(rows))
    again = time.perf_counter() - t
    empty = sum(1 for r in made if "acc" in r["nothing_valid"])
    return [Row("runs", f"leaderboard: {len(made)} runs' rows ({empty} with nothing valid), once per collection",
                f"{first:.2f} s wall, {first_cpu:.2f} s CPU ({first_cpu / ref_cpu:.1f}x ref)"),
            Row("runs", "leaderboard: the table with every test against the next row (first / again)",
                f"{drawn:.2f} s wall, {drawn_cpu:.2f} s CPU / {again:.3f} s")]


PANEL_READY = "() => document.querySelector('#cloze-runs-panel .runs-panel')?.dataset.state === 'ready'"
GRID_SHOWN = ("(n) => { const rows = document.querySelectorAll('#cloze-runs-grid .runs-grid-row'); "
              "if (rows.length !== n) return false; const r = rows[rows.length - 1].getBoundingClientRect(); "
              "return r.width > 0 && r.height > 0; }")
BOARD_FULL = ("(n) => { const el = document.querySelector('#cloze-leaderboard'); if (!el || "
              "el.querySelector('[data-testid=\"status-tracker\"]:not(.hide)')) return false; "
              "return (el.innerText || '').includes(`Leaderboard: ${n} run(s) found`) && "
              "el.querySelectorAll('.virtual-row').length > 5; }")


def served(data: Path, runs: int) -> list[Row]:
    """The app served on real-size data and `runs` real-format run files, timed in Chromium."""
    import os
    import shutil

    from bench_browser import CHROMIUM_ARGS, goto, start_app
    from bench_overview import ensure_data
    from components.common.runs import forget_runs_loaders
    from examples.released_runs import write_real_format_runs
    from playwright.sync_api import sync_playwright

    stems = ensure_data(data)
    tmp = Path(tempfile.mkdtemp(prefix="bench-runs-served-"))
    write_real_format_runs(stems, tmp / "runs", runs)
    os.environ["APP_CLOZE_RUNS_DIR"] = str(tmp / "runs")
    os.environ["APP_CACHE_DIR"] = str(tmp / "cache")      # an empty runs cache: the first start is cold
    question = f"?tab=cloze&mode=model&stem={stems[len(stems) // 2]}&q=S"
    times: dict[str, float] = {}

    def timed(page, name: str, url: str, predicate: str, arg=None) -> None:
        start = time.perf_counter()
        goto(page, url)
        page.wait_for_function(predicate, arg=arg, timeout=300_000)
        times[name] = time.perf_counter() - start
        print(f"{name}: {times[name]:.2f} s", flush=True)
        page.close()

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                         headless=True, args=CHROMIUM_ARGS)
            for start_kind in ("cold", "warm"):
                forget_runs_loaders()
                demo = start_app(data)
                url = demo.local_url.rstrip("/") + "/"
                try:
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    context.set_default_timeout(300_000)
                    timed(context.new_page(), f"page open -> runs panel ready, first page after a {start_kind} start",
                          url + question, PANEL_READY)
                    if start_kind == "cold":
                        timed(context.new_page(), "reference: page open -> the page's tabs drawn (same server)",
                              url + question, "() => !!document.querySelector('#app-tabs')")
                        timed(context.new_page(), "page open -> runs panel ready, a second page (same server)",
                              url + question, PANEL_READY)
                        timed(context.new_page(), "page open ?tab=cloze&overview=1 -> grid on screen",
                              url + "?tab=cloze&overview=1", GRID_SHOWN, runs)
                        board = context.new_page()
                        goto(board, url + "?tab=cloze")
                        board.wait_for_function("() => !!document.querySelector('#cloze-mode')", timeout=300_000)
                        start = time.perf_counter()
                        board.locator("#cloze-mode").get_by_text("Compare", exact=True).click()
                        board.wait_for_function(BOARD_FULL, arg=runs, timeout=300_000)
                        times["Compare clicked -> leaderboard with every run"] = time.perf_counter() - start
                    context.close()
                finally:
                    demo.close()
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ref = next(v for k, v in times.items() if k.startswith("reference"))
    return [Row("served", f"{name} ({len(stems)} stems x {runs} runs, 1440x900)",
                f"{seconds:.2f} s" + ("" if name.startswith("reference") else f" ({seconds / ref:.1f}x ref)"))
            for name, seconds in times.items()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "realsize",
                    help="real-size data (its cloze/choices stems); absent: make_realsize's stem names")
    ap.add_argument("--runs", type=int, default=30, help="run files (TempCloze released 30)")
    ap.add_argument("--questions", type=int, default=300, help="questions timed")
    ap.add_argument("--served", action="store_true",
                    help="also time the served app in headless Chromium (makes the real-size data in --data)")
    args = ap.parse_args(argv)
    rows = run(args.data, args.runs, args.questions)
    if args.served:
        rows += served(args.data, args.runs)
        for row in rows:
            row.load = row.load or loadavg()
    print_rows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
