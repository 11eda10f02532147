"""An output records everything its answers depend on, and a resume with any difference is refused
naming both values (issue 38 items 1-3); a file with no stamp is resumed only with --adopt.
Through app.main, on the example data (local folders), with the baseline or a real local server."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from app import main
from components.base.io import read_jsonl
from components.base.version import APP_VERSION
from tests.helpers.openai_server import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
ANSWER = '{"answer": "B", "reason": "r"}'
RELEASED_KEYS = ("correct", "answer", "expected", "reason", "option_map")   # released eval.py's entries


def _cloze(data, out, *extra) -> int:
    return main(["run", "cloze", "--data", str(data), "--out", str(out), "--no-progress", "--retry-sleep", "0",
                 *extra])


def _copy_cloze(src: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    shutil.copytree(src / "choices", dest / "choices")
    for name in ("meta.json", "sets.json"):
        shutil.copy(src / name, dest / name)
    return dest


def test_a_released_result_file_is_not_resumed_into_unless_adopted(cloze_examples, tmp_path, capsys):
    ref = json.loads((cloze_examples / "results" / "edge1.json").read_text())
    kept = sorted(ref)[:3]
    released = {stem: {dim: {k: e[k] for k in RELEASED_KEYS if k in e} for dim, e in ref[stem].items()}
                for stem in kept}
    out = tmp_path / "that.json"
    out.write_text(json.dumps(released))
    before = out.read_bytes()
    rc = _cloze(cloze_examples, out, "--backend", "baseline:edge4")
    err = capsys.readouterr().err
    assert rc == 2 and "--adopt" in err and "--out" in err and "that.json" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert out.read_bytes() == before and not (tmp_path / "that.json.progress.jsonl").exists()
    # --adopt takes it as the backend named: one backend in the whole file
    assert _cloze(cloze_examples, out, "--backend", "baseline:edge4", "--adopt") == 0
    results = json.loads(out.read_text())
    assert set(kept) < set(results)
    assert {e["backend"] for dims in results.values() for e in dims.values()} == {"baseline:edge4"}
    assert {e["app_version"] for dims in results.values() for e in dims.values()} == {APP_VERSION}
    assert _cloze(cloze_examples, out, "--backend", "baseline:edge4") == 0   # stamped now: resumes


def test_a_resume_on_another_local_data_folder_is_refused(cloze_examples, tmp_path, capsys):
    one = _copy_cloze(cloze_examples, tmp_path / "one" / "cloze")
    same = _copy_cloze(cloze_examples, tmp_path / "elsewhere" / "cloze")     # the same data, moved
    other = _copy_cloze(cloze_examples, tmp_path / "two" / "cloze")
    meta = json.loads((other / "meta.json").read_text())
    (other / "meta.json").write_text(json.dumps(meta, indent=3))            # other annotation bytes
    renamed = _copy_cloze(cloze_examples, tmp_path / "three" / "cloze")
    stem = sorted(p.name for p in (renamed / "choices").iterdir())[-1]
    shutil.copytree(renamed / "choices" / stem, renamed / "choices" / (stem + "_x"))   # another stem list
    out = tmp_path / "r.json"
    assert _cloze(one, out, "--backend", "baseline", "--limit", "2") == 0
    first = read_jsonl(tmp_path / "r.json.progress.jsonl")
    assert len({r["data_fingerprint"] for r in first}) == 1
    fingerprint = first[0]["data_fingerprint"]
    capsys.readouterr()
    for folder in (other, renamed):
        assert _cloze(folder, out, "--backend", "baseline", "--limit", "4") == 2
        err = capsys.readouterr().err
        assert "data_fingerprint" in err and fingerprint in err and err.count("sha256:") == 2, err
    assert len(json.loads(out.read_text()) and read_jsonl(tmp_path / "r.json.progress.jsonl")) == 2
    assert _cloze(same, out, "--backend", "baseline", "--limit", "4") == 0    # same content: resumes
    assert len(read_jsonl(tmp_path / "r.json.progress.jsonl")) == 4


@pytest.mark.parametrize("first, then, named", [
    (["--seed", "42"], ["--seed", "7"], ("seed 42", "seed 7")),
    ([], ["--strict"], ("strict off", "strict on")),
    ([], ["--max-images", "48"], ("max_images none", "max_images 48")),
])
def test_a_resume_with_another_cloze_setting_is_refused_naming_both(cloze_examples, tmp_path, monkeypatch,
                                                                   capsys, first, then, named):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "c.json"
    with ScriptedOpenAIServer([ANSWER]) as server:
        base = ["--backend", "openai:model-a", "--base-url", server.url, "--dims", "S"]
        assert _cloze(cloze_examples, out, *base, "--limit", "2", *first) == 0
        asked = len(server.requests)
        capsys.readouterr()
        assert _cloze(cloze_examples, out, *base, "--limit", "4", *then) == 2
        assert len(server.requests) == asked                         # nothing asked
    err = capsys.readouterr().err
    assert all(n in err for n in named), err
    assert len(json.loads(out.read_text())) == 2


def test_a_resume_by_another_app_version_is_refused_naming_both(cloze_examples, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert _cloze(cloze_examples, out, "--backend", "baseline", "--limit", "2") == 0
    side = tmp_path / "r.json.progress.jsonl"
    side.write_text(side.read_text().replace(f'"app_version": "{APP_VERSION}"', '"app_version": "0.9"'))
    capsys.readouterr()
    assert _cloze(cloze_examples, out, "--backend", "baseline", "--limit", "3") == 2
    err = capsys.readouterr().err
    assert "app_version 0.9" in err and f"app_version {APP_VERSION}" in err


def _grounding(ann, out, *extra) -> int:
    return main(["run", "grounding", "--annotations", str(ann), "--backend", "baseline", "--out", str(out),
                 "--method", "rag", "--no-progress", *extra])


def test_a_resume_with_another_grounding_setting_is_refused_naming_both(grounding_examples, tmp_path,
                                                                       monkeypatch, capsys):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    ann = grounding_examples / "annotations.json"
    out = tmp_path / "p.jsonl"
    assert _grounding(ann, out, "--limit", "1") == 0
    record = read_jsonl(out)[0]
    assert (record["k"], record["localize_frames"], record["m"]) == ("5", "32", "3")
    capsys.readouterr()
    for option, value, name in (("--localize-frames", "4", "localize_frames"), ("--k", "2", "k"),
                                ("--m", "1", "m"), ("--delta-max", "10", "delta_max"),
                                ("--chunk-seconds", "60", "chunk_seconds"),
                                ("--embedder", "hf-embed:other/model", "embedder")):
        assert _grounding(ann, out, "--limit", "2", option, value) == 2, option
        err = capsys.readouterr().err
        assert f"{name} {record[name]}" in err and f"{name} {value}" in err, err
    assert len(read_jsonl(out)) == 1
    assert _grounding(ann, out, "--limit", "2") == 0 and len(read_jsonl(out)) == 2


def test_grounding_traces_are_one_per_query_after_a_kill_between_the_trace_and_the_prediction(
        grounding_examples, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    ann = grounding_examples / "annotations.json"
    out, traces = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    assert _grounding(ann, out, "--traces", str(traces), "--limit", "3") == 0
    # a kill after the third query's trace was appended and before its prediction line was: the
    # files as that kill leaves them
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:2]))
    assert [r["qid"] for r in read_jsonl(traces)] == ["p0001_t", "p0001_c", "p0002_t"]
    capsys.readouterr()
    assert _grounding(ann, out, "--traces", str(traces), "--limit", "4") == 0
    err = capsys.readouterr().err
    qids = [r["qid"] for r in read_jsonl(out)]
    assert qids == ["p0001_t", "p0001_c", "p0002_t", "p0002_c"]
    assert sorted(r["qid"] for r in read_jsonl(traces)) == sorted(qids)           # one trace each
    assert [r["qid"] for r in read_jsonl(tmp_path / "t.jsonl.duplicates")] == ["p0002_t"]
    assert "t.jsonl" in err and "moved to" in err
    # a trace repeated (two runs once wrote one file): the resume keeps the first
    traces.write_text(traces.read_text() + traces.read_text().splitlines(keepends=True)[0])
    assert _grounding(ann, out, "--traces", str(traces), "--limit", "4") == 0
    assert sorted(r["qid"] for r in read_jsonl(traces)) == sorted(qids)


def _stamp_keys_documented() -> set[str]:
    text = (ROOT / "docs" / "formats.md").read_text()
    section = text[text.index("## Run stamps"):]
    section = section[:section.find("\n## ", 4)]
    return {code for code in re.findall(r"`([^`]*)`", section) if re.fullmatch(r"[a-z_]+", code)}


def test_every_stamped_field_is_documented(cloze_examples, grounding_examples, impact_examples, tmp_path,
                                           monkeypatch):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    documented = _stamp_keys_documented()
    stamped: set[str] = set()
    with ScriptedOpenAIServer([ANSWER]) as server:
        assert _cloze(cloze_examples, tmp_path / "c.json", "--backend", "openai:m", "--base-url", server.url,
                      "--limit", "1", "--max-images", "96") == 0
    stamped |= set(read_jsonl(tmp_path / "c.json.progress.jsonl")[0]) & _stamp_of_cloze()
    assert _grounding(grounding_examples / "annotations.json", tmp_path / "p.jsonl", "--limit", "1") == 0
    stamped |= set(read_jsonl(tmp_path / "p.jsonl")[0]) - {"qid", "interval", "source", "window", "trace",
                                                            "fallback_interval"}
    with ScriptedOpenAIServer(["[[1.0, 2.0]]"]) as server:
        assert main(["run", "impact", "--annotations", str(impact_examples / "annotations.json"),
                     "--out", str(tmp_path / "imp"), "--backend", "openai:m", "--base-url", server.url,
                     "--tasks", "temporal", "--no-progress"]) in (0, 1)
    line = read_jsonl(tmp_path / "imp" / "temporal_pred.jsonl")[0]
    stamped |= {k for k in line if k in {"max_frames", "max_retries", "prompt_style"}}
    assert {"app_version", "data_fingerprint", "backend", "seed", "strict", "localize_frames", "k",
            "embedder", "image_max_side", "max_images", "max_retries"} <= stamped
    assert stamped <= documented, sorted(stamped - documented)


def _stamp_of_cloze() -> set[str]:
    from backends.config import ApiSettings
    from backends.registry import resolve
    from components.cloze.pipeline import run_stamp
    from components.cloze.solvers import SolverSettings, solvers_for

    backend = resolve("openai:m", api=ApiSettings(base_url="http://127.0.0.1:9/v1", api_key="x", max_images=96))
    return set(run_stamp(solvers_for(backend, SolverSettings()).solver)) | {"data_revision", "data_fingerprint", "seed"}
