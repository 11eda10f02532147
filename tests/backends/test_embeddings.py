"""Embedders: shipped MiniLM weights, a tiny CLIP built offline, and an OpenAI-style endpoint."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from backends.embeddings_api import OpenAIEmbedder
from backends.embeddings_hf import HFEmbedder
from backends.embeddings_minilm import MiniLMEmbedder
from backends.errors import BackendError
from backends.openai_api import RetryPolicy
from backends.config import ApiSettings
from backends.registry import resolve_embedder
from tests.backends.support import SECRET
from tests.backends.tiny_clip import build_tiny_clip


def assert_unit_rows(matrix: np.ndarray, rows: int) -> None:
    assert matrix.dtype == np.float32 and matrix.shape[0] == rows
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_minilm_from_shipped_weights():
    embedder = resolve_embedder("minilm")
    assert isinstance(embedder, MiniLMEmbedder) and resolve_embedder("minilm") is embedder
    vectors = embedder.embed_texts(["A man opens the front door.", "Someone opens a door.",
                                    "Stock prices fell sharply on Monday."])
    assert_unit_rows(vectors, 3)
    assert vectors.shape[1] == 384
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > 0.6 and unrelated < 0.3
    # mean pooling over real tokens only: padding in a batch must not move a vector
    np.testing.assert_allclose(embedder.embed_texts(["Someone opens a door."])[0], vectors[1],
                               atol=1e-5)
    assert embedder.embed_texts([]).shape == (0, 384)
    assert not embedder.supports_images
    with pytest.raises(NotImplementedError, match="CLIP/SigLIP"):
        embedder.embed_images([Image.new("RGB", (8, 8))])


@pytest.fixture(scope="module")
def tiny_clip_dir(tmp_path_factory):
    return build_tiny_clip(tmp_path_factory.mktemp("tiny-clip"))


def test_hf_embedder_texts_and_images(tiny_clip_dir):
    embedder = resolve_embedder(f"hf-embed:{tiny_clip_dir}")
    assert isinstance(embedder, HFEmbedder) and embedder.supports_images
    texts = embedder.embed_texts(["a red car", "a person jumping over a fence", "x" * 300])
    assert_unit_rows(texts, 3)
    # padding inside a batch must not change a text's vector (the attention mask is passed on)
    np.testing.assert_allclose(embedder.embed_texts(["a red car"])[0], texts[0], atol=1e-5)
    frames = [Image.new("RGB", (64, 48), (200, 30, 30)), Image.new("RGB", (20, 30), (0, 90, 0))]
    images = embedder.embed_images(frames)
    assert_unit_rows(images, 2)
    assert images.shape[1] == texts.shape[1] == 16  # one shared space: projection_dim
    np.testing.assert_allclose(embedder.embed_images(frames[1:])[0], images[1], atol=1e-5)
    assert embedder.embed_images([]).shape == (0, 16)


def test_hf_embedder_loading_errors(tmp_path):
    with pytest.raises(BackendError, match="does not exist"):
        HFEmbedder(str(tmp_path / "missing")).embed_texts(["a"])
    with pytest.raises(BackendError, match="downloaded first or given as a local folder"):
        HFEmbedder("openai/clip-vit-base-patch32").embed_texts(["a"])


def test_openai_embedder_batches_and_normalises(serve):
    with serve(["unused"]) as server:
        embedder = OpenAIEmbedder("text-embedding-3-small", ApiSettings(
            base_url=server.url, api_key=SECRET), batch_size=2)
        vectors = embedder.embed_texts(["alpha", "beta", "gamma"])
        single = embedder.embed_texts(["gamma"])
    assert_unit_rows(vectors, 3)
    assert [body["input"] for body in server.requests] == [["alpha", "beta"], ["gamma"], ["gamma"]]
    assert server.requests[0]["model"] == "text-embedding-3-small"
    np.testing.assert_allclose(single[0], vectors[2], atol=1e-6)


def test_openai_embedder_error_is_readable(serve):
    with serve([{"status": 503, "body": {"error": {"message": "warming up"}}}]) as server:
        embedder = OpenAIEmbedder("emb", ApiSettings(base_url=server.url, api_key=SECRET),
                                  policy=RetryPolicy(max_retries=1, base_delay_s=0.01))
        with pytest.raises(BackendError) as info:
            embedder.embed_texts(["a"])
    assert "503" in str(info.value) and "warming up" in str(info.value)
    assert SECRET not in str(info.value) and len(server.requests) == 2


@pytest.mark.parametrize("make", ["hf-embed", "hf-image", "minilm"])
def test_a_local_embedder_asked_at_once_reads_its_weights_once(make, tiny_clip_dir, monkeypatch):
    """The three local embedders share one lazy, locked load (backends/local_model.py): the first
    call reads the weights, the others wait for it."""
    import transformers

    from backends.image_features import HFImageFeatures
    from backends.local_model import LocalEmbedder
    from tests.helpers.at_once import Held, asked_at_once

    embedder = {"hf-embed": lambda: HFEmbedder(str(tiny_clip_dir)),
                "hf-image": lambda: HFImageFeatures(str(tiny_clip_dir)),
                "minilm": MiniLMEmbedder}[make]()
    assert isinstance(embedder, LocalEmbedder) and not embedder.loaded
    read = Held(transformers.AutoModel.from_pretrained)
    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", read)
    asked_at_once(embedder.load, read)
    assert read.calls == 1 and embedder.loaded and embedder.device == "cpu"
