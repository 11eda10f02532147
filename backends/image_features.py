"""Frozen image features from a transformers vision model (DINOv2 by default): what TempCloze's
released edge baseline (`TempCloze/edge_matching_baseline.py` @444324b, class `DinoEncoder`)
computes, through the same calls.

`hf-image:<hub id or folder>` (registry): `AutoImageProcessor` + `AutoModel`, on the GPU when
there is one, `eval()`, no gradients; a batch of frames (32 at a time, as released) goes through
the processor, then `get_image_features` when the model has it, else `pooler_output`, else the
CLS token (`last_hidden_state[:, 0]`), cast to float32 and L2-normalised per frame. Weights load
lazily on the first call, once per process; nothing is downloaded when the Hub is offline (a
hub id that is not in the local cache is refused with one line saying so).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from backends.config import ApiSettings
from backends.local_model import LocalEmbedder, read_hub_or_folder
from backends.shared import once_per_process

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

#: the released baseline's `--model` default
DEFAULT_MODEL = "facebook/dinov2-base"
#: the released baseline's `--batch-size` default
BATCH_SIZE = 32


class HFImageFeatures(LocalEmbedder):
    """Unit image feature vectors (no text side)."""

    def __init__(self, model_id: str, batch_size: int = BATCH_SIZE):
        super().__init__(model_id.strip() or DEFAULT_MODEL, batch_size)

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> HFImageFeatures:
        """`hf-image:<hub id or folder>`: one instance per model per process."""
        return once_per_process(cls, arg, lambda: cls(arg))

    @property
    def backend_id(self) -> str:
        return f"hf-image:{self.source}"

    @property
    def supports_images(self) -> bool:
        return True

    def _read(self) -> tuple[Any, Any]:
        def read(source: str) -> tuple[Any, Any]:
            from transformers import AutoImageProcessor, AutoModel

            model = AutoModel.from_pretrained(source)
            for param in model.parameters():
                param.requires_grad_(False)
            return AutoImageProcessor.from_pretrained(source), model

        return read_hub_or_folder(
            self.source, "image feature model", "download it first (huggingface-cli download "
            "facebook/dinov2-base) or give a folder written by save_pretrained.", read,
            folder_like=self.source.startswith(("/", "./", "../", "~")) or self.source.count("/") > 1)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError(f"{self.backend_id} embeds images only")

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        """Shape (len(images), dim), float32, unit rows (as released: F.normalize of the float
        features)."""
        import numpy as np
        import torch

        self.load()
        images = [image.convert("RGB") for image in images]
        if not images:
            raise ValueError("Cannot encode an empty frame list")
        chunks = []
        with torch.inference_mode():
            for start in range(0, len(images), self.batch_size):
                inputs = self._processor(images=images[start:start + self.batch_size],
                                         return_tensors="pt")
                inputs = {k: v.to(self.device) for k, v in inputs.items()}
                chunks.append(_features(self._model, inputs).cpu().numpy().astype(np.float32))
        return np.concatenate(chunks, axis=0)


def _features(model, inputs: dict):
    """The released encoder's choice of features, normalised."""
    import torch

    if hasattr(model, "get_image_features"):
        feats = model.get_image_features(**inputs)
        feats = feats if hasattr(feats, "shape") else feats.pooler_output
    else:
        out = model(**inputs)
        feats = getattr(out, "pooler_output", None)
        if feats is None:
            feats = out.last_hidden_state[:, 0]
    return torch.nn.functional.normalize(feats.float(), dim=-1)
