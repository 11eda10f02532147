"""The offline baseline: no model. Tabs see `is_baseline` and use their no-model solver.

`baseline` is each tab's default no-model method; `baseline:<method>` names one of them
(backends.methods), so two methods can be put side by side under "compare with" (backends.pair).
"""
from __future__ import annotations

from backends.base import GenerationRequest, GenerationResult, VLMBackend
from backends.config import ApiSettings
from backends.errors import BackendError, UnknownBackendError
from backends.methods import METHODS


class BaselineBackend(VLMBackend):
    kind = "baseline"
    needs_arg = False

    def __init__(self, method: str = ""):
        self.method = method

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> BaselineBackend:
        method = (arg or "").strip().lower()
        if method and method not in METHODS:
            known = ", ".join(f"baseline:{m}" for m in METHODS)
            raise UnknownBackendError(f"Unknown no-model method 'baseline:{arg}'. Known: baseline (each "
                                      f"tab's default), {known}.")
        return cls(method)

    @property
    def backend_id(self) -> str:
        return f"baseline:{self.method}" if self.method else "baseline"

    @property
    def is_baseline(self) -> bool:
        return True

    def generate(self, request: GenerationRequest) -> GenerationResult:
        raise BackendError("The baseline backend has no language model; each tab answers with "
                           "its own no-model method instead.")
