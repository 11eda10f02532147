"""Benchmark: one visitor's quick action while other sessions work, against the same action alone.

The app runs in its own process on the example data; every session is a gradio_client of its own.
Two loads, each timed against the probe's own action alone, measured in the same run:

  - heavy: four sessions at once run baseline work (two Cloze question sets, an Impact temporal
    run with its metrics, a window search), while a probe session loads the Cloze data folder
    (`/on_root`) again and again (was tests/system/test_concurrent_sessions.py's LOAD_RATIO);
  - retrying: one session's model call is refused with HTTP 429 and Retry-After 1 s (three
    attempts of three requests), while a probe session asks the baseline for a Cloze answer
    (`/on_run_one`) again and again (was tests/system/test_faults.py's LOAD_RATIO).

Goal: the probe's median under load within 12x its median alone (2 cores, one GIL: never queued
behind a whole job). Prints; asserts nothing.

    python scripts/bench_sessions.py [--data-dir data] [--only heavy,retrying] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, loadavg, print_rows  # noqa: E402
from bench_idle import free_port, start, stop  # noqa: E402

GOAL_RATIO = 12.0


def _client(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"timeout": 300})


def _timed(call, *args, **kwargs) -> float:
    t = time.perf_counter()
    call(*args, **kwargs)
    return time.perf_counter() - t


def _probe_while(busy: list[threading.Thread], probe) -> list[float]:
    """The probe's latencies of the calls that finished while any of `busy` still ran."""
    for thread in busy:
        thread.start()
    during = []
    while any(thread.is_alive() for thread in busy):
        took = _timed(probe)
        if any(thread.is_alive() for thread in busy):
            during.append(took)
    for thread in busy:
        thread.join()
    return during


def _row(name: str, alone: list[float], during: list[float]) -> Row:
    if not during:
        return Row("sessions", name, "no probe call finished during the load", f"<= {GOAL_RATIO:.0f}x",
                   None, loadavg())
    a, d = statistics.median(alone), statistics.median(during)
    return Row("sessions", name,
               f"{d * 1000:.0f} ms median over {len(during)} calls under load vs {a * 1000:.0f} ms alone "
               f"({d / a:.1f}x; max {max(during) * 1000:.0f} ms)",
               f"<= {GOAL_RATIO:.0f}x", d / a <= GOAL_RATIO, loadavg())


def heavy(url: str, data: Path, repeats: int) -> Row:
    root = str(data / "cloze")
    target = json.loads((data / "grounding" / "annotations.json").read_text())["pairs"][0]["target"]
    probe = _client(url)
    alone = [_timed(probe.predict, root, api_name="/on_root") for _ in range(repeats + 1)][1:]

    def cloze_set(seed: int):
        _client(url).predict(root, "all", "S, A, P", seed, "edge1", False, "api", api_name="/on_run_set")

    def impact():
        c = _client(url)
        c.predict("h0002", 1, "auto", api_name="/on_run_temporal")
        c.predict("all", "auto", api_name="/on_metrics")

    def window_search():
        c = _client(url)
        c.predict("m01", 180, api_name="/pick_movie")
        c.predict(target["qid"], api_name="/pick_query")
        c.predict(target["query"], 180, 5, 3, 30, "aws", api_name="/run")

    busy = [threading.Thread(target=cloze_set, args=(3,)), threading.Thread(target=cloze_set, args=(4,)),
            threading.Thread(target=impact), threading.Thread(target=window_search)]
    during = _probe_while(busy, lambda: probe.predict(root, api_name="/on_root"))
    return _row("a quick action (open the Cloze folder) while 4 sessions run baseline work", alone, during)


def _refusing_server() -> ThreadingHTTPServer:
    """An OpenAI-compatible server that refuses every chat request: HTTP 429, Retry-After 1 s."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            payload = b'{"error": {"message": "rate limit reached, slow down"}}'
            self.send_response(429)
            self.send_header("Content-Type", "application/json")
            self.send_header("Retry-After", "1")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def retrying(url: str, data: Path, repeats: int) -> Row:
    args = (str(data / "cloze"), "all", "S, A, P", 42, "edge1", False, "api", "frames")
    probe, api_user = _client(url), _client(url)
    alone = [_timed(probe.predict, *args, api_name="/on_run_one") for _ in range(repeats + 1)][1:]
    server = _refusing_server()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        api_user.predict("openai:test-model", base, "sk-bench", 16, False, api_name="/set_backend")
        busy = [threading.Thread(target=lambda: api_user.predict(*args, api_name="/on_run_one"))]
        during = _probe_while(busy, lambda: probe.predict(*args, api_name="/on_run_one"))
    finally:
        server.shutdown()
        server.server_close()
    return _row("a baseline Cloze answer while another session's model call retries (HTTP 429)",
                alone, during)


PARTS = {"heavy": heavy, "retrying": retrying}


def run(data_dir: Path, only: list[str] | None = None, quick: bool = False) -> list[Row]:
    if not (data_dir / "cloze").is_dir():
        subprocess.run([sys.executable, "-m", "examples.generate", "--out", str(data_dir)], cwd=ROOT,
                       check=True)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        saved = {name: os.environ.get(name) for name in
                 ("APP_HUMAN_STUDY_DIR", "APP_PRACTICE_DIR", "APP_CLOZE_RUNS_DIR")}
        os.environ.update({name: scratch for name in saved})   # the app's child process writes here
        port = free_port()
        proc = start([sys.executable, "app.py", "--data-dir", str(data_dir), "--backend", "baseline",
                      "--port", str(port)], port)
        try:
            for name in only or list(PARTS):
                rows.append(PARTS[name](f"http://127.0.0.1:{port}/", data_dir, 2 if quick else 4))
        finally:
            stop(proc)
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data",
                        help="example data (made with examples.generate when missing)")
    parser.add_argument("--only", default=",".join(PARTS), help=f"comma-separated: {', '.join(PARTS)}")
    parser.add_argument("--quick", action="store_true", help="2 calls alone instead of 4")
    args = parser.parse_args(argv)
    print_rows(run(args.data_dir.resolve(), [p.strip() for p in args.only.split(",")], args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
