"""Simulate a Hugging Face Space build and use every tab of the app it serves.

A Space installs `packages.txt` (Debian packages) and `requirements.txt`, nothing else, then runs
`python app.py` with SPACE_ID set. This check does the same on a dev box:

  1. copies the checkout (tracked and untracked, not ignored files) to a temp folder, as the Space's
     clean clone;
  2. makes a fresh venv there and runs only `pip install -r requirements.txt` (then `pip check`);
  3. checks every package of packages.txt is installed (`dpkg -s`; it cannot apt-get here and
     says which are missing);
  4. starts `python app.py` with SPACE_ID set and no data (a Space's first start): times the first
     page (HTTP 200, then the page in Chromium) while the example data is built in the background,
     times each part's data until it is on disk, restarts the app (a restart builds nothing again)
     and drives every tab once in headless Chromium: a window search, a cloze question, an impact
     clip with its turntable;
  5. does step 4 again with the GL libraries hidden (empty stand-ins for libEGL / libOSMesa / libGL
     first on LD_LIBRARY_PATH, so the app's GL probe fails as on a Space without packages.txt):
     the turntable must show the app's fallback message, and nothing may fail.

    .venv/bin/python scripts/space_check.py [--keep] [--venv DIR] [--out DIR]

It downloads packages (minutes): `make space-check`, never part of `make test`. The browser side
needs Playwright and Chromium from requirements-dev.txt / scripts/install_system_deps.sh.
Exit status 0 only when every step passed.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run"]
#: libraries PyOpenGL and pyrender load for EGL / OSMesa / GLX; empty files of these names first on
#: LD_LIBRARY_PATH make every dlopen of them fail, as on a machine without the packages
GL_LIBRARIES = ("libEGL.so", "libEGL.so.1", "libOSMesa.so", "libOSMesa.so.6", "libOSMesa.so.8",
                "libGL.so", "libGL.so.1", "libGLX.so.0", "libOpenGL.so.0", "libGLU.so.1",
                "libgbm.so.1")
GL_FALLBACK = "Offscreen 3D rendering is unavailable"
#: variables of this shell that a Space would not have
DROPPED_ENV = ("PYOPENGL_PLATFORM", "VIRTUAL_ENV", "PYTHONPATH", "APP_DATA_DIR", "APP_BACKEND",
               "APP_BACKENDS", "APP_TRACE_DIR", "IMPACT_RENDER_DIR", "LD_LIBRARY_PATH",
               "OPENAI_BASE_URL", "OPENAI_API_KEY")


class CheckFailed(Exception):
    pass


def step(title: str) -> float:
    print(f"\n== {title}", flush=True)
    return time.perf_counter()


def done(start: float, what: str) -> None:
    print(f"   {what} ({time.perf_counter() - start:.1f} s)", flush=True)


# ---------------------------------------------------------------- 1-3: the build

def copy_checkout(dest: Path) -> None:
    """The files a Space's clone would hold: tracked and untracked-but-not-ignored ones."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        rel = Path(raw.decode())
        src = ROOT / rel
        if not src.is_file():  # deleted in the work tree but still tracked
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def front_matter(readme: Path) -> dict[str, str]:
    """The Space config at the top of README.md (key: value lines between the --- fences)."""
    text = readme.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    pairs = (line.split(":", 1) for line in (match.group(1).splitlines() if match else []) if ":" in line)
    return {k.strip(): v.strip().strip('"') for k, v in pairs}


def build_venv(app_dir: Path, venv: Path, python: str, log: Path) -> None:
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    with open(log, "w", encoding="utf-8") as out:
        # a Space upgrades pip before installing requirements.txt
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"], stdout=out,
                       stderr=subprocess.STDOUT, check=False)
        result = subprocess.run([str(py), "-m", "pip", "install", "--no-cache-dir", "-r",
                                 "requirements.txt"], cwd=app_dir, stdout=out,
                                stderr=subprocess.STDOUT)
    if result.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-25:]
        raise CheckFailed("pip install -r requirements.txt failed:\n" + "\n".join(tail))


def pip_check(venv: Path) -> list[str]:
    """Dependency conflicts pip reports (platform-tag notes such as decord's are not conflicts)."""
    out = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "check"], capture_output=True,
                         text=True).stdout
    return [line for line in out.splitlines() if "has requirement" in line or "requires" in line]


def installed_version(venv: Path, package: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True)
    return out.stdout.strip() or "not installed"


def missing_debian_packages(packages_txt: Path) -> list[str]:
    names = [line.strip() for line in packages_txt.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    missing = []
    for name in names:
        if subprocess.run(["dpkg", "-s", name], capture_output=True).returncode != 0:
            missing.append(name)
    return missing


# ---------------------------------------------------------------- 4-5: the app in a browser

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def space_env(work: Path, name: str, *, hide_gl: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env.update(SPACE_ID="space-check/video-benchmark-explorer", GRADIO_SERVER_NAME="127.0.0.1",
               GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1",
               IMPACT_RENDER_DIR=str(work / f"render-{name}"),  # no turntable from an earlier run
               APP_TRACE_DIR=str(work / f"traces-{name}"),
               APP_HUMAN_STUDY_DIR=str(work / f"study-{name}"))
    if hide_gl:
        stubs = work / "no-gl"
        stubs.mkdir(exist_ok=True)
        for lib in GL_LIBRARIES:
            (stubs / lib).write_bytes(b"")
        env["LD_LIBRARY_PATH"] = str(stubs)
    return env


@contextmanager
def running_app(app_dir: Path, venv: Path, env: dict[str, str], log: Path,
                timeout: float) -> Iterator[tuple[str, float]]:
    port = free_port()
    env = dict(env, APP_PORT=str(port), GRADIO_SERVER_PORT=str(port))
    start = time.perf_counter()
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen([str(venv / "bin" / "python"), "app.py"], cwd=app_dir, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        while True:
            if proc.poll() is not None:
                raise CheckFailed(f"python app.py exited with {proc.returncode} before serving:\n"
                                  + "\n".join(log.read_text(errors="replace").splitlines()[-20:]))
            if time.perf_counter() - start > timeout:
                raise CheckFailed(f"python app.py served nothing within {timeout:.0f} s (log: {log})")
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        yield url, time.perf_counter() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _wait_text(page, selector: str, pattern: str, timeout_s: float) -> str:
    page.wait_for_function(
        "([sel, pat]) => new RegExp(pat).test(document.querySelector(sel)?.innerText || '')",
        arg=[selector, pattern], timeout=timeout_s * 1000)
    return page.locator(selector).first.inner_text()


def _open_tab(page, label: str) -> None:
    page.get_by_role("tab", name=label).click()
    page.wait_for_timeout(500)


def _pick_first_if_empty(page, selector: str) -> None:
    box = page.locator(f"{selector} input").first
    if box.input_value().strip():
        return
    box.click()
    page.get_by_role("option").first.click()
    page.wait_for_timeout(500)


def drive_tabs(url: str, shots: Path, name: str, *, expect_gl: bool) -> dict[str, float]:
    """Use each tab once as a visitor; returns seconds per action. Raises CheckFailed."""
    from playwright.sync_api import Error as PlaywrightError, sync_playwright

    timings: dict[str, float] = {}
    shots.mkdir(parents=True, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="space-check-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1440, "height": 900})
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.set_default_timeout(120_000)
            try:
                t = time.perf_counter()
                page.goto(url, wait_until="load", timeout=180_000)
                page.wait_for_selector("#app-tabs", timeout=180_000)
                timings["page load"] = time.perf_counter() - t
                badge = page.locator("#backend-badge").inner_text()
                if not badge.startswith("Model: baseline"):
                    raise CheckFailed(f"the Model badge reads {badge!r}, not 'Model: baseline'")

                _open_tab(page, "Window search")
                _pick_first_if_empty(page, "#ws-query-pick")
                t = time.perf_counter()
                page.locator("#ws-run").click()
                _wait_text(page, "#ws-result", "IoU", 600)
                timings["window search: Run"] = time.perf_counter() - t
                page.screenshot(path=str(shots / f"{name}-window-search.png"), full_page=True)

                _open_tab(page, "Cloze")
                page.locator("#cloze-mode").get_by_text("Model", exact=True).click()
                t = time.perf_counter()
                page.locator("#cloze-run-one").click()
                page.wait_for_function(
                    "() => /^[A-D]$/.test((document.querySelector('#cloze-parsed textarea, "
                    "#cloze-parsed input')?.value || '').trim())", timeout=300_000)
                timings["cloze: Run this question"] = time.perf_counter() - t
                page.screenshot(path=str(shots / f"{name}-cloze.png"), full_page=True)

                _open_tab(page, "Impact")
                _wait_text(page, "#impact-regions", r"\S", 300)  # the body and its regions on load
                t = time.perf_counter()
                page.locator("#impact-run-temporal").click()
                _wait_text(page, "#impact-status", "[Tt]emporal", 300)
                timings["impact: Run temporal"] = time.perf_counter() - t
                t = time.perf_counter()
                page.locator("#impact-render-turntable").click()
                page.wait_for_function(
                    "(fallback) => document.querySelector('#impact-turntable video[src]') || "
                    "(document.querySelector('#impact-turntable-msg')?.innerText || '')"
                    ".includes(fallback)", arg=GL_FALLBACK, timeout=600_000)
                timings["impact: Render turntable"] = time.perf_counter() - t
                page.screenshot(path=str(shots / f"{name}-impact.png"), full_page=True)
                has_video = page.locator("#impact-turntable video[src]").count() > 0
                message = page.locator("#impact-turntable-msg").inner_text()
                if expect_gl and not has_video:
                    raise CheckFailed(f"no turntable video with the GL libraries present: {message!r}")
                if not expect_gl and (has_video or GL_FALLBACK not in message):
                    raise CheckFailed("with the GL libraries hidden the turntable did not show "
                                      f"the fallback message (message: {message!r})")
                body = page.locator("body").inner_text()
                if "Traceback" in body or 'File "' in body:
                    raise CheckFailed("the page shows a stack trace")
                if errors:
                    raise CheckFailed(f"JavaScript errors on the page: {errors[:3]}")
            except PlaywrightError as exc:
                page.screenshot(path=str(shots / f"{name}-failure.png"), full_page=True)
                first = str(exc).splitlines()[0]
                raise CheckFailed(f"browser step failed ({first}); screenshot "
                                  f"{shots / (name + '-failure.png')}") from None
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return timings


def app_log_problems(log: Path) -> list[str]:
    text = log.read_text(encoding="utf-8", errors="replace")
    return [line for line in text.splitlines() if line.startswith("Traceback")]


PARTS = ("grounding", "cloze", "impact")


def first_page(url: str) -> float:
    """Seconds until the page's tabs are on screen in headless Chromium."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="space-check-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                            args=CHROMIUM_ARGS)
            try:
                page = context.new_page()
                t = time.perf_counter()
                page.goto(url, wait_until="load", timeout=180_000)
                page.wait_for_selector("#app-tabs", timeout=180_000)
                return time.perf_counter() - t
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def cold_start(app_dir: Path, venv: Path, work: Path, *, start_timeout: float) -> dict[str, float]:
    """A Space's first start: no data on disk. The server must answer while the example data is
    built part by part in the background; returns seconds from `python app.py` to the first HTTP
    200, to the page in a browser, and to each part's data on disk."""
    t = step("first start with SPACE_ID set and no data: the first page, then the parts as they are built")
    data = app_dir / "data"
    shutil.rmtree(data, ignore_errors=True)
    log = work / "app-cold.log"
    times: dict[str, float] = {}
    began = time.perf_counter()
    with running_app(app_dir, venv, space_env(work, "cold", hide_gl=False), log, start_timeout) as (url, started):
        times["first HTTP 200"] = started
        times["first page in Chromium"] = started + first_page(url)
        print(f"   serving {url} after {started:.1f} s; the page was on screen after "
              f"{times['first page in Chromium']:.1f} s", flush=True)
        while len([p for p in PARTS if f"{p} ready" in times]) < len(PARTS):
            for part in PARTS:
                if f"{part} ready" not in times and (data / part / ".complete").exists():
                    times[f"{part} ready"] = time.perf_counter() - began
                    print(f"   {part} data on disk after {times[f'{part} ready']:.1f} s", flush=True)
            if time.perf_counter() - began > start_timeout:
                raise CheckFailed(f"the example data was not built within {start_timeout:.0f} s (log: {log})")
            time.sleep(0.5)
    problems = app_log_problems(log)
    if problems:
        raise CheckFailed(f"the app logged {len(problems)} traceback(s) on its first start; see {log}")
    done(t, "served at once, the data built behind it")
    return times


def serve_and_drive(app_dir: Path, venv: Path, work: Path, shots: Path, name: str, *,
                    hide_gl: bool, start_timeout: float) -> None:
    t = step(f"python app.py with SPACE_ID set ({name}, the data on disk), every tab in headless Chromium")
    log = work / f"app-{name}.log"
    env = space_env(work, name, hide_gl=hide_gl)
    with running_app(app_dir, venv, env, log, start_timeout) as (url, started):
        print(f"   serving {url} after {started:.1f} s", flush=True)
        timings = drive_tabs(url, shots, name, expect_gl=not hide_gl)
    for action, seconds in timings.items():
        print(f"   {action}: {seconds:.1f} s")
    problems = app_log_problems(log)
    if problems:
        raise CheckFailed(f"the app logged {len(problems)} traceback(s); see {log}")
    done(t, "every tab used" + (", the turntable showed the GL fallback message" if hide_gl
                                else ", the turntable rendered"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=shutil.which("python3.11") or sys.executable,
                        help="interpreter of the Space (README front matter: python_version)")
    parser.add_argument("--venv", type=Path, default=None,
                        help="reuse this venv, made by an earlier run (skips the install)")
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: a new temp one)")
    parser.add_argument("--out", type=Path, default=ROOT / "test-artifacts" / "space-check",
                        help="screenshots go here")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--start-timeout", type=float, default=1200.0,
                        help="seconds for the first start (it generates the example data)")
    args = parser.parse_args(argv)

    began = time.perf_counter()
    work = args.work or Path(tempfile.mkdtemp(prefix="space-check-"))
    work.mkdir(parents=True, exist_ok=True)
    app_dir, venv = work / "app", args.venv or work / "venv"
    failures: list[str] = []
    try:
        t = step("copy the checkout (what the Space's clone holds)")
        shutil.rmtree(app_dir, ignore_errors=True)
        copy_checkout(app_dir)
        config = front_matter(app_dir / "README.md")
        done(t, f"{sum(1 for p in app_dir.rglob('*') if p.is_file())} files; Space config: sdk "
                f"{config.get('sdk')} {config.get('sdk_version')}, python {config.get('python_version')}")

        if args.venv is None:
            t = step(f"fresh venv, pip install -r requirements.txt only ({args.python})")
            build_venv(app_dir, venv, args.python, work / "pip.log")
            done(t, f"installed (log {work / 'pip.log'})")
        conflicts = pip_check(venv)
        if conflicts:
            failures.append("pip check: " + "; ".join(conflicts))
            print("   pip check reports conflicts:\n   " + "\n   ".join(conflicts))
        versions = {p: installed_version(venv, p) for p in ("gradio", "torch", "pyrender-maintained",
                                                             "PyOpenGL")}
        print("   " + ", ".join(f"{k} {v}" for k, v in versions.items()))
        sdk = config.get("sdk_version")
        if sdk and versions["gradio"] != sdk:
            print(f"   note: the Space installs gradio {sdk} (README sdk_version); this venv has "
                  f"{versions['gradio']}")

        t = step("Debian packages of packages.txt")
        missing = missing_debian_packages(app_dir / "packages.txt")
        if missing:
            failures.append(f"missing Debian packages: {' '.join(missing)}")
            print(f"   missing here: {' '.join(missing)}. A Space installs them from packages.txt; "
                  f"on this machine run: apt-get install -y {' '.join(missing)}")
        done(t, "all present" if not missing else f"{len(missing)} missing")

        try:
            cold = cold_start(app_dir, venv, work, start_timeout=args.start_timeout)
            print("   cold start: " + ", ".join(f"{k} {v:.1f} s" for k, v in cold.items()))
        except CheckFailed as exc:
            failures.append(f"first start: {exc}")
            print(f"   FAILED: {exc}", flush=True)
        for name, hide_gl in (("with-gl", False), ("gl-hidden", True)):
            try:
                serve_and_drive(app_dir, venv, work, args.out, name, hide_gl=hide_gl,
                                start_timeout=args.start_timeout)
            except CheckFailed as exc:
                failures.append(f"{name}: {exc}")
                print(f"   FAILED: {exc}", flush=True)
    except CheckFailed as exc:
        failures.append(str(exc))
        print(f"   FAILED: {exc}", flush=True)
    finally:
        if args.keep or args.work is not None or failures:  # logs of a failure stay for reading
            print(f"\nwork folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    total = time.perf_counter() - began
    if failures:
        print(f"\nspace check FAILED after {total:.0f} s:\n- " + "\n- ".join(failures))
        return 1
    print(f"\nspace check passed in {total:.0f} s (screenshots in {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
