"""The one lazy, locked load of a local embedding model: the weights load on the first call,
once, whoever calls (the first loads, the others wait on the lock), onto the GPU when there is
one, in eval mode. Each embedder says only how its files are read (`_read`)."""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from backends.base import EmbeddingBackend
from backends.errors import BackendError


class LocalEmbedder(EmbeddingBackend):
    """`_model` and `_processor` (a processor or a tokenizer) are None until `load()`."""

    def __init__(self, source: str, batch_size: int) -> None:
        self.source = source
        self.batch_size = batch_size
        self._model: Any = None
        self._processor: Any = None
        self.device = "cpu"
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load the processor and weights (once; later calls return at once)."""
        with self._lock:
            if self._model is not None:
                return
            import torch

            processor, model = self._read()
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
            self._model = model.to(self.device).eval()
            self._processor = processor

    def _read(self) -> tuple[Any, Any]:
        """(processor or tokenizer, model) read from this embedder's files; a BackendError of one
        line when they cannot be."""
        raise NotImplementedError


def read_hub_or_folder(source: str, what: str, hint: str, read: Any, *, folder_like: bool) -> tuple[Any, Any]:
    """`read(name)` of a hub id or a local folder, with every failure one line: a missing folder
    (`folder_like`: the source names one) said so, else what failed, whether the Hub is offline,
    and `hint` (what to do)."""
    path = Path(source).expanduser()
    if not path.exists() and folder_like:
        raise BackendError(f"{what[0].upper()}{what[1:]} folder {source} does not exist; check the path.")
    try:
        return read(str(path) if path.exists() else source)
    except BackendError:
        raise
    except Exception as exc:  # noqa: BLE001 - transformers raises many kinds here
        detail = " ".join(str(exc).split())[:200]
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        where = " (the Hub is offline here)" if offline and not path.exists() else ""
        raise BackendError(f"Could not load {what} '{source}'{where}: {hint} "
                           f"Details: {type(exc).__name__}: {detail}") from None
