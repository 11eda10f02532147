"""`eval grounding` and `run grounding` (docs/formats.md "Command line"): argparse wiring and the two
handlers, calling the same pipeline as the UI.

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
import threading
from pathlib import Path

from backends.errors import BackendError
from backends.base import VLMBackend
from backends.registry import resolve
from components.common.batch import checked_output, repair_companion, run_resumable
from components.common.stamps import backend_stamp, data_fingerprint, data_stamp, settings_stamp
from components.common import compare
from components.common.cli import HelpFormatter, add_backend_options, add_shard_option, \
    api_settings_from_args, backend_from_args, backend_spec, stop_after_failures
from components.base.errors import UserError
from components.base.io import append_jsonl, output_lock, read_jsonl, real_path
from components.common.runs import add_items_option
from components.common.shards import describe_selection, input_files, merged_files
from components.datasource import as_source, fetch_all
from components.window_search.data import GroundingAnnotations, GroundingQuery, \
    load_annotations, load_predictions, movie_files
from components.media.probe import container_duration
from components.window_search.eval_inputs import grounding_input_report
from components.window_search.metrics import disagreements, evaluate, format_metrics, unit_scores
from components.window_search.pipeline import METHODS, MovieLibrary, SearchSettings, ground_query, \
    prediction_record
from components.window_search.runs import write_eval_items
from components.window_search.retrieval import caption_chunks, chunk_embeddings
from components.window_search.solvers import WindowSearchSolvers, solvers_for
from components.window_search.types import UNPARSED


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
    p.set_defaults(func=eval_grounding)


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
    p.set_defaults(func=compare_grounding)


def compare_grounding(args: argparse.Namespace) -> int:
    ann = load_annotations(args.annotations)
    runs = [load_prediction_files([Path(args.a)]), load_prediction_files([Path(args.b)])]
    qids = {q.qid for q in ann.queries}
    for path, preds in zip((args.a, args.b), runs):
        compare.refuse_unknown(path, preds, qids, what="prediction(s) for qids", against=str(args.annotations))
    fallbacks = getattr(args, "score_fallbacks", False)
    groups = [unit_scores(ann, preds, score_fallbacks=fallbacks) for preds in runs]
    result = compare.Comparison(
        "grounding", str(args.a), str(args.b),
        f"{args.annotations} ({len(ann.queries)} queries, {len(ann.pairs)} pairs)",
        compare.paired(*groups), disagreements(ann, *runs, score_fallbacks=fallbacks),
        len(ann.queries), "queries",
        notes=["DIAGNOSTIC: fallbacks scored as answers (--score-fallbacks)"] if fallbacks else [])
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
    p.set_defaults(func=run_grounding)


def eval_grounding(args: argparse.Namespace) -> int:
    ann = load_annotations(args.annotations)
    where: dict[str, str] = {}
    preds = load_prediction_files(args.predictions, where)
    fallbacks = getattr(args, "score_fallbacks", False)
    report = grounding_input_report(ann, preds, where, ", ".join(map(str, args.predictions)),
                                    duration_of=lambda mid: container_duration(ann.movie(mid).video),
                                    score_fallbacks=fallbacks)
    metrics = {**evaluate(ann, preds, score_fallbacks=fallbacks), **report}
    for note in report["notes"]:
        print(f"note: {note}", file=sys.stderr)
    write_eval_items(args, ann, preds)
    if args.json:
        print(json.dumps(metrics))
    else:
        print(format_metrics(metrics))
        print(f"prediction lines for unknown qids (ignored): {report['ignored_unknown_items']} · "
              f"intervals ending after the movie (scored as given): {report['intervals_beyond_movie']}")
    return 0


def load_prediction_files(paths: list[Path], lines: dict | None = None) -> dict:
    """qid -> Prediction over every file (duplicates across files: docs/scale.md "Merging");
    `lines` gets qid -> "<file> line <n>"."""
    files = input_files(paths, "*.jsonl", "grounding predictions", "--predictions")
    return merged_files(files, lambda p: load_predictions(p, lines).items(), what="prediction for qid")


def _prepare_movies(ann: GroundingAnnotations, queries: list[GroundingQuery], lib: MovieLibrary,
                    solvers: WindowSearchSolvers, embedder, *, captions: bool,
                    chunk_seconds: float) -> dict[str, dict[int, str]]:
    """Sample and embed each movie once, before queries run in parallel; the chunk captions."""
    out: dict[str, dict[int, str]] = {}
    for mid in dict.fromkeys(q.movie_id for q in queries):
        movie = lib.movie(ann.movie(mid))
        print(f"preparing {mid}: {len(movie.chunks)} chunks of {chunk_seconds:g} s", file=sys.stderr)
        if captions and solvers.model is not None:
            out[mid] = caption_chunks(movie, solvers.model)
        chunk_embeddings(movie, embedder, captions=out.get(mid))
    return out


def run_grounding(args: argparse.Namespace) -> int:
    ann = load_annotations(args.annotations, check_files=True)
    if args.localize_frames < 1:
        raise UserError(f"--localize-frames must be at least 1 (got {args.localize_frames}).")
    settings = SearchSettings(k=args.k, m=args.m, delta_max=args.delta_max,
                              localize_cap=args.localize_frames,
                              thinking=False if args.thinking == "off" else None)
    backend = backend_from_args(args)
    localizer = localizer_from_args(args, backend)
    memory_dir = args.memory_dir or (Path(ann.path).parent / "memory")
    lib = MovieLibrary(chunk_seconds=args.chunk_seconds, embedder_spec=args.embedder, memory_dir=memory_dir)
    embedder = lib.embedder()
    solvers = solvers_for(backend, settings, embedder=embedder, localizer_backend=localizer)
    queries = ann.queries[: args.limit] if args.limit else ann.queries
    shard = getattr(args, "shard", None)
    if shard is not None:
        by_movie = getattr(args, "shard_by", "query") == "movie"
        total = len(queries)
        queries = shard.select(queries, (lambda q: q.movie_id) if by_movie else (lambda q: q.qid))
        print(describe_selection(shard, len(queries), total, "queries"), file=sys.stderr)
    fetch_all(movie_files(ann, [q.movie_id for q in queries], memory_dir), progress=not args.no_progress,
              desc="fetching movies")
    stamp = grounding_stamp(args, ann, backend, localizer, memory_dir)
    with output_lock(args.out):
        # refused before the movies are prepared
        checked_output(args.out, stamp, "qid", adopt=getattr(args, "adopt", False))
        if args.traces:   # one trace per query in --out, whatever the moment a run was killed
            repair_companion(args.traces, real_path(args.out), [q.qid for q in queries], "qid", "trace")
        captions = _prepare_movies(ann, queries, lib, solvers, embedder, captions=args.captions,
                                   chunk_seconds=args.chunk_seconds)
        trace_lock = threading.Lock()
        stamped = {k: v for k, v in stamp.items() if v is not None}

        def work(q: GroundingQuery) -> dict:
            movie = lib.movie(ann.movie(q.movie_id))
            trace = ground_query(q.query, movie, backend, embedder=embedder, memory=lib.memory(q.movie_id),
                                 method=args.method, settings=settings, ground_truth=q.interval, qid=q.qid,
                                 captions=captions.get(q.movie_id), solvers=solvers)
            if trace.prediction is None and (trace.errors or trace.stopped):
                # a transport failure is not an answer: leave the query for the next (resumed) run
                raise BackendError("; ".join(trace.errors) or "stopped")
            if args.traces:
                append_jsonl(args.traces, {**stamped, **trace.to_dict()}, lock=trace_lock)  # its own values win
            return prediction_record(trace)

        counts = run_resumable(queries, key=lambda q: q.qid, work=work, out_path=args.out,
                               concurrency=max(1, args.concurrency), desc=f"grounding ({args.method})",
                               progress=not args.no_progress, stamp=stamp,
                               stop_after_failures=stop_after_failures(args),
                               adopt=getattr(args, "adopt", False))
    print(f"done: {counts['done']} new, {counts['skipped']} already in {args.out}, "
          f"{counts['failed']} failed", file=sys.stderr)
    print(source_summary(read_jsonl(args.out)), file=sys.stderr)
    return 0 if counts["failed"] == 0 else 1


def grounding_stamp(args: argparse.Namespace, ann: GroundingAnnotations,
                    backend: VLMBackend, localizer: VLMBackend, memory_dir: Path) -> dict[str, str | None]:
    """What makes two runs' predictions comparable, on every line; a resume that differs is refused
    (docs/formats.md "Run stamps"): the data (its revision, or the annotation file, subtitles and
    videos' names), both backends and what shapes their requests, the method, thinking, the
    search's settings (K, M, Δmax, chunk length, localizer frames), the embedder, captions, the
    character memories read, the app version."""
    movies = list(ann.movies.values())   # all of the file's: a resume with --limit or a shard keeps it
    files = [ann.path, *(m.subtitles for m in movies if m.subtitles)]
    memories = [Path(memory_dir) / f"{m.movie_id}.json" for m in movies]
    return {**data_stamp(ann.path, files, [Path(m.video).name for m in ann.movies.values()]),
            **backend_stamp(backend), **backend_stamp(localizer, "localizer"),
            "method": args.method, "thinking": args.thinking,
            **settings_stamp(k=args.k, m=args.m, delta_max=args.delta_max, chunk_seconds=args.chunk_seconds,
                             localize_frames=args.localize_frames, embedder=args.embedder,
                             captions=bool(args.captions),
                             memory=data_fingerprint([p for p in memories if p.is_file()], []))}


def localizer_from_args(args: argparse.Namespace, backend: VLMBackend) -> VLMBackend:
    """The --localizer backend (same server options as the verifier), else the verifier's."""
    spec = getattr(args, "localizer", None)
    if not spec or spec.strip() == backend_spec(args):
        return backend
    return resolve(spec.strip(), api=api_settings_from_args(args), record_to=getattr(args, "record", None))


def source_summary(records: list[dict]) -> str:
    """How the file's predictions were obtained: model answers, fallbacks, unparsed."""
    by: dict[str, int] = {}
    for r in records:
        by[str(r.get("source") or "(no source)")] = by.get(str(r.get("source") or "(no source)"), 0) + 1
    fallbacks = sum(n for k, n in by.items() if k.startswith("fallback:"))
    unparsed = by.get(UNPARSED, 0)
    detail = ", ".join(f"{k} {n}" for k, n in sorted(by.items()))
    return (f"sources: {len(records) - fallbacks - unparsed} model answers, {fallbacks} fallbacks, "
            f"{unparsed} unparsed ({detail or 'none'}); fallbacks and unparsed items are written "
            "with interval null and score IoU 0")
