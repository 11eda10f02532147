"""Redraw the screenshots in docs/: each tab at 1440x900, 1920x1080 and 390x844, and with
?present=1 at 1920x1080, on the example data with the baseline backend (not a test).

    python scripts/screenshots.py [--data-dir data] [--out docs]

Window search is shown after Run (a checklist to read), Cloze on its first question, Impact after
Run temporal and Run spatial. docs/screenshot.png (the README's) is window search at 1440x900.
docs/runs-1440x900.png (README "Reading runs item by item") is a linked Cloze question in Model mode
with its "What the runs answered" panel in view.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_browser import CHROMIUM_ARGS, start_app  # noqa: E402  (puts the repository on sys.path)

SIZES = ((1440, 900), (1920, 1080), (390, 844))
WAIT_MS = 180_000


def _ready(page, tab: str) -> None:
    if tab == "window-search":
        page.wait_for_function("() => (document.querySelector('#ws-query textarea')?.value || '').length > 0",
                               timeout=WAIT_MS)
        page.locator("#ws-run").click()
        page.wait_for_function("() => /IoU/.test(document.querySelector('#ws-result')?.innerText || '')",
                               timeout=WAIT_MS)
    elif tab == "cloze":
        page.wait_for_function("() => !!document.querySelector('#cloze-beginning-img img')", timeout=WAIT_MS)
    else:
        page.wait_for_function("() => document.documentElement.dataset.impactReady === '1'", timeout=WAIT_MS)
        page.locator("#impact-run-temporal").click()
        page.wait_for_function("() => /Temporal:/.test(document.querySelector('#impact-status')?.innerText || '')",
                               timeout=WAIT_MS)
        page.locator("#impact-run-spatial").click()
        page.wait_for_function("() => /Spatial:/.test(document.querySelector('#impact-status')?.innerText || '')",
                               timeout=WAIT_MS)
        page.wait_for_function("() => { const c = document.querySelector('#impact-body3d canvas');"
                               " return !!c && !!c.dataset.draws && c.dataset.key === c.dataset.want; }",
                               timeout=WAIT_MS)   # the body of the last painting drawn
    page.wait_for_timeout(1500)


def _runs_shot(browser, url: str, out: Path) -> None:
    """docs/runs-1440x900.png: what every example run answered on bar_fill's P question."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{url}?tab=cloze&stem=bar_fill&q=P&mode=model", wait_until="load", timeout=WAIT_MS)
    page.wait_for_function("() => document.querySelector('#cloze-runs-panel .runs-panel')?.dataset.state === 'ready'",
                           timeout=WAIT_MS)
    page.locator("#cloze-runs-panel details").first.locator("summary").click()   # one reason, opened
    page.locator("#cloze-runs").scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(out / "runs-1440x900.png"))
    print("runs-1440x900.png")
    context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("data"))
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    demo = start_app(args.data_dir)
    url = demo.local_url
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                         headless=True, args=CHROMIUM_ARGS)
            shots = [(tab, size, "") for tab in ("window-search", "cloze", "impact") for size in SIZES]
            shots += [(tab, (1920, 1080), "&present=1") for tab in ("window-search", "cloze", "impact")]
            for tab, (w, h), more in shots:
                context = browser.new_context(viewport={"width": w, "height": h})
                page = context.new_page()
                page.goto(f"{url}?tab={tab}{more}", wait_until="load", timeout=WAIT_MS)
                _ready(page, tab)
                name = f"{tab}-{w}x{h}{'-present' if more else ''}.png"
                page.screenshot(path=str(args.out / name))
                print(name)
                context.close()
            _runs_shot(browser, url, args.out)
            browser.close()
        shutil.copyfile(args.out / "window-search-1440x900.png", args.out / "screenshot.png")
    finally:
        demo.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
