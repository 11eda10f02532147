"""`eval grounding`, `run grounding` and `compare grounding` (docs/formats.md "Command line"):
argparse wiring only. Each command reads its arguments, calls pipeline.py (the batch run, the run
files read and scored, the comparison: the same pipeline as the UI) and prints what it returned.

    python app.py eval grounding --annotations A.json --predictions P.jsonl [--json] [--score-fallbacks]
    python app.py [--backend SPEC] run grounding --annotations A.json --out P.jsonl [--backend SPEC]
        [--traces T.jsonl] [--method aws|rag|oracle-chunk] [--k 5] [--m 3] [--delta-max 30]
        [--chunk-seconds 180] [--concurrency N] [--embedder minilm] [--memory-dir DIR] [--limit N]
        [--localizer SPEC] [--localize-frames 32] [--thinking off|default] [--shard i/N]
        [--shard-by query|movie]

    python app.py compare grounding A.jsonl B.jsonl --annotations A.json [--json] [--show 20]

`eval grounding --predictions` takes several files or folders (the shards' outputs) and merges them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from backends.base import VLMBackend
from backends.registry import resolve
from components.base.errors import UserError
from components.base.io import read_jsonl
from components.common import compare
from components.common.cli import HelpFormatter, add_backend_options, add_shard_option, \
    api_settings_from_args, backend_from_args, backend_spec, stop_after_failures
from components.common.runs import add_items_option
from components.datasource import as_source
from components.window_search.data import load_annotations
from components.window_search.metrics import format_metrics
from components.window_search.pipeline import METHODS, GroundingRun, compare_runs, evaluate_prediction_files, \
    run_grounding, source_summary
from components.window_search.runs import write_eval_items


ANNOTATIONS_HELP = ("grounding annotation JSON, or one in a dataset repository: "
                    "hf://datasets/<owner>/<name>[@revision]/<path>/annotations.json")


def add_eval_parsers(eval_subparsers) -> None:
    p = eval_subparsers.add_parser(
        "grounding", help="CoM2-Bench grounding metrics: mIoU, R@1@θ, PairSuccess@θ",
        formatter_class=HelpFormatter,
        description="Score grounding predictions against annotations (missing predictions count as "
                    "failures; every pair stays in the denominator). Prints retrieval-miss and "
                    "oracle-localizer diagnostics when predictions carry 'window'.")
    p.add_argument("--annotations", required=True, type=as_source, help=ANNOTATIONS_HELP)
    p.add_argument("--predictions", required=True, type=Path, nargs="+",
                   help="predictions JSONL; several files or folders (every *.jsonl under them) "
                        "are merged, e.g. the outputs of `run grounding --shard i/N`")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--score-fallbacks", action="store_true",
                   help="DIAGNOSTIC: also score fallback predictions (the whole window after an "
                        "unreadable reply, ...) as if they were answers; the output says so")
    add_items_option(p, "query")
    p.set_defaults(func=eval_grounding_command)


def add_compare_parsers(compare_subparsers) -> None:
    p = compare_subparsers.add_parser(
        "grounding", help="two grounding runs on the same annotations: paired differences, "
                          "disagreeing queries", formatter_class=HelpFormatter,
        description="Paired difference A - B of every grounding score (bootstrap over queries; "
                    "pairs for PairSuccess) with its interval and p-value, and the queries on "
                    "which the runs land on different sides of a threshold.")
    p.add_argument("--annotations", required=True, type=Path, help="grounding annotation JSON of both runs")
    compare.add_compare_arguments(p)
    p.add_argument("--score-fallbacks", action="store_true",
                   help="DIAGNOSTIC: score fallback predictions in both runs (as eval)")
    p.set_defaults(func=compare_grounding_command)


def compare_grounding_command(args: argparse.Namespace) -> int:
    result = compare_runs(args.annotations, args.a, args.b, score_fallbacks=getattr(args, "score_fallbacks", False))
    return compare.emit(result, as_json=args.json, shown=args.show)


def add_run_parsers(run_subparsers) -> None:
    p = run_subparsers.add_parser(
        "grounding", help="ground every query of an annotation file (resumable)",
        formatter_class=HelpFormatter,
        description="Retrieve chunks, select a window (Agentic Window Search, Movie RAG top-1, or the "
                    "oracle chunk) and localize; appends predictions and traces as queries finish and "
                    "skips queries already in --out.")
    p.add_argument("--annotations", required=True, type=as_source, help=ANNOTATIONS_HELP)
    p.add_argument("--out", required=True, type=Path, help="predictions JSONL (appended; resumable)")
    p.add_argument("--traces", type=Path, default=None, help="per-query search traces JSONL")
    p.add_argument("--method", choices=METHODS, default="aws",
                   help="window selection: Agentic Window Search, Movie RAG top-1, or the oracle chunk")
    p.add_argument("--k", type=int, default=5, help="ranked candidates K")
    p.add_argument("--m", type=int, default=3, help="expansions per candidate M")
    p.add_argument("--delta-max", type=float, default=30.0, help="seconds per expansion Δmax")
    p.add_argument("--chunk-seconds", type=float, default=180.0, help="chunk length")
    p.add_argument("--embedder", default="minilm", help="minilm | hf-embed:<id> | openai-embed:<model>")
    p.add_argument("--memory-dir", type=Path, default=None,
                   help="folder with <movie_id>.json character memories (unset: <annotations dir>/memory)")
    p.add_argument("--limit", type=int, default=None, help="only the first N queries")
    p.add_argument("--captions", action="store_true",
                   help="caption every chunk with the backend first (one call per chunk, cached) and "
                        "retrieve over subtitles + captions (for text-only embedders)")
    p.add_argument("--localizer", default=None,
                   help="the localizer's own backend SPEC (the paper keeps TimeLens2 apart from the "
                        "verifier); unset: the verifier's backend")
    p.add_argument("--localize-frames", type=int, default=32,
                   help="the localizer's frame budget (spread over the window; the prompt states "
                        "the real spacing)")
    p.add_argument("--thinking", choices=("off", "default"), default="off",
                   help="off: every model call asks the server to disable thinking (CoM2 §5); "
                        "default: send no switch (the server's default)")
    add_backend_options(p, items="queries")
    add_shard_option(p, by="query id, or movie id with --shard-by movie")
    p.add_argument("--shard-by", choices=("query", "movie"), default="query",
                   help="movie: all queries of a movie in one shard, so each machine samples and "
                        "embeds only its own movies (the split follows the movies' sizes)")
    p.set_defaults(func=run_grounding_command)


def eval_grounding_command(args: argparse.Namespace) -> int:
    ann = load_annotations(args.annotations)
    metrics, preds = evaluate_prediction_files(ann, args.predictions,
                                               score_fallbacks=getattr(args, "score_fallbacks", False))
    for note in metrics["notes"]:
        print(f"note: {note}", file=sys.stderr)
    write_eval_items(args, ann, preds)
    if args.json:
        print(json.dumps(metrics))
    else:
        print(format_metrics(metrics))
        print(f"prediction lines for unknown qids (ignored): {metrics['ignored_unknown_items']} · "
              f"intervals ending after the movie (scored as given): {metrics['intervals_beyond_movie']}")
    return 0


def run_grounding_command(args: argparse.Namespace) -> int:
    ann = load_annotations(args.annotations, check_files=True)
    if args.localize_frames < 1:
        raise UserError(f"--localize-frames must be at least 1 (got {args.localize_frames}).")
    run = GroundingRun(out=args.out, traces=args.traces, method=args.method, k=args.k, m=args.m,
                       delta_max=args.delta_max, chunk_seconds=args.chunk_seconds, embedder=args.embedder,
                       memory_dir=args.memory_dir, limit=args.limit, captions=args.captions,
                       localize_frames=args.localize_frames, thinking=args.thinking,
                       concurrency=args.concurrency, progress=not args.no_progress,
                       shard=getattr(args, "shard", None), shard_by=getattr(args, "shard_by", "query"),
                       stop_after_failures=stop_after_failures(args), adopt=getattr(args, "adopt", False))
    settings = run.search_settings()
    backend = backend_from_args(args)
    localizer = localizer_from_args(args, backend)
    counts = run_grounding(ann, run, settings, backend, localizer)
    print(f"done: {counts['done']} new, {counts['skipped']} already in {args.out}, "
          f"{counts['failed']} failed", file=sys.stderr)
    print(source_summary(read_jsonl(args.out)), file=sys.stderr)
    return 0 if counts["failed"] == 0 else 1


def localizer_from_args(args: argparse.Namespace, backend: VLMBackend) -> VLMBackend:
    """The --localizer backend (same server options as the verifier), else the verifier's."""
    spec = getattr(args, "localizer", None)
    if not spec or spec.strip() == backend_spec(args):
        return backend
    return resolve(spec.strip(), api=api_settings_from_args(args), record_to=getattr(args, "record", None))
