"""A random-weight CLIP built offline (byte-level BPE vocabulary, no merges) for embedder tests."""
from __future__ import annotations

from pathlib import Path


def build_tiny_clip(path: Path) -> Path:
    import torch
    from transformers import CLIPConfig, CLIPModel, CLIPProcessor, CLIPTokenizer
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    from tests.helpers.tiny_model import _byte_vocab

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    symbols = list(_byte_vocab())
    vocab = {s: i for i, s in enumerate(symbols + [s + "</w>" for s in symbols])}
    for token in ("<|startoftext|>", "<|endoftext|>"):
        vocab[token] = len(vocab)
    tokenizer = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=64)
    config = CLIPConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 2,
                     "max_position_embeddings": 64, "bos_token_id": vocab["<|startoftext|>"],
                     "eos_token_id": vocab["<|endoftext|>"], "pad_token_id": vocab["<|endoftext|>"]},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
        projection_dim=16)
    torch.manual_seed(0)
    CLIPModel(config).eval().save_pretrained(path)
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 32},
                                            crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(path)
    return path
