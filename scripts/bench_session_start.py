"""Benchmark: what a visitor's first request costs the server to open the session (not a test).

gradio opens a session on a page's first event (its `queue/join` request); its own start builds
the configuration of every component of the page (components/common/session_start.py). Timed
here in one process, alternately, on the explorer's page (every tab, as `app.py` builds it): the
start gradio ships with, the lazy start the app installs, and as the reference a bare gradio
Blocks (one button, a textbox and a dropdown: bench_browser.py's reference page) opened with
gradio's start. Prints the median per session and each one's ratio to the reference.

    python scripts/bench_session_start.py [--data-dir data] [--repeats 200]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, loadavg  # noqa: E402


def _bare():
    import gradio as gr

    with gr.Blocks() as demo:
        out = gr.Textbox(value="0")
        gr.Button("go").click(lambda n: n, out, out)
        gr.Dropdown([f"choice {i}" for i in range(60)], value="choice 0")
    return demo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data", help="the data folder the page is built on")
    parser.add_argument("--repeats", type=int, default=200, help="sessions opened by each start (the median is shown)")
    args = parser.parse_args(argv)
    import app
    from gradio import state_holder
    from components.common.session_start import start_sessions_lazily

    explorer, bare = app.build_app(args.data_dir, "baseline"), _bare()
    gradio_start = state_holder.SessionState.__init__
    if not start_sessions_lazily():
        print("this gradio's sessions are not the ones session_start.py knows: nothing to compare")
        return 1
    lazy_start = state_holder.SessionState.__init__
    cases = {"bare Blocks, gradio's start (reference)": (bare, gradio_start),
             "explorer, gradio's start": (explorer, gradio_start),
             "explorer, the app's lazy start": (explorer, lazy_start)}
    times: dict[str, list[float]] = {name: [] for name in cases}
    session = state_holder.SessionState.__new__(state_holder.SessionState)
    for _ in range(args.repeats):
        for name, (demo, start) in cases.items():
            began = time.perf_counter()
            start(session, demo)
            times[name].append(time.perf_counter() - began)
    reference = statistics.median(times[next(iter(cases))])
    print(f"components: explorer {len(explorer.blocks)}, bare {len(bare.blocks)}; median of {args.repeats}; "
          f"load average {loadavg()}")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"{name:42s} {median * 1000:7.2f} ms  {median / reference:6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
