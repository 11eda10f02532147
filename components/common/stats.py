"""Uncertainty of a score: bootstrap intervals over a benchmark's unit, paired differences of two
runs, and the exact McNemar test (pure numpy/scipy; docs/metrics.md "Intervals").

Every score the app reports is a ratio of sums over units (a stem, a query, a pair): accuracy is
correct / answered summed over stems, mIoU is the IoU sum over the query count, a mean of
per-query AP is the AP sum over the queries that have one. So one routine serves all of them: the
units are resampled with replacement and the ratio is recomputed, `resamples` times, with a fixed
seed, so the same files always give the same interval (percentile interval, 95 % by default).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

#: the defaults every command and view uses (stated beside each interval they print)
RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
_BLOCK = 250  # resamples drawn at once: 250 x 4,563 units of int64 is ~9 MB


@dataclass(frozen=True)
class Estimate:
    """A score with its interval. `value` is the score on the data as given (not the bootstrap
    mean); `low`/`high` are None when no unit carries a denominator."""

    value: float | None
    low: float | None
    high: float | None
    units: int
    resamples: int = RESAMPLES
    seed: int = SEED
    level: float = LEVEL

    def scaled(self, factor: float) -> Estimate:
        def mul(x: float | None) -> float | None:
            return None if x is None else x * factor
        return Estimate(mul(self.value), mul(self.low), mul(self.high), self.units, self.resamples,
                        self.seed, self.level)

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

    @property
    def significant(self) -> bool:
        return self.p_value < 1 - self.diff.level

    def to_json(self, digits: int = 2) -> dict:
        return {"diff": self.diff.to_json(digits), "p_value": round(self.p_value, 4),
                "significant": self.significant, "a": self.a.to_json(digits), "b": self.b.to_json(digits)}


def _arrays(num: Sequence[float], den: Sequence[float] | None) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(num, dtype=float)
    d = np.ones_like(n) if den is None else np.asarray(den, dtype=float)
    if n.shape != d.shape or n.ndim != 1:
        raise ValueError(f"numerators and denominators must be 1-d and of one length ({n.shape} vs {d.shape})")
    return n, d


def _ratio(num: np.ndarray, den: np.ndarray) -> float | None:
    total = den.sum()
    return None if total <= 0 else float(num.sum() / total)


def _resampled_sums(columns: Sequence[np.ndarray], resamples: int, seed: int) -> list[np.ndarray]:
    """Sums of each column over `resamples` bootstrap samples of the units (the same samples for
    every column, which is what makes a paired difference paired)."""
    size = len(columns[0])
    rng = np.random.default_rng(seed)
    sums = [np.empty(resamples) for _ in columns]
    for start in range(0, resamples, _BLOCK):
        count = min(_BLOCK, resamples - start)
        picks = rng.integers(0, size, size=(count, size))
        for column, out in zip(columns, sums):
            out[start:start + count] = column[picks].sum(axis=1)
    return sums


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def ratio_interval(num: Sequence[float], den: Sequence[float] | None = None, *,
                   resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Estimate:
    """sum(num) / sum(den) over the units with its bootstrap interval. `den=None` means one per
    unit (a plain mean). A resample whose denominators sum to zero is left out."""
    n, d = _arrays(num, den)
    value = _ratio(n, d)
    if value is None:
        return Estimate(None, None, None, len(n), resamples, seed, level)
    s_num, s_den = _resampled_sums([n, d], resamples, seed)
    keep = s_den > 0
    low, high = _percentiles(s_num[keep] / s_den[keep], level)
    return Estimate(value, low, high, len(n), resamples, seed, level)


def paired_difference(num_a: Sequence[float], den_a: Sequence[float] | None,
                      num_b: Sequence[float], den_b: Sequence[float] | None, *,
                      resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Difference:
    """A - B of a ratio score, both computed on the same resampled units (unit i of A is unit i
    of B: the caller aligns them)."""
    na, da = _arrays(num_a, den_a)
    nb, db = _arrays(num_b, den_b)
    if len(na) != len(nb):
        raise ValueError(f"paired runs need the same units ({len(na)} vs {len(nb)})")
    a = ratio_interval(na, da, resamples=resamples, seed=seed, level=level)
    b = ratio_interval(nb, db, resamples=resamples, seed=seed, level=level)
    if a.value is None or b.value is None:
        return Difference(Estimate(None, None, None, len(na), resamples, seed, level), 1.0, a, b)
    sa, sda, sb, sdb = _resampled_sums([na, da, nb, db], resamples, seed)
    keep = (sda > 0) & (sdb > 0)
    diffs = sa[keep] / sda[keep] - sb[keep] / sdb[keep]
    low, high = _percentiles(diffs, level)
    p_value = min(1.0, 2 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))
    return Difference(Estimate(a.value - b.value, low, high, len(na), resamples, seed, level), p_value, a, b)


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
    return {"a_only_right": only_a, "b_only_right": only_b, "p_value": p_value}
