"""Benchmark: the Cloze tab's runs-by-questions overview at TempCloze's released size, in headless
Chromium (issue 29: "The overview of 4,563 questions x 30 runs draws in under 1 s in the browser").

Data: the real-size cloze data (scripts/make_realsize.py: 1,521 stems = 4,563 questions; made in
`--data-dir` when missing, with the other parts small) and 30 run files in the released result
format (examples/released_runs.py, its quirks included) in a folder of their own
(APP_CLOZE_RUNS_DIR). The app runs in this process with the baseline backend.

Timed, each --repeats times (median and spread printed):
  - click: the "Runs-by-questions overview" box ticked (the runs already loaded) until the grid
    is on screen: every run's row laid out in the page (visible, non-zero size);
  - link: the page opened at `?tab=cloze&overview=1` until the same grid is on screen (the page
    load, the runs' load from their disk cache and the grid together).
Prints; asserts nothing.

    python scripts/bench_overview.py [--data-dir /tmp/realsize] [--runs 30] [--repeats 5]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, loadavg  # noqa: E402
from bench_browser import CHROMIUM_ARGS, WAIT_MS, goto, start_app, wait_js  # noqa: E402

GOAL_S = 1.0
REALSIZE_STEMS = 1521

GRID_SHOWN = ("(n) => { const rows = document.querySelectorAll('#cloze-runs-grid .runs-grid-row'); "
              "if (rows.length !== n) return false; const r = rows[rows.length - 1].getBoundingClientRect(); "
              "return r.width > 0 && r.height > 0 && "
              "!document.querySelector('#cloze-runs-grid [data-testid=\"status-tracker\"]:not(.hide)'); }")
GRID_GONE = "() => document.querySelectorAll('#cloze-runs-grid .runs-grid-row').length === 0"
LIST_SHOWN = "() => (document.querySelector('#cloze-runs-list')?.innerText || '').length > 200"


def ensure_data(data_dir: Path) -> list[str]:
    """The real-size cloze stems in `data_dir` (made by make_realsize when missing)."""
    choices = data_dir / "cloze" / "choices"
    if not choices.is_dir() or sum(1 for p in choices.iterdir() if p.is_dir()) < REALSIZE_STEMS:
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_realsize.py"), "--small",
                        "--stems", str(REALSIZE_STEMS), "--out", str(data_dir)], check=True, cwd=ROOT)
    return sorted(p.name for p in choices.iterdir() if p.is_dir())


def write_runs(stems: list[str], runs: int, folder: Path) -> int:
    """`runs` released-format run files; returns the records written."""
    from examples.released_runs import released_results

    folder.mkdir(parents=True, exist_ok=True)
    records = 0
    for run in range(runs):
        results = released_results(stems, run)
        records += sum(len(d) for d in results.values())
        (folder / f"model-{run:02d}.json").write_text(json.dumps(results))
    return records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-overview-realsize",
                    help="real-size data (made there by scripts/make_realsize.py when missing)")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = ap.parse_args(argv)
    stems = ensure_data(args.data_dir)
    runs_dir = Path(tempfile.mkdtemp(prefix="bench-overview-runs-"))
    records = write_runs(stems, args.runs, runs_dir)
    os.environ["APP_CLOZE_RUNS_DIR"] = str(runs_dir)
    os.environ.setdefault("APP_CACHE_DIR", str(runs_dir / "cache"))
    from playwright.sync_api import sync_playwright

    demo = start_app(args.data_dir)
    url = demo.local_url.rstrip("/") + "/"
    clicks, links = [], []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.set_default_timeout(WAIT_MS)
            page = context.new_page()
            goto(page, url + "?tab=cloze&sort=hardest")  # opens the across-questions panel
            wait_js(page, LIST_SHOWN)                        # the runs are loaded: the list is drawn
            box = page.locator("#cloze-runs-overview input[type=checkbox]")
            for _ in range(args.repeats):
                start = time.perf_counter()
                box.check()
                wait_js(page, GRID_SHOWN, args.runs)
                clicks.append(time.perf_counter() - start)
                box.uncheck()
                wait_js(page, GRID_GONE)
                page.wait_for_timeout(300)
            for _ in range(args.repeats):
                fresh = context.new_page()
                start = time.perf_counter()
                goto(fresh, url + "?tab=cloze&overview=1")
                wait_js(fresh, GRID_SHOWN, args.runs)
                links.append(time.perf_counter() - start)
                shown = fresh.locator("#cloze-runs-grid .runs-note").first.inner_text()
                fresh.close()
            browser.close()
    finally:
        demo.close()
        shutil.rmtree(runs_dir, ignore_errors=True)
    print(f"Cloze runs overview, {len(stems)} stems ({3 * len(stems)} questions) x {args.runs} runs "
          f"({records} records); headless Chromium 1440x900; load average {loadavg()}")
    print(f"the grid says: {shown}")
    for name, seconds in (("tick the overview box -> grid on screen", clicks),
                          ("open ?tab=cloze&overview=1 -> grid on screen", links)):
        med = statistics.median(seconds)
        print(f"{name:48s} median {med:.3f} s (min {min(seconds):.3f}, max {max(seconds):.3f}, "
              f"n {len(seconds)})" + (f"; goal < {GOAL_S:.1f} s: {'met' if med < GOAL_S else 'NOT met'}"
                                      if name.startswith("tick") else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
