"""Command line: `eval cloze` (score an upstream result file or human-study files) and `run cloze`
(answer a set with a backend, resumable). The same functions as the UI.

    python app.py eval cloze --results R.json [--json] | --human --results a1.jsonl a2.jsonl
    python app.py [--backend SPEC] run cloze --data DIR --out R.json [--backend SPEC] [--set NAME]
        [--dims S,A,P] [--seed 42] [--limit N] [--edge edge1|edge4] [--strict] [--max-images N]
        [--max-tokens 8192] [--prompt-style api|open] [--shard i/N]
    python app.py run cloze-edge --data DIR --out R.json [--model facebook/dinov2-base | FOLDER]
        [--seed 42] [--limit N]      (the released DINOv2 edge baseline, its own result file)

    python app.py compare cloze A.json B.json [--json] [--show 20]

`eval cloze --results` takes several result files or folders (the shards' outputs) and merges them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from components.cloze.study.results_file import read_human_files
from components.cloze.data import load_dataset
from components.cloze.prompts import DEFAULT_STYLE, PROMPT_STYLES, RELEASED_MAX_TOKENS
from components.cloze.questions import build_set, question_files
from components.cloze.pipeline import run_set
from components.cloze.metrics import DIMS, PAPER_KEYS, as_released, check_results, human_notes, human_results, \
    question_outcomes, \
    score_results, unit_scores
from components.cloze.solvers import SolverSettings, solvers_for
from components.common import compare, stats
from components.common.cli import HelpFormatter, add_backend_options, add_shard_option, backend_from_args, \
    stop_after_failures
from components.base.errors import UserError
from components.base.io import load_json
from components.common.runs import add_items_option
from components.cloze.runs import write_eval_items
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
    add_items_option(p, "question")
    p.set_defaults(func=eval_handler)


def add_compare_parsers(compare_subparsers) -> None:
    p = compare_subparsers.add_parser(
        "cloze", help="two TempCloze result files on the same stems: paired differences, exact "
                      "McNemar per dimension, disagreeing questions", formatter_class=HelpFormatter,
        description="Paired difference A - B of every TempCloze score (bootstrap over stems) with "
                    "its interval and p-value, the exact McNemar test of S, A, P and all questions "
                    "(those both runs answered), and the questions whose picked clip differs.")
    compare.add_compare_arguments(p)
    p.set_defaults(func=compare_handler)


def _data_sets(results: dict) -> set[str]:
    return {str(e["data_set"]) for dims in results.values() for e in dims.values()
            if isinstance(e, dict) and e.get("data_set")}


def cloze_mcnemar(a: dict, b: dict) -> dict[str, dict]:
    """Exact McNemar per paper dimension and over all questions, on the questions both runs hold
    and answered validly (the released accuracy's own entries)."""
    qa, qb = question_outcomes(a), question_outcomes(b)
    both = [k for k in qa if k in qb and qa[k]["valid"] and qb[k]["valid"] and k[1] in PAPER_KEYS.values()]
    out = {}
    for name, keys in [(d, [k for k in both if k[1] == d]) for d in PAPER_KEYS.values()] + [("all", both)]:
        if keys:
            out[name] = stats.mcnemar_exact([qa[k]["correct"] for k in keys], [qb[k]["correct"] for k in keys])
    return out


def cloze_disagreements(a: dict, b: dict) -> list[dict]:
    """Questions both runs hold whose picked clip (or validity) differs, by stem and dimension."""
    qa, qb = question_outcomes(a), question_outcomes(b)
    rows = []
    for key in sorted(k for k in qa if k in qb):
        x, y = qa[key], qb[key]
        if (x["pick"], x["valid"]) == (y["pick"], y["valid"]):
            continue
        rows.append({"stem": key[0], "dim": key[1], "pick_a": x["pick"] if x["valid"] else "unparsed",
                     "pick_b": y["pick"] if y["valid"] else "unparsed", "right_a": x["correct"],
                     "right_b": y["correct"]})
    return rows


def compare_handler(args: argparse.Namespace) -> int:
    a, b = load_result_files([Path(args.a)]), load_result_files([Path(args.b)])
    sets_a, sets_b = _data_sets(a), _data_sets(b)
    if sets_a and sets_b and not sets_a & sets_b:
        raise UserError(f"{args.a} was run on {', '.join(sorted(sets_a))} and {args.b} on "
                        f"{', '.join(sorted(sets_b))}: compare needs two runs on the same data.")
    common = set(a) & set(b)
    if not common:
        raise UserError(f"{args.a} and {args.b} share no stem: they are runs on different data; "
                        "compare needs two runs on the same data.")
    stems = sorted(set(a) | set(b))
    notes = [f"{n} stem(s) only in {name}: they count for that run only (paired over all {len(stems)})"
             for name, n in ((args.a, len(set(a) - common)), (args.b, len(set(b) - common))) if n]
    in_b = question_outcomes(b)
    questions = sum(1 for k in question_outcomes(a) if k in in_b)
    result = compare.Comparison(
        "cloze", str(args.a), str(args.b), f"{len(stems)} stems ({len(common)} in both)",
        stats.differences(unit_scores(a, stems), unit_scores(b, stems)), cloze_disagreements(a, b),
        questions, "questions in both runs", mcnemar=cloze_mcnemar(a, b), notes=notes)
    return compare.emit(result, as_json=args.json, shown=args.show)


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
    p.add_argument("--edge", default="edge1", choices=["edge1", "edge4", "dinov2"],
                   help="edge baseline when the backend is baseline: dinov2 = the released "
                        "Edge-4 DINOv2 baseline's answer (weights: $APP_EDGE_MODEL, else "
                        "facebook/dinov2-base); edge1 / edge4 = the app's offline pixel "
                        "approximation (not the paper's numbers); `run cloze-edge` writes the "
                        "released baseline's own file")
    p.add_argument("--strict", action="store_true", help="stricter parsing (unwraps <A>, needs reason)")
    p.add_argument("--retry-sleep", type=float, default=1.0,
                   help="seconds before re-asking after an unreadable answer or a failed call "
                        "(as released, within the 3 attempts), times the attempt number")
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
    add_edge_run_parser(run_subparsers)


def add_edge_run_parser(run_subparsers) -> None:
    p = run_subparsers.add_parser(
        "cloze-edge", help="TempCloze's released edge baseline (DINOv2 edge features), as released",
        formatter_class=HelpFormatter,
        description="TempCloze/edge_matching_baseline.py: frozen DINOv2 features of each clip's "
                    "edge frames, each candidate scored by the cosine of mean edge features, the "
                    "scores normalised into probabilities; reports the mean probability of the "
                    "true middle and the mean margin per dimension (not an accuracy), in the "
                    "released JSON (summary, results, skipped). Resumes a file where every "
                    "dimension of a stem is done. On a GPU when there is one.")
    p.add_argument("--data", required=True, type=Path, help="folder holding choices/ (or its parent)")
    p.add_argument("--out", required=True, type=Path, help="result JSON to write (released format)")
    p.add_argument("--model", default="facebook/dinov2-base",
                   help="image feature model: a Hugging Face id (downloaded beforehand) or a "
                        "folder written by save_pretrained")
    p.add_argument("--seed", type=int, default=42, help="option-order seed (as released)")
    p.add_argument("--limit", type=int, default=None, help="the first N stems only")
    p.add_argument("--targets", nargs="*", default=None, help="only these stems")
    p.add_argument("--save-every", type=int, default=25, help="write the file every N stems")
    p.add_argument("--overwrite", action="store_true", help="start again instead of resuming")
    p.set_defaults(func=edge_run_handler)


def edge_run_handler(args: argparse.Namespace) -> int:
    from backends.registry import resolve_embedder
    from components.cloze.released_edge import format_summary, run_edge_baseline

    ds = load_dataset(args.data)
    embedder = resolve_embedder(f"hf-image:{args.model}")
    payload = run_edge_baseline(ds, args.out, embedder, seed=args.seed, limit=args.limit,
                                stems=args.targets, save_every=args.save_every,
                                overwrite=args.overwrite)
    done = sum(len(v) for v in payload["results"].values())
    print(f"Saved: {args.out}\nCompleted entries: {done}\nSkipped tasks: {len(payload['skipped'])}")
    print(format_summary(payload["summary"]))
    return 0


def _fmt(v) -> str:
    return "  -  " if v is None else f"{v:6.2f}"


def format_scores(m: dict) -> str:
    """`eval cloze`'s summary: the paper's columns in one row, then the counts and notes."""
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
    if m.get("contradictions"):
        lines.append(f"contradictions ('correct' flag against answer and option map; scored by the "
                     f"flag, as released): {m['contradictions']}")
    missing = {k: n for k, n in (m.get("missing_entries") or {}).items() if n}
    if missing:
        lines.append("missing entries (stems lacking a dimension other stems have; left out of the "
                     "released scores, wrong in strict): " + ", ".join(f"{k} {n}" for k, n in missing.items()))
    if m.get("nothing_valid"):
        lines.append("no valid entry to score (written 0, as the released analysis does): "
                     + ", ".join(m["nothing_valid"]))
    cis = m.get("intervals") or {}
    shown = [k for k in ("S", "A", "P", "acc", ">=1", ">=2", "3/3") if (cis.get(k) or {}).get("low") is not None]
    if shown:
        first = cis[shown[0]]
        lines.append(f"95 % intervals over {first['units']} stems: "
                     + " · ".join(f"{k} [{cis[k]['low']:.2f}, {cis[k]['high']:.2f}]" for k in shown))
        lines.append(f"(percentile bootstrap over stems, {first['resamples']} resamples, seed "
                     f"{first['seed']}; the same files give the same interval)")
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
        read = read_human_files(args.results)
        if not read.records:
            left = f" ({read.practice} practice and {read.checks} attention-check answers, not scored)" \
                if read.practice or read.checks else ""
            raise UserError(f"no human-study answers (JSON lines or set_N.json responses) in "
                            f"{', '.join(map(str, args.results))}{left}.")
        results = human_results(read.records)
        before = [*read.notes, *human_notes(read.records)]
    else:
        results = load_result_files(args.results)
        before = []
    names = ", ".join(map(str, args.results))
    if not any(dim in DIMS or dim == "Mixed" for dims in results.values() for dim in dims):
        raise UserError(f"{names}: no S, A, C or Mixed entry to score (an empty result file such as "
                        "{}); pass the result file of a run.")
    metrics = as_released(score_results(results))
    if args.human:
        metrics["practice_answers_skipped"], metrics["check_answers_skipped"] = read.practice, read.checks
    metrics["notes"] = before + result_notes(metrics)
    write_eval_items(args, results)
    print(json.dumps(metrics) if args.json else format_scores(metrics))
    for note in metrics["notes"]:
        print(f"note: {note}", file=sys.stderr)
    return 0


def result_notes(metrics: dict) -> list[str]:
    """What the scores hide: stems lacking a dimension, `correct` flags that contradict their
    entry, letters that nothing scores (docs/decisions.md "Eval inputs")."""
    notes = []
    missing = {k: n for k, n in metrics["missing_entries"].items() if n}
    if missing:
        notes.append(", ".join(f"{n} stem(s) lack {k}" for k, n in missing.items())
                     + " while other stems have it; the released scores leave them out, strict counts "
                     "them as wrong (missing_entries).")
    if metrics.get("contradictions"):
        named = metrics["contradicting_entries"]
        more = metrics["contradictions"] - len(named)
        notes.append(f"{metrics['contradictions']} entr(ies) have a 'correct' flag that contradicts "
                     "their answer and option_map/expected; scored by the flag, as the released "
                     f"analysis does (contradictions: {', '.join(named)}" + (f" and {more} more" if more else "")
                     + ").")
    unscorable = metrics["invalid_kinds"].get("unscorable")
    if unscorable:
        notes.append(f"{unscorable} entr(ies) have an answer but no 'correct', 'expected' or option_map "
                     "GT to score it by; counted invalid (invalid_kinds.unscorable), not wrong.")
    return notes


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
                  concurrency=args.concurrency, progress=not args.no_progress,
                  stop_after_failures=stop_after_failures(args), adopt=args.adopt)
    c = out["counts"]
    print(f"{c['done']} answered, {c['skipped']} already done, {c['failed']} failed -> {args.out}")
    print(format_scores(as_released(score_results(out["results"]))))
    return 0 if not c["failed"] else 1
