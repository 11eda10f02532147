"""Every parser against >= 200 malformed / adversarial answers: no exception other than the parser's
documented "unparsed" signal, and every result is valid (or reported unparsed), never guessed."""
from __future__ import annotations

import math
import re

import pytest

from components.cloze.replies import normalise_recorded_answer, parse_answer
from components.impact.replies import NONE, OK, UNPARSED, parse_intervals
from components.impact.regions import REGION_LABELS
from tests.helpers.regions import parse_region_labels
from components.window_search.localizer import fit_interval
from components.window_search.replies import IntervalParseError, parse_interval
from components.window_search.replies import ReplyParseError, extract_json_object, \
    parse_decompose, parse_inspect, parse_select
from tests.robustness.corpus import corpus

LETTERS = ("A", "B", "C", "D")

CLOZE_VALID = [f'{{"answer": "{x}", "reason": "the motion continues"}}' for x in LETTERS] + [
    '{"reason": "r", "answer": " c "}', '{"answer": "<B>", "reason": "x"}']
CLOZE = corpus(CLOZE_VALID, seed=1)

DECOMPOSE_VALID = ['{"statements": [{"id": "s1", "text": "Lloyd walks in"}, {"id": "s2", "text": '
                   '"he sits"}], "cast": [{"char_id": "C1", "name": "Lloyd"}]}',
                   '{"statements": ["a man runs", "a dog barks"]}']
INSPECT_VALID = ['{"statements": [{"id": "s1", "holds": "true", "note": "ok"}, {"id": "s2", "holds": '
                 '"cutoff"}], "decision": "EXPAND", "confidence": 0.6, "expand_direction": "right", '
                 '"expand_seconds": 20}',
                 '{"statements": [{"id": "s1", "holds": false}], "decision": "REJECT", "confidence": 80}',
                 '{"statements": [], "decision": "EMIT", "confidence": "0.9"}']
SELECT_VALID = ['{"selected_index": 1, "reasoning": "the second"}', '{"selected_index": "2"}',
                'selected_index: 0']
REPLIES = corpus(DECOMPOSE_VALID + INSPECT_VALID + SELECT_VALID, seed=2)

LOC_VALID = ['{"start": 12.5, "end": 20}', "[12.5, 20.0]", "From 00:12 to 00:20", "between 3 and 9 s",
             "The event happens in 12.5 - 20 seconds.", "start: 4, end: 8"]
LOCALIZER = corpus(LOC_VALID, seed=3)

IMPACT_VALID = ["[[1.04, 1.375], [2.0, 2.5]]", "[[00:01.040, 00:01.375]]", "From 1 to 2",
                "The event happens in 0.5 - 1.5 seconds; 2 - 3 seconds.", "None", "Frame at 2.375s:",
                '[{"start": 1, "end": 2}]']
IMPACT = corpus(IMPACT_VALID, seed=4)

REGION_VALID = ["The affected body regions are left hand, right calf.", "head and neck", "both legs",
                "left calf and thigh", "None", "rigth forearm; chest"]
REGIONS = corpus(REGION_VALID, seed=5)



def test_corpora_are_large_enough():
    for name, c in [("cloze", CLOZE), ("replies", REPLIES), ("localizer", LOCALIZER),
                    ("impact", IMPACT), ("regions", REGIONS)]:
        assert len(c) >= 200, name
        assert max(map(len, c)) >= 1_000_000, name  # the 1 MB cases are in


def _letters_in(text: str) -> set[str]:
    return set(re.findall(r"[A-Da-d]", text))


# -- (a) cloze ------------------------------------------------------------------------------------
@pytest.mark.parametrize("strict", [False, True])
def test_cloze_parse_answer_never_raises_never_guesses(strict):
    for text in CLOZE + [None]:
        parsed = parse_answer(text, strict=strict)
        if parsed.letter is None:
            assert parsed.why, repr(text)[:80]          # "unparsed" carries a reason
        else:
            assert parsed.letter in LETTERS
            assert parsed.letter in {x.upper() for x in _letters_in(text)}, repr(text)[:80]
            assert isinstance(parsed.reason, str)


def test_cloze_normalise_recorded_answer_total():
    values = CLOZE + [None, 1, 1.5, float("nan"), ["A"], {"A": 1}, b"A", True]
    for value in values:
        got = normalise_recorded_answer(value)
        assert got is None or (got in LETTERS and isinstance(value, str)
                               and got in value.upper()), repr(value)[:80]


@pytest.mark.parametrize("letter", LETTERS)
def test_cloze_valid_answer_survives_noise(letter):
    valid = f'{{"answer": "{letter}", "reason": "because"}}'
    for text in [valid, f"  {valid}\n", f"```json\n{valid}\n```", f"```\n{valid}\n```",
                 f"Sure, here it is: {valid} Hope it helps",
                 f'{{"reason": "because", "answer": " {letter.lower()} "}}']:
        for strict in (False, True):
            assert parse_answer(text, strict=strict).letter == letter, text
    # "<A>" is unwrapped only by the strict rules (the upstream non-strict rule rejects it)
    assert parse_answer(f'{{"answer": "<{letter}>", "reason": "r"}}', strict=True).letter == letter
    assert parse_answer(f'{{"answer": "<{letter}>", "reason": "r"}}').letter is None


@pytest.mark.parametrize("text", ["A", "A or B", '{"answer": "A or B"}', '{"answer": ["A"]}',
                                  '{"answer": 1}', '{"answer": null}', "The answer is C.",
                                  '{"answer": "E"}', '{"answer": "\uff21"}'])
def test_cloze_ambiguous_or_bare_answers_are_unparsed(text):
    assert parse_answer(text).letter is None and parse_answer(text, strict=True).letter is None


# -- (b) AWS replies ------------------------------------------------------------------------------
def _check_inspect(reply) -> None:
    assert reply.decision in ("EMIT", "EXPAND", "REJECT")
    assert all(c.status in ("true", "false", "cutoff") for c in reply.checks)
    assert reply.confidence is None or 0.0 <= reply.confidence <= 1.0
    if reply.decision == "EXPAND":
        assert reply.expand_direction in ("left", "right")
        assert reply.expand_seconds is None or (math.isfinite(reply.expand_seconds)
                                                and reply.expand_seconds > 0)


@pytest.mark.parametrize("parser", ["extract", "decompose", "inspect", "inspect-ids", "select"])
def test_replies_only_raise_reply_parse_error(parser):
    failures = []
    for text in REPLIES + [None]:
        try:
            if parser == "extract":
                assert isinstance(extract_json_object(text), dict)
            elif parser == "decompose":
                reply = parse_decompose(text)
                assert reply.statements and all(s.text.strip() for s in reply.statements)
                assert len({s.sid for s in reply.statements}) == len(reply.statements)
            elif parser == "inspect":
                _check_inspect(parse_inspect(text))
            elif parser == "inspect-ids":
                reply = parse_inspect(text, ["s1", "s2"])
                _check_inspect(reply)
                assert all(c.sid in ("s1", "s2") for c in reply.checks)
            else:
                reply = parse_select(text, 3)
                assert type(reply.index) is int and 0 <= reply.index < 3
        except ReplyParseError:
            pass
        except Exception as exc:  # noqa: BLE001 - collect every escape for the report
            failures.append(f"{type(exc).__name__} on {repr(text)[:60]}")
    assert not failures, f"{len(failures)} escapes, e.g. {failures[:6]}"


@pytest.mark.parametrize("text", ['{"selected_index": 1e309}', '{"selected_index": "1e309"}',
                                  '{"selected_index": NaN}', '{"selected_index": "nan"}'])
def test_select_non_finite_index_is_unparsed(text):
    with pytest.raises(ReplyParseError):
        parse_select(text, 3)


@pytest.mark.parametrize("text", ["{[1]: 2}", '{"a": {[1]: 2}}', '{"a": ' + "[" * 5000 + "]" * 5000 + "}"])
def test_extract_odd_literals_and_deep_nesting_are_unparsed(text):
    with pytest.raises(ReplyParseError):
        extract_json_object(text)


def test_replies_valid_answers_survive_noise():
    for text in [INSPECT_VALID[0], f"```json\n{INSPECT_VALID[0]}\n```", f"Verdict:\n{INSPECT_VALID[0]}\nDone",
                 INSPECT_VALID[0].replace('"', "\u201c", 1)]:
        reply = parse_inspect(text)
        assert (reply.decision, reply.expand_direction, reply.expand_seconds) == ("EXPAND", "right", 20)
    assert parse_select(f"I pick: {SELECT_VALID[0]}", 3).index == 1
    # never guessed: an index outside the candidates is unparsed, not clamped
    for bad in ['{"selected_index": 3}', '{"selected_index": -1}', '{"selected_index": 1.5}']:
        with pytest.raises(ReplyParseError):
            parse_select(bad, 3)
    for bad in ['{"decision": "MAYBE"}', '{"decision": "EMIT", "statements": [{"id": "s1", "holds": "perhaps"}]}']:
        with pytest.raises(ReplyParseError):
            parse_inspect(bad)


# -- (c) intervals --------------------------------------------------------------------------------
def test_localizer_parse_interval_total():
    failures = []
    window = (10.0, 40.0)
    for text in LOCALIZER + [None]:
        try:
            s, e = parse_interval(text)
            assert not (math.isnan(s) or math.isnan(e)), text
            (fs, fe), _ = fit_interval((s, e), window)
            assert math.isfinite(fs) and math.isfinite(fe) and window[0] <= fs <= fe <= window[1]
        except IntervalParseError:
            pass
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{type(exc).__name__} on {repr(text)[:60]}")
    assert not failures, f"{len(failures)} escapes, e.g. {failures[:6]}"


def test_localizer_valid_answers_survive_noise():
    for text in ['{"start": 12.5, "end": 20}', '```json\n{"start": 12.5, "end": 20}\n```',
                 "Answer: [12.5, 20]. Done.", "<think>1 - 2</think>From 12.5 to 20 seconds",
                 "<12.0 seconds> <13.0 seconds> The moment is 12.5 - 20 s"]:
        assert parse_interval(text) == (12.5, 20.0), text


def _check_impact(parsed, duration):
    assert parsed.status in (OK, NONE, UNPARSED)
    assert isinstance(parsed.raw, str)
    if parsed.status != OK:
        assert parsed.intervals == []
    for s, e in parsed.intervals:
        assert math.isfinite(s) and math.isfinite(e) and s < e, parsed.intervals
        if duration is not None:
            assert 0.0 <= s < e <= duration


@pytest.mark.parametrize("duration", [4.0, None])
def test_impact_parse_intervals_total(duration):
    failures = []
    for text in IMPACT + [None]:
        try:
            _check_impact(parse_intervals(text, duration=duration), duration)
        except Exception as exc:  # noqa: BLE001 - parse_intervals reports "unparsed", never raises
            failures.append(f"{type(exc).__name__}: {str(exc)[:60]} on {repr(text)[:60]}")
    assert not failures, f"{len(failures)} failures, e.g. {failures[:6]}"


def test_impact_valid_answers_survive_noise_and_none_is_empty():
    for text in ["[[1.04, 1.375]]", "```json\n[[1.04, 1.375]]\n```", "Sure: [[1.04, 1.375]] done",
                 "The event happens in 1.04 - 1.375 seconds.", "[[1.375, 1.04]]"]:
        p = parse_intervals(text, duration=4.0)
        assert p.status == OK and p.intervals == [(1.04, 1.375)], text
    for text in ["None", "none.", "N/A", "[]"]:
        assert parse_intervals(text, duration=4.0).status == NONE, text
    for text in ["", "I don't know", "\x00", "\U0001f600"]:
        assert parse_intervals(text, duration=4.0).status == UNPARSED, text
    far = parse_intervals("[[100, 200]]", duration=4.0)
    assert far.intervals == [] and far.out_of_range == 1


# -- (d) region labels ----------------------------------------------------------------------------
def test_region_labels_total():
    failures = []
    for text in REGIONS + [None]:
        try:
            labels, unmapped = parse_region_labels(text)
            assert all(label in REGION_LABELS for label in labels), labels
            assert len(set(labels)) == len(labels)
            assert all(isinstance(u, str) for u in unmapped)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{type(exc).__name__} on {repr(text)[:60]}")
    assert not failures, f"{len(failures)} failures, e.g. {failures[:6]}"


def test_region_labels_semantics():
    base = "The affected body regions are left hand, right calf."
    for text in [base, f"  {base}\n", f"Sure! {base}", base.upper(), base.replace(",", " and")]:
        assert parse_region_labels(text)[0] == ["left hand", "right calf"], text
    assert parse_region_labels("hand")[0] == ["left hand", "right hand"]  # no side guessed
    assert parse_region_labels("hand, hand, HAND")[0] == ["left hand", "right hand"]  # repeats
    assert parse_region_labels("None") == ([], [])
    for junk in ["\U0001f600", "\x00", "asdf qwerty", "<html>", "1e309"]:
        assert parse_region_labels(junk)[0] == [], junk


# -- pathological run time (catastrophic regex backtracking) ---------------------------------------
_RUNTIME_SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
from components.window_search.replies import IntervalParseError, parse_interval
from components.impact.replies import parse_intervals
text = "1" * 6000  # a degenerate, looping model answer
try:
    {call}
except IntervalParseError:
    pass
"""


@pytest.mark.parametrize("call", ["parse_interval(text)", "parse_intervals(text, duration=5.0)"])
def test_long_digit_runs_parse_in_bounded_time(call):
    """6000 digits must not take seconds (quadratic backtracking in the time/pair regexes)."""
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    script = _RUNTIME_SCRIPT.format(root=root, call=call)
    try:
        subprocess.run([sys.executable, "-c", script], timeout=6, check=True, capture_output=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call} on a 6000-digit answer ran for more than 6 s")
