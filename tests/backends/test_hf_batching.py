"""Concurrent `hf:` calls are generated together (issue 35): calls of one shape that wait while
the model is busy go into one left-padded `generate` call, and greedy answers equal the ones each
call gets alone, on every tiny family (tests/helpers/tiny_families.py: the families' real model
and processor classes, random weights).

To make the batch deterministic the test holds the model "busy" (the batcher's own state, under
its lock) until every call waits, as a long generation would; then one thread takes them all."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PIL import Image

from backends.base import GenerationParams, GenerationRequest, Message
from backends.hf_local import HFBackend, LoadOptions
from tests.helpers.example_cache import CACHE
from tests.helpers.tiny_families import FAMILIES, build_tiny_family


def family_dir(family: str) -> Path:
    return build_tiny_family(family, CACHE / "tiny-families" / family)


def request(i: int, *, images: int = 2, max_tokens: int = 10, stop: tuple[str, ...] | None = None) -> GenerationRequest:
    """Prompts of different lengths (so the batch is padded), the same number and size of images."""
    pictures = [Image.new("RGB", (64, 48), ((37 * i + 50 * k) % 255, 90, 160)) for k in range(images)]
    return GenerationRequest([Message("user", [*pictures, "Which one? " + "more words " * i])],
                             GenerationParams(max_tokens=max_tokens, temperature=0.0,
                                              stop=list(stop) if stop else None))


def concurrently(backend: HFBackend, requests: list[GenerationRequest]) -> list:
    """Each request from its own thread, released together once all of them wait."""
    backend.load()
    batcher = backend._batcher
    results: list = [None] * len(requests)
    with batcher._cond:
        batcher._busy = True  # as if a long generation ran

    def work(i: int) -> None:
        results[i] = backend.generate(requests[i])

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    with batcher._cond:
        assert batcher._cond.wait_for(lambda: len(batcher._waiting) == len(requests), timeout=120)
        batcher._busy = False
        batcher._cond.notify_all()
    for thread in threads:
        thread.join(timeout=300)
    assert all(not t.is_alive() for t in threads)
    return results


def same(a, b) -> bool:
    return (a.ok and b.ok and a.text == b.text and a.usage == b.usage
            and a.finish_reason == b.finish_reason)


@pytest.mark.parametrize("family", FAMILIES)
def test_batched_answers_equal_unbatched_ones(family):
    path = family_dir(family)
    alone = HFBackend(f"{path}/", options=LoadOptions(batch=1))
    together = HFBackend(f"{path}//")
    requests = [request(i) for i in range(5)]
    expected = [alone.generate(r) for r in requests]
    got = concurrently(together, requests)
    assert together.batch_sizes == [5] and alone.batch_sizes == [1] * 5
    assert [g.usage.prompt_tokens for g in got] == [e.usage.prompt_tokens for e in expected]
    assert len({e.usage.prompt_tokens for e in expected}) == 5  # really padded
    assert all(same(g, e) for g, e in zip(got, expected)), [(g.text, e.text) for g, e in zip(got, expected)]


def test_a_row_that_ends_early_answers_as_it_would_alone(tiny_vlm_dir):
    """One call's reply reaches an end token early while the others run on: its answer stops
    there, as alone (the batch pads it afterwards). The end token is one the first reply holds
    (an ASCII character: the tokenizer is byte-level, one token per byte)."""
    alone = HFBackend(f"{tiny_vlm_dir}/", options=LoadOptions(batch=1))
    together = HFBackend(f"{tiny_vlm_dir}//")
    requests = [request(i, max_tokens=12) for i in range(4)]
    texts = [alone.generate(r).text for r in requests]
    # a character of the first reply that another reply does not reach as early
    char = next(c for c in texts[0][1:] if c.isascii()
                and any(c not in t[:texts[0].index(c) + 1] for t in texts[1:]))
    (ender,) = alone._processor.tokenizer.encode(char, add_special_tokens=False)
    for backend in (alone, together):  # that token now ends a reply, in both models
        backend.load()
        config = backend._model.generation_config
        ends = config.eos_token_id if isinstance(config.eos_token_id, list) else [config.eos_token_id]
        config.eos_token_id = [*ends, ender]
    expected = [alone.generate(r) for r in requests]
    ended = expected[0].usage.completion_tokens
    assert ended < 12 and expected[0].finish_reason == "stop"
    assert any(e.usage.completion_tokens > ended for e in expected[1:])
    got = concurrently(together, requests)
    assert together.batch_sizes == [4]
    assert all(same(g, e) for g, e in zip(got, expected)), [(g.text, e.text) for g, e in zip(got, expected)]


def test_only_calls_of_one_shape_go_together_and_the_limit_holds(tiny_vlm_dir):
    together = HFBackend(f"{tiny_vlm_dir}///", options=LoadOptions(batch=2))
    requests = [request(0), request(1), request(2, images=1), request(3), request(4, stop=("zz",)),
                request(5, max_tokens=4)]
    got = concurrently(together, requests)
    assert all(g.ok for g in got)
    # oldest first: [0, 1] (limit 2), then [2] (one image), [3], [4] (a stop string), [5] (its length)
    assert together.batch_sizes == [2, 1, 1, 1, 1]


def test_a_stop_pressed_while_waiting_stops_that_call_only(tiny_vlm_dir):
    from backends.errors import GenerationStopped

    together = HFBackend(f"{tiny_vlm_dir}////")
    requests = [request(i) for i in range(3)]
    requests[1].cancel = threading.Event()
    requests[1].cancel.set()
    with pytest.raises(GenerationStopped):
        together.generate(requests[1])  # pressed before: refused at once
    requests[1].cancel = cancel = threading.Event()
    together.load()
    batcher = together._batcher
    with batcher._cond:
        batcher._busy = True
    results: dict[int, object] = {}

    def work(i: int) -> None:
        try:
            results[i] = together.generate(requests[i])
        except GenerationStopped as stopped:
            results[i] = stopped

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(3)]
    for thread in threads:
        thread.start()
    with batcher._cond:
        assert batcher._cond.wait_for(lambda: len(batcher._waiting) == 3, timeout=120)
        cancel.set()  # Stop pressed while the call waits for its turn
        batcher._busy = False
        batcher._cond.notify_all()
    for thread in threads:
        thread.join(timeout=300)
    assert isinstance(results[1], GenerationStopped)
    assert results[0].ok and results[2].ok and together.batch_sizes == [2]
