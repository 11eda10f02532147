"""The named no-model methods (`baseline:<method>`, backends.baseline) and how tabs read them,
without importing any backend: two methods can be put side by side under "compare with"
(backends.pair) with no model and no network. Each tab's `solvers_for` maps the method to its own
solver (`method_for`); a tab that does not have the named method runs its default one.
"""
from __future__ import annotations

from backends.base import VLMBackend

#: the named no-model methods: spec argument -> (tab, label). The label says "method": none is a model.
METHODS: dict[str, tuple[str, str]] = {
    "text": ("window search", "text-only method: word overlap with the subtitles"),
    "rag": ("window search", "RAG method: MiniLM embeddings of the subtitles"),
    "edge1": ("cloze", "Edge-1 method (pixel approximation: the frame at each edge)"),
    "edge4": ("cloze", "Edge-4 method (pixel approximation: 4 frames at each edge)"),
    "dinov2": ("cloze", "Edge-4 DINOv2 method (released; needs the DINOv2 weights)"),
}
#: what "Compare with" offers beside the models: the methods that run offline on every machine
OFFLINE_METHODS = ("text", "rag", "edge1", "edge4")


def method_spec(method: str) -> str:
    return f"baseline:{method}"


def is_method_spec(spec: str) -> bool:
    """`baseline` or `baseline:<method>`: a no-model method, not a model."""
    return (spec or "").strip().lower().partition(":")[0] == "baseline"


def method_label(spec: str) -> str:
    """How the panel and the tabs name a no-model method ("" for a model)."""
    if not is_method_spec(spec):
        return ""
    method = spec.strip().lower().partition(":")[2]
    return METHODS[method][1] if method in METHODS else "each tab's default no-model method"


def method_of(backend: VLMBackend) -> str:
    """The named method of a baseline backend ("" for the default one or for a model)."""
    if not backend.is_baseline:
        return ""
    return getattr(getattr(backend, "inner", backend), "method", "")   # inner: a recording wrapper


def method_for(backend: VLMBackend, known: tuple[str, ...], default: str) -> str:
    """The method a tab runs for `backend`: its named method when the tab has it, else `default`."""
    method = method_of(backend)
    return method if method in known else default
