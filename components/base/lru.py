"""One least-recently-used cache for the whole app, computing each value once however many ask
at once (pure; no gradio).

`cache.get(key, compute)` returns the kept value, or computes it; a second caller asking for a
key being computed waits for that computation instead of starting its own (a prefetch and a
click, or two visitors, never decode one clip twice). A key that carries a file's identity (size,
mtime) makes a changed file a new entry; the old one ages out.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: how long a caller waits for another's computation before computing itself
WAIT_S = 60.0


class SingleFlightLRU(Generic[K, V]):
    """At most `maxsize` values; `on_evict(value)` runs for each value pushed out (e.g. close a
    decoder). Thread-safe."""

    def __init__(self, maxsize: int, *, on_evict: Callable[[V], None] | None = None) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._on_evict = on_evict
        self._items: OrderedDict[K, V] = OrderedDict()
        self._making: dict[K, threading.Event] = {}
        self._lock = threading.Lock()

    def get(self, key: K, compute: Callable[[], V]) -> V:
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]
                making = self._making.get(key)
                if making is None:
                    self._making[key] = threading.Event()
                    break
            if not making.wait(WAIT_S):
                break  # the other computation hangs: compute here rather than wait for ever
        try:
            value = compute()
            self.put(key, value)
            return value
        finally:
            with self._lock:
                event = self._making.pop(key, None)
            if event is not None:
                event.set()

    def peek(self, key: K) -> V | None:
        """The kept value (made more recent), or None; never computes."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            evicted = [self._items.popitem(last=False)[1] for _ in range(max(0, len(self._items) - self.maxsize))]
        if self._on_evict is not None:
            for old in evicted:
                self._on_evict(old)

    def pop(self, key: K, *, only: V | None = None) -> V | None:
        """Drop the key's value; with `only`, only while that very value is kept (not a newer one
        another caller has made since)."""
        with self._lock:
            if only is not None and self._items.get(key) is not only:
                return None
            return self._items.pop(key, None)

    def clear(self) -> list[V]:
        """Empty the cache; returns what it held (for the caller to close)."""
        with self._lock:
            values, self._items = list(self._items.values()), OrderedDict()
        return values

    def values(self) -> list[V]:
        """The kept values, least recently used first (a snapshot)."""
        with self._lock:
            return list(self._items.values())

    def being_made(self, key: K) -> bool:
        with self._lock:
            return key in self._making

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[K]:
        with self._lock:
            return iter(list(self._items))
