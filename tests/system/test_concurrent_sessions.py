"""Eight gradio_client sessions at once on one app, mixed tabs: no session sees another's state or
files, and quick actions keep being answered while other sessions run heavy baseline work
(scripts/bench_sessions.py times them against the same action alone)."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from tests.system.conftest import client, question_number

DIMS = "S, A, P"
CHOICE_API = {"A": "/on_choice", "B": "/on_choice_1", "C": "/on_choice_2", "D": "/on_choice_3"}


def test_eight_sessions_are_isolated_and_quick_actions_stay_quick(system_app, example_data_dir,
                                                                  system_dirs):
    from components.cloze.human import study_questions
    from components.cloze.data import load_dataset
    from components.cloze.questions import build_set

    root = str(example_data_dir / "cloze")
    ds = load_dataset(root)
    grounding = json.loads((example_data_dir / "grounding" / "annotations.json").read_text())
    target = grounding["pairs"][0]["target"]
    sessions = [client(system_app) for _ in range(8)]
    probe = sessions[7]

    results: dict[str, object] = {}
    errors: list[BaseException] = []
    finished_at: dict[str, float] = {}

    def human(i: int, letters: str):
        c = sessions[i]
        ann = f"annot-{i}"
        out = c.predict("practice", root, "all", DIMS, 42, ann, "frames", api_name="/on_start")
        shown = [question_number(out[12])]
        for letter in letters:
            out = c.predict("frames", "immediate", False, api_name=CHOICE_API[letter])
            shown.append(question_number(out[12]))
        results[ann] = (letters, shown)

    def cloze_set(i: int, seed: int):
        md, path, *_ = sessions[i].predict(root, "all", DIMS, seed, "edge1", False, "api", api_name="/on_run_set")
        results[f"set{seed}"] = (md, path)

    def impact_temporal(i: int, qid: str):
        timeline, status, _message = sessions[i].predict(qid, 1, "auto", api_name="/on_run_temporal")
        mine = sessions[i].predict(qid, None, api_name="/on_clip")[3]   # the clip list, video, frame, timeline
        results[f"temporal-{qid}"] = (timeline, status, mine)

        results["metrics"], _message = sessions[i].predict("all", "auto", api_name="/on_metrics")

    def window_search(i: int, target: dict):
        c = sessions[i]
        c.predict("m01", 180, api_name="/pick_movie")
        c.predict(target["qid"], api_name="/pick_query")
        results["ws"] = c.predict(target["query"], 180, 5, 3, 30, "aws", api_name="/run")

    def guarded(name, fn, *args):
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)
        finally:
            finished_at[name] = time.perf_counter()

    jobs = [("h0", human, 0, "AB"), ("h1", human, 1, "CD"), ("h2", human, 2, "BA"),
            ("s3", cloze_set, 3, 3), ("s4", cloze_set, 4, 4), ("t5", impact_temporal, 5, "h0002"),
            ("w6", window_search, 6, target)]
    threads = [threading.Thread(target=guarded, args=(name, fn, *args)) for name, fn, *args in jobs]
    for t in threads:
        t.start()
    under_load: list[float] = []  # when each quick action (loading the cloze data folder) finished
    while any(t.is_alive() for t in threads):
        probe.predict(root, api_name="/on_root")
        under_load.append(time.perf_counter())
    for t in threads:
        t.join()
    assert not errors, errors
    heavy_end = max(finished_at[n] for n in ("s3", "s4", "t5", "w6"))

    # -- isolation: human answers, each annotator's file holds only its own answers ---------------
    for i, letters in ((0, "AB"), (1, "CD"), (2, "BA")):
        ann = f"annot-{i}"
        qs = study_questions(ds, "all", 42, ["S", "A", "P"]).questions
        recs = [json.loads(line) for line in (system_dirs["human"] / f"{ann}.jsonl").read_text().splitlines()]
        assert [r["annotator"] for r in recs] == [ann, ann]
        assert [r["answer"] for r in recs] == list(letters)
        assert [(r["stem"], r["dim"]) for r in recs] == [(q.stem, q.dim) for q in qs[:2]]
        assert len({r["session"] for r in recs}) == 1
        _, shown = results[ann]
        assert [s[:2] for s in shown] == [(1, 0), (2, 1), (3, 2)]  # each saw only its own progress
    assert sorted(p.name for p in system_dirs["human"].glob("*.jsonl")) == [
        "annot-0.jsonl", "annot-1.jsonl", "annot-2.jsonl"]

    # -- isolation: each cloze run reflects its own seed (the option order is seeded) -------------
    for seed in (3, 4):
        md, path = results[f"set{seed}"]
        assert "18 new, 0 resumed" in md, md
        expected = {(q.stem, q.dim): q.option_map for q in build_set(ds, "all", ["S", "A", "P"], seed=seed).questions}
        # a visitor's run is its own (not in the shared runs folder), offered as its results file
        assert not (system_dirs["runs"] / f"baseline-edge1-all-seed{seed}.json").exists()
        path = path["value"] if isinstance(path, dict) else path   # the file box is shown by an update
        got = json.loads(Path(path).read_text())
        got_maps = {(stem, dim): e["option_map"] for stem, dims in got.items() for dim, e in dims.items()}
        assert got_maps == expected
    assert expected != {(q.stem, q.dim): q.option_map
                        for q in build_set(ds, "all", ["S", "A", "P"], seed=3).questions}

    # -- isolation: impact predictions live in the session that made them ------------------------
    timeline, status, mine = results["temporal-h0002"]
    assert "motion-energy" in status and "interval" in status
    assert "#1 IoU" in timeline and "#1 IoU" in mine
    other = probe.predict("h0002", None, api_name="/on_clip")[3]
    assert "#1 IoU" not in other and "truth" in other
    assert "**Temporal**" in results["metrics"] and "7 clip(s)" in results["metrics"]

    # -- isolation: the window-search result belongs to its session; another has no movie picked --
    ws_result = results["ws"][3]
    assert "baseline" in ws_result and "accepted window" in ws_result and target["qid"][:5] in ws_result
    refused = probe.predict(target["query"], 180, 5, 3, 30, "aws", api_name="/run")
    assert refused[-2].startswith("⚠ Movie: pick a movie"), refused  # the tab's message line, then the address

    # -- responsiveness: quick actions kept finishing while heavy jobs ran ----------------------------
    during = [end for end in under_load if end < heavy_end]
    assert len(during) >= 3, len(under_load)
