"""Fair timing from the page's stamp (components/cloze/study/timing.py): the thinking time from
when the media were all shown, loading apart, 3 decimals; a stamp that is missing, names another
question or claims more time than the server saw is not used, and the record says so."""
import json

from components.cloze.study.timing import from_page


def stamp(key="3:10.000", load_ms=2500.0, think_ms=4321.98765):
    return json.dumps({"key": key, "load_ms": load_ms, "think_ms": think_ms})


def test_the_page_time_excludes_loading():
    t = from_page(stamp(), "3:10.000", server_elapsed=7.2)
    assert (t.elapsed_sec, t.load_sec, t.source, t.server_elapsed_sec) == (4.322, 2.5, "page", 7.2)


def test_a_stamp_that_cannot_be_used_falls_back_to_the_server_time_labelled():
    server = 7.23456
    for bad in (None, "", "not json", "[1, 2]", stamp(key="4:10.000"), stamp(think_ms=None),
                stamp(load_ms=-1), stamp(think_ms=float("nan")), stamp(load_ms=3000, think_ms=5000),
                json.dumps({"key": "3:10.000", "load_ms": True, "think_ms": 1})):
        t = from_page(bad, "3:10.000", server)
        assert (t.elapsed_sec, t.load_sec, t.source) == (7.235, None, "server"), bad
