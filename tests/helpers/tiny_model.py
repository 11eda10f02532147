"""A random-weight Qwen2.5-VL built offline for tests (see docs/environment.md).

The model, tokenizer and image processor are saved with `save_pretrained`, so loading it goes
through the same code path as a real checkpoint. Its output is noise: assert behaviour around it.
"""
from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                  "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]

# Qwen's template, shortened: images become <|vision_start|><|image_pad|><|vision_end|>.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _byte_vocab() -> dict[str, int]:
    """The 256 byte-level symbols (GPT-2's bytes_to_unicode), one id each, no merges."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    codes = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            codes.append(256 + extra)
            extra += 1
    symbols = dict(zip(printable, (chr(c) for c in codes)))
    return {symbols[b]: b for b in range(256)}


def build_tiny_tokenizer():
    from transformers import AddedToken, Qwen2Tokenizer

    tokenizer = Qwen2Tokenizer(vocab=_byte_vocab(), merges=[], unk_token=None,
                               eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.add_special_tokens({"additional_special_tokens": [
        AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS
        if t not in ("<|im_end|>", "<|endoftext|>")]})
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_qwen25vl(path: Path, *, context: int = 8192, min_pixels: int = 28 * 28,
                        max_pixels: int = 128 * 128) -> Path:
    """Build, save and return a folder holding a ~0.2 M-parameter Qwen2.5-VL (random weights).

    Written to a temporary folder first and renamed, so a reader never sees half a model (test
    sessions of several people may build it at the same time)."""
    path = Path(path)
    if (path / "config.json").exists():
        return path
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(tmp, ignore_errors=True)
    _write_tiny_qwen25vl(tmp, context, min_pixels, max_pixels)
    try:
        if path.exists() and not (path / "config.json").exists():
            shutil.rmtree(path, ignore_errors=True)  # left over from an interrupted build
        os.replace(tmp, path)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _write_tiny_qwen25vl(path: Path, context: int = 8192, min_pixels: int = 28 * 28,
                         max_pixels: int = 128 * 128) -> Path:
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tiny_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    vocab_size = len(tokenizer)

    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": vocab_size, "hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": context,
            "rope_parameters": {"rope_type": "default", "mrope_section": [2, 3, 3],
                                "rope_theta": 10000.0},
            "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                       "out_hidden_size": 64, "fullatt_block_indexes": [1], "window_size": 56},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
    )
    torch.manual_seed(0)
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(path)

    # Small images stay small: by default at most 128x128 pixels worth of 28x28 patches per image.
    image_processor = Qwen2VLImageProcessorPil(min_pixels=min_pixels, max_pixels=max_pixels)
    # Saved the way a Hub checkpoint ships them: preprocessor_config.json + tokenizer files
    # (the chat template travels with the tokenizer).
    image_processor.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
