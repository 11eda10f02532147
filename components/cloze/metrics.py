"""Scores identical to the released analysis (docs/tempcloze-upstream.md, "Result file ... and its
metrics"), plus a strict variant, the parse rate, Mixed error shares and the order sensitivity of
the paper's Table 4. Percentages are 0-100, unrounded.

A stem that lacks a dimension other stems of the file have (S, A or C) is counted in
`missing_entries`: the released scores leave it out (they count the entries present), the strict
scores count it as wrong. Every score carries a 95 % bootstrap interval over stems (`intervals`;
docs/metrics.md "Intervals")."""
from __future__ import annotations

import math
from collections import Counter
from typing import Any
from collections.abc import Iterable, Mapping

from components.cloze.data import DIM_CLIPS
from components.cloze.replies import normalise_recorded_answer
from components.common import stats
from components.base.errors import DataFormatError
from components.common.validate import validated

DIMS = ("S", "A", "C")
PAPER_KEYS = {"S": "S", "A": "A", "C": "P"}
CONTRADICTIONS_NAMED = 20  # entries listed by name in `contradicting_entries`


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


def truth_letter(entry: Mapping) -> str | None:
    """The letter the entry itself names as the true middle: its option_map's GT option, else its
    `expected`; None when it names none."""
    if isinstance(entry.get("option_map"), dict):
        letter = next((k for k, v in entry["option_map"].items() if v == "GT"), None)
        if letter is not None:
            return normalise_recorded_answer(letter)
    return normalise_recorded_answer(entry.get("expected"))


def scorable(entry: Mapping) -> bool:
    """Whether a valid answer of the entry can be scored: it records `correct`, or names the
    true middle (`expected` or an option_map with GT). Without either the answer is counted
    invalid ('unscorable'), never as a wrong answer."""
    return isinstance(entry.get("correct"), bool) or truth_letter(entry) is not None


def scored_letter(entry: Mapping) -> str | None:
    """The entry's answer letter when it is valid and scorable, else None (an invalid entry)."""
    letter = normalise_recorded_answer(entry.get("answer"))
    return letter if letter is not None and scorable(entry) else None


def contradicts(entry: Mapping) -> bool:
    """A `correct` flag that says the opposite of the entry's answer and its own option_map /
    expected. The released analysis scores the flag, and so does this; the entry is counted and
    named (`contradictions`)."""
    letter = normalise_recorded_answer(entry.get("answer"))
    truth = truth_letter(entry)
    return (letter is not None and truth is not None and isinstance(entry.get("correct"), bool)
            and entry["correct"] != (letter == truth))


RESULTS_SCHEMA = dict[str, dict[str, dict[str, Any]]]


INVALID_KINDS = ("unparsed", "truncated", "media", "error", "no answer", "unscorable")


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
    if not error and normalise_recorded_answer(entry.get("answer")) is not None:
        return "unscorable"  # a letter, but no correct / expected / option_map GT to score it by
    return "error" if error else "no answer"


def check_results(results, source: str = "results") -> dict:
    """`results` if it is in the upstream result format (stem -> dimension -> record object), else
    a DataFormatError naming the file, the stem and the dimension."""
    validated(RESULTS_SCHEMA, results, file=source,
              fix="A result file maps each stem to {S, A, C} records with 'answer' (the upstream format).")
    for stem, dims in results.items():
        for dim, entry in dims.items():
            option_map = entry.get("option_map")
            gts = [k for k, v in option_map.items() if v == "GT"] if isinstance(option_map, dict) else []
            if len(gts) > 1:
                raise DataFormatError(f"{source}: stem '{stem}' dimension {dim} key 'option_map': "
                                      f"{len(gts)} options ({', '.join(map(str, gts))}) are GT; exactly one "
                                      "option is the true middle. Fix or remove the entry.")
    return results


def score_results(results: Mapping[str, Mapping[str, Mapping]]) -> dict:
    """The released analysis, plus extra keys `strict`, `parse_rate`, `entries`, `stems_total`,
    `mixed` (when Mixed entries exist).
    Shapes: results: stem -> dim -> record (n_stems stems) -> dict of floats"""
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
    contradicting: list[str] = []
    for stem, dims in results.items():
        stem_correct, stem_valid = 0, 0
        for dim, entry in dims.items():
            if (dim in DIMS or dim == "Mixed") and contradicts(entry):
                contradicting.append(f"{stem}/{PAPER_KEYS.get(dim, dim)}")
            if dim == "Mixed":
                mixed["total"] += 1
                letter = scored_letter(entry)
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
            letter = scored_letter(entry)
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
    missing = missing_entries(results)
    out["missing_entries"] = {PAPER_KEYS[d]: missing[d] for d in DIMS}
    out["strict"] = {PAPER_KEYS[d]: _pct(correct[d], total[d] + missing[d]) for d in DIMS}
    out["strict"]["acc"] = _pct(sum(correct.values()), all_entries + sum(missing.values()))
    out["parse_rate"] = _pct(sum(valid.values()), all_entries)
    out["entries"] = all_entries
    out["stems_total"] = len(results)
    # scored by their `correct` flag as the released analysis does, but named
    out["contradictions"] = len(contradicting)
    out["contradicting_entries"] = contradicting[:CONTRADICTIONS_NAMED]
    if mixed["total"]:
        wrong = sum(mixed["wrong"].values())
        out["mixed"] = {"acc": _pct(mixed["correct"], mixed["valid"]), "questions": mixed["total"],
                        "invalid": mixed["total"] - mixed["valid"],
                        "error_share": {k: _pct(mixed["wrong"][k], wrong) for k in ("S", "A", "P")}}
    out["intervals"] = {k: e.to_json() for k, e in stats.estimates(unit_scores(results)).items()}
    return out


#: the released analysis' own numbers (its `x / y if y else 0`)
RELEASED_KEYS = ("S", "A", "P", "acc", "3/3", "2/3", "1/3", "0/3", ">=1", ">=2")


def as_released(metrics: dict) -> dict:
    """`score_results` as the released analysis writes it: a score over no valid entry is 0, not
    None (S, A, P, acc, k/3, >=k, the error sources), and `nothing_valid` names each such score
    (empty when there is none), so a 0 that means "nothing to score" is not taken for a 0 %; its
    interval is [0, 0] with `"nothing_valid": true`."""
    out = dict(metrics)
    empty: list[str] = []
    for key in RELEASED_KEYS:
        if out.get(key) is None:
            out[key] = 0.0
            empty.append(key)
    sources = {}
    for dim, shares in (metrics.get("error_source") or {}).items():
        sources[dim] = dict(shares)
        for name, value in shares.items():
            if value is None:
                sources[dim][name] = 0.0
                empty.append(f"error source {dim} {name}")
    out["error_source"] = sources
    out["nothing_valid"] = empty
    # a score written 0 has the interval [0, 0] (marked), never value, low and high all null
    intervals = {k: dict(v) for k, v in (metrics.get("intervals") or {}).items()}
    for key in empty:
        if key in intervals and intervals[key].get("value") is None:
            intervals[key].update(value=0.0, low=0.0, high=0.0, nothing_valid=True)
    if "intervals" in metrics:
        out["intervals"] = intervals
    return out


def missing_entries(results: Mapping[str, Mapping[str, Mapping]]) -> Counter:
    """Per dimension (S, A, C): how many stems lack it while another stem of the file has it.
    Shapes: results: stem -> dim -> record (n_stems stems) -> dim -> int"""
    present = {d for dims in results.values() for d in dims if d in DIMS}
    return Counter({d: sum(1 for dims in results.values() if d not in dims) for d in present})


#: the per-stem columns behind every score (see `stem_columns`)
_DIM_COLUMNS = ("correct", "valid", "present", "missing")


def stem_columns(results: Mapping[str, Mapping[str, Mapping]],
                 stems: Iterable[str] | None = None) -> dict[str, list[float]]:
    """One value per stem (in `stems` order; default: the file's) for every count a score sums:
    `<dim>_correct`, `<dim>_valid`, `<dim>_present`, `<dim>_missing` (S, A, C), `full` (the stem's
    three entries all valid: the cumulative scores' denominator), `k<n>` (full and n of 3 right),
    `mixed_correct`, `mixed_valid`. A stem the file does not hold contributes zeros.
    Shapes: results: stem -> dim -> record; stems: (n_stems,) -> column -> (n_stems,) float"""
    stems = list(results) if stems is None else list(stems)
    expected = {d for dims in results.values() for d in dims if d in DIMS}
    cols: dict[str, list[float]] = {f"{d}_{c}": [] for d in DIMS for c in _DIM_COLUMNS}
    cols.update({"full": [], **{f"k{n}": [] for n in range(4)}, "mixed_correct": [], "mixed_valid": []})
    for stem in stems:
        dims = results.get(stem)
        right = 0
        valid_dims = 0
        for d in DIMS:
            entry = dims.get(d) if dims is not None else None
            letter = scored_letter(entry) if entry is not None else None
            ok = letter is not None and entry_correct(entry, letter)
            cols[f"{d}_correct"].append(float(ok))
            cols[f"{d}_valid"].append(float(letter is not None))
            cols[f"{d}_present"].append(float(entry is not None))
            cols[f"{d}_missing"].append(float(dims is not None and entry is None and d in expected))
            right += ok
            valid_dims += letter is not None
        full = valid_dims == 3
        cols["full"].append(float(full))
        for n in range(4):
            cols[f"k{n}"].append(float(full and right == n))
        mixed = dims.get("Mixed") if dims is not None else None
        letter = scored_letter(mixed) if mixed is not None else None
        cols["mixed_valid"].append(float(letter is not None))
        cols["mixed_correct"].append(float(letter is not None and entry_correct(mixed, letter)))
    return cols


def unit_scores(results: Mapping[str, Mapping[str, Mapping]],
                stems: Iterable[str] | None = None) -> list[stats.SumScore]:
    """Every score of `score_results` that has an interval, as sums over stems (the paper's unit:
    a stem's S, A and P questions share one video), aligned to `stems` (default: sorted, so the
    same entries give the same interval whatever order the files or shards list them in).
    Shapes: results: stem -> dim -> record; stems: (n_stems,) -> (n_scores,) SumScore, each over (n_stems,)"""
    c = {k: [float(x) for x in v] for k, v in stem_columns(results, sorted(results) if stems is None
                                                           else stems).items()}

    def add(*names: str):
        return [sum(vals) for vals in zip(*(c[n] for n in names))]

    def pct(name: str, num, den, empty: float | None = None) -> stats.SumScore:
        return stats.ratio(name, num, den, unit="stems", scale=100.0, empty=empty)

    scores = [pct(PAPER_KEYS[d], c[f"{d}_correct"], c[f"{d}_valid"]) for d in DIMS]
    scores.append(pct("acc", add(*(f"{d}_correct" for d in DIMS)), add(*(f"{d}_valid" for d in DIMS))))
    for n in (3, 2, 1, 0):
        scores.append(pct(f"{n}/3", c[f"k{n}"], c["full"]))
    scores.append(pct(">=1", add("k3", "k2", "k1"), c["full"]))
    scores.append(pct(">=2", add("k3", "k2"), c["full"]))
    for d in DIMS:
        scores.append(pct(f"strict {PAPER_KEYS[d]}", c[f"{d}_correct"], add(f"{d}_present", f"{d}_missing")))
    scores.append(pct("strict acc", add(*(f"{d}_correct" for d in DIMS)),
                      add(*(f"{d}_{k}" for d in DIMS for k in ("present", "missing")))))
    scores.append(pct("parse_rate", add(*(f"{d}_valid" for d in DIMS)), add(*(f"{d}_present" for d in DIMS))))
    if any(c["mixed_valid"]):
        scores.append(pct("Mixed acc", c["mixed_correct"], c["mixed_valid"]))
    return scores


def question_outcomes(results: Mapping[str, Mapping[str, Mapping]]) -> dict[tuple[str, str], dict]:
    """(stem, paper dimension) -> what the run chose: the letter, the clip it names (option_map;
    None when unparsed), whether it is right, whether the answer was valid.
    Shapes: results: stem -> dim -> record -> (stem, dim) -> dict, one per question"""
    out = {}
    for stem, dims in results.items():
        for dim, entry in dims.items():
            if dim not in DIMS and dim != "Mixed":
                continue
            letter = scored_letter(entry)
            pick = (entry.get("option_map") or {}).get(letter) if letter else None
            out[(stem, PAPER_KEYS.get(dim, dim))] = {
                "answer": letter, "pick": pick, "valid": letter is not None,
                "correct": letter is not None and entry_correct(entry, letter)}
    return out


def _clip_family(clip: str) -> str:
    for dim, names in DIM_CLIPS.items():
        if clip in names:
            return PAPER_KEYS[dim]
    return "?"


# ---- human study -> result file ----------------------------------------------------------------
HUMAN_DIMS = {"S": "S", "A": "A", "C": "C", "P": "C"}   # a record's dim -> the result file's key


def _where(rec: Mapping, i: int) -> str:
    return str(rec.get("_line") or f"human-study record {i + 1}")


def human_verdict(rec: Mapping) -> tuple[str | None, bool | None]:
    """(letter, right) of one human record. Right is judged by the answer: the clip its letter
    picks in the record's option_map is GT or not (the paper's Human row), else the letter against
    its `expected`; a record naming neither is judged by its `correct` flag; one with no flag
    either, or with no valid letter, is None: not scorable (an invalid entry, never a wrong one)."""
    letter = normalise_recorded_answer(rec.get("answer"))
    if letter is None:
        return None, None
    option_map = rec.get("option_map")
    if isinstance(option_map, dict) and letter in option_map:
        return letter, option_map[letter] == "GT"
    truth = truth_letter(rec)
    if truth is not None:
        return letter, letter == truth
    if isinstance(rec.get("correct"), bool):
        return letter, rec["correct"]
    return letter, None


def latest_human_records(records: Iterable[Mapping]) -> dict[tuple, Mapping]:
    """(annotator, stem, dimension key) -> the record that counts: the newest `answered_at_utc`
    (then the higher `redo_count`, then the later line), as the study page's own store resolves a
    redo (components/cloze/study/merge.py). A record without the keys a question needs is refused,
    naming its file and line.
    Shapes: records: (n_records,) dicts -> (annotator, stem, dim) -> record"""
    from components.cloze.study.merge import order_key

    latest: dict[tuple, Mapping] = {}
    for i, rec in enumerate(records):
        for key in ("stem", "dim", "answer"):
            if key not in rec:
                raise DataFormatError(f"{_where(rec, i)} lacks key '{key}': a human-study answer names its "
                                      "stem, dim and answer. Fix or remove the line.")
        if rec["dim"] not in HUMAN_DIMS:
            raise DataFormatError(f"{_where(rec, i)} key 'dim': {rec['dim']!r} is not S, A or C (P); fix or "
                                  "remove the line.")
        who = rec.get("annotator", rec.get("_file", "annotator"))
        key = (who, rec["stem"], HUMAN_DIMS[rec["dim"]])
        if key not in latest or order_key(dict(rec)) >= order_key(dict(latest[key])):
            latest[key] = rec
    return latest


def human_results(records: Iterable[Mapping]) -> dict:
    """Upstream-format results from human-study records of several annotators: the latest record
    per (annotator, stem, dim) counts (`latest_human_records`); a question is correct only if every
    annotator who answered it chose GT (the paper's Human row: both annotators). A question with a
    record that cannot be scored (`human_verdict` None) is an invalid entry (`unscorable`, or `no
    answer`), never a wrong one.
    Shapes: records: (n_records,) dicts -> stem -> dim -> record"""
    grouped: dict[tuple, list[Mapping]] = {}
    for (_who, stem, dim), rec in latest_human_records(records).items():
        grouped.setdefault((stem, dim), []).append(rec)
    out: dict = {}
    for (stem, dim), recs in sorted(grouped.items()):
        verdicts = [human_verdict(rec) for rec in recs]
        picks = [(rec.get("option_map") or {}).get(letter) if letter else None
                 for rec, (letter, _) in zip(recs, verdicts)]
        unjudged = next((rec for rec, (_, right) in zip(recs, verdicts) if right is None), None)
        if unjudged is not None:   # no 'correct', 'expected' or option map: counted invalid, not wrong
            out.setdefault(stem, {})[dim] = {"answer": unjudged.get("answer"), "expected": None,
                                             "option_map": None, "annotators": len(recs), "picks": picks}
            continue
        all_right = all(right for _, right in verdicts)
        shown = recs[0] if all_right else next(r for r, (_, right) in zip(recs, verdicts) if not right)
        out.setdefault(stem, {})[dim] = {
            "correct": all_right, "answer": shown.get("answer"), "expected": shown.get("expected"),
            "option_map": shown.get("option_map"), "annotators": len(recs), "picks": picks}
    return out


def human_notes(records: Iterable[Mapping], named: int = 3) -> list[str]:
    """What `human_results` decided about the records that count, said: records it could not
    score, and `correct` flags that contradict the answer (scored by the answer), each with the
    first `named` places (file and line).
    Shapes: records: (n_records,) dicts -> (n_notes,) str"""
    unjudged, contradicting = [], []
    for i, rec in enumerate(latest_human_records(records).values()):
        letter, right = human_verdict(rec)
        where = _where(rec, i)
        if right is None:
            unjudged.append(where)
        elif isinstance(rec.get("correct"), bool) and rec["correct"] != right:
            contradicting.append(where)

    def places(found: list[str]) -> str:
        """Shapes: found: (n,) str -> str"""
        more = len(found) - named
        return "; ".join(found[:named]) + (f"; and {more} more" if more > 0 else "")
    notes = []
    if unjudged:
        notes.append(f"{len(unjudged)} human answer(s) cannot be scored (no valid letter, or no option_map "
                     f"GT, 'expected' or 'correct' to score it by: {places(unjudged)}); their questions are "
                     "counted invalid, not wrong.")
    if contradicting:
        notes.append(f"{len(contradicting)} human answer(s) have a 'correct' flag that contradicts the answer "
                     f"and its option_map/expected ({places(contradicting)}); scored by the answer (the pick "
                     "is GT or not), not by the flag.")
    return notes


# ---- candidate-order sensitivity (Table 4) -----------------------------------------------------
def order_sensitivity(runs: Mapping[str, list[tuple[bool, str | None]]]) -> dict:
    """`runs`: question key -> one (correct, selected clip) per order, all questions with the same
    number k of orders. FR = % questions whose correctness changes across orders; CFR = % whose
    selected clip changes (an unparsed answer is its own selection, None); Range = max - min of the
    per-order accuracy; Disp = its standard deviation (population, ddof 0).
    Shapes: runs: question key -> (k,) (correct, clip), n_questions keys -> dict of floats"""
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
