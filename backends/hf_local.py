"""A local transformers vision-language model (Qwen2.5-VL and other image-text-to-text models).

Before the weights load, a request the model cannot take (images past APP_MAX_IMAGES_PER_REQUEST
or its family's limit, image tokens past its context) is refused in one line: `check_fits`.

Weights load lazily on the first `generate`, once per process (`from_spec` shares one instance
per model), and a lock serialises generation so sessions can share the model. The Stop button sets
`request.cancel`; a StoppingCriteria checks it between tokens. `GenerationParams.thinking` reaches
the chat template as `enable_thinking` when the template reads that variable (Qwen3 and others);
an `EncodedImage` is decoded. `finish_reason` is "length" when generation used every one of
`max_tokens` without an end token, else "stop". A closed `<think>` block of the reply goes to
`GenerationResult.reasoning` (backends.reasoning), counted in `Usage.reasoning_tokens` when the
tokenizer holds `</think>` as one token.
"""
from __future__ import annotations

import os
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.base import (EncodedImage, GenerationParams, GenerationRequest, GenerationResult, Usage,
                           VLMBackend)
from backends.config import ApiSettings
from backends.errors import BackendError, GenerationStopped, TooManyImagesError
from backends.reasoning import split_reasoning
from backends.shared import once_per_process


def _stopped() -> GenerationStopped:
    return GenerationStopped("Generation was stopped.")


def _image_only_processor_class(base: type) -> type:
    """`base` with its video-processor slot removed (video processors need torchvision, which we
    do not install; we feed video as frames). ProcessorMixin reads its sub-processors and the
    settings it saves (e.g. `image_seq_length`) from the __init__ signature, so the subclass's
    __init__ carries `base`'s signature without `video_processor`, and saves as `base`."""
    import inspect

    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        base.__init__(self, image_processor, tokenizer, None, chat_template=chat_template, **kwargs)

    signature = inspect.signature(base.__init__)
    __init__.__signature__ = signature.replace(parameters=[
        p for name, p in signature.parameters.items() if name != "video_processor"])

    def to_dict(self) -> dict:
        return {**base.to_dict(self), "processor_class": base.__name__}

    return type(f"ImageOnly{base.__name__}", (base,), {"__init__": __init__, "to_dict": to_dict})


def load_processor(source: str, config: Any) -> Any:
    """AutoProcessor when it works; else the model's processor built from its image processor and
    tokenizer alone (AutoProcessor fails, or returns only a tokenizer, without torchvision)."""
    import transformers
    from transformers import AutoImageProcessor, AutoProcessor, AutoTokenizer

    try:
        processor = AutoProcessor.from_pretrained(source)
        if getattr(processor, "image_processor", None) is not None:
            return processor
    except (ImportError, ValueError, TypeError, OSError, AttributeError):
        pass
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    class_name = PROCESSOR_MAPPING_NAMES.get(config.model_type)
    base = getattr(transformers, class_name, None) if isinstance(class_name, str) else None
    if base is None:
        raise BackendError(f"No processor class is known for model type '{config.model_type}'.")
    import inspect

    params = inspect.signature(base.__init__).parameters
    cls = _image_only_processor_class(base) if "video_processor" in params else base
    image_processor = AutoImageProcessor.from_pretrained(source)
    tokenizer = AutoTokenizer.from_pretrained(source)
    return cls(image_processor=image_processor, tokenizer=tokenizer,
               chat_template=getattr(tokenizer, "chat_template", None),
               **_processor_settings(base, source, params))


def _processor_settings(base: type, source: str, params: Any) -> dict[str, Any]:
    """The processor's own saved settings (processor_config.json: e.g. InternVL's
    `image_seq_length`) that `base.__init__` takes; sub-processors and the template excluded."""
    try:
        saved, _ = base.get_processor_dict(source)
    except Exception:  # noqa: BLE001 - a checkpoint without processor settings uses defaults
        return {}
    skip = {"self", "image_processor", "tokenizer", "video_processor", "chat_template"}
    return {k: v for k, v in saved.items() if k in params and k not in skip}


#: loaded backends by source, so the ZeroGPU worker (a fork of this process) finds the model
_LOADED: dict[str, HFBackend] = {}
#: how many times weights were read from disk, by source (tests check "once per process")
WEIGHT_LOADS: Counter[str] = Counter()
#: families whose released models take one image per request (their processors accept more,
#: the models were never trained on it); every other family's limit is its context length
IMAGES_PER_REQUEST_BY_TYPE: dict[str, int] = {"paligemma": 1, "blip-2": 1, "instructblip": 1}
#: the least room for a reply a request must leave in the context (or its max_tokens if smaller);
#: a reply gets all the room left, at most max_tokens
MIN_REPLY_TOKENS = 256
_GPU_ENTRY: Any = None  # None: not looked up yet; False: no `spaces` package


def context_length(config: Any) -> int | None:
    """The most tokens (prompt and reply) the model's language half was built for: its
    `max_position_embeddings` (the text config's, for a vision-language config); None if unstated."""
    for part in (getattr(config, "text_config", None), config):
        value = getattr(part, "max_position_embeddings", None) if part is not None else None
        if isinstance(value, int) and value > 0:
            return value
    return None


def template_source(processor: Any) -> str:
    """The chat template's text (all named templates joined), '' when there is none."""
    template = getattr(processor, "chat_template", None)
    tokenizer = getattr(processor, "tokenizer", None)
    if not template and tokenizer is not None:
        template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):
        return "\n".join(str(t) for t in template.values())
    return str(template or "")


def template_kwargs(template: str, thinking: bool | None) -> dict[str, Any]:
    """`enable_thinking=thinking` for a template that reads it; {} otherwise or for None."""
    if thinking is None or "enable_thinking" not in template:
        return {}
    return {"enable_thinking": bool(thinking)}


def finish_reason(new_ids: list[int], max_new_tokens: int, end_ids: set[int], text: str,
                  stops: tuple[str, ...] | None) -> str:
    """"length" when all `max_new_tokens` were generated and none ended the reply (an end token
    last, or a stop string in the text), else "stop"."""
    if len(new_ids) < max_new_tokens:
        return "stop"
    if new_ids and new_ids[-1] in end_ids:
        return "stop"
    if any(stop in text for stop in stops or ()):
        return "stop"
    return "length"


def _end_ids(model: Any, tokenizer: Any) -> set[int]:
    ids = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = list(ids) if isinstance(ids, (list, tuple)) else [ids]
    ids.append(getattr(tokenizer, "eos_token_id", None))
    return {int(i) for i in ids if i is not None}


@dataclass(frozen=True)
class Generated:
    """One generation: the decoded text, token counts and why it ended."""

    text: str
    prompt_tokens: int
    new_tokens: int
    finish: str
    #: new tokens up to and including the template's single `</think>` token (None: the tokenizer
    #: has no such token, so reasoning tokens cannot be counted exactly)
    reasoning_tokens: int | None = None


def reasoning_token_count(new_ids: list[int], think_end_id: int | None) -> int | None:
    """Tokens up to and including the last `</think>` of a reply (0 when it has none); None
    without a single-token `</think>` in the vocabulary."""
    if think_end_id is None:
        return None
    for position in range(len(new_ids) - 1, -1, -1):
        if new_ids[position] == think_end_id:
            return position + 1
    return 0


def _think_end_id(tokenizer: Any) -> int | None:
    """The id of `</think>` when the tokenizer holds it as one token (Qwen3, DeepSeek-R1)."""
    try:
        ids = tokenizer.encode("</think>", add_special_tokens=False)
    except Exception:  # noqa: BLE001 - a tokenizer that cannot encode it has no such token
        return None
    return int(ids[0]) if len(ids) == 1 else None


def _generate_on_zero_gpu(source: str, messages: list[dict], images: list,
                          params: GenerationParams) -> Generated:
    return _LOADED[source]._generate(messages, images, params, None)


def _zero_gpu_entry():
    """`_generate_on_zero_gpu` wrapped by spaces.GPU when the `spaces` package exists (a ZeroGPU
    Space: the GPU is attached only inside such calls), else None."""
    global _GPU_ENTRY
    if _GPU_ENTRY is None:
        try:
            import spaces  # type: ignore[import-not-found]

            duration = int(os.environ.get("APP_GPU_DURATION_S", "120"))
            _GPU_ENTRY = spaces.GPU(duration=duration)(_generate_on_zero_gpu)
        except ImportError:
            _GPU_ENTRY = False
    return _GPU_ENTRY or None


def _looks_like_path(spec: str) -> bool:
    """A hub id is "org/name"; anything else with path syntax names a folder."""
    return spec.startswith(("/", "./", "../", "~")) or spec.count("/") > 1 or "\\" in spec


class HFBackend(VLMBackend):
    kind = "hf"

    def __init__(self, model_id_or_path: str, *, max_images: int | None = None):
        self.source = model_id_or_path.strip()
        #: APP_MAX_IMAGES_PER_REQUEST: the tabs fit their requests to it before asking
        self.max_images = max_images
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self._model = None
        self._processor = None
        self._config = None
        self._device = "cpu"
        #: tokens generated so far by the running (or last) call; calls are serialised
        self.tokens_so_far = 0

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> HFBackend:
        """`hf:<hub id or folder>`: one instance per model per process (weights load lazily, on
        the first generate, and every session shares them)."""
        return once_per_process(cls, arg, lambda: cls(arg, max_images=api.resolved().max_images))

    @property
    def backend_id(self) -> str:
        return f"hf:{self.source}"

    @property
    def model(self) -> str:
        return self.source

    @property
    def loaded(self) -> bool:
        return self._model is not None

    # -- loading ----------------------------------------------------------------------------
    def _resolve_source(self) -> str:
        path = Path(self.source).expanduser()
        if path.exists():
            if not (path / "config.json").exists():
                raise BackendError(f"Model folder {path} has no config.json; give a folder written "
                                   "by save_pretrained or a Hugging Face model id.")
            return str(path)
        if _looks_like_path(self.source):
            raise BackendError(f"Model folder {self.source} does not exist; check the path.")
        return self.source

    def load_processor(self) -> None:
        """Load the config and processor, not the weights (once): enough to tell whether a
        request fits the model before its weights are read."""
        with self._load_lock:
            self._load_processor()

    def _load_processor(self) -> None:  # under self._load_lock
        if self._processor is not None:
            return
        source = self._resolve_source()
        try:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(source)
            processor = load_processor(source, config)
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - transformers raises many kinds here
            raise BackendError(self._load_error(source, exc)) from None
        self._config, self._processor = config, processor

    def load(self) -> None:
        """Load processor and weights (once; later calls return at once): bf16 spread over the
        GPUs by `device_map="auto"` when CUDA is there (on ZeroGPU: moved to "cuda", which the
        `spaces` package attaches per call), float32 on the CPU otherwise."""
        with self._load_lock:
            if self._model is not None:
                return
            self._load_processor()
            source = self._resolve_source()
            try:
                import torch
                from transformers import AutoModelForImageTextToText

                cuda = torch.cuda.is_available()
                dtype = torch.bfloat16 if cuda else torch.float32
                WEIGHT_LOADS[self.source] += 1
                if cuda and _zero_gpu_entry() is None:
                    model = AutoModelForImageTextToText.from_pretrained(source, dtype=dtype,
                                                                        device_map="auto")
                else:
                    model = AutoModelForImageTextToText.from_pretrained(source, dtype=dtype)
                    model = model.to("cuda" if cuda else "cpu")
                self._device = str(model.device) if cuda else "cpu"
                model = model.eval()
            except BackendError:
                raise
            except Exception as exc:  # noqa: BLE001 - transformers raises many kinds here
                raise BackendError(self._load_error(source, exc)) from None
            self._model = model
            _LOADED[self.source] = self

    def _load_error(self, source: str, exc: Exception) -> str:
        detail = " ".join(str(exc).split())[:200]
        if not Path(source).exists():
            offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
            where = " (the Hub is offline here)" if offline else ""
            return (f"Could not load model '{source}'{where}: it must be downloaded first "
                    "(huggingface-cli download) or given as a local folder. "
                    f"Details: {type(exc).__name__}: {detail}")
        return f"Could not load model folder {source}: {type(exc).__name__}: {detail}"

    # -- generation -------------------------------------------------------------------------
    def _chat(self, request: GenerationRequest) -> tuple[list[dict], list]:
        messages, images = [], []
        for message in request.messages:
            parts = []
            for part in message.content:
                if isinstance(part, str):
                    parts.append({"type": "text", "text": part})
                else:
                    parts.append({"type": "image"})
                    picture = part.to_pil() if isinstance(part, EncodedImage) else part
                    images.append(picture.convert("RGB"))
            messages.append({"role": message.role, "content": parts})
        return messages, images

    def _encode(self, messages: list[dict], images: list, params: GenerationParams) -> Any:
        """The processor's tensors for one chat: the template applied, image tokens expanded."""
        processor = self._processor
        text = processor.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False,
            **template_kwargs(template_source(processor), params.thinking))
        return processor(text=[text], images=images or None, return_tensors="pt")

    def check_fits(self, request: GenerationRequest) -> Any:
        """The request's encoded inputs when the model can take it; else, before any weights are
        read, TooManyImagesError (too many images: the family's limit, or more image tokens than
        the context holds beside the text and `max_tokens`) or BackendError (the text alone is
        too long). Loads the config and processor only."""
        self.load_processor()
        sent = request.num_images()
        model_type = getattr(self._config, "model_type", "")
        family_cap = IMAGES_PER_REQUEST_BY_TYPE.get(model_type)
        caps = [c for c in (self.max_images, family_cap) if c is not None]
        if caps and sent > min(caps):
            cap = min(caps)
            why = (f"its family ({model_type}) takes {family_cap} per request" if cap == family_cap
                   else "APP_MAX_IMAGES_PER_REQUEST")
            raise TooManyImagesError(
                f"{self.backend_id} takes at most {cap} image(s) per request ({why}); this "
                f"request has {sent}. Use fewer frames, or serve a model that takes more "
                "behind an API server (openai:<model>).", limit=cap, sent=sent)
        messages, images = self._chat(request)
        inputs = self._encode(messages, images, request.params)
        context = context_length(self._config)
        prompt = int(inputs["input_ids"].shape[1])
        reply = min(request.params.max_tokens, MIN_REPLY_TOKENS)
        if context is None or prompt + reply <= context:
            return inputs
        room = context - reply
        if not sent:
            raise BackendError(
                f"{self.backend_id} holds {context} tokens; this request's text alone is {prompt} "
                f"tokens, leaving no room for a {reply}-token reply. Shorten the prompt.")
        text_only = [{**m, "content": [p for p in m["content"] if p["type"] != "image"]}
                     for m in messages]
        text_tokens = int(self._encode(text_only, [], request.params)["input_ids"].shape[1])
        per_image = max(1.0, (prompt - text_tokens) / sent)
        limit = max(0, int((room - text_tokens) // per_image))
        todo = (f"Set APP_MAX_IMAGES_PER_REQUEST={limit} (or use fewer frames)" if limit
                else "Not one image fits: shorten the text")
        raise TooManyImagesError(
            f"{self.backend_id} holds {context} tokens (max_position_embeddings); {sent} images "
            f"of about {round(per_image)} tokens each, {text_tokens} tokens of text and a "
            f"{reply}-token reply do not fit: at most {limit} such image(s) fit. {todo}, or "
            "serve the model with a longer context behind an API server (openai:<model>).",
            limit=limit, sent=sent)

    def _generate(self, messages: list[dict], images: list, params: GenerationParams,
                  cancel: threading.Event | None, inputs: Any = None) -> Generated:
        """The decoded reply, its token counts and finish reason (`inputs`: already encoded)."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        backend = self

        class CancelCriteria(StoppingCriteria):
            """Checked after every new token; also counts them (progress, tests)."""

            def __call__(self, input_ids, scores, **kwargs):
                backend.tokens_so_far += 1
                stop = cancel is not None and cancel.is_set()
                return torch.full((input_ids.shape[0],), stop, dtype=torch.bool,
                                  device=input_ids.device)

        processor = self._processor
        if inputs is None:
            inputs = self._encode(messages, images, params)
        inputs = inputs.to(self._model.device, dtype=self._model.dtype)  # casts floats only
        prompt_len = inputs["input_ids"].shape[1]
        context = context_length(self._config)
        max_new = params.max_tokens if context is None else max(1, min(params.max_tokens,
                                                                        context - prompt_len))
        kwargs: dict[str, Any] = {"max_new_tokens": max_new,
                                  "stopping_criteria": StoppingCriteriaList([CancelCriteria()])}
        if params.temperature > 0:
            kwargs.update(do_sample=True, temperature=params.temperature)
            if params.top_p is not None:  # None: the model's generation_config decides
                kwargs["top_p"] = params.top_p
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if params.stop:
            kwargs.update(stop_strings=list(params.stop), tokenizer=processor.tokenizer)
        self.tokens_so_far = 0
        with torch.inference_mode():
            output = self._model.generate(**inputs, **kwargs)
        new_tokens = output[0, prompt_len:]
        answer = processor.tokenizer.decode(new_tokens, skip_special_tokens=True)
        new_ids = new_tokens.tolist()
        finish = finish_reason(new_ids, max_new,
                               _end_ids(self._model, processor.tokenizer), answer, params.stop)
        return Generated(answer, int(prompt_len), len(new_ids), finish,
                         reasoning_token_count(new_ids, _think_end_id(processor.tokenizer)))

    def _run(self, request: GenerationRequest, inputs: Any) -> Generated:
        messages, images = self._chat(request)
        gpu_entry = _zero_gpu_entry()
        if gpu_entry is not None:  # arguments cross into the GPU worker pickled: no Event
            return gpu_entry(self.source, messages, images, request.params)
        return self._generate(messages, images, request.params, request.cancel, inputs)

    def _failure(self, request: GenerationRequest, exc: Exception,
                 latency: float) -> GenerationResult:
        import torch

        if isinstance(exc, torch.OutOfMemoryError):
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            sent = request.num_images()
            if sent:  # callers step the frame count down on this error
                raise TooManyImagesError(
                    f"{self.backend_id} ran out of GPU memory with {sent} image(s); use fewer "
                    "frames or smaller frames.", limit=None, sent=sent) from None
        detail = " ".join(str(exc).split())[:300]
        return GenerationResult(text="", backend=self.backend_id, model=self.source,
                                latency_s=latency,
                                error=f"{self.backend_id} failed: {type(exc).__name__}: {detail}")

    def generate(self, request: GenerationRequest) -> GenerationResult:
        if request.cancel is not None and request.cancel.is_set():
            raise _stopped()
        start = time.monotonic()
        try:
            inputs = self.check_fits(request)  # refuses what cannot fit before weights load
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. an image the processor refuses
            return self._failure(request, exc, time.monotonic() - start)
        self.load()
        with self._generate_lock:
            if request.cancel is not None and request.cancel.is_set():
                raise _stopped()
            start = time.monotonic()
            try:
                generated = self._run(request, inputs)
            except Exception as exc:  # noqa: BLE001 - one failed call must not end a batch run
                return self._failure(request, exc, time.monotonic() - start)
            latency = time.monotonic() - start
        if request.cancel is not None and request.cancel.is_set():
            raise _stopped()
        text = generated.text
        for stop in request.params.stop or ():
            if stop in text:  # the API convention: the stop string is not part of the answer
                text = text[:text.index(stop)]
        answer, reasoning = split_reasoning(text)
        return GenerationResult(text=answer, backend=self.backend_id, model=self.source,
                                latency_s=latency,
                                usage=Usage(prompt_tokens=generated.prompt_tokens,
                                            completion_tokens=generated.new_tokens,
                                            reasoning_tokens=generated.reasoning_tokens),
                                finish_reason=generated.finish, reasoning=reasoning)
