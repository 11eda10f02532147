#!/usr/bin/env python
"""Benchmark: an idle app server uses no CPU (goal < 1 % of one core), measured from /proc.

    python scripts/bench_idle.py [--data-dir data] [--seconds 30] [--no-browser]

1. Starts `python app.py --data-dir D` (and, as the reference, a bare gradio Blocks app) in a
   process of its own.
2. Drives a short browsing session with headless Chromium (Playwright; the system chromium): the
   page, every tab, a query picked and the movie scrubbed in window search, a clip in impact;
   then closes the browser. With --no-browser (or without chromium) gradio_client calls the
   page's load events instead.
3. Reads the server's CPU time (utime + stime of every thread, children included, from
   /proc/<pid>/stat and /proc/<pid>/task/*/stat) over `--seconds` of idleness, and prints it as
   a percentage of one core, with the busiest threads (name and share) so a cause can be found.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, print_rows  # noqa: E402

GOAL = 1.0  # percent of one core
TICKS = os.sysconf("SC_CLK_TCK")
BARE = ("import gradio as gr, sys\n"
        "with gr.Blocks() as demo:\n    gr.Markdown('hello')\n    gr.Textbox(label='x')\n"
        "demo.launch(server_name='127.0.0.1', server_port=int(sys.argv[1]))\n")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(cmd: list[str], port: int, timeout: float = 240.0) -> subprocess.Popen:
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"exited {proc.returncode}: {' '.join(cmd)}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as resp:
                if resp.status == 200:
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"no HTTP 200 within {timeout} s: {' '.join(cmd)}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- /proc -----------------------------------------------------------------------------------------

def _stat_fields(path: Path) -> list[str] | None:
    try:
        text = path.read_text()
    except OSError:  # the thread or process ended
        return None
    return text[text.rindex(")") + 2:].split()  # after "pid (comm) "


def _comm(path: Path) -> str:
    try:
        return (path / "comm").read_text().strip()
    except OSError:
        return "?"


def descendants(pid: int) -> list[int]:
    """pid and every process below it (ffmpeg, a decoder helper, ...)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(entry / "stat")
            if fields:
                parents.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += parents.get(p, [])
    return out


def cpu_snapshot(pid: int) -> dict[str, float]:
    """'pid/tid comm' -> CPU seconds, for every thread of the process tree."""
    snap: dict[str, float] = {}
    for p in descendants(pid):
        for task in Path(f"/proc/{p}/task").glob("*"):
            fields = _stat_fields(task / "stat")
            if fields:
                snap[f"{p}/{task.name} {_comm(task)}"] = (int(fields[11]) + int(fields[12])) / TICKS
    return snap


def idle_cpu(pid: int, seconds: float) -> tuple[float, list[tuple[str, float]]]:
    """(percent of one core over `seconds`, the busiest threads as (name, percent))."""
    before, t0 = cpu_snapshot(pid), time.perf_counter()
    time.sleep(seconds)
    after, wall = cpu_snapshot(pid), time.perf_counter() - t0
    delta = {k: v - before.get(k, 0.0) for k, v in after.items()}
    total = sum(max(0.0, d) for d in delta.values())
    busiest = sorted(((k, 100 * d / wall) for k, d in delta.items() if d > 0), key=lambda kv: -kv[1])
    return 100 * total / wall, busiest[:5]


# -- the browsing session --------------------------------------------------------------------------

def browse(url: str, headless_seconds: float = 4.0) -> str:
    """A short session in headless Chromium; returns what was done."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="bench-idle-chromium-")
    done = []
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(url, wait_until="load", timeout=180_000)
            page.wait_for_selector(".gradio-container", timeout=180_000)
            page.wait_for_timeout(headless_seconds * 1000)
            done.append("page")
            tabs = page.locator("#app-tabs").count() > 0
            for label in ("Window search", "Cloze", "Impact", "Window search") if tabs else ():
                page.get_by_role("tab", name=label).first.click()
                page.wait_for_timeout(headless_seconds * 1000)
                done.append(label)
            for slider in page.locator("input[type=range]").all()[:2]:  # scrub: frames decoded
                try:
                    slider.fill("120")
                    slider.dispatch_event("change")
                    page.wait_for_timeout(1500)
                    done.append("scrub")
                except Exception:  # a hidden slider: the session goes on
                    pass
            page.close()
            context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return ", ".join(done)


def client_session(url: str) -> str:
    from gradio_client import Client

    client = Client(url, verbose=False)
    names = list(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    client.close() if hasattr(client, "close") else None
    return f"gradio_client: {len(names)} endpoints listed"


def measure(cmd: list[str], port: int, seconds: float, use_browser: bool) -> dict:
    proc = start(cmd, port)
    try:
        time.sleep(3)  # let start-up work settle
        fresh, _ = idle_cpu(proc.pid, min(10.0, seconds))
        url = f"http://127.0.0.1:{port}/"
        session = browse(url) if use_browser else client_session(url)
        time.sleep(2)  # the page's websocket/SSE closes
        after, busiest = idle_cpu(proc.pid, seconds)
    finally:
        stop(proc)
    return {"fresh": fresh, "after": after, "busiest": busiest, "session": session}


def run(data_dir: Path, seconds: float = 30.0, use_browser: bool = True) -> list[Row]:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if use_browser and not Path(chromium).exists():
        print("chromium not found: the session uses gradio_client instead")
        use_browser = False
    port = free_port()
    bare = measure([sys.executable, "-c", BARE, str(port)], port, seconds, use_browser)
    port = free_port()
    app = measure([sys.executable, "app.py", "--data-dir", str(data_dir), "--port", str(port)],
                  port, seconds, use_browser)
    for name, got in (("bare gradio Blocks", bare), ("app", app)):
        print(f"{name}: idle {got['fresh']:.2f} % of a core before the session, {got['after']:.2f} % "
              f"over {seconds:g} s after it ({got['session']})")
        for thread, share in got["busiest"]:
            print(f"    {share:6.2f} %  {thread}")
    return [Row("idle", f"app CPU idle after a session ({seconds:g} s, /proc)",
                f"{app['after']:.2f} % of a core (bare Blocks {bare['after']:.2f} %; before the "
                f"session {app['fresh']:.2f} %)", f"< {GOAL:g} %", app["after"] < GOAL)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args(argv)
    print_rows(run(args.data_dir, args.seconds, use_browser=not args.no_browser))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
