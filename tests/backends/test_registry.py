"""The registry builds each backend from its spec, lazily."""
from __future__ import annotations

import pytest

from backends.errors import UnknownBackendError
from backends.registry import resolve, resolve_embedder


def test_unknown_spec_suggests_the_near_name():
    with pytest.raises(UnknownBackendError, match="Did you mean 'openai'"):
        resolve("opneai:gpt-4o")
    with pytest.raises(UnknownBackendError, match="Did you mean 'replay'"):
        resolve("replya:trace.jsonl")
    with pytest.raises(UnknownBackendError, match="Did you mean 'minilm'"):
        resolve_embedder("minilmm")


def test_spec_without_argument_is_refused():
    with pytest.raises(UnknownBackendError, match="needs an argument"):
        resolve("openai")


def test_baseline_and_lazy_minilm():
    assert resolve("baseline").is_baseline
    embedder = resolve_embedder("minilm")
    assert embedder.backend_id == "minilm"


def test_hf_spec_does_not_load_weights(tmp_path):
    backend = resolve(f"hf:{tmp_path / 'not-there-yet'}")  # would fail if it loaded now
    assert backend.kind == "hf" and not backend.loaded
