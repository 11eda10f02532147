"""Form numbers: out-of-range values are refused with the field's name, never changed."""
import pytest

from components.base.errors import UserError
from components.common.fields import number, whole


@pytest.mark.parametrize("value,message", [
    (0, "Orders k must be at least 2 (got 0)"), (-1, "Orders k must be at least 2 (got -1)"),
    (1000, "Orders k must be at most 24 (got 1000)"), (2.5, "Orders k must be a whole number (got 2.5)"),
    ("x", "Orders k must be a number"), (float("nan"), "finite"), (None, "Orders k is empty")])
def test_bad_values_are_refused_with_the_field_named(value, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        whole(value, "Orders k", least=2, most=24)


def test_good_values_and_defaults():
    assert whole(4.0, "k", least=2, most=24) == 4 and whole("7", "k") == 7
    assert whole(None, "k", default=4) == 4 and whole("", "k", default=4) == 4
    assert number("0.5", "gap", least=0) == 0.5
