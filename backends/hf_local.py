"""A local transformers vision-language model (Qwen2.5-VL and other image-text-to-text models).

Before the weights load, a request the model cannot take (images past APP_MAX_IMAGES_PER_REQUEST
or its family's limit, image tokens past its context) is refused in one line: `check_fits`.

Weights load lazily on the first `generate`, once per process (`from_spec` shares one instance
per model and options). Options follow the model after `?` (`hf:<id or folder>?dtype=bf16&attn=sdpa`):
`dtype` bf16 | fp16 | fp32 (default: bf16 on a GPU that has it, else fp16; fp32 on the CPU),
`attn` sdpa | flash_attention_2 | eager (default: transformers' choice), `batch` the most requests
generated together (default 0: no limit; 1: one at a time). An option the machine cannot honour
(flash_attention_2 without the flash-attn package or a GPU, bf16 on a GPU without it) is one line,
before any weights are read. On one GPU the model is moved there whole (no `device_map`, so no
`accelerate`); over several, `device_map="auto"` spreads it when `accelerate` is installed.

Generation batches (`_Batcher`): calls that arrive while the model is generating wait, and the
next generation takes every waiting call of the same shape (the same reply length and sampling,
image tensors of the same sizes, no stop strings), left-padded into one `generate` call. So
`--concurrency N` (N request threads) gives batches of up to N; greedy answers equal unbatched
ones. A batch that fails (GPU memory) is run again one call at a time. The Stop button sets
`request.cancel`; a StoppingCriteria checks it between tokens (per row of a batch). `GenerationParams.thinking` reaches
the chat template as `enable_thinking` when the template reads that variable (Qwen3 and others);
an `EncodedImage` is decoded. `finish_reason` is "length" when generation used every one of
`max_tokens` without an end token, else "stop". A closed `<think>` block of the reply goes to
`GenerationResult.reasoning` (backends.reasoning), counted in `Usage.reasoning_tokens` when the
tokenizer holds `</think>` as one token.
"""
from __future__ import annotations

import logging
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
from backends.errors import BackendError, GenerationStopped, TooManyImagesError, UnknownBackendError
from backends.reasoning import split_reasoning
from backends.shared import once_per_process

log = logging.getLogger(__name__)


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


#: loaded backends by source, so the ZeroGPU worker (a fork of this process) finds the model; a
#: plain dict, not SingleFlightLRU: a lookup table of what once_per_process loaded, never evicted
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


def _check_flash_attn_installed(name: str) -> None:
    import importlib.util

    if importlib.util.find_spec("flash_attn") is None:
        raise BackendError(f"{name}: attn=flash_attention_2 needs the flash-attn package, which is "
                           "not installed (pip install flash-attn --no-build-isolation, on a CUDA "
                           "machine); use attn=sdpa.")


def _cuda_bf16_supported(torch: Any) -> bool:
    try:
        return bool(torch.cuda.is_bf16_supported())
    except Exception:  # noqa: BLE001 - no usable device answers: treat as unsupported
        return False


def _spread_over_gpus(torch: Any) -> bool:
    """Whether to load with `device_map="auto"`: several GPUs and `accelerate` installed (one GPU
    takes the model whole, with no extra package). Several GPUs without it: the first holds the
    model, and the log says how to spread it."""
    import importlib.util

    try:
        gpus = int(torch.cuda.device_count())
    except Exception:  # noqa: BLE001
        gpus = 1
    if gpus <= 1:
        return False
    if importlib.util.find_spec("accelerate") is None:
        log.warning("%d GPUs, but `accelerate` is not installed: the model loads on the first GPU "
                    "only (pip install accelerate to spread it over all of them).", gpus)
        return False
    return True


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


#: `hf:` options: name -> accepted values (README "Model backends")
DTYPES = ("bf16", "fp16", "fp32")
ATTENTION = ("sdpa", "flash_attention_2", "eager")


@dataclass(frozen=True)
class LoadOptions:
    """What `hf:<model>?...` asks for: dtype and attention implementation (None: the default),
    and the most calls generated together (0: no limit)."""

    dtype: str | None = None
    attn: str | None = None
    batch: int = 0

    def suffix(self) -> str:
        parts = [f"dtype={self.dtype}" if self.dtype else "", f"attn={self.attn}" if self.attn else "",
                 f"batch={self.batch}" if self.batch else ""]
        parts = [p for p in parts if p]
        return "?" + "&".join(parts) if parts else ""


def parse_spec(arg: str) -> tuple[str, LoadOptions]:
    """(model id or folder, options) of an `hf:` argument `<model>[?key=value&...]`; a wrong key
    or value is one line naming the choices."""
    source, _, query = arg.strip().partition("?")
    if not source.strip():
        raise UnknownBackendError(f"hf:{arg}: name the model before the options, e.g. "
                                  "hf:Qwen/Qwen2.5-VL-7B-Instruct?dtype=bf16.")
    values: dict[str, str] = {}
    for item in filter(None, query.split("&")):
        key, eq, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or key not in ("dtype", "attn", "batch"):
            raise UnknownBackendError(
                f"hf:{arg}: unknown option '{item}'. Options: dtype={'|'.join(DTYPES)}, "
                f"attn={'|'.join(ATTENTION)}, batch=<most calls generated together, 1: none>, "
                "e.g. hf:Qwen/Qwen2.5-VL-7B-Instruct?dtype=bf16&attn=sdpa.")
        values[key] = value
    dtype, attn = values.get("dtype", "").lower() or None, values.get("attn") or None
    if dtype is not None and dtype not in DTYPES:
        raise UnknownBackendError(f"hf:{arg}: dtype must be one of {', '.join(DTYPES)}, not '{dtype}'.")
    if attn is not None and attn not in ATTENTION:
        raise UnknownBackendError(f"hf:{arg}: attn must be one of {', '.join(ATTENTION)}, not '{attn}'.")
    batch = values.get("batch", "0")
    if not batch.isdigit():
        raise UnknownBackendError(f"hf:{arg}: batch must be a whole number (1: one call at a time), "
                                  f"not '{batch}'.")
    return source.strip(), LoadOptions(dtype, attn, int(batch))


def _looks_like_path(spec: str) -> bool:
    """A hub id is "org/name"; anything else with path syntax names a folder."""
    return spec.startswith(("/", "./", "../", "~")) or spec.count("/") > 1 or "\\" in spec


class HFBackend(VLMBackend):
    kind = "hf"

    def __init__(self, model_id_or_path: str, *, max_images: int | None = None,
                 options: LoadOptions | None = None):
        self.source = model_id_or_path.strip()
        self.options = options or LoadOptions()
        #: APP_MAX_IMAGES_PER_REQUEST: the tabs fit their requests to it before asking
        self.max_images = max_images
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()  # the ZeroGPU path: one call at a time
        self._batcher = _Batcher(self)
        self._model = None
        self._processor = None
        self._config = None
        self._device = "cpu"
        #: generation steps so far of the running (or last) generate call (a batch's rows share them)
        self.tokens_so_far = 0
        #: how many calls each `generate` of the model took together (tests, benchmarks)
        self.batch_sizes: list[int] = []

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> HFBackend:
        """`hf:<hub id or folder>[?dtype=..&attn=..&batch=..]`: one instance per model and options
        per process (weights load lazily, on the first generate, and every session shares them)."""
        source, options = parse_spec(arg)
        if options.attn == "flash_attention_2":
            _check_flash_attn_installed(f"hf:{arg}")
        return once_per_process(cls, arg, lambda: cls(source, max_images=api.resolved().max_images,
                                                      options=options))

    @property
    def backend_id(self) -> str:
        return f"hf:{self.source}{self.options.suffix()}"

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
        """Load processor and weights (once; later calls return at once) in the options' dtype
        and attention implementation (`_load_kwargs`): on one GPU (or ZeroGPU, where the `spaces`
        package attaches "cuda" per call) moved there whole; over several spread by
        `device_map="auto"` when `accelerate` is installed; float32 on the CPU by default."""
        with self._load_lock:
            if self._model is not None:
                return
            self._load_processor()
            source = self._resolve_source()
            import torch

            cuda = torch.cuda.is_available()
            kwargs = self._load_kwargs(torch, cuda)  # an option the machine lacks: one line, no weights read
            try:
                from transformers import AutoModelForImageTextToText

                WEIGHT_LOADS[self.source] += 1
                if cuda and _zero_gpu_entry() is None and _spread_over_gpus(torch):
                    model = AutoModelForImageTextToText.from_pretrained(source, device_map="auto", **kwargs)
                else:
                    model = AutoModelForImageTextToText.from_pretrained(source, **kwargs)
                    model = model.to("cuda" if cuda else "cpu")
                self._device = str(model.device) if cuda else "cpu"
                model = model.eval()
            except BackendError:
                raise
            except Exception as exc:  # noqa: BLE001 - transformers raises many kinds here
                raise BackendError(self._load_error(source, exc)) from None
            self._model = model
            _LOADED[self.backend_id] = self

    def _load_kwargs(self, torch: Any, cuda: bool) -> dict[str, Any]:
        """from_pretrained's dtype (and attn_implementation) for the options on this machine; an
        option it cannot honour is a BackendError of one line."""
        options, name = self.options, self.backend_id
        # ZeroGPU's GPUs (A100 / H200) compute in bf16; outside a GPU call the device cannot be asked
        bf16 = cuda and (_zero_gpu_entry() is not None or _cuda_bf16_supported(torch))
        if options.dtype == "bf16" and cuda and not bf16:
            raise BackendError(f"{name}: this GPU does not compute in bf16; use dtype=fp16 (or fp32).")
        default = ("bf16" if bf16 else "fp16") if cuda else "fp32"
        dtype = options.dtype or default
        kwargs: dict[str, Any] = {"dtype": {"bf16": torch.bfloat16, "fp16": torch.float16,
                                            "fp32": torch.float32}[dtype]}
        if options.attn == "flash_attention_2":
            _check_flash_attn_installed(name)
            if not cuda:
                raise BackendError(f"{name}: flash_attention_2 runs only on a CUDA GPU and none is "
                                   "here; use attn=sdpa or attn=eager.")
            if dtype == "fp32":
                raise BackendError(f"{name}: flash_attention_2 computes in bf16 or fp16 only; add "
                                   "dtype=bf16 (or fp16), or use attn=sdpa.")
        if options.attn:
            kwargs["attn_implementation"] = options.attn
        return kwargs

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

    def _max_new(self, prompt_len: int, params: GenerationParams) -> int:
        """The reply's token budget: `max_tokens`, less when the context has less room."""
        context = context_length(self._config)
        return params.max_tokens if context is None else max(1, min(params.max_tokens,
                                                                    context - prompt_len))

    def _generate(self, messages: list[dict], images: list, params: GenerationParams,
                  cancel: threading.Event | None, inputs: Any = None) -> Generated:
        """The decoded reply, its token counts and finish reason (`inputs`: already encoded)."""
        if inputs is None:
            inputs = self._encode(messages, images, params)
        return self._generate_rows([inputs], params, [cancel])[0]

    def _generate_rows(self, rows: list[Any], params: GenerationParams,
                       cancels: list[threading.Event | None]) -> list[Generated]:
        """One `generate` call for encoded calls of one shape (`batch_key`), left-padded into one
        batch when there are several; each row's reply ends at its first end token, as it would
        alone (a row that finished early is padded after it)."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList

        backend = self

        class CancelCriteria(StoppingCriteria):
            """Checked after every new token, per row; also counts the steps (progress, tests)."""

            def __call__(self, input_ids, scores, **kwargs):
                backend.tokens_so_far += 1
                return torch.tensor([c is not None and c.is_set() for c in cancels],
                                    dtype=torch.bool, device=input_ids.device)

        processor = self._processor
        lengths = [int(row["input_ids"].shape[1]) for row in rows]
        inputs = rows[0] if len(rows) == 1 else self._left_padded(rows)
        inputs = inputs.to(self._model.device, dtype=self._model.dtype)  # casts floats only
        width = int(inputs["input_ids"].shape[1])
        max_new = self._max_new(width, params)
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
        if len(rows) > 1:
            kwargs["pad_token_id"] = self._pad_id()
        self.tokens_so_far = 0
        self.batch_sizes.append(len(rows))
        with torch.inference_mode():
            output = self._model.generate(**inputs, **kwargs)
        end_ids = _end_ids(self._model, processor.tokenizer)
        think_end = _think_end_id(processor.tokenizer)
        generated = []
        for row, prompt_len in zip(output, lengths):
            new_ids = row[width:].tolist()
            if len(rows) > 1:
                new_ids = until_end(new_ids, end_ids)
            answer = processor.tokenizer.decode(new_ids, skip_special_tokens=True)
            finish = finish_reason(new_ids, max_new, end_ids, answer, params.stop)
            generated.append(Generated(answer, prompt_len, len(new_ids), finish,
                                       reasoning_token_count(new_ids, think_end)))
        return generated

    def _pad_id(self) -> int:
        """The token left padding is made of (the tokenizer's pad token, else an end token)."""
        tokenizer = self._processor.tokenizer
        for value in (getattr(tokenizer, "pad_token_id", None),
                      getattr(getattr(self._model, "generation_config", None), "pad_token_id", None)):
            if isinstance(value, int):
                return value
        return min(_end_ids(self._model, tokenizer))

    def _left_padded(self, rows: list[Any]) -> Any:
        """Encoded calls of one shape as one batch: per-token tensors (input_ids, attention_mask,
        token types) padded on the left to the longest (attention 0 over the padding), the
        others (pixels, image grids) joined along their first axis, in the calls' order."""
        import torch
        from transformers import BatchFeature

        width = max(int(row["input_ids"].shape[1]) for row in rows)
        pad_id = self._pad_id()
        data = {}
        for key in rows[0].keys():
            values = [row[key] for row in rows]
            if per_token(rows[0], key):
                fill = pad_id if key == "input_ids" else 0
                values = [torch.nn.functional.pad(v, (width - int(v.shape[1]), 0), value=fill)
                          for v in values]
            data[key] = torch.cat(values)
        return BatchFeature(data)

    def _run(self, request: GenerationRequest, inputs: Any) -> Generated:
        messages, images = self._chat(request)
        gpu_entry = _zero_gpu_entry()
        if gpu_entry is not None:  # arguments cross into the GPU worker pickled: no Event
            return gpu_entry(self.backend_id, messages, images, request.params)
        return self._generate(messages, images, request.params, request.cancel, inputs)

    def _run_calls(self, calls: list[_Call]) -> None:
        """Generate `calls` (one shape) together, each call's outcome set on it. A batch that
        fails (e.g. out of GPU memory) runs again one call at a time, so one call's failure is
        its own."""
        live = []
        for call in calls:
            if call.request.cancel is not None and call.request.cancel.is_set():
                call.error = _stopped()
            else:
                live.append(call)
        if not live:
            return
        start = time.monotonic()
        try:
            rows = self._generate_rows([c.inputs for c in live], live[0].request.params,
                                       [c.request.cancel for c in live])
        except Exception as exc:  # noqa: BLE001 - one failed call must not end a batch run
            if len(live) == 1:
                live[0].error, live[0].latency = exc, time.monotonic() - start
                return
            _free_gpu_memory(exc)
            log.info("%s: a batch of %d calls failed (%s); generating them one at a time",
                     self.backend_id, len(live), type(exc).__name__)
            for call in live:
                self._run_calls([call])
            return
        latency = time.monotonic() - start
        for call, generated in zip(live, rows):
            call.generated, call.latency = generated, latency

    def _failure(self, request: GenerationRequest, exc: Exception,
                 latency: float) -> GenerationResult:
        import torch

        if isinstance(exc, torch.OutOfMemoryError):
            _free_gpu_memory(exc)
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
        if _zero_gpu_entry() is not None:  # the GPU is attached per call: one call at a time
            with self._generate_lock:
                if request.cancel is not None and request.cancel.is_set():
                    raise _stopped()
                start = time.monotonic()
                try:
                    generated = self._run(request, inputs)
                except Exception as exc:  # noqa: BLE001 - one failed call must not end a batch run
                    return self._failure(request, exc, time.monotonic() - start)
                latency = time.monotonic() - start
        else:
            length = int(inputs["input_ids"].shape[1])
            max_new = self._max_new(length, request.params)
            call = _Call(request, inputs, batch_key(inputs, request.params, max_new), length, max_new)
            self._batcher.run(call)
            if isinstance(call.error, GenerationStopped):
                raise call.error
            if call.error is not None or call.generated is None:
                error = call.error or RuntimeError("generation ended without a reply")
                return self._failure(request, error, call.latency)  # type: ignore[arg-type]
            generated, latency = call.generated, call.latency
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


def _free_gpu_memory(exc: BaseException) -> None:
    import torch

    if isinstance(exc, torch.OutOfMemoryError) and torch.cuda.is_available():
        torch.cuda.empty_cache()


def per_token(inputs: Any, key: str) -> bool:
    """Whether `inputs[key]` has one value per prompt token (input_ids, attention_mask, token
    types): its shape is input_ids' shape."""
    value, ids = inputs[key], inputs["input_ids"]
    return getattr(value, "shape", None) == ids.shape


def batch_key(inputs: Any, params: GenerationParams, max_new: int) -> tuple | None:
    """What calls generated together must share: the reply budget and sampling, the same tensors
    with the same shapes but for the prompt's length (images of the same count and sizes). None:
    never batched (stop strings: a row would run on past its stop)."""
    if params.stop:
        return None
    parts: list[Any] = [max_new, params.temperature, params.top_p]
    for key in sorted(inputs.keys()):
        value = inputs[key]
        if not hasattr(value, "shape"):
            return None
        shape = "per token" if per_token(inputs, key) else tuple(value.shape)
        parts.append((key, shape, str(value.dtype)))
    return tuple(parts)


def until_end(new_ids: list[int], end_ids: set[int]) -> list[int]:
    """The ids up to and including the first end token (all of them when none is there)."""
    for position, token in enumerate(new_ids):
        if token in end_ids:
            return new_ids[:position + 1]
    return new_ids


@dataclass
class _Call:
    """One `generate` call waiting for (or given) its turn in a batch."""

    request: GenerationRequest
    inputs: Any
    key: tuple | None
    length: int
    max_new: int
    generated: Generated | None = None
    error: BaseException | None = None
    latency: float = 0.0
    done: bool = False


class _Batcher:
    """Gathers concurrent calls: while the model generates, new calls wait; whichever waiting
    thread finds it idle takes the oldest call and every waiting call of its shape (at most
    `options.batch`, 0: no limit; and only while the longest prompt and the reply fit the
    context) and generates them together. No timer: a call alone is generated at once."""

    def __init__(self, backend: HFBackend):
        self._backend = backend
        self._cond = threading.Condition()
        self._waiting: list[_Call] = []
        self._busy = False

    def run(self, call: _Call) -> None:
        with self._cond:
            self._waiting.append(call)
            self._cond.notify_all()  # whoever watches the queue (a test, a waiting thread) looks again
            while not call.done:
                if self._busy:
                    self._cond.wait()
                    continue
                batch = self._take()
                self._busy = True
                self._cond.release()
                try:
                    self._backend._run_calls(batch)
                except BaseException as exc:  # KeyboardInterrupt and the like: no call waits on
                    for taken in batch:
                        if taken.generated is None and taken.error is None:
                            taken.error = exc
                    with self._cond:
                        if call in self._waiting:
                            self._waiting.remove(call)
                    raise
                finally:
                    self._cond.acquire()
                    for taken in batch:
                        taken.done = True
                    self._busy = False
                    self._cond.notify_all()

    def _take(self) -> list[_Call]:
        head = self._waiting[0]
        batch = [head]
        limit = self._backend.options.batch or len(self._waiting)
        context = context_length(self._backend._config)
        if head.key is not None:
            for call in self._waiting[1:]:
                if len(batch) >= limit:
                    break
                longest = max(head.length, call.length, *(c.length for c in batch))
                fits = context is None or longest + head.max_new <= context
                if call.key == head.key and fits:
                    batch.append(call)
        for call in batch:
            self._waiting.remove(call)
        return batch
