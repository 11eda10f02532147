"""The thinking switch on the wire: what `GenerationParams.thinking` becomes for each server.

`ApiSettings.thinking_control` names the mechanism; "auto" picks it from the base URL and the
model name (docs/decisions.md, "Backends"):
- Gemini's OpenAI-compatible endpoint (generativelanguage.googleapis.com), or a `gemini-*` model
  on any host (Vertex AI, a proxy): `reasoning_effort`, "none" to disable;
- OpenAI reasoning models (o1 / o3 / o4 / gpt-5 families, on any host): `reasoning_effort`, the
  lowest effort the family accepts to disable ("minimal" for gpt-5, "low" for the o-series, which
  cannot switch reasoning off); these also get `max_completion_tokens` instead of `max_tokens`;
- gpt-3 / gpt-4 / chatgpt-* models anywhere, and other models on api.openai.com: nothing (they
  have no thinking to switch);
- any other server (self-hosted vLLM, SGLang): `chat_template_kwargs: {"enable_thinking": ...}`.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

#: reasoning efforts from least to most
EFFORTS = ("none", "minimal", "low", "medium", "high")
#: the effort sent to ask for thinking (OpenAI's own default)
ENABLE_EFFORT = "medium"

_OPENAI_REASONING = re.compile(r"^(o[134](?![0-9])|gpt-5)")
_OPENAI_PLAIN = re.compile(r"^(gpt-[34]|chatgpt-)")
_GOOGLE_HOSTS = ("generativelanguage.googleapis.com",)
_OPENAI_HOSTS = ("api.openai.com",)


def _family(model: str) -> str:
    """The model name without any provider prefix ("openai/o3-mini" -> "o3-mini"), lower case."""
    return model.strip().lower().rsplit("/", 1)[-1]


def _host(base_url: str | None) -> str:
    """The server's host; no base URL means the openai client's default, api.openai.com."""
    return (urlsplit(base_url).hostname or "") if base_url else "api.openai.com"


def is_gemini(base_url: str | None, model: str) -> bool:
    host = _host(base_url)
    return any(host == h or host.endswith("." + h) for h in _GOOGLE_HOSTS) or \
        _family(model).startswith("gemini")


def is_openai_reasoning(model: str) -> bool:
    return bool(_OPENAI_REASONING.match(_family(model)))


def resolve_control(control: str, base_url: str | None, model: str) -> str:
    """The concrete control ("chat_template_kwargs" | "reasoning_effort" | "none") for `control`
    (one of backends.config.THINKING_CONTROLS) on this server and model."""
    if control != "auto":
        return control
    if is_gemini(base_url, model) or is_openai_reasoning(model):
        return "reasoning_effort"
    if _host(base_url) in _OPENAI_HOSTS or _OPENAI_PLAIN.match(_family(model)):
        return "none"
    return "chat_template_kwargs"


def disable_effort(base_url: str | None, model: str) -> str:
    """The reasoning effort that asks this server for the least thinking."""
    if is_gemini(base_url, model):
        return "none"
    family = _family(model)
    if re.match(r"^o[134](?![0-9])", family):
        return "low"  # the o-series accepts low / medium / high only
    return "minimal"


def request_fields(control: str, thinking: bool | None, effort_off: str) -> dict:
    """The request-body fields for `thinking` under a concrete `control` ({} when None)."""
    if thinking is None or control == "none":
        return {}
    if control == "chat_template_kwargs":
        return {"chat_template_kwargs": {"enable_thinking": bool(thinking)}}
    return {"reasoning_effort": ENABLE_EFFORT if thinking else effort_off}


def lower_effort_offered(server_text: str, sent: str) -> str | None:
    """When a server refuses the effort `sent` and lists the values it takes ("Supported values
    are: 'low', 'medium', and 'high'"), the lowest of those; else None."""
    lower = server_text.lower()
    if "reasoning" not in lower or sent not in lower:
        return None
    offered = {word for word in re.findall(r"['\"`](\w+)['\"`]", lower) if word in EFFORTS}
    offered.discard(sent)
    for effort in EFFORTS:
        if effort in offered and EFFORTS.index(effort) <= EFFORTS.index("low"):
            return effort
    return None
