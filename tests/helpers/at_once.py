"""Asking a cache for one value from several threads at once, its computation held until every
thread has asked: a cache that is not single-flight computes it once per thread."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Held:
    """A computation (`make(*args)`) that counts its calls and holds each until `release()`."""

    def __init__(self, make: Callable[..., Any]) -> None:
        self.make = make
        self.calls = 0
        self.started = threading.Event()
        self._gate = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self.calls += 1
        self.started.set()
        self._gate.wait(60)
        return self.make(*args, **kwargs)

    def release(self) -> None:
        self._gate.set()


def asked_at_once(ask: Callable[[], Any], held: Held, n: int = 6) -> list[Any]:
    """`ask()` from `n` threads: the first starts the held computation, then the others ask while
    it is held (each is given half a second to either wait for it or start its own), then it is
    released. The answers, in no particular order."""
    answers: list[Any] = []
    errors: list[BaseException] = []

    def one() -> None:
        try:
            answers.append(ask())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)

    first = threading.Thread(target=one)
    first.start()
    assert held.started.wait(60), "the first ask never started computing"
    others = [threading.Thread(target=one) for _ in range(n - 1)]
    for t in others:
        t.start()
    for t in others:
        t.join(0.5)
    held.release()
    for t in (first, *others):
        t.join(60)
    if errors:
        raise errors[0]
    return answers
