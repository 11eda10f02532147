"""components.common.validate: one message naming the file, the record path, the key and the
problem."""
from __future__ import annotations

import pytest
from pydantic import BaseModel
from pydantic.dataclasses import dataclass

from components.base.errors import DataFormatError
from components.common.validate import location, validated


class Record(BaseModel):
    id: str
    interval: tuple[float, float]
    label: int | str = 0


class Annotations(BaseModel):
    items: list[Record]


@dataclass
class Query:
    qid: str
    moments: list[tuple[float, float]]


GOOD = {"id": "a", "interval": [1, 2]}


def message(schema, data, **kwargs) -> str:
    with pytest.raises(DataFormatError) as info:
        validated(schema, data, file="/data/set/annotations.json", **kwargs)
    return str(info.value)


def test_a_bad_value_names_file_record_key_and_problem():
    text = message(Annotations, {"items": [GOOD, GOOD, GOOD, {"id": "d", "interval": "soon"}]})
    assert text == ("annotations.json: items[3].interval: Input should be a valid tuple "
                    "(got 'soon').")


def test_a_missing_key_shows_no_value_and_the_fix_comes_last():
    text = message(Annotations, {"items": [GOOD, {"interval": [1, 2]}]},
                   fix="Give every item an id.")
    assert text == "annotations.json: items[1].id: Field required. Give every item an id."


def test_further_problems_are_counted():
    text = message(Annotations, {"items": [GOOD, {"id": "x", "interval": [1]},
                                           {"id": 3, "interval": [1, 2]}]})
    assert text.startswith("annotations.json: items[1].interval[1]: Field required.")
    assert text.endswith("(1 more problem(s) after this one)")


def test_union_member_names_are_not_shown_as_keys():
    text = message(Annotations, {"items": [GOOD, {"id": "b", "interval": [0, 1], "label": [7]}]})
    assert text.startswith("annotations.json: items[1].label: ") and ".int" not in text
    assert "(got [7])" in text and "more problem" not in text  # one problem, two members
    assert message(dict[str, int], {"int": "x"}).startswith("annotations.json: int: ")  # a real key


def test_long_values_are_shortened_and_the_top_level_is_named():
    text = message(Annotations, {"items": [{"id": "x", "interval": [1, "a" * 500]}]})
    assert "items[0].interval[1]" in text and "…" in text and len(text) < 250
    assert message(Annotations, [1]).startswith("annotations.json: the top level: ")


def test_dataclass_schemas_and_valid_data():
    text = message(list[Query], [{"qid": "q1", "moments": [[1, 2], [3, None]]}])
    assert text.startswith("annotations.json: [0].moments[1][1]: ")
    assert validated(list[Query], [{"qid": "q1", "moments": [[1, 2]]}], file="q.json") == [
        Query(qid="q1", moments=[(1.0, 2.0)])]
    parsed = validated(Annotations, {"items": [GOOD]}, file="a.json")
    assert parsed.items[0].interval == (1.0, 2.0)


def test_location():
    assert location(("queries", 3, "interval")) == "queries[3].interval"
    assert location((0, "moments", 1)) == "[0].moments[1]"
    assert location(()) == "the top level"
