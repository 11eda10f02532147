"""The local transformers backend end to end with the tiny Qwen2.5-VL built by the tests."""
from __future__ import annotations

import io
import threading
import time

import pytest
from PIL import Image

from backends.base import EncodedImage, GenerationParams, GenerationRequest, Message
from backends.errors import BackendError, GenerationStopped
from backends.hf_local import HFBackend, finish_reason, load_processor, template_kwargs, template_source
from backends.registry import resolve
from tests.helpers import tiny_model

# The tiny model's tokenizer is byte-level: one token per UTF-8 byte, one per special token.
# "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n" -> 3 special + 5 + 2 + 1 + 10 bytes.
TEXT_ONLY_PROMPT_TOKENS = 3 + len("user\n") + len("hi") + len("\n") + len("assistant\n")
# A 56x56 image is 4x4 patches of 14 px, merged 2x2 -> 4 <|image_pad|>, plus vision start/end.
IMAGE_56_TOKENS = 4 + 2


@pytest.fixture(scope="module")
def backend(tiny_vlm_dir) -> HFBackend:
    backend = HFBackend(str(tiny_vlm_dir))
    backend.load()
    return backend


def square(shade: int) -> Image.Image:
    return Image.new("RGB", (56, 56), (shade, 255 - shade, 128))


def request(content: list, max_tokens: int = 8, **params) -> GenerationRequest:
    return GenerationRequest([Message("user", content)],
                             GenerationParams(max_tokens=max_tokens, **params))


def test_processor_is_built_without_torchvision(tiny_vlm_dir):
    from transformers import AutoConfig

    processor = load_processor(str(tiny_vlm_dir), AutoConfig.from_pretrained(tiny_vlm_dir))
    assert processor.image_processor is not None
    assert processor.tokenizer.convert_tokens_to_ids("<|image_pad|>") == processor.image_token_id


def test_generate_text_usage_latency(backend):
    result = backend.generate(request(["<0.0 s>", square(10), "<1.0 s>", square(200),
                                       "What happens?"], max_tokens=8))
    assert result.ok and isinstance(result.text, str)
    assert result.backend == backend.backend_id and result.model == backend.source
    assert 1 <= result.usage.completion_tokens <= 8
    assert result.usage.prompt_tokens > 2 * IMAGE_56_TOKENS
    assert result.latency_s > 0


def test_chat_template_applied(backend):
    text_only = backend.generate(request(["hi"], max_tokens=2))
    assert text_only.usage.prompt_tokens == TEXT_ONLY_PROMPT_TOKENS
    with_image = backend.generate(request([square(50), "hi"], max_tokens=2))
    assert with_image.usage.prompt_tokens == TEXT_ONLY_PROMPT_TOKENS + IMAGE_56_TOKENS
    with_system = backend.generate(GenerationRequest(
        [Message.text("system", "Be brief."), Message.text("user", "hi")],
        GenerationParams(max_tokens=2)))
    system_tokens = 2 + len("system\n") + len("Be brief.") + len("\n")
    assert with_system.usage.prompt_tokens == TEXT_ONLY_PROMPT_TOKENS + system_tokens


def test_greedy_is_deterministic_and_sampling_varies(backend):
    greedy = [backend.generate(request([square(90), "describe"], max_tokens=6)).text
              for _ in range(2)]
    assert greedy[0] == greedy[1]
    sampled = {backend.generate(request([square(90), "describe"], max_tokens=6,
                                        temperature=1.0, top_p=1.0)).text for _ in range(2)}
    assert len(sampled) == 2  # random weights, 263 tokens: 6 sampled tokens repeat by chance ~never


def test_cancel_before_start(backend):
    cancel = threading.Event()
    cancel.set()
    req = request(["hi"])
    req.cancel = cancel
    with pytest.raises(GenerationStopped):
        backend.generate(req)


def test_cancel_stops_running_generation(backend):
    cancel = threading.Event()
    req = request([square(30), "go on forever"], max_tokens=4000)
    req.cancel = cancel

    def stop_once_tokens_flow():
        while backend.tokens_so_far < 3:
            time.sleep(0.01)
        cancel.set()

    backend.tokens_so_far = 0
    threading.Thread(target=stop_once_tokens_flow, daemon=True).start()
    with pytest.raises(GenerationStopped):
        backend.generate(req)
    assert 3 <= backend.tokens_so_far < 100  # stopped mid-generation, long before 4000


def test_two_threads_share_the_model(backend):
    results: dict[int, object] = {}

    def work(i: int) -> None:
        results[i] = backend.generate(request([square(40 * i), f"thread {i}"], max_tokens=6))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(results) == [0, 1]
    assert all(r.ok and r.usage.completion_tokens >= 1 for r in results.values())


def test_resolve_is_lazy_and_shared(tiny_vlm_dir):
    spec = f"hf:{tiny_vlm_dir}"
    first = resolve(spec)
    assert isinstance(first, HFBackend) and resolve(spec) is first
    fresh = resolve(f"hf:{tiny_vlm_dir}/")  # another spelling: another instance, still unloaded
    assert not fresh.loaded


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(BackendError, match="does not exist"):
        HFBackend(str(tmp_path / "nope" / "model")).generate(request(["hi"]))
    with pytest.raises(BackendError, match="config.json"):
        HFBackend(str(tmp_path)).generate(request(["hi"]))


def test_offline_hub_id_says_download_or_folder():
    with pytest.raises(BackendError, match="downloaded first .* or given as a local folder"):
        HFBackend("Qwen/Qwen2.5-VL-3B-Instruct").generate(request(["hi"]))


def test_input_the_processor_refuses_is_an_error_result(backend):
    # Qwen2-VL resizing refuses aspect ratios above 200: the call fails, the process does not
    result = backend.generate(request([Image.new("RGB", (6000, 28)), "hi"]))
    assert not result.ok and result.text == ""
    assert result.error.startswith(f"{backend.backend_id} failed: ValueError")
    assert backend.generate(request(["still works"], max_tokens=2)).ok


def test_generation_runs_under_spaces_gpu_when_available(backend, monkeypatch):
    """On a ZeroGPU Space the `spaces` package exists; generation must go through spaces.GPU,
    whose worker receives the arguments pickled."""
    import pickle
    import sys
    import types

    import backends.hf_local as hf_local

    calls: list[int] = []

    def gpu(duration: int = 60):
        def wrap(fn):
            def run(*args, **kwargs):
                calls.append(duration)
                args, kwargs = pickle.loads(pickle.dumps((args, kwargs)))
                return pickle.loads(pickle.dumps(fn(*args, **kwargs)))
            return run
        return wrap

    monkeypatch.setitem(sys.modules, "spaces", types.SimpleNamespace(GPU=gpu))
    monkeypatch.setattr(hf_local, "_GPU_ENTRY", None)
    result = backend.generate(request([square(70), "hi"], max_tokens=2))
    assert result.ok and result.usage.prompt_tokens == TEXT_ONLY_PROMPT_TOKENS + IMAGE_56_TOKENS
    assert calls == [120]


# -- the thinking switch, finish_reason and encoded images (issue 13) ---------------------------
THINKING_TEMPLATE = tiny_model.CHAT_TEMPLATE.replace(
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n"
    "{% endif %}{% endif %}")
EMPTY_THINK_TOKENS = len("<think>\n\n</think>\n\n")  # byte-level: one token per byte


@pytest.fixture()
def thinking_backend(tiny_vlm_dir) -> HFBackend:
    """Its own instance (the shared one keeps the plain template), with a Qwen3-style template."""
    backend = HFBackend(str(tiny_vlm_dir))
    backend.load()
    backend._processor.chat_template = THINKING_TEMPLATE
    return backend


def test_enable_thinking_reaches_a_template_that_reads_it(thinking_backend):
    tokens = {thinking: thinking_backend.generate(request(["hi"], max_tokens=1,
                                                          thinking=thinking)).usage.prompt_tokens
              for thinking in (None, True, False)}
    assert tokens[None] == tokens[True] == TEXT_ONLY_PROMPT_TOKENS
    assert tokens[False] == TEXT_ONLY_PROMPT_TOKENS + EMPTY_THINK_TOKENS  # the empty think block


def test_a_template_without_the_switch_is_left_alone(backend):
    assert "enable_thinking" not in template_source(backend._processor)
    assert template_kwargs(template_source(backend._processor), False) == {}
    assert template_kwargs(THINKING_TEMPLATE, False) == {"enable_thinking": False}
    assert template_kwargs(THINKING_TEMPLATE, None) == {}
    result = backend.generate(request(["hi"], max_tokens=1, thinking=False))
    assert result.ok and result.usage.prompt_tokens == TEXT_ONLY_PROMPT_TOKENS


def test_finish_reason_says_length_when_every_token_was_used(backend):
    result = backend.generate(request([square(90), "describe"], max_tokens=3))
    assert result.finish_reason == ("length" if result.usage.completion_tokens == 3 else "stop")


def test_finish_reason_rule():
    end = {7}
    assert finish_reason([1, 2, 3], 3, end, "abc", None) == "length"
    assert finish_reason([1, 2, 7], 3, end, "ab", None) == "stop"  # the end token came last
    assert finish_reason([1, 7], 3, end, "a", None) == "stop"
    assert finish_reason([1, 2, 3], 3, end, "a###", ("###",)) == "stop"  # a stop string ended it
    assert finish_reason([1, 2, 3], 3, end, "abc", ("###",)) == "length"


def test_an_encoded_image_is_decoded_for_the_model(backend):
    buffer = io.BytesIO()
    square(90).save(buffer, format="PNG")
    encoded = EncodedImage(buffer.getvalue(), "image/png", 56, 56)
    assert Message("user", [encoded, "hi"]).num_images() == 1
    result = backend.generate(request([encoded, "hi"], max_tokens=2))
    assert result.ok and result.usage.prompt_tokens == TEXT_ONLY_PROMPT_TOKENS + IMAGE_56_TOKENS
    greedy = backend.generate(request([square(90), "describe"], max_tokens=4)).text
    assert backend.generate(request([encoded, "describe"], max_tokens=4)).text == greedy


def test_a_think_block_is_split_off_the_local_models_reply(backend, monkeypatch):
    """The tiny model's output is noise, so its tokenizer's decode is made to return a reply
    with reasoning; the backend splits it as the API backend does (backends.reasoning)."""
    tokenizer = backend._processor.tokenizer
    monkeypatch.setattr(tokenizer, "decode", lambda *a, **k: "<think>count the frames</think> B")
    result = backend.generate(request([square(30), "Which?"], max_tokens=4))
    assert result.text == "B" and result.reasoning == "count the frames"
    # the tiny byte-level tokenizer has no single </think> token: its count is not known
    assert result.usage.reasoning_tokens is None and result.usage.completion_tokens >= 1


def test_reasoning_tokens_are_counted_up_to_the_last_think_end_token():
    from backends.hf_local import reasoning_token_count

    assert reasoning_token_count([5, 9, 7, 3, 3], 7) == 3
    assert reasoning_token_count([7, 1, 7, 2], 7) == 3
    assert reasoning_token_count([1, 2], 7) == 0
    assert reasoning_token_count([1, 2], None) is None
