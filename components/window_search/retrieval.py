"""The chunk retriever of Movie RAG (paper §3): rank chunks by cosine similarity to the query.

Chunk embedding:
- image-text embedder (CLIP/SigLIP/Qwen3-VL-Embedding via "hf-embed:<id>", or an endpoint that
  embeds images): normalise(mean of the chunk's frame embeddings), plus the embedding of the
  chunk's text (subtitles, and VLM captions when given) when there is text, renormalised;
- text-only embedder (offline default "minilm"): the embedding of the chunk's text. A chunk with no
  text (no subtitles and no caption) cannot be scored by such a model: it gets the score
  NO_TEXT_SCORE (-1.0, the lowest cosine), so it ranks after every chunk with text.
Ties are broken by chunk index (earlier chunk first). Embeddings are cached on disk per movie,
chunking and model (components.media.DiskCache arrays).
"""
from __future__ import annotations

import hashlib
import json
import threading
from typing import TYPE_CHECKING
from collections.abc import Sequence

from backends.ask import Unparsed, ask, resample
from backends.base import EmbeddingBackend, GenerationParams, GenerationRequest, Message, VLMBackend
from components.common.intervals import overlap
from components.window_search.movie import Movie
from components.window_search.reading import answer_text
from components.window_search.types import Chunk

if TYPE_CHECKING:  # numpy stays out of `python app.py --help`
    import numpy as np

NO_TEXT_SCORE = -1.0
CACHE_VERSION = 1


def chunk_texts(movie: Movie, captions: dict[int, str] | None = None) -> list[str]:
    """Per chunk: its subtitles joined, then its caption (if any)."""
    texts = []
    for c in movie.chunks:
        parts = [movie.chunk_text(c.index)]
        if captions and captions.get(c.index):
            parts.append(str(captions[c.index]))
        texts.append(" ".join(p for p in parts if p).strip())
    return texts


def _normalise(v: np.ndarray) -> np.ndarray:
    import numpy as np

    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(n > 0, v / np.maximum(n, 1e-12), 0.0).astype(np.float32)


def _compute_embeddings(movie: Movie, embedder: EmbeddingBackend, texts: list[str],
                        use_images: bool) -> np.ndarray:
    """(n_chunks, dim) unit rows; zero rows for chunks that cannot be embedded (no text, text-only)."""
    import numpy as np

    idx = [i for i, t in enumerate(texts) if t]
    text_emb = np.asarray(embedder.embed_texts([texts[i] for i in idx]), dtype=np.float32) if idx else None
    dim = text_emb.shape[1] if text_emb is not None else None
    rows: list[np.ndarray | None] = [None] * len(texts)
    if text_emb is not None:
        for j, i in enumerate(idx):
            rows[i] = text_emb[j]
    if use_images:
        for c, frames in movie.iter_chunk_frames():  # one chunk in memory at a time
            if not frames:
                continue
            img = np.asarray(embedder.embed_images([f.image for f in frames]), dtype=np.float32)
            v = _normalise(img.mean(axis=0))
            if rows[c.index] is not None:
                v = _normalise(v + _normalise(rows[c.index]))
            rows[c.index] = v
            dim = v.shape[0]
            del frames
    if dim is None:
        return np.zeros((len(texts), 0), dtype=np.float32)
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, r in enumerate(rows):
        if r is not None:
            out[i] = _normalise(r)
    return out


def chunk_embeddings(movie: Movie, embedder: EmbeddingBackend, *,
                     captions: dict[int, str] | None = None,
                     use_images: bool | None = None) -> np.ndarray:
    """Chunk embeddings, from the disk cache when the movie, chunking, model and texts match."""
    if use_images is None:
        use_images = bool(getattr(embedder, "supports_images", False))
    texts = chunk_texts(movie, captions)
    params = {"what": "ws-chunk-embeddings", "v": CACHE_VERSION, "embedder": embedder.backend_id,
              "use_images": use_images, "texts": hashlib.sha256(json.dumps(texts).encode()).hexdigest(),
              **movie.identity()}
    return movie.cache.get_or_compute_array(
        movie.video, params, lambda: _compute_embeddings(movie, embedder, texts, use_images))


def rank_scores(scores: Sequence[float]) -> list[int]:
    """Chunk indices by descending score; equal scores keep chunk order (deterministic tie-break)."""
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))


def score_chunks(query: str, movie: Movie, embedder: EmbeddingBackend, *,
                 captions: dict[int, str] | None = None) -> list[float]:
    import numpy as np

    emb = chunk_embeddings(movie, embedder, captions=captions)
    if emb.shape[1] == 0:
        return [NO_TEXT_SCORE] * emb.shape[0]
    q = _normalise(np.asarray(embedder.embed_texts([query]), dtype=np.float32)[0])
    scores = []
    for row in emb:
        if not np.any(row):
            scores.append(NO_TEXT_SCORE)
        else:
            # rounded so that float noise does not decide between equal chunks
            scores.append(round(float(np.dot(row, q)), 6))
    return scores


def retrieve(query: str, movie: Movie, embedder: EmbeddingBackend, *, k: int | None = 5,
             captions: dict[int, str] | None = None) -> list[Chunk]:
    """The top-k chunks (all when k is None) with score and 1-based rank."""
    scores = score_chunks(query, movie, embedder, captions=captions)
    chunks = movie.chunks
    order = rank_scores(scores)
    if k is not None:
        order = order[:max(1, int(k))]
    return [Chunk(index=i, start=chunks[i].start, end=chunks[i].end, score=scores[i], rank=r)
            for r, i in enumerate(order, 1)]


def oracle_chunk(movie: Movie, interval: tuple[float, float]) -> Chunk:
    """The chunk with the largest overlap with the ground truth (ties: earlier chunk), Table 2 row 6."""
    best, best_overlap = None, -1.0
    for c in movie.chunks:
        shared = overlap(interval, (c.start, c.end))
        if shared > best_overlap + 1e-9:
            best, best_overlap = c, shared
    if best is None:
        raise ValueError(f"{movie!r} has no chunks")
    return Chunk(index=best.index, start=best.start, end=best.end, score=None, rank=1)


CAPTION_PROMPT = ("The frames below are sampled from one {seconds:.0f}-second stretch of a movie, each preceded "
                  "by its time. Describe what is on screen in two or three plain sentences: who appears "
                  "(visible appearance), where it takes place, and what they do. Do not guess names.")


CAPTION_PARAMS = GenerationParams(temperature=0.0, max_tokens=160, thinking=False)  # as the verifier


def _caption_text(text: str) -> str:
    """The caption: the reply's answer part (no reasoning; a reply over 64 kB is unparsed)."""
    body = answer_text(text, Unparsed)
    if not body:
        raise Unparsed("empty caption")
    return body


def _spread(frames: list, n: int) -> list:
    """At most n of `frames`, evenly spread."""
    if len(frames) <= n:
        return frames
    return [frames[int((i + 0.5) * len(frames) / n)] for i in range(n)]


def _caption_request(movie: Movie, chunk: Chunk, frames: list,
                     stop: threading.Event | None) -> GenerationRequest:
    content: list = [CAPTION_PROMPT.format(seconds=chunk.end - chunk.start)]
    for f in frames:
        content += [f"<{f.time:.1f} seconds>", f.image]
    return GenerationRequest([Message("user", content)], CAPTION_PARAMS, task="aws.caption",
                             ref=f"{movie.movie_id}:{chunk.index}", cancel=stop)


def caption_chunks(movie: Movie, backend: VLMBackend, *, frames_per_chunk: int = 16,
                   stop: threading.Event | None = None) -> dict[int, str]:
    """One caption per chunk from a VLM (our prompt; the paper's retriever embeds frames directly),
    cached on disk per movie, chunking and model. Used by text-only embedders as the chunk's visual
    text. A failed call leaves that chunk without a caption (never a made-up one)."""

    def compute() -> dict[str, str]:
        out: dict[str, str] = {}
        for c in movie.chunks:
            if stop is not None and stop.is_set():
                break
            frames = movie.frames(c.start, c.end, fps=1.0, cap=frames_per_chunk)
            if not frames:
                continue
            asked = ask(backend, _caption_request(movie, c, frames, stop), _caption_text, attempts=1,
                        on_too_many=resample(lambda n, c=c, frames=frames: _caption_request(
                            movie, c, _spread(frames, n), stop)))  # one try: a caption is optional
            if asked.value is not None:
                out[str(c.index)] = asked.value
        return out

    params = {"what": "ws-chunk-captions", "v": CACHE_VERSION, "backend": backend.backend_id,
              "frames_per_chunk": frames_per_chunk, **movie.identity()}
    cached = movie.cache.get_or_compute_json(movie.video, params, compute)
    return {int(k): v for k, v in cached.items()}
