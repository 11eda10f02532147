"""Routing (as Prodigy's `annotations_per_task`, Argilla's `TaskDistribution(min_submitted=...)`,
Label Studio's overlap): with `judgments_per_question` R set, every annotator takes the one set,
and the next question for an annotator is one that still lacks judgments: the one closest to R
(judged plus being looked at by someone else), the earliest in the set's schedule among equals, so
questions are completed one after another (as Argilla serves pending records in order) and people
who drop out leave as few half-judged questions as possible. A question that reached R is served
to nobody after that, so no judgment is spent beyond R; an annotator is never served a question
they answered or were already shown. A question shown to someone counts as being judged for `lease_s` seconds (900 by default),
so people answering at once do not overshoot R, and a person who walks away holds it no longer.

The counts live in the study server's memory, rebuilt from every annotator's answers when the
server starts: a routed study runs on one study server process (several servers would each route
on their own counts)."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable


class Router:
    def __init__(self, total: int, judgments: int, lease_s: float,
                 clock: Callable[[], float] | None = None) -> None:
        self.total, self.judgments, self.lease_s = total, judgments, lease_s
        self.clock = clock or time.monotonic
        self.judged: dict[int, set[str]] = {}
        self.leases: dict[int, dict[str, float]] = {}   # task -> annotator -> until
        self.current: dict[str, int] = {}               # annotator -> the task leased to them
        self.seen: dict[str, set[int]] = {}
        self.lock = threading.Lock()

    def observe(self, annotator: str, tasks: Iterable[int]) -> None:
        """`annotator` has answered `tasks` (idempotent: called with all their answers)."""
        with self.lock:
            for i in tasks:
                self.judged.setdefault(i, set()).add(annotator)
                self.seen.setdefault(annotator, set()).add(i)
                if self.current.get(annotator) == i:
                    self._release(annotator)

    def _release(self, annotator: str) -> None:
        task = self.current.pop(annotator, None)
        if task is not None:
            self.leases.get(task, {}).pop(annotator, None)

    def _load(self, task: int, annotator: str, now: float) -> int:
        others = sum(1 for who, until in self.leases.get(task, {}).items() if until > now and who != annotator)
        return len(self.judged.get(task, ())) + others

    def next_for(self, annotator: str, answered: set[int]) -> int | None:
        """The annotator's question: the one leased to them if it is still theirs and unanswered,
        else the next one that needs judgments (leased to them now); None when none does."""
        with self.lock:
            now = self.clock()
            mine = self.current.get(annotator)
            if (mine is not None and mine not in answered
                    and self.leases.get(mine, {}).get(annotator, 0) > now):
                return mine
            self._release(annotator)
            seen = self.seen.setdefault(annotator, set())
            best, best_load = None, -1
            for i in range(self.total):
                if i in answered or i in seen:
                    continue
                load = self._load(i, annotator, now)
                if best_load < load < self.judgments:
                    best, best_load = i, load
                    if load == self.judgments - 1:
                        break
            if best is not None:
                self.leases.setdefault(best, {})[annotator] = now + self.lease_s
                self.current[annotator] = best
                seen.add(best)
            return best

    def peek(self, annotator: str, answered: set[int]) -> int | None:
        """The question an answer now would lead to (for drawing it ahead), leasing nothing."""
        with self.lock:
            now, seen = self.clock(), self.seen.get(annotator, set())
            mine = self.current.get(annotator)
            candidates = [(-load, i) for i in range(self.total)
                          if i not in answered and i not in seen and i != mine
                          and (load := self._load(i, annotator, now)) < self.judgments]
            return min(candidates)[1] if candidates else None

    def coverage(self) -> dict[int, int]:
        """Task -> how many annotators judged it."""
        with self.lock:
            return {i: len(self.judged.get(i, ())) for i in range(self.total)}

    def needing(self) -> int:
        with self.lock:
            return sum(1 for i in range(self.total) if len(self.judged.get(i, ())) < self.judgments)


_routers: dict[tuple, Router] = {}
_routers_lock = threading.Lock()


def router_for(key: str, total: int, judgments: int, lease_s: float,
               seed: Callable[[Router], None]) -> Router:
    """One router per study per process, filled by `seed` (every annotator's answers) when made."""
    with _routers_lock:
        found = _routers.get(key)
        if found is None or (found.total, found.judgments, found.lease_s) != (total, judgments, lease_s):
            found = _routers[key] = Router(total, judgments, lease_s)
            seed(found)
        return found


def forget() -> None:
    with _routers_lock:
        _routers.clear()
