"""The registry builds each backend from its spec, lazily."""
from __future__ import annotations

import pytest

from backends import registry
from backends.baseline import BaselineBackend
from backends.config import ApiSettings
from backends.errors import UnknownBackendError
from backends.record import RecordingBackend
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


class EchoBackend(BaselineBackend):
    """A backend a test registers: remembers the argument and settings it was built with."""

    kind = "echo"
    needs_arg = True

    def __init__(self, arg: str, api: ApiSettings):
        self.arg, self.api = arg, api

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> EchoBackend:
        return cls(arg, api)


@pytest.fixture()
def tables(monkeypatch):
    """Fresh copies of the registry's tables, so registering in a test leaves no trace."""
    monkeypatch.setattr(registry, "VLM_BACKENDS", dict(registry.VLM_BACKENDS))
    monkeypatch.setattr(registry, "EMBEDDING_BACKENDS", dict(registry.EMBEDDING_BACKENDS))


def test_register_adds_a_backend_built_by_its_from_spec(tables, tmp_path):
    registry.register("echo", "tests.backends.test_registry:EchoBackend")
    api = ApiSettings(base_url="http://127.0.0.1:9/v1")
    backend = resolve("echo: some arg ", api=api)
    assert isinstance(backend, EchoBackend) and backend.arg == "some arg" and backend.api is api
    with pytest.raises(UnknownBackendError, match="'echo:<model or path>'"):
        resolve("echo")
    recorded = resolve("echo:x", record_to=tmp_path / "t.jsonl")
    assert isinstance(recorded, RecordingBackend) and isinstance(recorded.inner, EchoBackend)


def test_register_refuses_a_name_already_taken(tables):
    registry.register("echo", "tests.backends.test_registry:EchoBackend")
    with pytest.raises(ValueError, match="'echo' is already registered"):
        registry.register("echo", "somewhere.else:Other")
    with pytest.raises(ValueError, match="'openai' is already registered .*backends.openai_api"):
        registry.register("OpenAI", "somewhere.else:Other")
    with pytest.raises(ValueError, match="'minilm' is already registered"):
        registry.register("minilm", "somewhere.else:Other", embedding=True)
    registry.register("minilm", "tests.backends.test_registry:EchoBackend")  # other table: fine


def test_register_refuses_malformed_names_and_targets(tables):
    with pytest.raises(ValueError, match="module:Class"):
        registry.register("new", "no_class_here")
    with pytest.raises(ValueError, match="no ':'"):
        registry.register("a:b", "m:C")


def test_every_registered_class_builds_itself_from_a_spec():
    for table in (registry.VLM_BACKENDS, registry.EMBEDDING_BACKENDS):
        for name, target in table.items():
            cls = registry._load(target)
            assert "from_spec" in vars(cls), f"{name}: {target} has no from_spec of its own"
            assert isinstance(cls.needs_arg, bool)


def test_local_models_are_shared_within_the_process(tmp_path):
    spec = f"hf:{tmp_path / 'model'}"
    assert resolve(spec) is resolve(spec)
    assert resolve(spec) is not resolve(f"hf:{tmp_path / 'other'}")
    assert resolve_embedder("minilm") is resolve_embedder("minilm")
    assert resolve_embedder(f"hf-embed:{tmp_path}") is resolve_embedder(f"hf-embed:{tmp_path}")
