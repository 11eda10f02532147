"""`hf:` as installed on a GPU machine, and its dtype / attention options (issue 35).

No GPU here: CUDA is reported present by patching `torch.cuda.is_available`, so loading takes the
GPU path up to the point where the CPU build of torch cannot move a tensor to "cuda". What is
checked is what happens before that: no `device_map` (which needs `accelerate`, not installed by
this project) on one GPU, and options the machine cannot honour refused in one line before any
weights are read. The model is the tiny random-weight Qwen2.5-VL built by the tests."""
from __future__ import annotations

import importlib.util

import pytest
from PIL import Image

from backends.base import GenerationParams, GenerationRequest, Message
from backends.errors import BackendError, UnknownBackendError
from backends.hf_local import WEIGHT_LOADS, HFBackend, LoadOptions, parse_spec
from backends.registry import resolve


@pytest.fixture
def from_pretrained_calls(monkeypatch):
    """The keyword arguments of every AutoModelForImageTextToText.from_pretrained call (the real
    method still runs)."""
    import transformers

    calls: list[dict] = []
    real = transformers.AutoModelForImageTextToText.from_pretrained.__func__
    cls = transformers.AutoModelForImageTextToText

    def recording(klass, *args, **kwargs):
        calls.append(kwargs)
        return real(klass, *args, **kwargs)

    monkeypatch.setattr(cls, "from_pretrained", classmethod(recording))
    return calls


@pytest.mark.skipif(importlib.util.find_spec("accelerate") is not None,
                    reason="accelerate is installed: device_map would work either way")
@pytest.mark.parametrize("gpus", [1, 2])
def test_with_cuda_the_model_loads_without_accelerate(tiny_vlm_dir, monkeypatch, from_pretrained_calls,
                                                      gpus, caplog):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    backend = HFBackend(f"{tiny_vlm_dir}{'/' * (gpus + 3)}")
    with pytest.raises(BackendError) as failed:
        backend.load()  # the weights load; only the CPU build's move to "cuda" fails here
    assert len(from_pretrained_calls) == 1 and "device_map" not in from_pretrained_calls[0]
    assert from_pretrained_calls[0]["dtype"] in (torch.bfloat16, torch.float16)
    assert "accelerate" not in str(failed.value) and "device_map" not in str(failed.value)
    assert "CUDA" in str(failed.value) or "cuda" in str(failed.value)
    if gpus > 1:
        assert "pip install accelerate" in caplog.text


def test_options_are_parsed_and_named_in_the_backend_id(tiny_vlm_dir):
    assert parse_spec("Qwen/Qwen2.5-VL-7B-Instruct") == ("Qwen/Qwen2.5-VL-7B-Instruct", LoadOptions())
    assert parse_spec("org/m?dtype=BF16&attn=flash_attention_2&batch=4") == (
        "org/m", LoadOptions("bf16", "flash_attention_2", 4))
    backend = resolve(f"hf:{tiny_vlm_dir}?dtype=bf16&attn=eager")
    assert backend.source == str(tiny_vlm_dir) and backend.options == LoadOptions("bf16", "eager")
    assert backend.backend_id == f"hf:{tiny_vlm_dir}?dtype=bf16&attn=eager"
    assert resolve(f"hf:{tiny_vlm_dir}?dtype=bf16&attn=eager") is backend


@pytest.mark.parametrize("spec, says", [
    ("?dtype=int4", "dtype must be one of bf16, fp16, fp32, not 'int4'"),
    ("?attn=flash", "attn must be one of sdpa, flash_attention_2, eager, not 'flash'"),
    ("?precision=bf16", "unknown option 'precision=bf16'. Options: dtype=bf16|fp16|fp32"),
    ("?batch=all", "batch must be a whole number"),
    ("DROP?dtype=bf16", "name the model before the options"),
])
def test_a_wrong_option_is_one_line(tiny_vlm_dir, spec, says):
    with pytest.raises(UnknownBackendError) as wrong:
        resolve(spec.replace("DROP", "hf:") if spec.startswith("DROP") else f"hf:{tiny_vlm_dir}{spec}")
    assert says in str(wrong.value) and "\n" not in str(wrong.value)


def test_the_options_reach_the_loaded_model(tiny_vlm_dir):
    import torch

    backend = resolve(f"hf:{tiny_vlm_dir}?dtype=bf16&attn=eager")
    result = backend.generate(GenerationRequest([Message("user", [Image.new("RGB", (56, 56)), "hi"])],
                                                GenerationParams(max_tokens=3)))
    assert result.ok, result.error
    assert backend._model.dtype == torch.bfloat16
    assert backend._model.config._attn_implementation == "eager"
    assert result.backend == backend.backend_id


@pytest.mark.skipif(importlib.util.find_spec("flash_attn") is not None, reason="flash-attn is installed")
def test_flash_attention_without_its_package_is_one_line_before_loading(tiny_vlm_dir):
    with pytest.raises(BackendError) as refused:
        resolve(f"hf:{tiny_vlm_dir}?attn=flash_attention_2&dtype=bf16")
    message = str(refused.value)
    assert "flash-attn package" in message and "attn=sdpa" in message and "\n" not in message


def test_bf16_on_a_gpu_without_it_is_one_line_before_loading(tiny_vlm_dir, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    backend = HFBackend(f"{tiny_vlm_dir}//////", options=LoadOptions(dtype="bf16"))
    with pytest.raises(BackendError) as refused:
        backend.load()
    assert "does not compute in bf16; use dtype=fp16" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert not backend.loaded and WEIGHT_LOADS[backend.source] == 0


def test_flash_attention_on_the_cpu_is_one_line(tiny_vlm_dir, monkeypatch):
    import backends.hf_local as hf_local

    monkeypatch.setattr(hf_local, "_check_flash_attn_installed", lambda name: None)  # as if installed
    backend = HFBackend(f"{tiny_vlm_dir}///////", options=LoadOptions(dtype="bf16", attn="flash_attention_2"))
    with pytest.raises(BackendError, match="flash_attention_2 runs only on a CUDA GPU"):
        backend.load()
    assert WEIGHT_LOADS[backend.source] == 0
