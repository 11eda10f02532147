"""Turns a spec string into a backend. Only this module knows the concrete backends.

VLM specs:        baseline | openai:<model> | hf:<hub id or folder> | replay:<trace.jsonl>
Embedding specs:  minilm | hf-embed:<hub id or folder> | openai-embed:<model>

Backends are imported lazily ("module:Class"), so `python app.py --help` stays fast.
"""
from __future__ import annotations

import difflib
import importlib
import os
import threading
from pathlib import Path

from backends.base import EmbeddingBackend, VLMBackend
from backends.config import ApiSettings
from backends.errors import UnknownBackendError

VLM_BACKENDS: dict[str, str] = {
    "baseline": "backends.baseline:BaselineBackend",
    "openai": "backends.openai_api:OpenAIBackend",
    "hf": "backends.hf_local:HFBackend",
    "replay": "backends.replay:ReplayBackend",
}
EMBEDDING_BACKENDS: dict[str, str] = {
    "minilm": "backends.embeddings_minilm:MiniLMEmbedder",
    "hf-embed": "backends.embeddings_hf:HFEmbedder",
    "openai-embed": "backends.embeddings_api:OpenAIEmbedder",
}


def _load(target: str):
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def split_spec(spec: str, table: dict[str, str]) -> tuple[str, str]:
    spec = (spec or "").strip()
    name, _, arg = spec.partition(":")
    name = name.strip().lower()
    if name not in table:
        close = difflib.get_close_matches(name, table, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise UnknownBackendError(
            f"Unknown backend '{spec}'.{hint} Known: {', '.join(sorted(table))} "
            "(e.g. baseline, openai:gpt-4o, hf:Qwen/Qwen2.5-VL-7B-Instruct, replay:trace.jsonl).")
    if name != "baseline" and name != "minilm" and not arg.strip():
        raise UnknownBackendError(f"Backend '{name}' needs an argument: '{name}:<model or path>'.")
    return name, arg.strip()


_local_cache: dict[str, VLMBackend] = {}
_local_lock = threading.Lock()


def resolve(spec: str, *, api: ApiSettings | None = None,
            record_to: str | Path | None = None) -> VLMBackend:
    """Build the backend a spec names. Local models are loaded once per process and shared."""
    name, arg = split_spec(spec, VLM_BACKENDS)
    cls = _load(VLM_BACKENDS[name])
    if name == "baseline":
        backend: VLMBackend = cls()
    elif name == "openai":
        backend = cls(arg, settings=(api or ApiSettings()).resolved())
    elif name == "hf":
        with _local_lock:
            backend = _local_cache.get(arg)
            if backend is None:
                backend = _local_cache[arg] = cls(arg)  # weights load lazily on first generate
    else:  # replay
        backend = cls(arg)
    if record_to:
        from backends.record import RecordingBackend
        backend = RecordingBackend(backend, record_to)
    return backend


_embed_cache: dict[str, EmbeddingBackend] = {}


def resolve_embedder(spec: str = "minilm", *, api: ApiSettings | None = None) -> EmbeddingBackend:
    name, arg = split_spec(spec, EMBEDDING_BACKENDS)
    key = f"{name}:{arg}"
    with _local_lock:
        if key not in _embed_cache or name == "openai-embed":
            cls = _load(EMBEDDING_BACKENDS[name])
            if name == "minilm":
                emb = cls()
            elif name == "openai-embed":
                return cls(arg, settings=(api or ApiSettings()).resolved())
            else:
                emb = cls(arg)
            _embed_cache[key] = emb
        return _embed_cache[key]


def configured_choices() -> list[str]:
    """Backend specs offered in the settings panel: baseline, then APP_BACKENDS (comma list)."""
    extra = [s.strip() for s in os.environ.get("APP_BACKENDS", "").split(",") if s.strip()]
    choices = ["baseline"] + [s for s in extra if s != "baseline"]
    return choices
