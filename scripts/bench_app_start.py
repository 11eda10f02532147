"""Benchmark: app start to first HTTP 200, against a bare gradio Blocks app (same run, ratio).

    python scripts/bench_app_start.py [--data-dir data] [--realsize data/realsize] [--repeats 3]

With --realsize the app is also started on the real-size data directory
(scripts/make_realsize.py: 46 movie links, 3,014 queries, 1,521 cloze stems, 433 clips). Besides the
time, the app's reads up to the first 200 are taken from /proc/<pid>/io (read syscalls and bytes,
the process tree's): when they grow with the data directory, something scans the tree at start.
Goal: each start <= 1.3x the bare Blocks app.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL = 1.3
BARE = ("import gradio as gr, sys\n"
        "with gr.Blocks() as demo:\n    gr.Markdown('hello')\n"
        "demo.launch(server_name='127.0.0.1', server_port=int(sys.argv[1]))\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _io(pid: int) -> tuple[int, int]:
    """(read syscalls, bytes read) of a process, 0s when /proc cannot say."""
    try:
        fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
        return int(fields["syscr"]), int(fields["rchar"])
    except (OSError, KeyError, ValueError):
        return 0, 0


def time_to_200(cmd: list[str], port: int, timeout: float = 300.0) -> tuple[float, tuple[int, int]]:
    """(seconds to the first HTTP 200, (read syscalls, bytes read) by then)."""
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.perf_counter() - start < timeout:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1) as resp:
                    if resp.status == 200:
                        return time.perf_counter() - start, _io(proc.pid)
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"no HTTP 200 within {timeout} s: {' '.join(cmd)}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def measure(data_dirs: dict[str, str], repeats: int) -> dict[str, tuple[float, tuple[int, int]]]:
    """label -> best (seconds, io); 'bare' is the reference. Interleaved, so all see one machine."""
    runs: dict[str, list[tuple[float, tuple[int, int]]]] = {"bare": []}
    for _ in range(repeats):
        port = free_port()
        runs["bare"].append(time_to_200([sys.executable, "-c", BARE, str(port)], port))
        for label, data_dir in data_dirs.items():
            port = free_port()
            runs.setdefault(label, []).append(time_to_200(
                [sys.executable, "app.py", "--data-dir", data_dir, "--port", str(port)], port))
    return {label: min(got, key=lambda r: r[0]) for label, got in runs.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT / "data"), help="the example data")
    parser.add_argument("--realsize", default=None, help="also start on this real-size data dir")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    dirs = {"examples": args.data_dir}
    if args.realsize:
        if not Path(args.realsize, "grounding", "annotations.json").is_file():
            parser.error(f"--realsize {args.realsize}: no real-size data there "
                         "(python scripts/make_realsize.py --out DIR)")
        dirs["realsize"] = args.realsize
    best = measure(dirs, args.repeats)
    bare_s, (bare_calls, bare_bytes) = best["bare"]
    for label in dirs:
        secs, (calls, nbytes) = best[label]
        print(f"app start to first HTTP 200 ({label} data): app {secs:.2f} s, bare gradio Blocks "
              f"{bare_s:.2f} s, ratio {secs / bare_s:.2f}x (goal <= {GOAL}x; best of {args.repeats}); "
              f"reads {calls} syscalls / {nbytes / 2**20:.1f} MiB (bare {bare_calls} / "
              f"{bare_bytes / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
