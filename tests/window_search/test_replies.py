"""Reading the verifier's replies: robust JSON extraction, normalised statuses and decisions."""
from __future__ import annotations

import pytest

from components.window_search.replies import ReplyParseError, extract_json_object, \
    parse_confidence, parse_decompose, parse_inspect, parse_select

INSPECT = ('{"statements": [{"id": "s1", "note": "Lloyd walks", "holds": "true"}, '
           '{"id": "s2", "note": "edge", "holds": "cutoff"}], "cooccurrence": "right edge", '
           '"decision": "EXPAND", "confidence": 0.6, "expand_direction": "right", '
           '"expand_seconds": 20}')


@pytest.mark.parametrize("text", [
    INSPECT,
    "```json\n" + INSPECT + "\n```",
    "Sure! Here is the verdict:\n" + INSPECT + "\nHope that helps.",
    "<think>maybe {not this}</think>" + INSPECT,
    INSPECT.replace("20}", "20,}").replace('"cutoff"}]', '"cutoff"},]'),      # trailing commas
    INSPECT.replace('"', "\u201c", 1).replace('s"', "s\u201d", 1),            # curly quotes
])
def test_extract_json_object_variants(text):
    obj = extract_json_object(text)
    assert obj["decision"] == "EXPAND" and obj["expand_seconds"] == 20


def test_extract_handles_python_literals_and_braces_inside_strings():
    assert extract_json_object("{'a': True, 'b': None}") == {"a": True, "b": None}
    assert extract_json_object('x {"note": "a } brace", "k": 1} y') == {"note": "a } brace", "k": 1}


def test_truncated_object_is_closed():
    obj = extract_json_object('{"decision": "REJECT", "statements": [{"id": "s1", "holds": "false"}')
    assert obj["decision"] == "REJECT"


@pytest.mark.parametrize("text", ["", "   ", "no json here", "[1, 2, 3]", "{broken"])
def test_unreadable_replies_raise(text):
    with pytest.raises(ReplyParseError):
        extract_json_object(text)


def test_parse_inspect_reads_everything():
    r = parse_inspect(INSPECT, ["s1", "s2"])
    assert [(c.sid, c.status, c.note) for c in r.checks] == [("s1", "true", "Lloyd walks"),
                                                             ("s2", "cutoff", "edge")]
    assert (r.decision, r.confidence, r.expand_direction, r.expand_seconds) == \
        ("EXPAND", 0.6, "right", 20.0)
    assert r.cooccurrence == "right edge"


@pytest.mark.parametrize("raw,expected", [("TRUE", "true"), (" False ", "false"), ("CutOff", "cutoff"),
                                          ("cut off", "cutoff"), ("cut-off", "cutoff"),
                                          (True, "true"), (False, "false")])
def test_statuses_normalised(raw, expected):
    import json
    text = json.dumps({"statements": [{"id": "s1", "holds": raw}], "decision": "REJECT"})
    assert parse_inspect(text, ["s1"]).checks[0].status == expected


def test_unknown_status_is_an_error():
    with pytest.raises(ReplyParseError, match="unknown status"):
        parse_inspect('{"statements": [{"id": "s1", "holds": "maybe"}], "decision": "REJECT"}')


@pytest.mark.parametrize("raw,expected", [("emit", "EMIT"), ("Reject", "REJECT"), (" EXPAND ", "EXPAND"),
                                          ("ACCEPT", "EMIT")])
def test_decisions_normalised(raw, expected):
    import json
    text = json.dumps({"statements": [], "decision": raw, "expand_direction": "left"})
    assert parse_inspect(text).decision == expected


@pytest.mark.parametrize("raw", ["EMIT|EXPAND|REJECT", "yes", None, "APPROVE"])
def test_other_decisions_are_errors(raw):
    import json
    with pytest.raises(ReplyParseError):
        parse_inspect(json.dumps({"statements": [], "decision": raw}))


def test_expand_needs_a_side_but_not_seconds():
    with pytest.raises(ReplyParseError, match="expand_direction"):
        parse_inspect('{"decision": "EXPAND", "expand_direction": null, "expand_seconds": 10}')
    r = parse_inspect('{"decision": "EXPAND", "expand_direction": "Earlier"}')
    assert r.expand_direction == "left" and r.expand_seconds is None
    assert parse_inspect('{"decision": "EXPAND", "expand_direction": "right", '
                         '"expand_seconds": "45 s"}').expand_seconds == 45.0
    with pytest.raises(ReplyParseError, match="positive"):
        parse_inspect('{"decision": "EXPAND", "expand_direction": "right", "expand_seconds": 0}')


def test_unknown_ids_ignored_and_missing_ids_noted():
    r = parse_inspect('{"statements": [{"id": "s9", "holds": "true"}, {"id": "s1", "holds": "false"}],'
                      ' "decision": "REJECT"}', ["s1", "s2"])
    assert [c.sid for c in r.checks] == ["s1"]
    assert any("s9" in n for n in r.notes) and any("s2" in n for n in r.notes)


@pytest.mark.parametrize("raw,expected", [(0.7, 0.7), ("0.25", 0.25), (85, 0.85), ("90%", 0.9),
                                          (-0.2, 0.0), (1.0, 1.0), (250, 1.0), (None, None)])
def test_confidence_read_into_unit_interval(raw, expected):
    assert parse_confidence(raw) == pytest.approx(expected) if expected is not None \
        else parse_confidence(raw) is None


def test_confidence_not_a_number():
    with pytest.raises(ReplyParseError):
        parse_confidence("high")


def test_parse_decompose():
    r = parse_decompose('Here: {"statements": [{"id": "s1", "text": "Kaffee is shouting"}, '
                        '"Two people are in a courtroom"], "cast": [{"char_id": "C1", "name": '
                        '"Kaffee", "ref": "C1:r2"}]}')
    assert [(s.sid, s.text) for s in r.statements] == [("s1", "Kaffee is shouting"),
                                                       ("s2", "Two people are in a courtroom")]
    assert r.cast == [{"char_id": "C1", "name": "Kaffee", "ref": "C1:r2"}]
    dup = parse_decompose('{"statements": [{"id": "s1", "text": "a"}, {"id": "s1", "text": "b"}]}')
    assert [s.sid for s in dup.statements] == ["s1", "s2"]
    for bad in ('{"statements": []}', '{"cast": []}', '{"statements": [{"id": "s1", "text": "…"}]}'):
        with pytest.raises(ReplyParseError):
            parse_decompose(bad)


def test_parse_select():
    assert parse_select('{"selected_index": 2, "reasoning": "closest"}', 3).index == 2
    assert parse_select('```\n{"selected_index": "1"}\n```', 3).index == 1
    assert parse_select('selected_index: 0 because ...', 2).index == 0
    for bad in ('{"selected_index": 3}', '{"selected_index": -1}', '{"selected_index": 1.5}',
                '{"selected_index": null}', "the second one"):
        with pytest.raises(ReplyParseError):
            parse_select(bad, 3)
