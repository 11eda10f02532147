#!/usr/bin/env python
"""A TempCloze of the real size (1,521 stems) read from a dataset repository, against the local
Hub server (tests/helpers/hub_server.py, in its own process) answering every request 50 ms late:

  - first question: from nothing (a fresh process, an empty Hub cache): open the repository
    (resolve + list), read its meta/sets, build the set of 4,563 questions, fetch and draw the
    first question's six clips; the reference is the same from the local folder, in the same run;
  - a restart: a new process, the listing and the first question cached, the next question's clips
    not: the first question again and then a new one;
  - bytes: what showing the first 10 questions needs (their distinct clips, the metadata files and
    the API answers), against the whole repository.

Each measurement runs in a fresh process (imports done before the clock starts: the server is
already up when a visitor asks). The real-size data repeats the six example stems (hard links),
and the Hub cache stores a content once: so the bytes are counted from the listing (what a
repository of distinct clips sends), the restart's new question is one of another example stem,
and only the first question is timed from nothing. Prints the rows and one JSON object.

    .venv/bin/python scripts/bench_hub.py [--latency 0.05] [--stems 1521] [--questions 10]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, Row, cache_dir, loadavg, print_rows  # noqa: E402

REPO = "bench/tempcloze"


def make_data(stems: int) -> Path:
    """The real-size cloze folder (hard links of the example stems), made once."""
    from make_realsize import ensure_examples, make_cloze

    examples = ROOT / "data"
    ensure_examples(examples)
    out = cache_dir() / f"hub-cloze-{stems}"
    if not (out / "meta.json").exists() or len(list((out / "choices").iterdir())) != stems:
        make_cloze(out, examples / "cloze", stems)
    return out


def serve(folder: str, latency: float) -> None:
    """The server process: prints its URL, serves until stdin closes."""
    from tests.helpers.hub_server import HubServer

    with HubServer(latency_s=latency) as hub:
        hub.add_repo(REPO, Path(folder))
        hub.warm(REPO)  # the listing made once before timing, as the Hub keeps it (no hashing then)
        print(hub.url, flush=True)
        for line in sys.stdin:  # "stats": what was sent so far
            if line.strip() == "stats":
                with hub._lock:
                    api = sum(s.body_bytes for s in hub.log if s.path.startswith("/api/"))
                print(json.dumps({"api_bytes": api, "file_bytes": hub.bytes_sent(),
                                  "requests": len(hub.log)}), flush=True)


def _base(stem: str) -> str:
    return stem.rsplit("_", 1)[0]


def client(source: str, questions: int, other: bool) -> None:
    """One visitor process: imports first, then the clock. Prints a JSON object."""
    from components import datasource
    from components.cloze.data import load_dataset, meta_files
    from components.cloze.frames import clip_grids
    from components.cloze.questions import build_set, question_files
    import huggingface_hub  # noqa: F401 - imported by the running server before any visitor

    t0 = time.perf_counter()
    ds = load_dataset(source)
    qs = build_set(ds, "all", ("S", "A", "P")).questions
    t_open = time.perf_counter() - t0
    first = next(k for k, q in enumerate(qs) if _base(q.stem) != _base(qs[0].stem)) if other else 0
    shown = qs[first:first + questions]
    inst = ds.instance(shown[0].stem)
    clip_grids([inst.clip_path(n) for n in ("before", "after", *shown[0].options)])
    t_first = time.perf_counter() - t0
    needed = [*question_files(ds, shown), *meta_files(ds.root), ds.root / "sets.json"]
    print(json.dumps({"open_s": t_open, "first_s": t_first, "questions": len(qs), "stems": len(ds.instances),
                      "first_stem": shown[0].stem,
                      "needed_bytes": sum(datasource.size(p) or 0 for p in needed)}))


def run_client(env: dict, source: str, questions: int, other: bool = False) -> dict:
    out = subprocess.run([sys.executable, __file__, "--client", source, "--questions", str(questions),
                          *(["--other"] if other else [])], env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"client failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def stats(server: subprocess.Popen) -> dict:
    server.stdin.write("stats\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())


def run(*, latency: float = 0.05, stems: int = 1521, questions: int = 10) -> list[Row]:
    """The measurements (see the module docstring) as summary rows."""
    args = argparse.Namespace(latency=latency, stems=stems, questions=questions)
    return _measure(args)[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.05, help="seconds added to every Hub request")
    ap.add_argument("--stems", type=int, default=1521)
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--client", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--other", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.serve, args.latency)
        return 0
    if args.client:
        client(args.client, args.questions, args.other)
        return 0
    rows, raw = _measure(args)
    print_rows(rows)
    print(json.dumps(raw))
    return 0


def _measure(args: argparse.Namespace) -> tuple[list[Row], dict]:
    folder = make_data(args.stems)
    whole = sum(p.stat().st_size for p in folder.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    work = Path(tempfile.mkdtemp(prefix="bench-hub-"))
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(folder), "--latency", str(args.latency)],
                              cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "APP_"))}
        env = dict(base, HF_ENDPOINT=url, HF_HUB_CACHE=str(work / "hf"), APP_CACHE_DIR=str(work / "app"),
                   APP_HUB_MIRROR_DIR=str(work / "mirror"), HF_HUB_DISABLE_XET="1",
                   HF_HUB_DISABLE_TELEMETRY="1", GRADIO_ANALYTICS_ENABLED="False")
        local_env = dict(env, APP_CACHE_DIR=str(work / "app-local"), HF_HUB_OFFLINE="1")
        spec = f"hf://datasets/{REPO}"
        reference = run_client(local_env, str(folder), 1)
        cold = run_client(env, spec, args.questions)
        api_bytes = stats(server)["api_bytes"]
        shown_bytes = cold["needed_bytes"] + api_bytes
        restart_same = run_client(env, spec, 1)               # listing and the first question cached
        restart_new = run_client(env, spec, 1, other=True)    # a question whose clips are not
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    lat = f"+{args.latency * 1000:.0f} ms a request"
    rows = [
        Row("hub", f"first question, {cold['stems']} stems, fresh process and cache ({lat})",
            f"{cold['first_s']:.2f} s (open + list + set {cold['open_s']:.2f} s); local folder "
            f"{reference['first_s']:.2f} s: {cold['first_s'] / reference['first_s']:.2f}x", "< 3 s",
            cold["first_s"] < 3.0, loadavg()),
        Row("hub", "restart (listing kept): the first question again / a new one",
            f"{restart_same['first_s']:.2f} s / {restart_new['first_s']:.2f} s", "", None, loadavg()),
        Row("hub", f"bytes downloaded to show {args.questions} questions vs the whole dataset",
            f"{shown_bytes / 1e6:.2f} MB of {whole / 1e6:.0f} MB ({100 * shown_bytes / whole:.2f} %; the "
            f"listing and API answers {api_bytes / 1e6:.2f} MB of it)",
            "", None, loadavg()),
    ]
    return rows, {"latency_s": args.latency, "reference": reference, "cold": cold,
                  "restart_same": restart_same, "restart_new": restart_new,
                  "shown_bytes": shown_bytes, "api_bytes": api_bytes, "whole_bytes": whole}


if __name__ == "__main__":
    sys.exit(main())
