"""The offline baseline: no model. Tabs see `is_baseline` and use their no-model solver."""
from __future__ import annotations

from backends.base import GenerationRequest, GenerationResult, VLMBackend
from backends.config import ApiSettings
from backends.errors import BackendError


class BaselineBackend(VLMBackend):
    kind = "baseline"
    needs_arg = False

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> BaselineBackend:
        return cls()

    @property
    def backend_id(self) -> str:
        return "baseline"

    @property
    def is_baseline(self) -> bool:
        return True

    def generate(self, request: GenerationRequest) -> GenerationResult:
        raise BackendError("The baseline backend has no language model; each tab answers with "
                           "its own no-model method instead.")
