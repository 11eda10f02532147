"""Routing: the next question for an annotator is one still lacking judgments (never one they
answered or were shown), so every question reaches R judgments and none goes beyond; a question
shown to someone who walks away is served again once their lease ends. Simulated with 40
annotators, R = 3, 30 % of them dropping out midway, through the real handlers and files."""
from __future__ import annotations

import random

import pytest

from components.cloze.study import handlers as h
from components.cloze.study import routing
from components.cloze.study import store as store_mod
from components.cloze.study.cache import study_set
from components.cloze.study.routing import Router
from components.cloze.study.store import all_records
from components.base.errors import UserError
from tests.cloze.test_study_flow import make_study, start

R = 3


def test_the_router_completes_questions_in_order_and_leases_them():
    now = [0.0]
    router = Router(total=4, judgments=2, lease_s=10, clock=lambda: now[0])
    assert router.next_for("a", set()) == 0              # nothing judged: the first in the schedule
    assert router.next_for("a", set()) == 0              # still theirs (a reload)
    assert router.next_for("b", set()) == 0              # 0 has one being judged: closest to R
    assert router.next_for("c", set()) == 1              # 0 is full (a, b looking at it)
    router.observe("a", [0])
    assert router.next_for("a", {0}) == 1                # 1 has c on it: closest to R again
    now[0] = 11                                          # b and c walked away: their leases ended
    assert router.next_for("b", set()) == 1              # 0 is closest to R, but b was shown it once
    assert router.peek("d", set()) == 0 and router.next_for("d", set()) == 0
    router.observe("d", [0])
    assert router.coverage() == {0: 2, 1: 0, 2: 0, 3: 0} and router.needing() == 3
    assert router.next_for("e", set()) == 1              # 0 has R: served to nobody now


@pytest.fixture
def routed(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    store_mod.forget_stores()
    routing.forget()
    return h.Study(str(make_study(cloze_examples, tmp_path, stems=6, display="frames",
                                  judgments_per_question=R)))


def test_40_annotators_r_3_with_30_percent_dropping_out_midway(routed):
    """Annotators arrive over two hours and think 20-90 s a question; 12 of the 40 answer one of
    their three questions, are shown the next and leave it open. Simulated time (the router's
    clock), real handlers and files."""
    import heapq

    cfg = routed.config
    sset = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
    total = len(sset.questions)                          # 18 questions, 54 judgments needed
    now = [0.0]
    routed.router(cfg, sset).clock = lambda: now[0]
    rng = random.Random(7)
    people = [f"sim{i:02d}" for i in range(40)]
    dropping = set(rng.sample(people, 12))
    quota = {p: 1 if p in dropping else 3 for p in people}
    events = [(rng.uniform(0, 7200), p) for p in people]
    heapq.heapify(events)
    views: dict[str, h.QuestionView] = {}
    shown: dict[str, list[int]] = {p: [] for p in people}
    answered = {p: 0 for p in people}
    while events:
        now[0], who = heapq.heappop(events)
        if who not in views:
            view = start(routed, who)
        else:
            view = h.choose(routed, views[who].session, "A")
            answered[who] += 1
        views[who] = view
        if view.session.stage == "done":
            continue
        shown[who].append(view.session.index)
        if answered[who] < quota[who]:                   # else: leaves, this question left open
            heapq.heappush(events, (now[0] + rng.uniform(20, 90), who))
    judgments = {i: 0 for i in range(total)}
    for rec in all_records(cfg):
        judgments[rec["task_index"]] += 1
    assert judgments == {i: R for i in range(total)}      # every question reached R, none beyond
    for who, seen in shown.items():
        assert len(seen) == len(set(seen)), (who, seen)   # nobody was shown a question twice
    assert sum(answered.values()) == R * total            # no judgment spent beyond R
    left_open = [p for p in dropping if len(shown[p]) > answered[p]]
    assert len(left_open) >= 6                            # questions held by people who left were re-served
    assert any(views[p].session.stage == "done" for p in people)   # late arrivals found it complete


def test_the_report_shows_coverage_and_nobody_can_pick_an_unrouted_question(routed, monkeypatch):
    view = start(routed, "r1")
    first = view.session.index
    with pytest.raises(UserError, match="chosen for you"):
        h.go(routed, view.session, first + 1)
    view = h.choose(routed, view.session, "B")
    assert view.session.index != first
    back = h.step(routed, view.session, -1)               # back to their own answered question
    assert back.session.index == first and f'data-q="{first}"' in back.navigator
    assert back.navigator.count('<button class="study-q') == 2    # only their own questions are listed
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "tok")
    shown = h.researcher(routed, "tok")
    assert "routing: 3 judgments per question" in shown.summary and "18 questions still need" in shown.summary
    rows = shown.coverage["value"]
    assert rows[-1][0] == first + 1 and rows[-1][3] == 1 and all(r[3] == 0 for r in rows[:-1])
