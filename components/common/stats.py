"""Uncertainty of a score: bootstrap intervals over a benchmark's unit, paired differences of two
runs, and the exact McNemar test (pure numpy/scipy; docs/metrics.md "Intervals").

Every score the app reports is a function of sums over units (a stem, a query, a pair): accuracy
is correct / answered summed over stems, mIoU is the IoU sum over the query count, a mean of
per-query AP is the AP sum over the queries; HAPACT's @3+tgt, the unweighted mean of group means,
is a function of each group's AP sum and query count. A `SumScore` holds the per-unit columns and
that function; the units are resampled with replacement and the score recomputed from the
resampled sums, `resamples` times, with a fixed seed, so the same files always give the same
interval (percentile interval, 95 % by default). All scores of one benchmark share one draw of
resamples, which is also what makes a difference of two runs paired.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

#: the defaults every command and view uses (stated beside each interval they print)
RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
_BLOCK = 250  # resamples drawn at once: a 250 x units count matrix


@dataclass(frozen=True)
class Estimate:
    """A score with its interval. `value` is the score on the data as given (not the bootstrap
    mean); `low`/`high` are None when no unit carries a denominator. `unit` names what was
    resampled ("stems", "queries", ...)."""

    value: float | None
    low: float | None
    high: float | None
    units: int
    resamples: int = RESAMPLES
    seed: int = SEED
    level: float = LEVEL
    unit: str = ""

    def scaled(self, factor: float) -> Estimate:
        def mul(x: float | None) -> float | None:
            return None if x is None else x * factor
        return Estimate(mul(self.value), mul(self.low), mul(self.high), self.units, self.resamples,
                        self.seed, self.level, self.unit)

    def to_json(self, digits: int = 2) -> dict:
        out = asdict(self)
        for key in ("value", "low", "high"):
            out[key] = None if out[key] is None else round(out[key], digits)
        return out

    def text(self, digits: int = 1) -> str:
        if self.value is None:
            return "n/a"
        if self.low is None:
            return f"{self.value:.{digits}f}"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


@dataclass(frozen=True)
class Difference:
    """Paired difference A - B of one score over the same units, with its interval and a
    two-sided bootstrap p-value (the share of resampled differences on the far side of zero,
    doubled, at most 1; identical runs give 0 and p = 1)."""

    diff: Estimate
    p_value: float
    a: Estimate
    b: Estimate
    paired: bool = True

    @property
    def significant(self) -> bool:
        return self.p_value < 1 - self.diff.level

    def to_json(self, digits: int = 2) -> dict:
        return {"diff": self.diff.to_json(digits), "p_value": round(self.p_value, 4),
                "significant": self.significant, "paired": self.paired,
                "a": self.a.to_json(digits), "b": self.b.to_json(digits)}


#: sums over units, shape (samples, k) -> the score of each sample, shape (samples,), NaN where
#: the score is undefined on that sample
Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SumScore:
    """One score as a function of per-unit sums: `columns` (units x k, finite) summed over the
    units, or over a resample of them, and handed to `statistic`."""

    name: str
    columns: np.ndarray
    statistic: Statistic
    unit: str = "units"

    @property
    def units(self) -> int:
        return int(self.columns.shape[0])

    def value(self) -> float | None:
        return _single(self.statistic(self.columns.sum(axis=0)[None, :]))


def _single(values: np.ndarray) -> float | None:
    v = float(values[0])
    return None if np.isnan(v) else v


def _column(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    out = np.asarray(values, dtype=float)
    if out.ndim != 1:
        raise ValueError(f"{what} must be 1-d (got shape {out.shape})")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what} must be finite numbers")
    return out


def ratio(name: str, num: Sequence[float], den: Sequence[float] | None = None, *,
          unit: str = "units", scale: float = 1.0, empty: float | None = None) -> SumScore:
    """scale x sum(num) / sum(den) (`den=None`: one per unit, a plain mean). Where the
    denominators sum to zero the score is `empty` (None: undefined, the sample is left out)."""
    n = _column(num, f"{name}: numerators")
    d = np.ones_like(n) if den is None else _column(den, f"{name}: denominators")
    if n.shape != d.shape:
        raise ValueError(f"numerators and denominators must be 1-d and of one length ({n.shape} vs {d.shape})")
    fill = np.nan if empty is None else float(empty)

    def statistic(sums: np.ndarray) -> np.ndarray:
        top, bottom = sums[:, 0], sums[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(bottom > 0, scale * top / np.where(bottom > 0, bottom, 1), fill)
    return SumScore(name, np.column_stack([n, d]), statistic, unit)


def group_mean(name: str, values: Sequence[float], groups: Sequence, *, unit: str = "units",
               scale: float = 1.0, empty: float | None = None) -> SumScore:
    """scale x the UNWEIGHTED mean, over the groups present in the sample, of each group's mean
    value (HAPACT's @3+tgt over GT-window counts >= 3). A unit whose group is None belongs to no
    group. No group present: `empty` (None: undefined)."""
    v = _column(values, f"{name}: values")
    labels = list(groups)
    if len(labels) != len(v):
        raise ValueError(f"{name}: {len(v)} values but {len(labels)} group labels")
    names = sorted({g for g in labels if g is not None}, key=str)
    cols = []
    for g in names:
        member = np.array([label == g for label in labels], dtype=float)
        cols += [v * member, member]
    columns = np.column_stack(cols) if cols else np.zeros((len(v), 0))
    fill = np.nan if empty is None else float(empty)

    def statistic(sums: np.ndarray) -> np.ndarray:
        if sums.shape[1] == 0:
            return np.full(sums.shape[0], fill)
        total, count = sums[:, 0::2], sums[:, 1::2]
        present = count > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.where(present, total / np.where(present, count, 1), 0.0)
            k = present.sum(axis=1)
            return np.where(k > 0, scale * means.sum(axis=1) / np.maximum(k, 1), fill)
    return SumScore(name, columns, statistic, unit)


_DRAWS: dict[tuple[int, int, int], np.ndarray] = {}
_DRAWS_KEPT = 4
_DRAWS_LOCK = threading.Lock()


def _draw(size: int, resamples: int, seed: int) -> np.ndarray:
    """How often each unit is in each resample, shape (resamples, size), uint16: drawn once per
    (size, resamples, seed) and kept (a leaderboard of 30 runs over 1,521 stems, and each
    run's test against the next, all use the one draw: drawing it was most of their time)."""
    key = (size, resamples, seed)
    with _DRAWS_LOCK:
        hit = _DRAWS.get(key)
    if hit is not None:
        return hit
    rng = np.random.default_rng(seed)
    counts = np.empty((resamples, size), dtype=np.uint16)
    for start in range(0, resamples, _BLOCK):
        count = min(_BLOCK, resamples - start)
        picks = rng.integers(0, size, size=(count, size))
        flat = (picks + (np.arange(count) * size)[:, None]).ravel()
        counts[start:start + count] = np.bincount(flat, minlength=count * size).reshape(count, size)
    with _DRAWS_LOCK:
        if len(_DRAWS) >= _DRAWS_KEPT:
            _DRAWS.pop(next(iter(_DRAWS)))
        _DRAWS[key] = counts
    return counts


def _resampled_sums(columns: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Column sums over `resamples` bootstrap samples of the units (rows), shape (resamples, k).
    The draw depends only on the number of units and the seed, so every score of a benchmark,
    and both runs of a paired comparison, see the same samples."""
    counts = _draw(columns.shape[0], resamples, seed)
    out = np.empty((resamples, columns.shape[1]))
    for start in range(0, resamples, _BLOCK):
        out[start:start + _BLOCK] = counts[start:start + _BLOCK].astype(float) @ columns
    return out


def _percentiles(values: np.ndarray, level: float) -> tuple[float | None, float | None]:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None, None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _same_units(scores: Sequence[SumScore]) -> int:
    sizes = {s.units for s in scores}
    if len(sizes) > 1:
        raise ValueError(f"scores resampled together need the same units (sizes {sorted(sizes)})")
    return sizes.pop() if sizes else 0


def _stacked(scores: Sequence[SumScore]) -> tuple[np.ndarray, list[slice]]:
    spans, start = [], 0
    for s in scores:
        spans.append(slice(start, start + s.columns.shape[1]))
        start += s.columns.shape[1]
    rows = scores[0].units if scores else 0
    columns = np.hstack([s.columns for s in scores]) if start else np.zeros((rows, 0))
    return columns, spans


def estimates(scores: Sequence[SumScore], *, resamples: int = RESAMPLES, seed: int = SEED,
              level: float = LEVEL) -> dict[str, Estimate]:
    """Each score with its percentile interval, all from one draw of resamples of the units."""
    n = _same_units(scores)
    out: dict[str, Estimate] = {}
    if not scores:
        return out
    columns, spans = _stacked(scores)
    sums = _resampled_sums(columns, resamples, seed) if n else None
    for score, span in zip(scores, spans):
        value = score.value() if n else None
        if value is None or sums is None:
            out[score.name] = Estimate(value, None, None, n, resamples, seed, level, score.unit)
            continue
        low, high = _percentiles(score.statistic(sums[:, span]), level)
        out[score.name] = Estimate(value, low, high, n, resamples, seed, level, score.unit)
    return out


def _p_value(diffs: np.ndarray) -> float:
    diffs = diffs[~np.isnan(diffs)]
    if diffs.size == 0:
        return 1.0
    return min(1.0, 2 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))


def differences(a: Sequence[SumScore], b: Sequence[SumScore], *, resamples: int = RESAMPLES,
                seed: int = SEED, level: float = LEVEL) -> dict[str, Difference]:
    """A - B of every score both lists name, on the same resampled units (unit i of A is unit i
    of B: the caller aligns them)."""
    by_b = {s.name: s for s in b}
    pairs = [(s, by_b[s.name]) for s in a if s.name in by_b]
    n = _same_units([s for pair in pairs for s in pair])
    one = estimates([s for s, _ in pairs], resamples=resamples, seed=seed, level=level)
    two = estimates([t for _, t in pairs], resamples=resamples, seed=seed, level=level)
    out: dict[str, Difference] = {}
    if not pairs:
        return out
    columns, spans = _stacked([s for pair in pairs for s in pair])
    sums = _resampled_sums(columns, resamples, seed) if n else None
    for i, (sa, sb) in enumerate(pairs):
        ea, eb = one[sa.name], two[sb.name]
        if ea.value is None or eb.value is None or sums is None:
            out[sa.name] = Difference(Estimate(None, None, None, n, resamples, seed, level, sa.unit),
                                      1.0, ea, eb)
            continue
        diffs = sa.statistic(sums[:, spans[2 * i]]) - sb.statistic(sums[:, spans[2 * i + 1]])
        low, high = _percentiles(diffs, level)
        out[sa.name] = Difference(Estimate(ea.value - eb.value, low, high, n, resamples, seed, level,
                                           sa.unit), _p_value(diffs), ea, eb)
    return out


def unpaired_difference(a: SumScore, b: SumScore, *, resamples: int = RESAMPLES, seed: int = SEED,
                        level: float = LEVEL) -> Difference:
    """A - B when the two runs share no unit: each resampled on its own (seeds `seed` and
    `seed + 1`), the differences of the i-th samples give the interval and the p-value."""
    ea = estimates([a], resamples=resamples, seed=seed, level=level)[a.name]
    eb = estimates([b], resamples=resamples, seed=seed + 1, level=level)[b.name]
    units = a.units + b.units
    if ea.value is None or eb.value is None:
        return Difference(Estimate(None, None, None, units, resamples, seed, level, a.unit), 1.0, ea, eb,
                          paired=False)
    diffs = a.statistic(_resampled_sums(a.columns, resamples, seed)) \
        - b.statistic(_resampled_sums(b.columns, resamples, seed + 1))
    low, high = _percentiles(diffs, level)
    return Difference(Estimate(ea.value - eb.value, low, high, units, resamples, seed, level, a.unit),
                      _p_value(diffs), ea, eb, paired=False)


def ratio_interval(num: Sequence[float], den: Sequence[float] | None = None, *,
                   resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Estimate:
    """sum(num) / sum(den) over the units with its bootstrap interval. `den=None` means one per
    unit (a plain mean). A resample whose denominators sum to zero is left out."""
    return estimates([ratio("ratio", num, den)], resamples=resamples, seed=seed, level=level)["ratio"]


def mcnemar_exact(a_right: Sequence[bool], b_right: Sequence[bool]) -> dict:
    """The exact (binomial) McNemar test on paired right/wrong outcomes: b = A right and B wrong,
    c = B right and A wrong, p = min(1, 2 * P[X <= min(b, c)]) for X ~ Binomial(b + c, 1/2)."""
    from scipy.stats import binom

    a = np.asarray(a_right, dtype=bool)
    b = np.asarray(b_right, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"paired outcomes need the same items ({a.shape} vs {b.shape})")
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(b & ~a))
    n = only_a + only_b
    p_value = 1.0 if n == 0 else min(1.0, 2 * float(binom.cdf(min(only_a, only_b), n, 0.5)))
    return {"a_only_right": only_a, "b_only_right": only_b, "items": int(a.size), "p_value": p_value}
