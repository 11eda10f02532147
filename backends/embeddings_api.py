"""Text embeddings from an OpenAI-compatible /v1/embeddings endpoint."""
from __future__ import annotations

from typing import TYPE_CHECKING
from collections.abc import Sequence

from backends.base import EmbeddingBackend
from backends.config import ApiSettings
from backends.errors import BackendError
from backends.openai_api import RetryPolicy, call_with_retries, make_client

if TYPE_CHECKING:
    import numpy as np


class OpenAIEmbedder(EmbeddingBackend):
    def __init__(self, model: str, settings: ApiSettings | None = None, batch_size: int = 256,
                 policy: RetryPolicy | None = None):
        self._model = model
        self.settings = (settings or ApiSettings()).resolved()
        self.batch_size = batch_size
        self.policy = policy or RetryPolicy(max_retries=self.settings.max_retries)
        self._client = make_client(self.settings)

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> OpenAIEmbedder:
        """`openai-embed:<model>`: a new client per call (the settings may differ per session)."""
        return cls(arg, settings=api.resolved())

    @property
    def backend_id(self) -> str:
        return f"openai-embed:{self._model}"

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start:start + self.batch_size]

            def once(batch=batch):
                response = self._client.embeddings.create(model=self._model, input=batch)
                data = sorted(response.data, key=lambda d: d.index)
                if len(data) != len(batch):
                    raise ValueError("wrong number of embeddings")
                return [d.embedding for d in data]

            rows.extend(call_with_retries(once, label=self.backend_id, policy=self.policy,
                                          secret=self.settings.api_key))
        matrix = np.asarray(rows, dtype=np.float32)
        if matrix.ndim != 2:
            raise BackendError(f"{self.backend_id} returned embeddings of different lengths.")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)
