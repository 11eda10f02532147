"""Image-text embeddings from a transformers CLIP/SigLIP-family model (hub id or local folder)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from backends.config import ApiSettings
from backends.errors import BackendError
from backends.local_model import LocalEmbedder, read_hub_or_folder
from backends.shared import once_per_process

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image


def _features(output) -> object:
    """transformers 5 returns a model output whose pooler_output holds the projected features."""
    return output if hasattr(output, "shape") else output.pooler_output


class HFEmbedder(LocalEmbedder):
    def __init__(self, model_id: str, batch_size: int = 32):
        super().__init__(model_id.strip(), batch_size)

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> HFEmbedder:
        """`hf-embed:<hub id or folder>`: one instance per model per process."""
        return once_per_process(cls, arg, lambda: cls(arg))

    @property
    def backend_id(self) -> str:
        return f"hf-embed:{self.source}"

    @property
    def supports_images(self) -> bool:
        return True

    def _read(self) -> tuple[Any, Any]:
        def read(source: str) -> tuple[Any, Any]:
            from transformers import AutoModel, AutoProcessor

            processor = AutoProcessor.from_pretrained(source)
            model = AutoModel.from_pretrained(source)
            if not hasattr(model, "get_text_features"):
                raise BackendError(f"{self.source} is not an image-text embedding model "
                                   "(CLIP/SigLIP family): it has no get_text_features.")
            return processor, model

        return read_hub_or_folder(
            self.source, "embedding model", "it must be a CLIP/SigLIP-family model, downloaded first "
            "or given as a local folder.", read, folder_like=self.source.startswith(("/", "./", "../", "~")))

    def _normalised(self, chunks: list) -> np.ndarray:
        import numpy as np

        matrix = np.concatenate(chunks, axis=0).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np
        import torch

        self.load()
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim()), dtype=np.float32)
        # SigLIP was trained on texts padded to its full length; CLIP pads to the longest
        padding = "max_length" if "siglip" in self._model.config.model_type else True
        max_length = int(self._model.config.text_config.max_position_embeddings)
        chunks = []
        for i in range(0, len(texts), self.batch_size):
            inputs = self._processor(text=texts[i:i + self.batch_size], padding=padding,
                                     truncation=True, max_length=max_length,
                                     return_tensors="pt").to(self.device)
            with torch.inference_mode():
                out = self._model.get_text_features(
                    **{k: v for k, v in inputs.items() if k in ("input_ids", "attention_mask")})
            chunks.append(_features(out).float().cpu().numpy())
        return self._normalised(chunks)

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        import numpy as np
        import torch

        self.load()
        images = [image.convert("RGB") for image in images]
        if not images:
            return np.zeros((0, self._dim()), dtype=np.float32)
        chunks = []
        for i in range(0, len(images), self.batch_size):
            inputs = self._processor(images=images[i:i + self.batch_size], return_tensors="pt")
            pixels = inputs["pixel_values"].to(self.device, dtype=self._model.dtype)
            with torch.inference_mode():
                out = self._model.get_image_features(pixel_values=pixels)
            chunks.append(_features(out).float().cpu().numpy())
        return self._normalised(chunks)

    def _dim(self) -> int:
        config = self._model.config
        return int(getattr(config, "projection_dim", None)
                   or getattr(config.text_config, "projection_size", None)
                   or config.text_config.hidden_size)
