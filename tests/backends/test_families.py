"""Every tab through `hf:<folder>` on tiny random-weight models of six families (issue 30).

Each family (tests/helpers/tiny_families.py: the family's real model and processor classes, a
byte-level tokenizer, a template placing images where the family's own does, a 4096-token
context) loads once per test session and answers one request of each tab: a Decompose and an
Inspect of window search, a Cloze question (stepped down from 16 frames per clip to what fits),
an Impact temporal call and a spatial call. The output is noise: the tests check the plumbing,
that nothing failed inside generation, and that what cannot fit is refused before weights load.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from backends.base import GenerationParams, GenerationRequest, Message
from backends.errors import BackendError, TooManyImagesError
from backends.hf_local import WEIGHT_LOADS, HFBackend
from backends.registry import resolve
from tests.helpers.example_cache import CACHE
from tests.helpers.tiny_families import CONTEXT, FAMILIES, build_tiny_family

FAMILY_CACHE = CACHE / "tiny-families"


def family_dir(family: str) -> Path:
    return build_tiny_family(family, FAMILY_CACHE / family)


@pytest.fixture(scope="session", params=FAMILIES)
def family(request) -> tuple[str, HFBackend]:
    """(family, its shared `hf:` backend); pytest groups the tests by family, so each family is
    built (once, cached on disk) and loaded once."""
    path = family_dir(request.param)
    return request.param, resolve(f"hf:{path}")


def loaded_once(backend: HFBackend) -> bool:
    import torch

    assert backend._model.dtype == torch.float32 and backend._model.device.type == "cpu"
    return backend.loaded and WEIGHT_LOADS[backend.source] == 1


@pytest.fixture(scope="module")
def grounding(grounding_examples, tmp_path_factory):
    from components.media import DiskCache
    from components.window_search.data import load_annotations
    from components.window_search.pipeline import MovieLibrary

    annotations = load_annotations(grounding_examples / "annotations.json")
    library = MovieLibrary(memory_dir=grounding_examples / "memory")
    movie = library.movie(annotations.movie("m01"))
    movie.cache = DiskCache(tmp_path_factory.mktemp("families-ws-cache"))
    return annotations.query("p0001_t"), movie, library.memory("m01")


def test_window_search_decompose_and_inspect(family, grounding):
    from components.window_search.agent import agentic_window_search
    from components.window_search.solvers import ModelWindowSolver
    from components.window_search.types import Chunk

    name, backend = family
    query, movie, memory = grounding
    solver = ModelWindowSolver(backend, max_tokens=8, max_retries=0)
    trace = agentic_window_search(query.query, [Chunk(0, 0, 20, 0.9, 1)], movie, memory, solver,
                                  K=1, M=0, frame_cap=3, qid=query.qid)
    assert trace.calls["decompose"] == 1 and trace.calls["inspect"] == 1, trace.calls
    assert not any("failed" in error for error in trace.errors), trace.errors
    (step,) = [s for c in trace.candidates for s in c.steps]
    assert step.num_frames == 3 and trace.window == (0.0, 20.0)
    assert loaded_once(backend)


def test_cloze_question_steps_down_to_what_fits(family, cloze_examples):
    from components.cloze.data import load_dataset
    from components.cloze.questions import build_set
    from components.cloze.solvers import FRAME_STEPS, ModelSolver

    name, backend = family
    dataset = load_dataset(cloze_examples)
    question = build_set(dataset, "all", ["A"]).questions[0]
    solver = ModelSolver(backend, max_frames=16, max_tokens=8, max_attempts=1)
    asked, frames_of, steps = solver.ask(dataset.instance(question.stem), question)
    assert not asked.failed, asked.error
    used = frames_of[asked.request.num_images()]
    # 6 clips x 16 frames do not fit 4096 tokens: each larger step was refused before generation
    assert used < 16 and sorted(frames_of.values(), reverse=True) == list(
        FRAME_STEPS[:FRAME_STEPS.index(used) + 1])
    assert asked.usages[0].prompt_tokens + 1 <= CONTEXT
    record = solver._record(question, asked, frames_of, steps, solver.name)
    assert record["used_num_frames"] == used and isinstance(record["raw"], str)
    assert loaded_once(backend)


@pytest.fixture(scope="module")
def impact_item(impact_examples):
    from components.impact.data import load_annotations
    from components.impact.pipeline import annotated_frames

    item = next(i for i in load_annotations(impact_examples / "annotations.json").items
                if annotated_frames(i))
    return item, annotated_frames(item)[0]


def test_impact_temporal_call(family, impact_item):
    from components.impact.solvers import ModelTemporalSolver

    name, backend = family
    item, _ = impact_item
    solver = ModelTemporalSolver(backend, max_frames=4, max_retries=0,
                                 params=GenerationParams(temperature=0.0, max_tokens=8))
    asked = solver.ask(item)
    assert not asked.failed, asked.error
    assert asked.request.num_images() == 4 and asked.attempts == 1
    prediction = solver.prediction(asked, item)
    assert prediction.num_frames_sent == 4 and prediction.raw == asked.raw
    assert loaded_once(backend)


def test_impact_spatial_call(family, impact_item):
    from components.impact.pipeline import select_regions
    from components.impact.solvers import ModelRegionSolver

    name, backend = family
    item, frame = impact_item
    solver = ModelRegionSolver(backend, max_attempts=1,
                               params=GenerationParams(temperature=0.0, max_tokens=8))
    answers = select_regions(solver, item, [frame])
    assert list(answers) == [frame] and not answers[frame].backend_failed
    assert loaded_once(backend)


# -- refused before the weights load ----------------------------------------------------------
def frames_request(count: int, max_tokens: int = 8) -> GenerationRequest:
    """`count` frames of 640x360 and a question (no text per frame: every image adds the same
    number of tokens, so the stated limit is exact)."""
    content: list = [Image.new("RGB", (640, 360), (i * 7 % 255, 90, 160)) for i in range(count)]
    content.append("Which clip fits?")
    return GenerationRequest([Message("user", content)], GenerationParams(max_tokens=max_tokens))


@pytest.mark.parametrize("name", FAMILIES)
def test_too_many_images_for_the_context_are_refused_before_loading(name):
    # another spelling of the folder: its own unloaded instance and its own load count
    backend = HFBackend(f"{family_dir(name)}/")
    with pytest.raises(TooManyImagesError) as refused:
        backend.generate(frames_request(96))
    assert not backend.loaded and WEIGHT_LOADS[backend.source] == 0
    limit, message = refused.value.limit, str(refused.value)
    assert refused.value.sent == 96 and 1 <= limit < 96
    assert backend.backend_id in message and f"at most {limit} " in message
    assert f"APP_MAX_IMAGES_PER_REQUEST={limit}" in message and str(CONTEXT) in message
    backend.check_fits(frames_request(limit))  # the stated limit is the real one: it fits ...
    with pytest.raises(TooManyImagesError):   # ... and one more image does not
        backend.check_fits(frames_request(limit + 1))
    assert not backend.loaded and WEIGHT_LOADS[backend.source] == 0


def test_max_images_setting_and_single_image_families_are_refused_before_loading(monkeypatch):
    import backends.hf_local as hf_local

    path = family_dir("gemma3")
    capped = HFBackend(f"{path}//", max_images=2)
    with pytest.raises(TooManyImagesError, match="at most 2 image.*APP_MAX_IMAGES_PER_REQUEST"):
        capped.generate(frames_request(3))
    assert backend_unloaded(capped)
    monkeypatch.setitem(hf_local.IMAGES_PER_REQUEST_BY_TYPE, "gemma3", 1)
    single = HFBackend(f"{path}///")
    with pytest.raises(TooManyImagesError, match=r"at most 1 image.*\(gemma3\).*API server") as refused:
        single.generate(frames_request(2))
    assert refused.value.limit == 1 and backend_unloaded(single)


def test_text_longer_than_the_context_is_refused_before_loading():
    backend = HFBackend(f"{family_dir('idefics3')}/")
    request = GenerationRequest([Message.text("user", "x" * (CONTEXT + 10))], GenerationParams())
    with pytest.raises(BackendError, match=f"holds {CONTEXT} tokens.*Shorten the prompt"):
        backend.generate(request)
    image_and_long_text = GenerationRequest(
        [Message("user", [Image.new("RGB", (640, 360)), "x" * (CONTEXT - 60)])], GenerationParams())
    with pytest.raises(TooManyImagesError, match="at most 0 .*Not one image fits") as refused:
        backend.generate(image_and_long_text)
    assert refused.value.limit == 0 and backend_unloaded(backend)


def test_a_processor_missing_its_package_is_one_line_before_loading(tmp_path):
    """SmolVLM's processor needs `num2words`, not installed here: the message names it, and no
    weights are read."""
    import importlib.util

    from tests.helpers.tiny_families import write_tiny_smolvlm

    if importlib.util.find_spec("num2words") is not None:
        pytest.skip("num2words is installed: SmolVLM's processor builds")
    backend = HFBackend(str(write_tiny_smolvlm(tmp_path / "smolvlm")))
    with pytest.raises(BackendError, match=r"^Could not load model folder .*smolvlm.*num2words") as e:
        backend.generate(frames_request(1))
    assert "\n" not in str(e.value) and backend_unloaded(backend)


def backend_unloaded(backend: HFBackend) -> bool:
    return not backend.loaded and WEIGHT_LOADS[backend.source] == 0


def test_the_compared_model_is_the_same_loaded_model(family):
    from backends.pair import PairedBackend

    name, backend = family
    spec = f"hf:{backend.source}"
    paired = PairedBackend(resolve(spec), resolve(spec))
    assert paired.primary is paired.partner is backend
    result = paired.primary.generate(frames_request(1))
    assert result.ok and loaded_once(backend)
