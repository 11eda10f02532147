"""Agreement between annotators: Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement
among many raters") over the questions judged by two or more, in the form that allows a different
number of raters per question:

    P_i   = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1))      agreement on question i (n_i raters)
    P_bar = mean of P_i over the questions
    p_j   = sum_i n_ij / sum_i n_i                       share of all judgments in category j
    P_e   = sum_j p_j^2
    kappa = (P_bar - P_e) / (1 - P_e)

With the same number of raters on every question this is Fleiss' formula exactly. The categories
of a question are the clips chosen (GT and its three distractors), so agreeing on a wrong clip is
agreement too."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Kappa:
    kappa: float | None     # None when it is undefined (fewer than one question, or P_e = 1)
    questions: int          # questions with two or more judgments
    judgments: int


def fleiss_kappa(items: Iterable[Sequence[str]]) -> Kappa:
    """`items`: per question, the category each rater chose."""
    rows = [Counter(x for x in item if x is not None) for item in items]
    rows = [r for r in rows if sum(r.values()) >= 2]
    if not rows:
        return Kappa(None, 0, 0)
    total = sum(sum(r.values()) for r in rows)
    p_bar = sum((sum(c * c for c in r.values()) - sum(r.values())) /
                (sum(r.values()) * (sum(r.values()) - 1)) for r in rows) / len(rows)
    shares: Counter = Counter()
    for r in rows:
        shares.update(r)
    p_e = sum((c / total) ** 2 for c in shares.values())
    if p_e >= 1.0:
        return Kappa(None, len(rows), total)
    return Kappa((p_bar - p_e) / (1 - p_e), len(rows), total)
