"""The shared query-string writer of links into the app (which tab a link opens: the page's head
script, tests/browser/test_page_load.py)."""
from components.common.links import view_link


def test_the_query_string():
    assert view_link(tab="impact", frame=12, clip="h 1", t=None) == "clip=h+1&frame=12&tab=impact"
    assert view_link(t=400.0, qid="p5") == "qid=p5&t=400"
