"""`python app.py compare <benchmark> A B`: two runs of one benchmark, item by item (pure; no
gradio). Each tab's cli.py loads the two files against the same annotations, refuses runs on other
data, and hands this module the scores of both as sums over the same units
(components.common.stats.SumScore) and the items they disagree on; this module computes the paired
differences and prints them (docs/metrics.md "Comparing two runs").
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from components.common import stats
from components.base.errors import UserError

#: disagreements printed without --json (all of them with --json)
DEFAULT_SHOWN = 20


@dataclass
class Comparison:
    """What `compare` reports: per score the paired difference A - B with its interval and
    p-value, exact McNemar tests where the score is an accuracy, and the disagreeing items."""

    benchmark: str
    a: str
    b: str
    data: str
    differences: dict[str, stats.Difference]
    disagreements: list[dict]
    items: int
    item_unit: str
    mcnemar: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        first = next(iter(self.differences.values()), None)
        return {"benchmark": self.benchmark, "a": self.a, "b": self.b, "data": self.data,
                "method": method_line(first.diff if first else None),
                "differences": {k: d.to_json() for k, d in self.differences.items()},
                "mcnemar": self.mcnemar,
                "disagreements": self.disagreements, "num_disagreements": len(self.disagreements),
                "items": self.items, "item_unit": self.item_unit, "notes": self.notes}


def paired(groups_a: Mapping[str, Sequence[stats.SumScore]],
           groups_b: Mapping[str, Sequence[stats.SumScore]]) -> dict[str, stats.Difference]:
    """The paired difference of every score, each group of scores over its own unit (e.g.
    "queries" and "pairs"), in the order the groups list them."""
    out: dict[str, stats.Difference] = {}
    for unit, scores in groups_a.items():
        out.update(stats.differences(scores, groups_b.get(unit, [])))
    return out


def refuse_unknown(path: object, keys: Iterable, known: set, *, what: str, against: str) -> None:
    """One line when a run holds items the annotations do not: it was made on other data."""
    unknown = sorted({str(k) for k in keys} - {str(k) for k in known})
    if unknown:
        raise UserError(f"{path}: {len(unknown)} {what} not in {against} (e.g. {unknown[0]}); compare "
                        "needs two runs on the same data: give each run's own annotations.")


def method_line(example: stats.Estimate | None) -> str:
    if example is None:
        return "no score to compare"
    return (f"paired bootstrap: the same resampled units for both runs, {example.resamples} "
            f"resamples, seed {example.seed}, {round(100 * example.level)} % percentile interval of "
            f"A - B; p: two-sided, significant when p < {1 - example.level:.2f}")


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return "-" if value is None else str(value)


def format_comparison(c: Comparison, shown: int = DEFAULT_SHOWN) -> str:
    lines = [f"compare {c.benchmark}: A = {c.a}, B = {c.b}, on {c.data}"]
    width = max([len(k) for k in c.differences] + [5])
    lines.append(f"{'score'.ljust(width)}  {'A':>7}  {'B':>7}  {'A - B':>7}  {'95 % interval':<18}  "
                 f"{'p':>6}  units")
    for name, d in c.differences.items():
        span = f"[{_num(d.diff.low, True)}, {_num(d.diff.high, True)}]" if d.diff.low is not None else "-"
        mark = "significant" if d.significant else "n.s."
        lines.append(f"{name.ljust(width)}  {_num(d.a.value):>7}  {_num(d.b.value):>7}  "
                     f"{_num(d.diff.value, True):>7}  {span:<18}  {d.p_value:>6.3f}  "
                     f"{d.diff.units} {d.diff.unit}  {mark}")
    first = next(iter(c.differences.values()), None)
    lines.append(method_line(first.diff if first else None))
    for name, t in c.mcnemar.items():
        lines.append(f"exact McNemar {name}: over {t['items']} question(s) both runs answered, A only "
                     f"right {t['a_only_right']}, B only right {t['b_only_right']}, p {t['p_value']:.4f}")
    lines += c.notes
    rows = c.disagreements
    head = f"disagreements: {len(rows)} of {c.items} {c.item_unit}"
    if not rows:
        lines.append(head + " (the two runs agree on every item)")
        return "\n".join(lines)
    lines.append(head + (f"; the first {shown} (all with --json)" if len(rows) > shown else ""))
    keys = list(rows[0])
    table = [keys] + [[_cell(r.get(k)) for k in keys] for r in rows[:shown]]
    widths = [max(len(row[i]) for row in table) for i in range(len(keys))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    return "\n".join(lines)


def emit(c: Comparison, *, as_json: bool, shown: int = DEFAULT_SHOWN) -> int:
    print(json.dumps(c.to_json()) if as_json else format_comparison(c, shown))
    return 0


def add_compare_arguments(p) -> None:
    """The options every `compare <benchmark>` takes (after its own annotation option)."""
    p.add_argument("a", type=str, help="run A (a file, or a folder of shard outputs)")
    p.add_argument("b", type=str, help="run B, on the same data as A")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object, with every disagreeing item")
    p.add_argument("--show", type=int, default=DEFAULT_SHOWN,
                   help="disagreeing items printed without --json")
