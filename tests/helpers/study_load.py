"""Annotator sessions against a running study page, in their own process (so the server's CPU is
measured apart from the clients'):

    python -m tests.helpers.study_load URL SESSIONS ANSWERS OUT [--client gradio_client|http] [--prefix P]
                                       [--pause SECONDS] [--tokens FILE]

Session i is annotator P<i>; it starts with its invitation token from --tokens (a JSON object
annotator -> token), or with its id where the study has open access.

Each session starts, answers ANSWERS questions (pausing about --pause seconds between, drawn from
0.5-1.5x of it per pause, so that sessions do not answer in lock-step as no group of people does;
the default 0.5 s is far faster than any person), then goes forward and back once; OUT gets every
latency in seconds, any error and the client's own CPU seconds.

Two clients speak the same protocol. `gradio_client` is the library a script would use: a thread
per session and an event stream per request, ~8 ms of its own CPU per request (with certificate
checks off, see below), and it polls for each reply every 50 ms. `http` is the browser's side of
the queue protocol written out (join, then read the event stream until the event completes) on one
asyncio loop, a few ms of CPU per request: its latencies are the server's, as an annotator on their
own machine sees them.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import threading
import time
import uuid

PAUSE_S = 0.5
KINDS = ("start", "answer", "navigation")
BEGAN = time.perf_counter()


def pauses(who: str, pause: float, answers: int) -> list[float]:
    """The session's think times: 0.5-1.5x `pause` each, the same for the same session name."""
    rng = random.Random(who)
    return [pause * rng.uniform(0.5, 1.5) for _ in range(answers)]


TOKENS: dict[str, str] = {}


def credential(who: str) -> str:
    return TOKENS.get(who, who)


def gradio_client_session(url: str, who: str, answers: int, pause: float, out: dict, errors: list) -> None:
    from gradio_client import Client

    try:
        # plain http on 127.0.0.1: with verification on, gradio_client loads a certificate store
        # for each event stream it opens (one per request: ~0.11 CPU-s, against ~0.008 without)
        client = Client(url, verbose=False, download_files=False, ssl_verify=False, httpx_kwargs={"timeout": 120})
        t = time.perf_counter()
        client.predict(credential(who), api_name="/study_start")
        out["start"].append(time.perf_counter() - t)
        for wait in pauses(who, pause, answers):
            time.sleep(wait)
            t = time.perf_counter()
            client.predict("", api_name="/study_choice_1")   # no page stamp: timed by the server
            took = time.perf_counter() - t
            out["answer"].append(took)
            out["answer_at"].append([t - BEGAN, took])
        for api in ("/study_next", "/study_prev"):
            t = time.perf_counter()
            client.predict(api_name=api)
            out["navigation"].append(time.perf_counter() - t)
        client.close()
    except Exception as exc:  # noqa: BLE001 - reported to the test
        errors.append(f"{who}: {exc!r}")


def run_gradio_client(url: str, sessions: int, answers: int, pause: float, prefix: str) -> tuple[dict, list]:
    times: dict[str, list[float]] = {k: [] for k in (*KINDS, "answer_at")}
    errors: list[str] = []
    threads = [threading.Thread(target=gradio_client_session, args=(url, f"{prefix}{i}", answers, pause, times, errors))
               for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(900)
    return times, errors


class HttpSession:
    """One browser tab's worth of the queue protocol: POST queue/join, then the event stream of the
    session until this event's `process_completed`."""

    def __init__(self, client, url: str, endpoints: dict[str, tuple[int, list[bool]]]) -> None:
        self.client, self.url, self.endpoints = client, url, endpoints
        self.session_hash = uuid.uuid4().hex[:11]

    async def call(self, api_name: str, *args: object) -> list:
        fn, stateful = self.endpoints[api_name]
        given = iter(args)   # a gr.State input is the server's own: the browser sends null for it
        data = [None if state else next(given, None) for state in stateful]
        join = await self.client.post(self.url + "gradio_api/queue/join", json={
            "data": data, "event_data": None, "fn_index": fn, "trigger_id": None,
            "session_hash": self.session_hash})
        join.raise_for_status()
        event_id = join.json()["event_id"]
        async with self.client.stream("GET", self.url + "gradio_api/queue/data",
                                      params={"session_hash": self.session_hash}) as stream:
            async for line in stream.aiter_lines():
                if not line.startswith("data:"):
                    continue
                msg = json.loads(line[5:])
                if msg.get("event_id") == event_id and msg.get("msg") == "process_completed":
                    output = msg.get("output") or {}
                    if not msg.get("success", False):
                        raise RuntimeError(f"{api_name} failed: {output.get('error')!r}")
                    return output.get("data", [])
        raise RuntimeError(f"{api_name}: the event stream closed before the event completed")


def endpoints_of(url: str) -> dict[str, tuple[int, list[bool]]]:
    """/api_name -> (fn_index, which inputs are gr.State), from the page's config."""
    import httpx

    config = httpx.get(url + "config", timeout=60).json()
    state = {c["id"] for c in config["components"] if c.get("type") == "state"}
    return {f"/{d['api_name']}": (d.get("id", i), [x in state for x in d["inputs"]])
            for i, d in enumerate(config["dependencies"]) if d.get("api_name")}


async def http_session(session: HttpSession, who: str, answers: int, pause: float, out: dict,
                       errors: list) -> None:
    try:
        t = time.perf_counter()
        await session.call("/study_start", credential(who))
        out["start"].append(time.perf_counter() - t)
        for wait in pauses(who, pause, answers):
            await asyncio.sleep(wait)
            t = time.perf_counter()
            await session.call("/study_choice_1", "")
            took = time.perf_counter() - t
            out["answer"].append(took)
            out["answer_at"].append([t - BEGAN, took])
        for api in ("/study_next", "/study_prev"):
            t = time.perf_counter()
            await session.call(api)
            out["navigation"].append(time.perf_counter() - t)
    except Exception as exc:  # noqa: BLE001 - reported to the test
        errors.append(f"{who}: {exc!r}")


async def run_http(url: str, sessions: int, answers: int, pause: float, prefix: str) -> tuple[dict, list]:
    import httpx

    times: dict[str, list[float]] = {k: [] for k in (*KINDS, "answer_at")}
    errors: list[str] = []
    endpoints = endpoints_of(url)
    limits = httpx.Limits(max_connections=4 * sessions, max_keepalive_connections=4 * sessions)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await asyncio.gather(*(http_session(HttpSession(client, url, endpoints), f"{prefix}{i}", answers,
                                            pause, times, errors) for i in range(sessions)))
    return times, errors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("sessions", type=int)
    parser.add_argument("answers", type=int)
    parser.add_argument("out")
    parser.add_argument("--client", choices=("gradio_client", "http"), default="gradio_client")
    parser.add_argument("--prefix", default="load-")
    parser.add_argument("--pause", type=float, default=PAUSE_S)
    parser.add_argument("--tokens", help="a JSON file: annotator -> invitation token")
    args = parser.parse_args()
    if args.tokens:
        with open(args.tokens) as f:
            TOKENS.update(json.load(f))
    began, cpu0 = time.monotonic(), time.process_time()
    if args.client == "http":
        times, errors = asyncio.run(run_http(args.url, args.sessions, args.answers, args.pause, args.prefix))
    else:
        times, errors = run_gradio_client(args.url, args.sessions, args.answers, args.pause, args.prefix)
    with open(args.out, "w") as f:
        json.dump({"times": times, "errors": errors, "wall_s": time.monotonic() - began,
                   "client_cpu_s": time.process_time() - cpu0, "pause_s": args.pause}, f)


if __name__ == "__main__":
    main()
