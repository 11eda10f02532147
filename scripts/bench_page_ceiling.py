"""Benchmark: the best page load a tab could reach as a gradio page of its own (not a test).

    python scripts/bench_page_ceiling.py --data-dir DIR [--repeats 5] [--rounds 3]
                                         [--only window-search,cloze,impact]

Issue 37 asks for the page load to the tab shown within 2.5x the bare gradio page. Its two
suggested designs, a route per tab or the inactive tabs drawn after the first paint, can at best
make the explorer's page load like the tab on a page of its own, and then only if the tab's first
view came inside the page rather than one round trip later. This script times that best case, in
the same headless Chromium and the same run as the bare page (the reference of
scripts/bench_browser.py), for each tab:

- "alone": the tab as `python -m components.<tab>.ui` serves it (its page, under the Model panel);
- "first view in the page": the same page, its first view drawn into the configuration the page
  is sent with. The outputs of the events a first visit's page load runs are recorded once and
  merged into the page's configuration, so that the content is on screen as gradio mounts the
  page. No per-request cost of drawing the view is counted: this is a ceiling, not a design.

The pages are loaded in rounds (bare, then each page --repeats times), so that a change in the
machine's speed falls on all of them. Each load is timed from the navigation to the tab's content
shown: bench_browser.py's predicates, but Impact's is its timeline (its ready mark waits for the
view's answer, which the second page no longer needs).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, loadavg  # noqa: E402  (bench_common puts the repository on sys.path)
from bench_browser import (CHROMIUM_ARGS, CLOZE_ALONE_READY, TABS, WAIT_MS, WS_READY,  # noqa: E402
                           start_alone, start_bare)

BARE_READY = "() => !!document.querySelector('#bare-go')"
IMPACT_SHOWN = ("() => { const t = document.querySelector('#impact-timeline'); "
                "return !!t && t.offsetParent !== null && t.innerText.includes('truth'); }")
SHOWN = {"window-search": WS_READY, "cloze": CLOZE_ALONE_READY, "impact": IMPACT_SHOWN}
SETTLE_S = 2.0   # after the content shows, the page's later load events (a frame, a body) have run
GOAL = 2.5


class FirstViewRecorder:
    """Records what the events of one page load send to the page, to draw it into the page's
    configuration (`demo.config`, which gradio copies into every page it serves)."""

    def __init__(self, demo) -> None:
        self.demo, self.sent = demo, []
        self._process_api = demo.process_api

        async def recording(block_fn, inputs, state, *args, **kwargs):
            out = await self._process_api(block_fn, inputs, state, *args, **kwargs)
            self.sent.append((block_fn, out["data"]))
            return out

        demo.process_api = recording

    def draw_into_page(self) -> int:
        """Stop recording; merge every output sent, in the order sent, into the components'
        properties (a value, or an update's properties). Returns how many were merged."""
        self.demo.process_api = self._process_api
        components = {c["id"]: c for c in self.demo.config["components"]}
        merged = 0
        for block_fn, data in self.sent:
            for block, sent in zip(block_fn.outputs, data):
                config = components.get(block._id)
                if config is None or getattr(block, "stateful", False):
                    continue
                if isinstance(sent, dict) and sent.get("__type__") == "update":
                    config["props"].update({k: v for k, v in sent.items() if k != "__type__"})
                else:
                    config["props"]["value"] = sent
                merged += 1
        return merged


def time_loads(context, url: str, shown: str, n: int) -> list[float]:
    """n page loads of url to `shown` on one page, after one untimed load (the browser's cache)."""
    page = context.new_page()
    seconds = []
    try:
        for k in range(n + 1):
            start = time.perf_counter()
            page.goto(url, wait_until="commit", timeout=WAIT_MS)
            page.wait_for_function(shown, polling="raf", timeout=WAIT_MS)
            if k:
                seconds.append(time.perf_counter() - start)
    finally:
        page.close()
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data", help="the data folder served")
    parser.add_argument("--repeats", type=int, default=5, help="page loads of each page in a round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all the pages")
    parser.add_argument("--only", default=",".join(TABS), help=f"comma list of {', '.join(TABS)}")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    tabs = [t.strip() for t in args.only.split(",") if t.strip()]
    if [t for t in tabs if t not in TABS] or args.repeats < 1 or args.rounds < 1:
        parser.error(f"--only takes {', '.join(TABS)}; --repeats and --rounds at least 1")
    if not args.data_dir.is_dir():
        parser.error(f"no data folder at {args.data_dir}; make the example data with "
                     f"python -m examples.generate --out {args.data_dir}, or pass --data-dir")
    if not Path(args.chromium).exists():
        parser.error(f"no Chromium at {args.chromium}; install it (scripts/install_system_deps.sh) or pass --chromium")
    from playwright.sync_api import sync_playwright

    demos = [start_bare()]
    pages = [("reference", "bare Blocks", demos[0].local_url, BARE_READY)]
    notes = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            for tab in tabs:
                plain, drawn = start_alone(tab, args.data_dir), start_alone(tab, args.data_dir)
                demos += [plain, drawn]
                link = f"?tab={tab}"   # the explorer's link to the tab
                recorder = FirstViewRecorder(drawn)
                time_loads(context, drawn.local_url + link, SHOWN[tab], 0)   # a first visit, recorded
                time.sleep(SETTLE_S)
                notes.append(f"{tab}: {recorder.draw_into_page()} outputs of {len(recorder.sent)} "
                             "page-load events drawn into the page")
                pages += [(tab, "alone", plain.local_url + link, SHOWN[tab]),
                          (tab, "alone, first view in the page", drawn.local_url + link, SHOWN[tab])]
            seconds: dict[tuple[str, str], list[float]] = {(t, what): [] for t, what, _, _ in pages}
            for _ in range(args.rounds):
                for tab, what, url, shown in pages:
                    seconds[tab, what] += time_loads(context, url, shown, args.repeats)
            browser.close()
    finally:
        for demo in demos:
            demo.close()
    bare = statistics.median(seconds["reference", "bare Blocks"])
    print(f"\nheadless Chromium, 1440x900, data {args.data_dir}, {args.rounds} rounds of {args.repeats} "
          f"loads a page; load average {loadavg()}")
    rows = [("tab", "page", "median s", "min-max s", "n", "vs bare", f"<= {GOAL}x")]
    for (tab, what), s in seconds.items():
        m = statistics.median(s)
        rows.append((tab, what, f"{m:.3f}", f"{min(s):.3f}-{max(s):.3f}", str(len(s)), f"{m / bare:.2f}x",
                     "" if tab == "reference" else "yes" if m <= GOAL * bare else "NO"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
