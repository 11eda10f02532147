"""Annotator sessions against a running study page, in their own process (so the server's CPU is
measured apart from the clients'): `python -m tests.helpers.study_load URL SESSIONS ANSWERS OUT`.
Each session starts, answers ANSWERS questions (pausing PAUSE_S between, as a person would), then
goes forward and back once; OUT gets every latency in seconds and any error."""
from __future__ import annotations

import json
import sys
import threading
import time

PAUSE_S = 0.5


def session(url: str, who: str, answers: int, out: dict, errors: list) -> None:
    from gradio_client import Client

    try:
        client = Client(url, verbose=False, download_files=False, httpx_kwargs={"timeout": 120})
        t = time.perf_counter()
        client.predict(who, api_name="/study_start")
        out["start"].append(time.perf_counter() - t)
        for _ in range(answers):
            time.sleep(PAUSE_S)
            t = time.perf_counter()
            client.predict(api_name="/study_choice_1")
            out["answer"].append(time.perf_counter() - t)
        for api in ("/study_next", "/study_prev"):
            t = time.perf_counter()
            client.predict(api_name=api)
            out["navigation"].append(time.perf_counter() - t)
        client.close()
    except Exception as exc:  # noqa: BLE001 - reported to the test
        errors.append(f"{who}: {exc!r}")


def main(url: str, sessions: int, answers: int, path: str) -> None:
    times: dict[str, list[float]] = {"start": [], "answer": [], "navigation": []}
    errors: list[str] = []
    threads = [threading.Thread(target=session, args=(url, f"load-{i}", answers, times, errors))
               for i in range(sessions)]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(900)
    with open(path, "w") as f:
        json.dump({"times": times, "errors": errors, "wall_s": time.monotonic() - began}, f)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
