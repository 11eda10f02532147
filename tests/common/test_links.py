"""App-level links: which tab a link opens, presentation mode, the shared query-string writer."""
from components.common.links import tab_in_link, view_link

SLUGS = ("window-search", "cloze", "impact")
OWN = {"window-search": ("movie", "qid", "t"), "cloze": ("stem", "q"), "impact": ("clip", "frame")}


def test_the_tab_a_link_opens():
    assert tab_in_link({"tab": "impact", "clip": "h1"}, SLUGS, OWN) == ("impact", "")
    assert tab_in_link({"tab": "Cloze"}, SLUGS, OWN) == ("cloze", "")
    assert tab_in_link({"clip": "h1", "frame": "3"}, SLUGS, OWN) == ("impact", "")   # no tab: its keys
    assert tab_in_link({}, SLUGS, OWN) == (None, "")
    tab, note = tab_in_link({"tab": "nope"}, SLUGS, OWN)
    assert tab is None and "`nope`" in note and "window-search" in note


def test_the_query_string():
    assert view_link(tab="impact", frame=12, clip="h 1", t=None) == "clip=h+1&frame=12&tab=impact"
    assert view_link(t=400.0, qid="p5") == "qid=p5&t=400"
