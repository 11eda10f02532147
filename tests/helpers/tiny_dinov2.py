"""A random-weight DINOv2 built offline for tests (the released edge baseline's encoder, tiny):
saved with `save_pretrained` beside the preprocessor DINOv2 checkpoints ship (BitImageProcessor:
shortest edge resized, centre crop, ImageNet normalisation), so loading it goes through the same
`AutoImageProcessor` + `AutoModel` path as `facebook/dinov2-base`. Its features are noise with a
fixed seed: assert behaviour around them."""
from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path


def build_tiny_dinov2(path: Path) -> Path:
    """Build, save and return a folder holding a ~30 k-parameter DINOv2 (random weights, seed 0);
    written to a temporary folder first and renamed, so a reader never sees half a model."""
    path = Path(path)
    if (path / "config.json").exists():
        return path
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(tmp, ignore_errors=True)
    _write(tmp)
    try:
        os.replace(tmp, path)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _write(path: Path) -> None:
    import torch
    from transformers import Dinov2Config, Dinov2Model
    from transformers.models.bit.image_processing_pil_bit import BitImageProcessorPil

    path.mkdir(parents=True, exist_ok=True)
    config = Dinov2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                          intermediate_size=64, image_size=28, patch_size=14)
    torch.manual_seed(0)
    Dinov2Model(config).eval().save_pretrained(path)
    processor = BitImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 28, "width": 28},
                                     image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225],
                                     do_convert_rgb=True)
    processor.save_pretrained(path)
