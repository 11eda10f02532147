"""The model interface every tab depends on.

A vision-language model answers an ordered list of chat messages whose content interleaves text
and PIL images. Embedding models turn texts and images into unit vectors. Tabs import only this
module and `backends.registry`; they never import a concrete backend.
"""
from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, Union
from collections.abc import Sequence

from backends.config import ApiSettings

if TYPE_CHECKING:  # keep PIL/numpy out of `python app.py --help`
    import numpy as np
    from PIL import Image

@dataclass(frozen=True)
class EncodedImage:
    """An image already encoded for the wire (e.g. the JPEG a benchmark's released code sends):
    API backends send these bytes as they are, never encoding the picture a second time."""

    data: bytes = field(repr=False)
    mime: str
    width: int
    height: int

    @property
    def size(self) -> tuple[int, int]:
        return self.width, self.height

    @cached_property
    def data_url(self) -> str:
        """`data:<mime>;base64,...` of these bytes, made once per object: a clip's frames kept in
        memory are sent by many requests (e.g. a Cloze stem's before/after clips) without being
        base64-encoded again for each."""
        from backends.images import data_url

        return data_url(self.mime, self.data)

    def to_pil(self) -> Image.Image:
        """Decoded, for backends that take pictures (a local model) and for traces."""
        import io

        from PIL import Image as PILImage

        image = PILImage.open(io.BytesIO(self.data))
        image.load()
        return image


Content = Union[str, "Image.Image", EncodedImage]


@dataclass
class Message:
    """One chat message. `content` is text and images in the order the model must see them."""

    role: str  # "system" | "user" | "assistant"
    content: list[Content]

    @classmethod
    def text(cls, role: str, text: str) -> Message:
        return cls(role=role, content=[text])

    def num_images(self) -> int:
        return sum(1 for part in self.content if not isinstance(part, str))


@dataclass(frozen=True)
class GenerationParams:
    temperature: float = 0.0
    #: None: not sent (the server's default; TempCloze's released evaluator sends none)
    top_p: float | None = 1.0
    max_tokens: int = 512
    stop: tuple[str, ...] | None = None
    #: None: the server's default; False: ask the server to disable thinking (CoM2 Section 5);
    #: True: ask for it. Each backend sends what its server understands.
    thinking: bool | None = None

    def as_dict(self) -> dict:
        out = {"temperature": self.temperature, "max_tokens": self.max_tokens,
               "stop": list(self.stop) if self.stop else None}
        if self.top_p is not None:  # absent when not sent (key order does not matter: keys sort)
            out["top_p"] = self.top_p
        if self.thinking is not None:  # absent by default, so traces recorded before still match
            out["thinking"] = self.thinking
        return out


@dataclass
class GenerationRequest:
    messages: list[Message]
    params: GenerationParams = field(default_factory=GenerationParams)
    task: str = ""  # e.g. "aws.inspect", "cloze.answer"; recorded in traces
    ref: str = ""   # e.g. a query id or stem; recorded in traces
    #: which reply of one conversation this is (1 = first ask; `backends.ask` sets it); recorded
    #: in traces, not part of trace keys
    attempt: int = field(default=1, compare=False)
    #: set by the UI's Stop button; backends check it and stop generating (not part of trace keys)
    cancel: threading.Event | None = field(default=None, repr=False, compare=False)
    #: links the two calls of one request sent to two backends ("compare with", backends.pair);
    #: recorded in traces, not part of trace keys
    pair: str = field(default="", compare=False)
    #: which side of that pair this call is: "first" (the session's model, whose answers steer)
    #: or "second" (the model it is compared with); recorded in traces, not part of trace keys
    pair_side: str = field(default="", compare=False)

    def num_images(self) -> int:
        return sum(m.num_images() for m in self.messages)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None  # reasoning and answer together, as servers count them
    #: of completion_tokens, those spent reasoning (usage.completion_tokens_details.reasoning_tokens
    #: when the server gives it); None: not known
    reasoning_tokens: int | None = None

    @property
    def answer_tokens(self) -> int | None:
        """completion_tokens less reasoning_tokens; None unless both are known."""
        if self.completion_tokens is None or self.reasoning_tokens is None:
            return None
        return max(0, self.completion_tokens - self.reasoning_tokens)

    def as_dict(self) -> dict:
        """JSON for traces and records (reasoning_tokens only when known)."""
        out = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}
        if self.reasoning_tokens is not None:
            out["reasoning_tokens"] = self.reasoning_tokens
        return out

    @classmethod
    def from_dict(cls, data: object) -> Usage | None:
        """A recorded usage back (unknown keys ignored, non-integers as None)."""
        if not isinstance(data, dict):
            return None

        def count(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        return cls(count("prompt_tokens"), count("completion_tokens"), count("reasoning_tokens"))


@dataclass
class GenerationResult:
    """A model's answer. A failure is a result with `error` set and `text` empty, never a sentinel.

    `text` is the answer only; the model's reasoning (a server's reasoning field, a closed
    `<think>` block) is in `reasoning`, never in `text` (backends.reasoning)."""

    text: str
    backend: str
    model: str
    latency_s: float = 0.0
    usage: Usage | None = None
    error: str | None = None
    #: why generation ended as the server says: "stop", "length" (cut at max_tokens), ... or None
    finish_reason: str | None = None
    reasoning: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


class VLMBackend(ABC):
    """A vision-language model. Subclasses implement `generate`; batching has a default."""

    #: short backend kind: "baseline", "openai", "hf", "replay"
    kind: str = ""
    #: most images one request may carry (None: no cap known)
    max_images: int | None = None
    #: whether the spec needs an argument after the name (`openai:<model>`)
    needs_arg: ClassVar[bool] = True

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> VLMBackend:
        """The backend a registry spec names: `arg` is the text after `name:` ('' when none)."""
        raise NotImplementedError(f"{cls.__name__} cannot be built from a spec")

    @classmethod
    def check_spec(cls, arg: str, api: ApiSettings, timeout_s: float) -> str | None:
        """Ask at once, within about `timeout_s`, whether the backend `arg` names can answer (a
        server's model list, one tiny request): one line saying what answered, or BackendError
        naming what failed. None: nothing to ask ahead (a local model, the baseline, a trace)."""
        return None

    @property
    @abstractmethod
    def backend_id(self) -> str:
        """Stable id such as ``openai:gpt-4o`` used in results and traces (never holds secrets)."""

    @property
    def model(self) -> str:
        return self.backend_id.split(":", 1)[-1]

    @property
    def is_baseline(self) -> bool:
        """True for the offline baseline: tabs then use their no-model solver."""
        return False

    @abstractmethod
    def generate(self, request: GenerationRequest) -> GenerationResult:
        """Answer one request. Transport failures after bounded retries come back as
        `GenerationResult(error=...)`; a request with too many images raises `TooManyImagesError`."""

    def close(self) -> None:  # pragma: no cover - optional
        pass


class EmbeddingBackend(ABC):
    """Embeds texts (and, where supported, images) into L2-normalised float32 vectors."""

    #: whether the spec needs an argument after the name (`hf-embed:<model>`)
    needs_arg: ClassVar[bool] = True

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> EmbeddingBackend:
        """The embedder a registry spec names: `arg` is the text after `name:` ('' when none)."""
        raise NotImplementedError(f"{cls.__name__} cannot be built from a spec")

    @property
    @abstractmethod
    def backend_id(self) -> str: ...

    @abstractmethod
    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim), unit rows."""

    def embed_images(self, images: Sequence[Image.Image]) -> np.ndarray:
        raise NotImplementedError(f"{self.backend_id} embeds text only; choose an image-text "
                                  "embedding model (CLIP/SigLIP) to embed frames")

    @property
    def supports_images(self) -> bool:
        return False
