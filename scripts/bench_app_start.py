"""Benchmark: app start to first HTTP 200, against a bare gradio Blocks app (same run, ratio).

    python scripts/bench_app_start.py [--data-dir data] [--repeats 3]
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
BARE = ("import gradio as gr, sys\n"
        "with gr.Blocks() as demo:\n    gr.Markdown('hello')\n"
        "demo.launch(server_name='127.0.0.1', server_port=int(sys.argv[1]))\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def time_to_200(cmd: list[str], port: int, timeout: float = 180.0) -> float:
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.perf_counter() - start < timeout:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1) as resp:
                    if resp.status == 200:
                        return time.perf_counter() - start
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"no HTTP 200 within {timeout} s: {' '.join(cmd)}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", default=str(ROOT / "data"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    bare, ours = [], []
    for _ in range(args.repeats):  # interleave so both see the same machine state
        port = free_port()
        bare.append(time_to_200([sys.executable, "-c", BARE, str(port)], port))
        port = free_port()
        ours.append(time_to_200([sys.executable, "app.py", "--data-dir", args.data_dir,
                                 "--port", str(port)], port))
    b, o = min(bare), min(ours)
    print(f"app start to first HTTP 200: app {o:.2f} s, bare gradio Blocks {b:.2f} s, "
          f"ratio {o / b:.2f}x (goal <= 1.5x; best of {args.repeats})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
