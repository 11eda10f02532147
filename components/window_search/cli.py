"""`eval grounding` and `run grounding` (formats.md "Command line"); heavy imports in handlers.

    python app.py eval grounding --annotations A.json --predictions P.jsonl [--json]
    python app.py run grounding --annotations A.json --backend SPEC --out P.jsonl [--traces T.jsonl]
        [--method aws|rag|oracle-chunk] [--k 5] [--m 3] [--delta-max 30] [--chunk-seconds 180]
        [--concurrency N] [--embedder minilm] [--memory-dir DIR] [--limit N]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_eval_parsers(eval_subparsers) -> None:
    p = eval_subparsers.add_parser(
        "grounding", help="CoM2-Bench grounding metrics: mIoU, R@1@θ, PairSuccess@θ",
        description="Score grounding predictions against annotations (missing predictions count as "
                    "failures; every pair stays in the denominator). Prints retrieval-miss and "
                    "oracle-localizer diagnostics when predictions carry 'window'.")
    p.add_argument("--annotations", required=True, type=Path, help="grounding annotation JSON")
    p.add_argument("--predictions", required=True, type=Path, help="predictions JSONL")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=eval_grounding)


def add_run_parsers(run_subparsers) -> None:
    p = run_subparsers.add_parser(
        "grounding", help="ground every query of an annotation file (resumable)",
        description="Retrieve chunks, select a window (Agentic Window Search, Movie RAG top-1, or the "
                    "oracle chunk) and localize; appends predictions and traces as queries finish and "
                    "skips queries already in --out.")
    p.add_argument("--annotations", required=True, type=Path)
    p.add_argument("--backend", default="baseline", help="baseline | openai:<model> | hf:<id> | replay:<trace>")
    p.add_argument("--out", required=True, type=Path, help="predictions JSONL (appended; resumable)")
    p.add_argument("--traces", type=Path, default=None, help="per-query search traces JSONL")
    p.add_argument("--method", choices=("aws", "rag", "oracle-chunk"), default="aws")
    p.add_argument("--k", type=int, default=5, help="ranked candidates K (default 5)")
    p.add_argument("--m", type=int, default=3, help="expansions per candidate M (default 3)")
    p.add_argument("--delta-max", type=float, default=30.0, help="seconds per expansion Δmax (default 30)")
    p.add_argument("--chunk-seconds", type=float, default=180.0, help="chunk length (default 180)")
    p.add_argument("--concurrency", type=int, default=1, help="queries in flight (API backends)")
    p.add_argument("--embedder", default="minilm", help="minilm | hf-embed:<id> | openai-embed:<model>")
    p.add_argument("--memory-dir", type=Path, default=None,
                   help="folder with <movie_id>.json character memories (default: <annotations dir>/memory)")
    p.add_argument("--limit", type=int, default=None, help="only the first N queries")
    p.add_argument("--captions", action="store_true",
                   help="caption every chunk with the backend first (one call per chunk, cached) and "
                        "retrieve over subtitles + captions (for text-only embedders)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (else OPENAI_BASE_URL)")
    p.add_argument("--record", type=Path, default=None, help="record model calls to this trace JSONL")
    p.set_defaults(func=run_grounding)


def eval_grounding(args: argparse.Namespace) -> int:
    from components.window_search.annotations import load_annotations, load_predictions
    from components.window_search.metrics import evaluate, format_table

    ann = load_annotations(args.annotations)
    preds = load_predictions(args.predictions)
    metrics = evaluate(ann, preds)
    if args.json:
        print(json.dumps(metrics))
    else:
        print(format_table(metrics))
        unknown = sorted(set(preds) - {q.qid for q in ann.queries})
        if unknown:
            print(f"note: {len(unknown)} prediction(s) for qids not in the annotations were ignored "
                  f"(e.g. {unknown[0]}).", file=sys.stderr)
    return 0


def run_grounding(args: argparse.Namespace) -> int:
    import threading

    from backends.config import ApiSettings
    from backends.registry import resolve
    from components.common.io import append_jsonl
    from components.common.batch import run_resumable
    from components.window_search.annotations import load_annotations
    from components.window_search.pipeline import MovieLibrary, SearchSettings, ground_query, \
        prediction_record

    ann = load_annotations(args.annotations, check_files=True)
    settings = SearchSettings(k=args.k, m=args.m, delta_max=args.delta_max)
    backend = resolve(args.backend, api=ApiSettings(base_url=args.base_url), record_to=args.record)
    memory_dir = args.memory_dir or (Path(args.annotations).parent / "memory")
    lib = MovieLibrary(chunk_seconds=args.chunk_seconds, embedder_spec=args.embedder, memory_dir=memory_dir)
    embedder = lib.embedder()
    queries = ann.queries[: args.limit] if args.limit else ann.queries
    # sample + embed each movie once, before queries run in parallel
    from components.window_search.retrieval import caption_chunks, chunk_embeddings
    captions: dict[str, dict[int, str]] = {}
    for mid in dict.fromkeys(q.movie_id for q in queries):
        movie = lib.movie(ann.movie(mid))
        print(f"preparing {mid}: {len(movie.chunks)} chunks of {args.chunk_seconds:g} s", file=sys.stderr)
        if args.captions and not backend.is_baseline:
            captions[mid] = caption_chunks(movie, backend)
        chunk_embeddings(movie, embedder, captions=captions.get(mid))
    trace_lock = threading.Lock()

    def work(q) -> dict:
        movie = lib.movie(ann.movie(q.movie_id))
        trace = ground_query(q.query, movie, backend, embedder=embedder, memory=lib.memory(q.movie_id),
                             method=args.method, settings=settings, ground_truth=q.interval, qid=q.qid,
                             captions=captions.get(q.movie_id))
        if trace.prediction is None and (trace.errors or trace.stopped):
            # a transport failure is not an answer: leave the query for the next (resumed) run
            from backends.errors import BackendError
            raise BackendError("; ".join(trace.errors) or "stopped")
        if args.traces:
            append_jsonl(args.traces, trace.to_dict(), lock=trace_lock)
        return prediction_record(trace)

    counts = run_resumable(queries, key=lambda q: q.qid, work=work, out_path=args.out,
                           concurrency=max(1, args.concurrency), desc=f"grounding ({args.method})")
    print(f"done: {counts['done']} new, {counts['skipped']} already in {args.out}, "
          f"{counts['failed']} failed", file=sys.stderr)
    return 0 if counts["failed"] == 0 else 1
