"""Time-ordered frames decoded by group of pictures, in parallel threads (PyAV).

A sorted request (1 fps over a movie, bin-centred frames of a clip) is split by keyframe: the
wanted frames of one group (a keyframe up to the next one) are decoded in one forward pass from
that keyframe, stopping at the group's last wanted frame, so no frame is decoded twice and the
tail of a group nobody wants is skipped. Groups are dealt round-robin to `workers` threads, each
with its own PyAV decoder (one codec thread each); PyAV releases the GIL while it demuxes,
decodes and scales, so the threads use separate cores. Results come back in request order.

Memory stays bounded whatever the request length: a group is handed over in pieces of at most
`piece` frames, and each worker runs at most `_AHEAD` pieces ahead of the consumer.

The keyframe table comes from components/media/index.py (the container's packets, no
decoding). Open GOPs are handled: a leading picture of the next group is shown before that
group's keyframe, so it belongs to (and is decoded with) the group before.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from components.media.index import VideoIndex
from components.media.readers import PyAVReader, ReadFailed

_AHEAD = 2          # pieces a worker may hold finished before the consumer takes them
#: pieces of one worker alive at once: its outbox plus the one it is decoding
PIECES_IN_FLIGHT = _AHEAD + 1
_POLL_S = 0.05      # how often a blocked worker looks at the stop flag


def group_by_keyframe(index: VideoIndex, indices: Sequence[int]) -> list[list[int]]:
    """Sorted unique `indices` cut where the keyframe before them changes."""
    groups: list[list[int]] = []
    current = None
    for i in indices:
        key = index.keyframe_at_or_before(i)
        if key != current:
            groups.append([])
            current = key
        groups[-1].append(i)
    return groups


class DecoderShelf:
    """Idle PyAV decoders of one video kept between requests, so a movie sampled chunk by chunk
    opens (and parses the container index of) each decoder once, not per chunk. Only the last
    size asked for is kept."""

    def __init__(self, path: Path, index: VideoIndex, threads: int = 1):
        """`threads`: codec threads per decoder (1 beside other workers; 0: FFmpeg's choice)."""
        self._path, self._index, self._threads = path, index, threads
        self._lock = threading.Lock()
        self._key: tuple[int, int] | None = None
        self._idle: list[PyAVReader] = []

    def take(self, size: tuple[int, int] | None) -> PyAVReader:
        with self._lock:
            if self._key == size and self._idle:
                return self._idle.pop()
        return PyAVReader(self._path, self._index, size, threads=self._threads)

    def give_back(self, reader: PyAVReader, size: tuple[int, int] | None) -> None:
        with self._lock:
            if self._key != size:
                stale, self._idle, self._key = self._idle, [], size
            else:
                stale = []
            self._idle.append(reader)
        for old in stale:
            old.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._key = self._idle, [], None
        for reader in idle:
            reader.close()


def read_sorted(path: Path, index: VideoIndex, indices: Sequence[int],
                size: tuple[int, int] | None, *, workers: int = 1, piece: int = 32,
                shelf: DecoderShelf | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """(index, RGB array at `size`) for sorted unique `indices`, in order. Raises ReadFailed.
    Decoders come from (and go back to) `shelf`; without one they are closed at the end."""
    groups = group_by_keyframe(index, indices)
    pieces = [(g, g_items[k:k + piece]) for g, g_items in enumerate(groups)
              for k in range(0, len(g_items), piece)]
    workers = max(1, min(workers, len(groups)))
    own = shelf is None
    shelf = shelf or DecoderShelf(path, index, threads=0 if workers == 1 else 1)
    try:
        if workers == 1:
            reader = shelf.take(size)
            for _, items in pieces:
                yield from reader.read(items)  # a ReadFailed drops the reader (not given back)
            shelf.give_back(reader, size)
        else:
            yield from _parallel(shelf, size, pieces, workers)
    finally:
        if own:
            shelf.close()


def _parallel(shelf: DecoderShelf, size: tuple[int, int] | None,
              pieces: list[tuple[int, list[int]]], workers: int) -> Iterator[tuple[int, np.ndarray]]:
    stop = threading.Event()
    outboxes = [queue.Queue(maxsize=_AHEAD) for _ in range(workers)]

    def put(box: queue.Queue, item) -> bool:
        while not stop.is_set():
            try:
                box.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def work(w: int) -> None:
        reader, healthy = None, False
        try:
            reader = shelf.take(size)
            for group, items in pieces:
                if group % workers == w and not put(outboxes[w], ("ok", reader.read(items))):
                    break
            healthy = True
        except ReadFailed as exc:
            put(outboxes[w], ("failed", exc))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            put(outboxes[w], ("failed", ReadFailed(f"worker: {type(exc).__name__}")))
        finally:
            if reader is not None:
                if healthy:
                    shelf.give_back(reader, size)
                else:
                    reader.close()

    threads = [threading.Thread(target=work, args=(w,), name=f"gop-decoder-{w}", daemon=True)
               for w in range(workers)]
    for t in threads:
        t.start()
    try:
        for group, _ in pieces:
            kind, value = outboxes[group % workers].get()
            if kind == "failed":
                raise value
            yield from value
    finally:
        stop.set()
        for box in outboxes:  # unblock workers waiting to put
            while not box.empty():
                box.get_nowait()
        for t in threads:
            t.join(timeout=5)
