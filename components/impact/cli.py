"""Command line of the Impact tab: `eval impact-temporal`, `eval impact-spatial`, `run impact`,
`compare impact-temporal`, `compare impact-spatial`.

Argument wiring only: each command reads its arguments, calls pipeline.py (the batch run, the
run files read and scored, the comparisons) and prints what it returned. `--shard i/N`
splits the clips across machines (by qid; a clip's temporal and spatial answers stay together); the
evals take several files or folders (every shard's output folder) and merge them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from components.common import compare
from components.common.cli import HelpFormatter, add_backend_options, add_shard_option, backend_from_args, \
    stop_after_failures
from components.common.tables import format_table, format_value
from components.common.runs import add_items_option
from components.datasource import as_source
from components.impact.metrics.temporal import AS_MISS, LEAVE_OUT
from components.impact.pipeline import TASKS, compare_spatial, compare_temporal, evaluate_spatial_files, \
    evaluate_temporal_files, run_impact
from components.impact.runs import write_eval_items

TEMPORAL_KEYS = ("mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3")
SPATIAL_KEYS = ("F1", "precision", "recall", "geodesic_cm")
ANNOTATIONS_HELP = ("impact annotations JSON (docs/formats.md), or one in a dataset repository: "
                    "hf://datasets/<owner>/<name>[@revision]/<path>/annotations.json")
PROMPT_STYLES = ["auto", "open", "gemini", "gpt", "vtimellm", "trace", "groundedvideollm", "unitime",
                 "timelens"]


def add_eval_parsers(eval_sub: argparse._SubParsersAction) -> None:
    p = eval_sub.add_parser("impact-temporal", formatter_class=HelpFormatter,
                            help="HAPACT temporal metrics of QVHighlights-style JSONL predictions "
                                 "(mAP@0.3, R1@0.3, G-mAP, @k_tgt, mR@k)")
    p.add_argument("--gt", required=True, type=Path, nargs="+", help="ground truth JSONL "
                   '({"qid", "relevant_windows": [[s, e], ...]} per line); several files or '
                   "folders (every temporal_gt.jsonl under them) are merged")
    p.add_argument("--pred", required=True, type=Path, nargs="+", help="predictions JSONL "
                   '({"qid", "pred_relevant_windows": [[s, e, score], ...]} per line); several '
                   "files or folders (every temporal_pred.jsonl under them, e.g. the --out folders "
                   "of `run impact --shard i/N`) are merged")
    p.add_argument("--fps", type=float, default=24.0,
                   help="frame rate for the moment-length breakdown (HAPACT: 24)")
    p.add_argument("--partial", action="store_true",
                   help="score a file that lacks some ground-truth queries (a run not finished, a "
                        "shard): those queries are left out, as QV-M2's match_number=False does; "
                        "unset, such a file is refused naming the queries, as QV-M2 refuses it")
    p.add_argument("--no-prediction-as-miss", action="store_true",
                   help="the stricter reading: a query with no prediction (an empty window list, "
                        "an unparsed or failed answer, with --partial a missing line) is scored as "
                        "a miss (AP 0, top-1 miss, in mR@k) instead of left out as QV-M2 leaves it; "
                        "the output says so")
    p.add_argument("--json", action="store_true", help="print one JSON object (percentages, unrounded)")
    add_items_option(p, "query")
    p.set_defaults(func=eval_temporal_command)

    s = eval_sub.add_parser("impact-spatial", formatter_class=HelpFormatter,
                            help="HAPACT spatial metrics (F1, precision, recall, geodesic cm, "
                                 "per-group F1) of per-frame region/vertex predictions")
    s.add_argument("--annotations", required=True, type=as_source, help=ANNOTATIONS_HELP)
    s.add_argument("--pred", required=True, type=Path, nargs="+", help='spatial predictions JSONL '
                   '({"qid", "frame", "regions": [...], "vertices": [...]} per line); several '
                   "files or folders (every spatial_pred.jsonl under them) are merged")
    s.add_argument("--split", default=None, help="score only this split (e.g. test); unset: all items")
    s.add_argument("--json", action="store_true", help="print one JSON object (percentages, unrounded)")
    add_items_option(s, "frame")
    s.set_defaults(func=eval_spatial_command)


def add_run_parsers(run_sub: argparse._SubParsersAction) -> None:
    r = run_sub.add_parser("impact", formatter_class=HelpFormatter,
                           help="temporal + spatial predictions of a backend for a split (resumable; "
                                "writes temporal_pred.jsonl, temporal_gt.jsonl, spatial_pred.jsonl)")
    r.add_argument("--annotations", required=True, type=as_source, help=ANNOTATIONS_HELP)
    r.add_argument("--out", required=True, type=Path, help="output folder (rerun to resume)")
    r.add_argument("--split", default=None, help="only this split (e.g. test); unset: all items")
    r.add_argument("--tasks", default="temporal,spatial", help="comma list of temporal, spatial")
    r.add_argument("--max-frames", type=int, default=192,
                   help="frames sent per clip (at most the prompt style's count from the paper: "
                        "192, VTimeLLM 100, TRACE 128, Grounded-Video-LLM 96)")
    r.add_argument("--prompt-style", default="auto", choices=PROMPT_STYLES,
                   help="Table 7 prompt variant (auto: from the model name; vtimellm, trace, "
                        "groundedvideollm, unitime, timelens: those rows of Table 7, with the "
                        "paper's frame counts 100/128/96/192/192)")
    r.add_argument("--max-retries", type=int, default=2, help="re-asks after an unparsable answer")
    add_backend_options(r, items="clips")
    add_shard_option(r, by="clip qid")
    r.set_defaults(func=run_impact_command)


def add_compare_parsers(compare_sub: argparse._SubParsersAction) -> None:
    t = compare_sub.add_parser(
        "impact-temporal", formatter_class=HelpFormatter,
        help="two HAPACT temporal runs on the same ground truth: paired differences, disagreeing queries",
        description="Paired difference A - B of every temporal score (bootstrap over queries) with "
                    "its interval and p-value, and the queries whose AP@0.3 or top-1 hit differs.")
    t.add_argument("--gt", required=True, type=Path, nargs="+", help="ground truth JSONL of both runs "
                   "(several files or folders are merged, as eval)")
    compare.add_compare_arguments(t)
    t.set_defaults(func=compare_temporal_command)
    s = compare_sub.add_parser(
        "impact-spatial", formatter_class=HelpFormatter,
        help="two HAPACT spatial runs on the same annotations: paired differences, disagreeing frames",
        description="Paired difference A - B of every spatial score (bootstrap over queries, a "
                    "query's frames together) with its interval and p-value, and the frames whose "
                    "predicted regions differ.")
    s.add_argument("--annotations", required=True, type=Path, help="impact annotations JSON of both runs")
    s.add_argument("--split", default=None, help="score only this split (e.g. test); unset: all items")
    compare.add_compare_arguments(s)
    s.set_defaults(func=compare_spatial_command)


def compare_temporal_command(args: argparse.Namespace) -> int:
    return compare.emit(compare_temporal(args.gt, args.a, args.b), as_json=args.json, shown=args.show)


def compare_spatial_command(args: argparse.Namespace) -> int:
    return compare.emit(compare_spatial(args.annotations, args.a, args.b, split=args.split), as_json=args.json,
                        shown=args.show)


# -- eval impact-temporal / impact-spatial ----------------------------------------------------------

def with_interval(key: str, result: dict) -> str:
    """'51.85  [12.00, 88.00] over 3 queries' (the value alone when it has no interval)."""
    ci = (result.get("intervals") or {}).get(key)
    value = format_value(result.get(key))
    if not ci or ci.get("low") is None:
        return value
    return f"{value}  [{ci['low']:.2f}, {ci['high']:.2f}] over {ci['units']} {ci['unit']}"


def interval_note(result: dict) -> str | None:
    cis = [ci for ci in (result.get("intervals") or {}).values() if ci.get("low") is not None]
    if not cis:
        return None
    return (f"[..]: {round(100 * cis[0]['level'])} % interval, percentile bootstrap over "
            f"{cis[0]['unit']}, {cis[0]['resamples']} resamples, seed {cis[0]['seed']} (the same "
            "files give the same interval)")


def _notes(result: dict) -> None:
    for note in result.get("notes") or []:
        print(f"note: {note}", file=sys.stderr)


def _warn_temporal(result: dict) -> None:
    _notes(result)
    if result.get("gt_without_windows"):
        print(f"note: {result['gt_without_windows']} ground-truth line(s) have no window "
              "(relevant_windows []): nothing to find, left out of every average.", file=sys.stderr)


def eval_temporal_command(args: argparse.Namespace) -> int:
    rule = AS_MISS if args.no_prediction_as_miss else LEAVE_OUT
    result, gt, pred = evaluate_temporal_files(args.gt, args.pred, args.fps, partial=args.partial,
                                               no_prediction=rule)
    write_eval_items(args, "temporal", pred, gt=gt, no_prediction=rule)
    _warn_temporal(result)
    if args.json:
        print(json.dumps(result))
        return 0
    rows = [(k, with_interval(k, result)) for k in TEMPORAL_KEYS] + [("num_queries", result["num_queries"])]
    for name, summary in {**result["by_length"], **result["by_count"]}.items():
        rows.append((f"mAP@0.3 {name} ({summary['num_queries']} q)", summary["mAP@0.3"]))
    if rule == AS_MISS:
        rows.append(("queries with no prediction (scored as misses: --no-prediction-as-miss)",
                     result["scored_as_miss"]))
    else:
        rows.append(("queries with no prediction (left out, as QV-M2)", result["left_out"]))
    rows.append(("  of them without a prediction line (--partial)", result["queries_without_prediction"]))
    rows.append(("ground-truth lines without windows (left out)", result["gt_without_windows"]))
    rows.append(("invalid answers (unparsed/error/fallback: no prediction)", result["invalid"]))
    rows.append(("prediction lines for unknown qids (ignored)", result["ignored_unknown_items"]))
    rows.append(("windows starting before 0 s (scored as written)", result["windows_before_clip"]))
    rows.append(("windows ending after the clip (scored as written)", result["windows_beyond_clip"]))
    rows.append(("zero-length windows (scored as written)", result["zero_length_windows"]))
    rows.append(("ground-truth windows ending after the clip (scored as written)",
                 result["gt_windows_beyond_clip"]))
    rows += [(f"  {k}", result[k]) for k in ("unparsed", "errors", "fallbacks")]
    rows += [(f"mR@{k} queries (>= {k} GT and predicted windows)", result.get(f"mR@{k}_queries"))
             for k in (1, 2, 3)]
    rows.append(("@3+tgt queries (>= 3 GT windows)", result.get("@3+tgt_queries")))
    print(format_table(rows))
    note = interval_note(result)
    if note:
        print(note)
    return 0


def eval_spatial_command(args: argparse.Namespace) -> int:
    result, annotations, pred = evaluate_spatial_files(args.annotations, args.pred, split=args.split)
    write_eval_items(args, "spatial", pred, annotations=annotations)
    _notes(result)
    if args.json:
        print(json.dumps(result, default=float))
        return 0
    rows = [(k, with_interval(k, result)) for k, v in result.items() if not isinstance(v, (dict, list))]
    print(format_table(rows))
    note = interval_note(result)
    if note:
        print(note)
    return 0


# -- run impact --------------------------------------------------------------------------------------

def _report_invalid(summary: dict) -> None:
    for task in TASKS:
        counts = summary.get(f"{task}_answers") or {}
        bad = {k: v for k, v in counts.items() if k not in ("ok", "none")}
        if bad:
            scored = ("no prediction: left out of the scores, as QV-M2 leaves a query with no window"
                      if task == "temporal" else "scored as nothing predicted")
            print(f"{task}: {sum(bad.values())} answer(s) were not parsed "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(bad.items()))}); they are kept raw, "
                  f"never guessed ({scored}).", file=sys.stderr)


def run_impact_command(args: argparse.Namespace) -> int:
    summary = run_impact(args.annotations, backend_from_args(args), args.out, split=args.split,
                         tasks=args.tasks.split(","), concurrency=args.concurrency,
                         max_frames=args.max_frames, prompt_style=args.prompt_style,
                         max_retries=args.max_retries, progress=not args.no_progress,
                         shard=args.shard, stop_after_failures=stop_after_failures(args),
                         adopt=args.adopt)
    print(json.dumps(summary, indent=1))
    _report_invalid(summary)
    if summary.get("temporal_pred") and Path(summary["temporal_pred"]).exists():
        # partial: items that failed are not written (the run says so above); a query with no
        # prediction is left out as QV-M2 leaves it, and the note says how many
        result = evaluate_temporal_files(Path(summary["temporal_gt"]), Path(summary["temporal_pred"]),
                                         partial=True)[0]
        print(format_table([(k, result[k]) for k in TEMPORAL_KEYS]
                           + [("queries with no prediction (left out, as QV-M2)", result["left_out"]),
                              ("invalid answers (unparsed/error/fallback: no prediction)", result["invalid"])]))
        _notes(result)
    failed = {task: summary.get(task, {}).get("failed", 0) for task in TASKS}
    if any(failed.values()):
        detail = ", ".join(f"{n} {task}" for task, n in failed.items() if n)
        print(f"{sum(failed.values())} item(s) failed ({detail}; each reason is named above) and "
              "were not saved; rerun the same command to retry them.", file=sys.stderr)
        return 1
    return 0
