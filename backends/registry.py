"""Turns a spec string into a backend. Only this module knows the concrete backends.

VLM specs:        baseline | openai:<model> | hf:<hub id or folder> | replay:<trace.jsonl>
Embedding specs:  minilm | hf-embed:<hub id or folder> | openai-embed:<model>
                  | hf-image:<hub id or folder> (image features only: DINOv2, TempCloze's edge baseline)

A table maps each name to "module:Class"; the class is imported only when a spec names it (so
`python app.py --help` stays fast) and builds itself with `from_spec(arg, api)`. A new backend is
one file and one `register` line.
"""
from __future__ import annotations

import difflib
import importlib
import os
from pathlib import Path

from backends.base import EmbeddingBackend, VLMBackend
from backends.config import ApiSettings
from backends.errors import UnknownBackendError
from backends.record import RecordingBackend

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
    "hf-image": "backends.image_features:HFImageFeatures",
}


def register(name: str, target: str, *, embedding: bool = False) -> None:
    """Add a backend: `name` (the part of a spec before ':') -> "module:Class". A name already
    taken is refused, so one backend can never silently replace another."""
    table = EMBEDDING_BACKENDS if embedding else VLM_BACKENDS
    name = name.strip().lower()
    if not name or ":" in name:
        raise ValueError(f"Backend name {name!r} must be non-empty and contain no ':'.")
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"Backend target {target!r} must read 'module:Class'.")
    if name in table:
        raise ValueError(f"Backend name '{name}' is already registered (to {table[name]}); "
                         "choose another name.")
    table[name] = target


def _load(target: str) -> type:
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def preload(*names: str) -> None:
    """Import the named backends and the client libraries they would import on their first call
    (a module's `preload()`, when it has one): `openai` costs ~0.7 s of CPU the first time. Loads
    no model and opens no connection."""
    for name in names:
        module = importlib.import_module(VLM_BACKENDS[name].split(":")[0])
        getattr(module, "preload", lambda: None)()


def split_spec(spec: str, table: dict[str, str]) -> tuple[str, str]:
    """(name, argument) of a spec, or UnknownBackendError saying what is wrong with it."""
    spec = (spec or "").strip()
    name, _, arg = spec.partition(":")
    name = name.strip().lower()
    if name not in table:
        close = difflib.get_close_matches(name, table, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise UnknownBackendError(
            f"Unknown backend '{spec}'.{hint} Known: {', '.join(sorted(table))} "
            "(e.g. baseline, openai:gpt-4o, hf:Qwen/Qwen2.5-VL-7B-Instruct, replay:trace.jsonl).")
    if _load(table[name]).needs_arg and not arg.strip():
        raise UnknownBackendError(f"Backend '{name}' needs an argument: '{name}:<model or path>'.")
    return name, arg.strip()


def resolve(spec: str, *, api: ApiSettings | None = None,
            record_to: str | Path | None = None) -> VLMBackend:
    """Build the backend a spec names (local models are loaded once per process and shared);
    with `record_to`, every answered call is recorded to that trace."""
    name, arg = split_spec(spec, VLM_BACKENDS)
    backend: VLMBackend = _load(VLM_BACKENDS[name]).from_spec(arg, api or ApiSettings())
    if record_to:
        backend = RecordingBackend(backend, record_to)
    return backend


def check_reachable(spec: str, *, api: ApiSettings | None = None, timeout_s: float = 2.5) -> str | None:
    """Whether the backend a spec names can answer, asked now (VLMBackend.check_spec): one line,
    None when there is nothing to ask, BackendError naming what failed."""
    name, arg = split_spec(spec, VLM_BACKENDS)
    return _load(VLM_BACKENDS[name]).check_spec(arg, api or ApiSettings(), timeout_s)


def resolve_embedder(spec: str = "minilm", *, api: ApiSettings | None = None) -> EmbeddingBackend:
    """Build the embedder a spec names (local models once per process)."""
    name, arg = split_spec(spec, EMBEDDING_BACKENDS)
    return _load(EMBEDDING_BACKENDS[name]).from_spec(arg, api or ApiSettings())


def configured_choices() -> list[str]:
    """Backend specs offered in the settings panel: baseline, then APP_BACKENDS (comma list)."""
    extra = [s.strip() for s in os.environ.get("APP_BACKENDS", "").split(",") if s.strip()]
    choices = ["baseline"] + [s for s in extra if s != "baseline"]
    return choices
