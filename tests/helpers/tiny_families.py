"""Random-weight models of several image-text-to-text families, built offline for tests.

Each is a few hundred thousand parameters: small configs, the byte-level tokenizer of
tests/helpers/tiny_model.py with the family's special tokens, the family's real processor class
(its image processor's PIL variant: torchvision is not installed) and a shortened chat template
that places images where the family's released template places them. Saved with
`save_pretrained` (processor included), so `hf:<folder>` loads them like a Hub checkpoint. The
output is noise: tests assert the plumbing around it.
"""
from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.helpers.tiny_model import _byte_vocab, build_tiny_qwen25vl

#: the context every tiny family is given: the tabs' prompts are long in a byte-level tokenizer
#: (an Inspect is ~5,000 tokens), and 16 frames of 6 cloze clips (96 images) must not fit
CONTEXT = 8192
#: ~100 image tokens per frame in every family (90 at least; InternVL: per 280 px tile)

CHATML_IMAGES_INLINE = (  # Qwen2.5-VL / Qwen3-VL: images where they stand, in vision brackets
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

INTERNVL_TEMPLATE = (  # InternVL3-hf: ChatML, each image an <IMG_CONTEXT> line where it stands
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<IMG_CONTEXT>\n"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

LLAVA_ONEVISION_TEMPLATE = (  # llava-onevision-qwen2-hf: all images first, then the texts
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] | selectattr('type', 'equalto', 'image') %}<image>\n"
    "{% endfor %}"
    "{% for part in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{ '\n' + part['text'] }}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

GEMMA3_TEMPLATE = (  # gemma-3-it: system text prefixed to the first user turn, model role
    "<bos>{% if messages[0]['role'] == 'system' %}"
    "{% set prefix = messages[0]['content'][0]['text'] + '\n\n' %}"
    "{% set loop_messages = messages[1:] %}"
    "{% else %}{% set prefix = '' %}{% set loop_messages = messages %}{% endif %}"
    "{% for message in loop_messages %}<start_of_turn>"
    "{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{{ prefix if loop.first else '' }}"
    "{% if message['content'] is string %}{{ message['content'] | trim }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<start_of_image>"
    "{% elif part['type'] == 'text' %}{{ part['text'] | trim }}{% endif %}"
    "{% endfor %}{% endif %}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")

IDEFICS3_TEMPLATE = (  # Idefics3 / SmolVLM: "User:<image>text<end_of_utterance>"
    "<|begin_of_text|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'] is string %}: {{ message['content'] }}"
    "{% else %}{{ ':' if message['content'][0]['type'] == 'image' else ': ' }}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}")

_SMALL_TEXT = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": CONTEXT}
_SMALL_VISION = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                 "num_attention_heads": 2}


def tokenizer_with(specials: list[str], *, eos: str, pad: str, template: str,
                   named: dict[str, str] | None = None, bos: str | None = None):
    """The byte-level tokenizer holding `specials` as single tokens; `named` sets the attributes
    a family's processor reads (e.g. `start_image_token`)."""
    from transformers import AddedToken, Qwen2Tokenizer

    tokenizer = Qwen2Tokenizer(vocab=_byte_vocab(), merges=[], unk_token=None, eos_token=eos,
                               pad_token=pad, bos_token=bos, **(named or {}))
    tokenizer.add_special_tokens({"additional_special_tokens": [
        AddedToken(t, special=True, normalized=False) for t in specials]})
    tokenizer.chat_template = template
    return tokenizer


def _ids(tokenizer, tokens: list[str]) -> dict[str, int]:
    return {t: tokenizer.convert_tokens_to_ids(t) for t in tokens}


def _text(tokenizer, ids: dict[str, int], eos: str, pad: str, **extra) -> dict[str, Any]:
    return {**_SMALL_TEXT, "vocab_size": len(tokenizer), "eos_token_id": ids[eos],
            "pad_token_id": ids[pad], **extra}


def _save(path: Path, model, processor, eos_id: int, pad_id: int) -> None:
    model.generation_config.eos_token_id = eos_id
    model.generation_config.pad_token_id = pad_id
    model.save_pretrained(path)
    processor.save_pretrained(path)


def _write_qwen3vl(path: Path) -> None:
    import torch
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from backends.hf_local import _image_only_processor_class

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                "<|image_pad|>", "<|video_pad|>"]
    tok = tokenizer_with(specials, eos="<|im_end|>", pad="<|endoftext|>",
                         template=CHATML_IMAGES_INLINE)
    ids = _ids(tok, specials)
    config = Qwen3VLConfig(
        text_config=_text(tok, ids, "<|im_end|>", "<|endoftext|>", head_dim=16,
                          rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                           "mrope_section": [2, 3, 3], "mrope_interleaved": True}),
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                       "out_hidden_size": 64, "patch_size": 16, "spatial_merge_size": 2,
                       "temporal_patch_size": 2, "num_position_embeddings": 64,
                       "deepstack_visual_indexes": [1]},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(0)
    model = Qwen3VLForConditionalGeneration(config).eval()
    images = Qwen2VLImageProcessorPil(patch_size=16, merge_size=2, min_pixels=90 * 32 * 32,
                                      max_pixels=100 * 32 * 32)  # 90-100 tokens of 32x32 px
    processor = _image_only_processor_class(Qwen3VLProcessor)(images, tok, chat_template=tok.chat_template)
    _save(path, model, processor, ids["<|im_end|>"], ids["<|endoftext|>"])


def _write_internvl(path: Path) -> None:
    import torch
    from transformers import InternVLConfig, InternVLForConditionalGeneration, InternVLProcessor
    from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil

    from backends.hf_local import _image_only_processor_class

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<img>", "</img>", "<IMG_CONTEXT>",
                "<video>"]
    tok = tokenizer_with(specials, eos="<|im_end|>", pad="<|endoftext|>", template=INTERNVL_TEMPLATE,
                         named={"start_image_token": "<img>", "end_image_token": "</img>",
                                "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"})
    ids = _ids(tok, specials)
    config = InternVLConfig(
        vision_config={**_SMALL_VISION, "image_size": [280, 280], "patch_size": [14, 14]},
        text_config={"model_type": "qwen2", **_text(tok, ids, "<|im_end|>", "<|endoftext|>")},
        image_token_id=ids["<IMG_CONTEXT>"], downsample_ratio=0.5)
    torch.manual_seed(0)
    model = InternVLForConditionalGeneration(config).eval()
    images = GotOcr2ImageProcessorPil(size={"height": 280, "width": 280}, max_patches=2)
    # image_seq_length = (280 / 14)^2 * 0.5^2 = 100 tokens per tile (a 16:9 frame: 2 + thumbnail)
    processor = _image_only_processor_class(InternVLProcessor)(
        images, tok, chat_template=tok.chat_template, image_seq_length=100)
    _save(path, model, processor, ids["<|im_end|>"], ids["<|endoftext|>"])


def _write_llava_onevision(path: Path) -> None:
    import torch
    from transformers import (LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration,
                              LlavaOnevisionProcessor)
    from transformers.models.llava_onevision.image_processing_pil_llava_onevision import \
        LlavaOnevisionImageProcessorPil

    from backends.hf_local import _image_only_processor_class

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"]
    tok = tokenizer_with(specials, eos="<|im_end|>", pad="<|endoftext|>",
                         template=LLAVA_ONEVISION_TEMPLATE)
    ids = _ids(tok, specials)
    grid = [[140, 140], [140, 280], [280, 140]]
    config = LlavaOnevisionConfig(
        vision_config={"model_type": "siglip_vision_model", **_SMALL_VISION, "image_size": 140,
                       "patch_size": 14},
        text_config={"model_type": "qwen2", **_text(tok, ids, "<|im_end|>", "<|endoftext|>")},
        image_token_id=ids["<image>"], video_token_id=ids["<video>"], image_grid_pinpoints=grid,
        vision_feature_layer=-1, vision_feature_select_strategy="full")
    torch.manual_seed(0)
    model = LlavaOnevisionForConditionalGeneration(config).eval()
    images = LlavaOnevisionImageProcessorPil(size={"height": 140, "width": 140},
                                             image_grid_pinpoints=grid)
    processor = _image_only_processor_class(LlavaOnevisionProcessor)(
        images, tok, chat_template=tok.chat_template, num_image_tokens=100,
        vision_feature_select_strategy="full")
    _save(path, model, processor, ids["<|im_end|>"], ids["<|endoftext|>"])


def _write_gemma3(path: Path) -> None:
    import torch
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3Processor
    from transformers.models.gemma3.image_processing_pil_gemma3 import Gemma3ImageProcessorPil

    specials = ["<bos>", "<eos>", "<pad>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>",
                "<end_of_image>", "<image_soft_token>"]
    tok = tokenizer_with(specials, eos="<end_of_turn>", pad="<pad>", bos="<bos>",
                         template=GEMMA3_TEMPLATE,
                         named={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                                "image_token": "<image_soft_token>"})
    ids = _ids(tok, specials)
    config = Gemma3Config(
        text_config=_text(tok, ids, "<end_of_turn>", "<pad>", head_dim=16, sliding_window=256,
                          bos_token_id=ids["<bos>"]),
        vision_config={**_SMALL_VISION, "image_size": 140, "patch_size": 14},
        mm_tokens_per_image=100, boi_token_index=ids["<start_of_image>"],
        eoi_token_index=ids["<end_of_image>"], image_token_index=ids["<image_soft_token>"])
    torch.manual_seed(0)
    model = Gemma3ForConditionalGeneration(config).eval()
    images = Gemma3ImageProcessorPil(size={"height": 140, "width": 140})
    processor = Gemma3Processor(images, tok, chat_template=tok.chat_template, image_seq_length=100)
    _save(path, model, processor, ids["<end_of_turn>"], ids["<pad>"])


def _write_idefics3(path: Path) -> None:
    import torch
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor
    from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil

    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<end_of_utterance>",
                "<fake_token_around_image>", "<image>", "<global-img>"]
    specials += [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)]
    tok = tokenizer_with(specials, eos="<end_of_utterance>", pad="<|end_of_text|>",
                         bos="<|begin_of_text|>", template=IDEFICS3_TEMPLATE)
    ids = _ids(tok, specials)
    config = Idefics3Config(
        vision_config={**_SMALL_VISION, "image_size": 280, "patch_size": 14},
        text_config={"model_type": "llama", **_text(tok, ids, "<end_of_utterance>", "<|end_of_text|>")},
        image_token_id=ids["<image>"], scale_factor=2)
    torch.manual_seed(0)
    model = Idefics3ForConditionalGeneration(config).eval()
    images = Idefics3ImageProcessorPil(do_image_splitting=False, size={"longest_edge": 280},
                                       max_image_size={"longest_edge": 280})
    # image_seq_len = (280 / 14)^2 / 2^2 = 100 tokens per image
    processor = Idefics3Processor(images, tok, chat_template=tok.chat_template, image_seq_len=100)
    _save(path, model, processor, ids["<end_of_utterance>"], ids["<|end_of_text|>"])


def write_tiny_smolvlm(path: Path) -> Path:
    """A SmolVLM folder as the Hub ships one. Its processor needs the `num2words` package, which
    is not installed here, so processor_config.json is written by hand (the test checks that
    `hf:` says so before loading weights)."""
    import json

    import torch
    from transformers import SmolVLMConfig, SmolVLMForConditionalGeneration
    from transformers.models.smolvlm.image_processing_pil_smolvlm import SmolVLMImageProcessorPil

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<end_of_utterance>",
                "<fake_token_around_image>", "<image>", "<global-img>"]
    tok = tokenizer_with(specials, eos="<end_of_utterance>", pad="<|end_of_text|>",
                         bos="<|begin_of_text|>", template=IDEFICS3_TEMPLATE)
    ids = _ids(tok, specials)
    config = SmolVLMConfig(
        vision_config={**_SMALL_VISION, "image_size": 28, "patch_size": 14},
        text_config={"model_type": "llama", **_text(tok, ids, "<end_of_utterance>", "<|end_of_text|>")},
        image_token_id=ids["<image>"], scale_factor=2)
    torch.manual_seed(0)
    model = SmolVLMForConditionalGeneration(config).eval()
    model.save_pretrained(path)
    SmolVLMImageProcessorPil(do_image_splitting=False, size={"longest_edge": 28},
                             max_image_size={"longest_edge": 28}).save_pretrained(path)
    tok.save_pretrained(path)
    (path / "processor_config.json").write_text(json.dumps(
        {"processor_class": "SmolVLMProcessor", "image_seq_len": 1}))
    return path


#: family name -> writer of a model folder
WRITERS: dict[str, Callable[[Path], Any]] = {
    "qwen2_5_vl": None,  # tests/helpers/tiny_model.py
    "qwen3_vl": _write_qwen3vl,
    "internvl": _write_internvl,
    "llava_onevision": _write_llava_onevision,
    "gemma3": _write_gemma3,
    "idefics3": _write_idefics3,
}
FAMILIES = tuple(WRITERS)


def build_tiny_family(family: str, path: Path) -> Path:
    """The folder of `family`'s tiny model at `path`, built once (written to a temporary folder
    and renamed, so a reader never sees half a model)."""
    path = Path(path)
    if family == "qwen2_5_vl":  # 28x28 px per token: 90 to 100 tokens per image
        return build_tiny_qwen25vl(path, context=CONTEXT, min_pixels=90 * 28 * 28,
                                   max_pixels=100 * 28 * 28)
    if (path / "config.json").exists():
        return path
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    WRITERS[family](tmp)
    try:
        if path.exists() and not (path / "config.json").exists():
            shutil.rmtree(path, ignore_errors=True)
        os.replace(tmp, path)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return path
