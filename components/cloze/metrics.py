"""Scores identical to the released analysis (docs/tempcloze-upstream.md, "Result file ... and its
metrics"), plus a strict variant, the parse rate, Mixed error shares and the order sensitivity of
the paper's Table 4. Percentages are 0-100, unrounded."""
from __future__ import annotations

import math
from collections import Counter
from typing import Any
from collections.abc import Iterable, Mapping

from components.cloze.data import DIM_CLIPS
from components.cloze.prompts import normalise_recorded_answer
from components.common.errors import DataFormatError
from components.common.validate import validated

DIMS = ("S", "A", "C")
PAPER_KEYS = {"S": "S", "A": "A", "C": "P"}


def _pct(num: float, den: float) -> float | None:
    return 100.0 * num / den if den else None


def entry_correct(entry: Mapping, letter: str) -> bool:
    """A valid entry's correctness: its `correct` flag as recorded; records without one compare
    the answer with `expected` (or with the letter whose option_map value is GT)."""
    if isinstance(entry.get("correct"), bool):
        return entry["correct"]
    expected = normalise_recorded_answer(entry.get("expected"))
    if expected is None and isinstance(entry.get("option_map"), dict):
        expected = next((k for k, v in entry["option_map"].items() if v == "GT"), None)
    return letter == expected


RESULTS_SCHEMA = dict[str, dict[str, dict[str, Any]]]


INVALID_KINDS = ("unparsed", "truncated", "media", "error", "no answer")


def invalid_kind(entry: Mapping) -> str:
    """Why an entry has no valid answer: a reply the parser could not read ('unparsed'), a reply
    cut at max_tokens ('truncated'), a broken clip ('media'), any other recorded error (a backend
    failure, an upstream file's "Cannot parse ..."), or a record with no answer and no error."""
    if entry.get("truncated"):
        return "truncated"
    error = str(entry.get("error") or "")
    for kind in ("unparsed", "truncated", "media"):
        if error.startswith(kind):
            return kind
    return "error" if error else "no answer"


def check_results(results, source: str = "results") -> dict:
    """`results` if it is in the upstream result format (stem -> dimension -> record object), else
    a DataFormatError naming the file, the stem and the dimension."""
    validated(RESULTS_SCHEMA, results, file=source,
              fix="A result file maps each stem to {S, A, C} records with 'answer' (the upstream format).")
    return results


def score_results(results: Mapping[str, Mapping[str, Mapping]]) -> dict:
    """The released analysis, plus extra keys `strict`, `parse_rate`, `entries`, `stems_total`,
    `mixed` (when Mixed entries exist)."""
    check_results(results)
    correct = Counter()
    valid = Counter()
    total = Counter()
    invalid = 0
    kinds = Counter()
    wrong_pick = {"A": Counter(), "C": Counter()}
    wrong_n = Counter()
    per_stem: list[int] = []
    mixed = {"correct": 0, "valid": 0, "total": 0, "wrong": Counter()}
    for _stem, dims in results.items():
        stem_correct, stem_valid = 0, 0
        for dim, entry in dims.items():
            if dim == "Mixed":
                mixed["total"] += 1
                letter = normalise_recorded_answer(entry.get("answer"))
                if letter is None:
                    continue
                mixed["valid"] += 1
                if entry_correct(entry, letter):
                    mixed["correct"] += 1
                else:
                    pick = (entry.get("option_map") or {}).get(letter, "?")
                    mixed["wrong"][_clip_family(pick)] += 1
                continue
            if dim not in DIMS:
                continue
            total[dim] += 1
            letter = normalise_recorded_answer(entry.get("answer"))
            if letter is None:
                invalid += 1
                kinds[invalid_kind(entry)] += 1
                continue
            valid[dim] += 1
            stem_valid += 1
            ok = entry_correct(entry, letter)
            if ok:
                correct[dim] += 1
                stem_correct += 1
            elif dim in wrong_pick:
                wrong_n[dim] += 1
                pick = (entry.get("option_map") or {}).get(letter)
                wrong_pick[dim][pick] += 1
        if stem_valid == 3 and all(d in dims for d in DIMS):
            per_stem.append(stem_correct)
    out: dict = {}
    for dim in DIMS:
        out[PAPER_KEYS[dim]] = _pct(correct[dim], valid[dim])
    out["acc"] = _pct(sum(correct.values()), sum(valid.values()))
    n = len(per_stem)
    counts = Counter(per_stem)
    for k in (3, 2, 1, 0):
        out[f"{k}/3"] = _pct(counts[k], n)
    out[">=1"] = _pct(counts[3] + counts[2] + counts[1], n)
    out[">=2"] = _pct(counts[3] + counts[2], n)
    out["stems"] = n
    out["invalid_entries_skipped"] = invalid
    out["invalid_kinds"] = {k: kinds[k] for k in INVALID_KINDS}
    out["error_source"] = {
        PAPER_KEYS[dim]: {name: _pct(wrong_pick[dim][name], wrong_n[dim]) for name in DIM_CLIPS[dim]}
        for dim in ("A", "C")}
    all_entries = sum(total.values())
    out["strict"] = {PAPER_KEYS[d]: _pct(correct[d], total[d]) for d in DIMS}
    out["strict"]["acc"] = _pct(sum(correct.values()), all_entries)
    out["parse_rate"] = _pct(sum(valid.values()), all_entries)
    out["entries"] = all_entries
    out["stems_total"] = len(results)
    if mixed["total"]:
        wrong = sum(mixed["wrong"].values())
        out["mixed"] = {"acc": _pct(mixed["correct"], mixed["valid"]), "questions": mixed["total"],
                        "invalid": mixed["total"] - mixed["valid"],
                        "error_share": {k: _pct(mixed["wrong"][k], wrong) for k in ("S", "A", "P")}}
    return out


def _clip_family(clip: str) -> str:
    for dim, names in DIM_CLIPS.items():
        if clip in names:
            return PAPER_KEYS[dim]
    return "?"


# ---- human study -> result file ----------------------------------------------------------------
def human_results(records: Iterable[Mapping]) -> dict:
    """Upstream-format results from human-study records of several annotators: the latest record
    per (annotator, stem, dim) counts; a question is correct only if every annotator who answered
    it chose GT (the paper's Human row: both annotators)."""
    latest: dict[tuple, Mapping] = {}
    for i, rec in enumerate(records):
        for key in ("stem", "dim", "answer"):
            if key not in rec:
                raise DataFormatError(f"human-study record {i} lacks key '{key}'.")
        who = rec.get("annotator", rec.get("_file", "annotator"))
        latest[(who, rec["stem"], rec["dim"])] = rec
    grouped: dict[tuple, list[Mapping]] = {}
    for (_who, stem, dim), rec in latest.items():
        grouped.setdefault((stem, dim), []).append(rec)
    out: dict = {}
    for (stem, dim), recs in sorted(grouped.items()):
        picks = []
        for rec in recs:
            letter = normalise_recorded_answer(rec.get("answer"))
            picks.append((rec.get("option_map") or {}).get(letter) if letter else None)
        all_gt = all(p == "GT" for p in picks)
        first = recs[0]
        dim_key = "C" if dim == "P" else dim
        out.setdefault(stem, {})[dim_key] = {
            "correct": all_gt, "answer": first.get("answer"), "expected": first.get("expected"),
            "option_map": first.get("option_map"), "annotators": len(recs),
            "picks": picks}
        if not all_gt:  # keep the record consistent with 'correct' for the analysis
            entry = out[stem][dim_key]
            wrong = next((r for r, p in zip(recs, picks) if p != "GT"), first)
            entry.update(answer=wrong.get("answer"), option_map=wrong.get("option_map"))
    return out


# ---- candidate-order sensitivity (Table 4) -----------------------------------------------------
def order_sensitivity(runs: Mapping[str, list[tuple[bool, str | None]]]) -> dict:
    """`runs`: question key -> one (correct, selected clip) per order, all questions with the same
    number k of orders. FR = % questions whose correctness changes across orders; CFR = % whose
    selected clip changes (an unparsed answer is its own selection, None); Range = max - min of the
    per-order accuracy; Disp = its standard deviation (population, ddof 0)."""
    if not runs:
        return {"questions": 0, "orders": 0, "FR": None, "CFR": None, "Range": None, "Disp": None,
                "acc": None, "per_order_acc": []}
    ks = {len(v) for v in runs.values()}
    if len(ks) != 1:
        raise DataFormatError("order sensitivity needs the same number of orders for every question.")
    k = ks.pop()
    n = len(runs)
    fr = sum(1 for v in runs.values() if len({c for c, _ in v}) > 1)
    cfr = sum(1 for v in runs.values() if len({s for _, s in v}) > 1)
    per_order = [100.0 * sum(1 for v in runs.values() if v[j][0]) / n for j in range(k)]
    mean = sum(per_order) / k
    disp = math.sqrt(sum((a - mean) ** 2 for a in per_order) / k)
    return {"questions": n, "orders": k, "FR": 100.0 * fr / n, "CFR": 100.0 * cfr / n,
            "Range": max(per_order) - min(per_order), "Disp": disp, "acc": mean,
            "per_order_acc": per_order}
