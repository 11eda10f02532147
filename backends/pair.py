"""Two backends on one request ("compare with"): the second backend answers exactly the request
the first is sent (same frames, same prompt, same parameters), built once and sent twice.

`PairedBackend(primary, partner)` is what a tab's solvers get in place of the session's backend.
It answers as the primary does; `backends.ask.ask` sees its `partner` and sends every request to
both at the same time, each side with its own re-asks, both calls carrying one pair id (recorded
in traces: `"pair"`). The primary's answers steer the tab (its agent's next step, its record); the
partner's answers come back beside them (`Asked.partner`) for the side-by-side views.

Frames fit both: the pair's image cap is the smaller of the two, so a request built for the pair
fits either side. A side whose server still refuses the count steps down on its own; the pair then
says the two requests differed (`same_request`).

A recorded pair replays offline: record with both backends, then pair `replay:<trace>#<id A>` with
`replay:<trace>#<id B>` (backends.replay answers each side only with its own recorded calls).

Two no-model methods pair too (`baseline:<method>` on each side, backends.baseline): no request is
sent; the pair `is_baseline`, and each tab's solvers_for runs both methods on the same item
(`method_pair`). A model paired with a method is refused: they share no request.
"""
from __future__ import annotations

from backends.base import GenerationRequest, GenerationResult, VLMBackend
from backends.errors import BackendError


class PairedBackend(VLMBackend):
    """The primary backend, with a partner that is asked the same requests (backends.ask)."""

    def __init__(self, primary: VLMBackend, partner: VLMBackend):
        if primary.is_baseline != partner.is_baseline:
            method, model = (primary, partner) if primary.is_baseline else (partner, primary)
            raise BackendError(f"\"Compare with\" puts two models or two no-model methods side by "
                               f"side: {method.backend_id} is a method (it asks no model), "
                               f"{model.backend_id} a model, so there is no request to send to both. "
                               "Choose a model on each side, or a method (baseline:...) on each.")
        self.primary = primary
        self.partner = partner
        self.kind = primary.kind
        caps = [c for c in (primary.max_images, partner.max_images) if c is not None]
        self.max_images = min(caps) if caps else None

    @property
    def backend_id(self) -> str:
        return self.primary.backend_id

    @property
    def is_baseline(self) -> bool:
        """Two no-model methods: tabs run their no-model solvers (both, `method_pair`)."""
        return self.primary.is_baseline

    @property
    def model(self) -> str:
        return self.primary.model

    @property
    def partner_id(self) -> str:
        return self.partner.backend_id

    def generate(self, request: GenerationRequest) -> GenerationResult:
        """The primary's answer alone (a caller outside `ask` gets no pairing)."""
        return self.primary.generate(request)

    def close(self) -> None:
        self.primary.close()
        self.partner.close()


def pair_backends(primary: VLMBackend, partner: VLMBackend | None) -> VLMBackend:
    """`primary` paired with `partner`, or `primary` alone when there is no partner."""
    return primary if partner is None else PairedBackend(primary, partner)


def partner_id(backend: VLMBackend) -> str:
    """The partner's backend id ('' when `backend` is not paired)."""
    partner = getattr(backend, "partner", None)
    return partner.backend_id if partner is not None else ""


def method_pair(backend: VLMBackend) -> tuple[VLMBackend, VLMBackend] | None:
    """(first, second) when `backend` pairs two no-model methods, else None."""
    if isinstance(backend, PairedBackend) and backend.is_baseline:
        return backend.primary, backend.partner
    return None


def same_request(first: GenerationRequest | None, second: GenerationRequest | None) -> bool:
    """Whether both sides were finally sent the same messages and parameters."""
    if first is None or second is None:
        return first is second
    return first.params == second.params and first.messages == second.messages
