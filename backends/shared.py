"""One instance per key per process, for backends whose construction is costly to repeat (local
models: the weights load once and every session shares them)."""
from __future__ import annotations

import threading
from typing import TypeVar
from collections.abc import Callable

T = TypeVar("T")

# a plain dict, not SingleFlightLRU: a model stays loaded once for the process (never evicted), and
# its load may outlast the LRU's wait for another caller (WAIT_S), which would load it twice
_instances: dict[tuple[type, str], object] = {}
_lock = threading.Lock()


def is_shared(instance: object) -> bool:
    """Whether `instance` is one `once_per_process` built (shared by every session: never closed
    on behalf of one)."""
    # not under _lock: a model being built holds it for as long as its weights take to load
    return any(instance is kept for kept in list(_instances.values()))


def once_per_process(cls: type[T], key: str, build: Callable[[], T]) -> T:
    """The instance of `cls` built for `key`; `build()` runs only the first time."""
    with _lock:
        instance = _instances.get((cls, key))
        if instance is None:
            instance = _instances[(cls, key)] = build()
        return instance  # type: ignore[return-value]
