"""The one text table every `eval` prints (components/common/tables.py), in both of its forms."""
from __future__ import annotations

from components.common.tables import format_table, format_value
from components.window_search.metrics import METRIC_KEYS, format_metrics


def test_values_are_rounded_for_display_only_and_none_and_nan_are_named():
    assert [format_value(v) for v in (None, float("nan"), 51.8456, 3, "x")] == ["n/a", "nan", "51.85", "3", "x"]


def test_names_pad_to_the_longest_by_default_or_to_a_fixed_width_with_values_aligned():
    assert format_table([("mAP", 51.8456), ("queries", 12), ("R1@0.5", None)]) == (
        "mAP      51.85\nqueries  12\nR1@0.5   n/a")
    assert format_table([("metric", "value", "  tail"), ("mIoU", 7.0)], name_width=8, value_width=6, gap="") == (
        "metric   value  tail\nmIoU      7.00")
    assert format_table([]) == ""


def test_window_search_metrics_print_through_the_one_table():
    metrics = {**{k: 0.0 for k in METRIC_KEYS}, "mIoU": 41.234, "num_queries": 8,
               "intervals": {"mIoU": {"low": 30.0, "high": 52.5, "units": 8, "unit": "queries",
                                      "level": 0.95, "resamples": 1000, "seed": 0}}}
    lines = format_metrics(metrics).splitlines()
    assert lines[0] == f"{'metric':<22}{'value':>10}  95 % interval"
    assert f"{'mIoU':<22}{'41.23':>10}  [30.00, 52.50] over 8 queries" in lines
    assert f"{'num_queries':<22}{'8':>10}" in lines
