"""Command line: `eval cloze` (score an upstream result file or human-study files) and `run cloze`
(answer a set with a backend, resumable). The same functions as the UI.

    python app.py eval cloze --results R.json [--json] | --human --results a1.jsonl a2.jsonl
    python app.py [--backend SPEC] run cloze --data DIR --out R.json [--backend SPEC] [--set NAME]
        [--dims S,A,P] [--seed 42] [--limit N] [--edge edge1|edge4] [--strict] [--max-images N]
        [--max-tokens 8192] [--prompt-style api|open] [--shard i/N]

`eval cloze --results` takes several result files or folders (the shards' outputs) and merges them.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from components.cloze.study.protocol import load_human_files
from components.cloze.data import load_dataset
from components.cloze.prompts import DEFAULT_STYLE, PROMPT_STYLES, RELEASED_MAX_TOKENS
from components.cloze.questions import build_set, question_files
from components.cloze.runner import run_set
from components.cloze.metrics import check_results, human_results, score_results
from components.cloze.solvers import SolverSettings, solvers_for
from components.common.cli import HelpFormatter, add_backend_options, add_shard_option, backend_from_args
from components.common.errors import UserError
from components.common.io import load_json
from components.common.shards import describe_selection, input_files, merge_keyed
from components.datasource import as_source, fetch_all


def add_eval_parsers(eval_subparsers) -> None:
    p = eval_subparsers.add_parser(
        "cloze", help="score TempCloze results (upstream per-model result format)",
        formatter_class=HelpFormatter,
        description="Score a TempCloze result file exactly like the released analysis: S, A, P, "
                    "acc, 3/3..0/3, >=1, >=2, error sources; plus strict accuracy and parse rate.")
    p.add_argument("--results", required=True, nargs="+", type=Path,
                   help="result JSON (stem -> {S, A, C}); several files or folders (every *.json "
                        "under them) are merged, e.g. the outputs of `run cloze --shard i/N`; with "
                        "--human, human-study files: this app's JSONL and/or the released app's "
                        "human_eval_results/set_N.json")
    p.add_argument("--human", action="store_true",
                   help="inputs are human-study JSONL files; a question is correct only if every "
                        "annotator chose GT (the paper's Human row)")
    p.add_argument("--json", action="store_true", help="print one JSON object (unrounded percentages)")
    p.set_defaults(func=eval_handler)


def add_run_parsers(run_subparsers) -> None:
    p = run_subparsers.add_parser(
        "cloze", help="answer TempCloze questions with a backend (resumable)",
        formatter_class=HelpFormatter,
        description="Run a backend over a TempCloze set and write the upstream result file. "
                    "A rerun with the same --out resumes where the last one stopped.")
    p.add_argument("--data", required=True, type=as_source,
                   help="folder holding choices/ (or its parent), or a dataset repository "
                        "hf://datasets/<owner>/<name>[@revision][/subfolder] (only the clips of the "
                        "questions run are fetched)")
    p.add_argument("--out", required=True, type=Path, help="result JSON to write")
    p.add_argument("--set", default="all", help="set name from sets.json, or 'all'")
    p.add_argument("--dims", default="S,A,P", help="comma list of S, A, P")
    p.add_argument("--seed", type=int, default=42, help="option-order seed")
    p.add_argument("--limit", type=int, default=None, help="answer at most this many questions")
    p.add_argument("--edge", default="edge1", choices=["edge1", "edge4"],
                   help="edge baseline variant when the backend is baseline")
    p.add_argument("--strict", action="store_true", help="stricter parsing (unwraps <A>, needs reason)")
    p.add_argument("--retry-sleep", type=float, default=1.0,
                   help="seconds before re-asking after an unreadable answer, times the attempt number")
    p.add_argument("--max-images", type=int, default=None, help="images one request may carry")
    p.add_argument("--max-tokens", type=int, default=RELEASED_MAX_TOKENS,
                   help="longest reply asked for (the released evaluation's 8192); a reply cut "
                        "there is recorded as truncated, not scored")
    p.add_argument("--prompt-style", default=DEFAULT_STYLE, choices=sorted(PROMPT_STYLES),
                   help="api: the paper's G.2 prompt, frames <= 360 px (the API evaluator); open: "
                        "the released vLLM evaluator's variant (unbolded last line, original size)")
    add_backend_options(p, items="questions")
    add_shard_option(p, by="stem: a stem's S, A and P questions stay together")
    p.set_defaults(func=run_handler)


def _fmt(v) -> str:
    return "  -  " if v is None else f"{v:6.2f}"


def format_table(m: dict) -> str:
    lines = ["            S       A       P     acc    >=1    >=2    3/3",
             "score  " + " ".join(_fmt(m[k]) for k in ("S", "A", "P", "acc", ">=1", ">=2", "3/3")),
             f"stems (all three valid): {m['stems']} · invalid entries skipped: "
             f"{m['invalid_entries_skipped']} (" + ", ".join(f"{k} {n}" for k, n in m["invalid_kinds"].items())
             + f") · parse rate: {_fmt(m['parse_rate']).strip()}%",
             "strict (unparsed = wrong): " + " ".join(f"{k} {_fmt(m['strict'][k]).strip()}"
                                                     for k in ("S", "A", "P", "acc")),
             "2/3 " + _fmt(m["2/3"]).strip() + " · 1/3 " + _fmt(m["1/3"]).strip()
             + " · 0/3 " + _fmt(m["0/3"]).strip()]
    for dim, shares in m["error_source"].items():
        lines.append(f"error source {dim}: " + ", ".join(f"{k} {_fmt(v).strip()}" for k, v in shares.items()))
    if "mixed" in m:
        mx = m["mixed"]
        lines.append(f"Mixed: acc {_fmt(mx['acc']).strip()} over {mx['questions']} · error share "
                     + ", ".join(f"{k} {_fmt(v).strip()}" for k, v in mx["error_share"].items()))
    return "\n".join(lines)


def load_results_file(path: Path) -> dict:
    return check_results(load_json(path, "result file"), str(path))


def load_result_files(paths: list[Path]) -> dict:
    """Several result files (the shards of one run) as one: stem -> {dim: entry}."""
    files = input_files(paths, "*.json", "cloze result file", "--results")
    parts = ((p, (((stem, dim), entry) for stem, dims in load_results_file(p).items()
                  for dim, entry in dims.items())) for p in files)
    merged = merge_keyed(parts, what="answer for", name=lambda k: f"stem '{k[0]}' dimension {k[1]}")
    results: dict = {}
    for (stem, dim), entry in merged.items():
        results.setdefault(stem, {})[dim] = entry
    return results


def eval_handler(args: argparse.Namespace) -> int:
    if args.human:
        missing = [str(p) for p in args.results if not Path(p).exists()]
        if missing:
            raise UserError(f"human-study file not found: {', '.join(missing)}")
        records = load_human_files(args.results)
        if not records:
            raise UserError(f"no human-study records (JSON lines or set_N.json responses) in {', '.join(map(str, args.results))}.")
        results = human_results(records)
    else:
        results = load_result_files(args.results)
    metrics = score_results(results)
    print(json.dumps(metrics) if args.json else format_table(metrics))
    return 0


def run_handler(args: argparse.Namespace) -> int:
    ds = load_dataset(args.data)
    dims = [d.strip() for d in args.dims.split(",") if d.strip()]
    qs = build_set(ds, args.set, dims, seed=args.seed, limit=args.limit)
    for why in qs.skipped:
        print(f"skipped: {why}")
    questions = qs.questions
    if args.shard is not None:
        questions = args.shard.select(questions, lambda q: q.stem)
        print(describe_selection(args.shard, len(questions), len(qs.questions), "questions"))
    fetch_all(question_files(ds, questions), progress=not args.no_progress, desc="fetching clips")
    backend = backend_from_args(args, max_images=args.max_images)
    if args.max_tokens < 1:
        raise UserError(f"--max-tokens must be at least 1 (got {args.max_tokens}).")
    settings = SolverSettings(edge_variant=args.edge, strict=args.strict, retry_sleep=args.retry_sleep,
                              max_tokens=args.max_tokens, prompt_style=args.prompt_style)
    out = run_set(solvers_for(backend, settings).solver, ds, questions, args.out,
                  concurrency=args.concurrency, progress=not args.no_progress)
    c = out["counts"]
    print(f"{c['done']} answered, {c['skipped']} already done, {c['failed']} failed -> {args.out}")
    print(format_table(score_results(out["results"])))
    return 0 if not c["failed"] else 1
