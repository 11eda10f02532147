"""Run files in TempCloze's released result format (`eval_results/overall/eval_results_all/*.json`)
for a list of stems, with the released files' quirks: a stem with no entry, a stem whose entries
are all error records ("Cannot parse ..."), a stem lacking a dimension, wrapped and lower-case
letters, a record without `correct`. Used by tests/runs/ and scripts/bench_runs.py."""
from __future__ import annotations

import json
import random
from pathlib import Path

DIM_CLIPS = {"S": ("Rand1", "Rand2", "Rand3"), "A": ("Early", "Late", "Wide"),
             "C": ("Reverse", "Shuffle", "Loop")}
LETTERS = "ABCD"
REASON = ("The beginning shows the ball leaving the hand and the end shows it landing; option {x} "
          "continues the motion without a jump, while the others repeat or reverse it.")


def released_record(rng: random.Random, dim: str, accuracy: float) -> dict:
    clips = ["GT", *DIM_CLIPS[dim]]
    rng.shuffle(clips)
    option_map = dict(zip(LETTERS, clips))
    expected = LETTERS[clips.index("GT")]
    answer = expected if rng.random() < accuracy else rng.choice([c for c in LETTERS if c != expected])
    return {"correct": answer == expected, "answer": answer, "expected": expected,
            "reason": REASON.format(x=answer), "option_map": option_map}


def released_results(stems: list[str], run: int, *, seed: int = 0, quirks: bool = True) -> dict:
    accuracy = 0.3 + 0.5 * ((run * 7919) % 100) / 100
    out: dict = {}
    for stem in stems:
        rng = random.Random(f"{seed}:{run}:{stem}")
        out[stem] = {dim: released_record(rng, dim, accuracy) for dim in ("S", "A", "C")}
    if quirks and len(stems) >= 5:
        q = out
        if run % 5 == 0:
            q[stems[0]] = {}                                     # a stem with no entry
        if run % 5 == 1:
            for dim, rec in q[stems[1]].items():                  # no valid entry: error records
                q[stems[1]][dim] = {"answer": None, "error": "Cannot parse model output",
                                    "raw": "I think the answer is the second clip",
                                    "expected": rec["expected"], "option_map": rec["option_map"]}
        if run % 5 == 2:
            del q[stems[2]]["C"]                                  # a stem lacking a dimension
        if run % 5 == 3:
            q[stems[3]]["S"]["answer"] = f"<{q[stems[3]]['S']['answer']}>"
            q[stems[3]]["A"]["answer"] = f" {q[stems[3]]['A']['answer'].lower()} "
        if run % 5 == 4:
            del q[stems[4]]["A"]["correct"]                       # scored by `expected`
    return out


def write_released_runs(stems: list[str], folder: Path, runs: int, *, seed: int = 0,
                        quirks: bool = True, prefix: str = "model") -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for run in range(runs):
        path = folder / f"{prefix}{run:02d}_results.json"
        path.write_text(json.dumps(released_results(stems, run, seed=seed, quirks=quirks), indent=2))
        paths.append(path)
    return paths


#: error texts of the released files' error records (issue 34 quotes them)
TIMEOUT = "Read timed out (600)"
NOT_SERVED = "vLLM HTTP 404: model {model} does not exist"


def real_format_results(stems: list[str], run: int, *, dead: bool = False, raw: bool = False,
                        seed: int = 0) -> dict:
    """One run file shaped like the 30 released ones: its own option order per question (shuffled
    per run), the released quirks, a share of error records ("Read timed out (600)"), `raw` /
    `raw_original` replies where the released files have them (`raw`), and, for a `dead` run,
    nothing valid at all (every record an error: the model was not served)."""
    out = released_results(stems, run, seed=seed)
    rng = random.Random(f"{seed}:{run}:errors")
    for dims in out.values():
        for dim, rec in list(dims.items()):
            if dead:
                dims[dim] = {"answer": None, "error": NOT_SERVED.format(model=f"model{run:02d}"),
                             "expected": rec.get("expected"), "option_map": rec.get("option_map")}
                continue
            if rec.get("answer") is not None and rng.random() < 0.02:
                dims[dim] = {"answer": None, "error": TIMEOUT, "expected": rec.get("expected"),
                             "option_map": rec.get("option_map")}
            elif raw and rec.get("answer") is not None:
                text = json.dumps({"answer": rec["answer"], "reason": rec.get("reason", "")})
                rec["raw"] = f"```json\n{text}\n```"
                rec["raw_original"] = "<think>The beginning and the end show one motion.</think>\n" + text
    return out


def write_real_format_runs(stems: list[str], folder: Path, runs: int = 30, *, dead: tuple[int, ...] = (-2, -1),
                           seed: int = 0, prefix: str = "model") -> list[Path]:
    """`runs` files like the released `eval_results_all/*.json`: every fourth carries raw replies
    (8 of 30 do), the runs in `dead` (default: the last two) have nothing valid."""
    folder.mkdir(parents=True, exist_ok=True)
    dead_runs = {d % runs for d in dead}
    paths = []
    for run in range(runs):
        path = folder / f"{prefix}{run:02d}_results.json"
        results = real_format_results(stems, run, dead=run in dead_runs, raw=run % 4 == 0, seed=seed)
        path.write_text(json.dumps(results))
        paths.append(path)
    return paths
