"""Open the saved tutorial in real notebook applications and check its attnkit views there (issue 42).

    python scripts/notebook_apps.py --jupyter /tmp/nbc/bin/jupyter [--code-server PATH] [--out DIR]

For each application (JupyterLab, Notebook 7 and classic Notebook from the ``--jupyter`` environment;
VS Code in the browser with ``--code-server``), a copy of ``docs/tutorial.ipynb`` with its saved outputs
(no kernel runs) is opened in headless Chromium (Debian's ``chromium``, driven by Playwright), first as
any notebook from elsewhere opens (untrusted), then trusted (``jupyter trust``; VS Code has no such
state). Printed per application and state: how many attnkit views drew interactively (their frame
reached ``data-ready``), how many static pictures show instead, whether hovering a target token of the
first translation view shades its source tokens with a distribution (the shades sum to 1), and the
requests that left 127.0.0.1. Screenshots of the first view go to ``--out``. Needs no network; the
applications are not attnkit's dependencies, so this is a script, run by hand, not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = {  # name -> (jupyter subcommand, the notebook's path on the server)
    "jupyterlab": ("lab", "lab/tree/tutorial.ipynb"),
    "notebook7": ("notebook", "notebooks/tutorial.ipynb"),
    "nbclassic": ("nbclassic", "nbclassic/notebooks/tutorial.ipynb"),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int, seconds: float = 60) -> None:
    end = time.time() + seconds
    while time.time() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise SystemExit(f"nothing listens on port {port} after {seconds} s")


def inspect_page(browser, url: str, shot: Path, settle_ms: int, click: str | None = None) -> dict:
    """Open ``url`` (and click the text ``click`` there), let the notebook draw, and read what a user sees
    of the attnkit views. Requests are counted where an attnkit view makes them (its srcdoc frame)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    leaving: list[str] = []

    def request(r) -> None:  # noqa: ANN001
        try:
            if r.frame.url == "about:srcdoc":
                leaving.append(r.url)
        except Exception:  # noqa: BLE001 - a service worker's request (VS Code's): no frame, not a view's
            return

    context.on("request", request)
    page = context.new_page()
    page.goto(url)
    if click is not None:
        page.wait_for_timeout(8000)
        page.get_by_text(click).first.click()
    page.wait_for_timeout(settle_ms)
    ready, first = 0, None
    for frame in page.frames:
        try:
            if frame.evaluate("() => document.body && document.body.dataset.ready === 'true'"):
                ready += 1
                if first is None and frame.query_selector(".translation-card .tok.target"):
                    first = frame
        except Exception:  # noqa: BLE001 - a frame of the application that went away
            continue
    pictures = 0
    for frame in page.frames:
        try:
            pictures += frame.evaluate(
                "() => [...document.querySelectorAll(\"img[alt^='attnkit']\")]"
                ".filter(i => i.offsetWidth > 0 && i.naturalWidth > 0).length"
            )
        except Exception:  # noqa: BLE001
            continue
    hover, heights = None, []
    if first is not None:
        card = first.query_selector(".translation-card")
        element = first.frame_element()
        heights = []
        for _ in range(5):  # a frame that keeps resizing itself (a resize loop) would show here
            heights.append(element.evaluate("e => e.getBoundingClientRect().height"))
            page.wait_for_timeout(200)
        element.evaluate("e => e.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(300)
        page.mouse.move(650, 500)
        for _ in range(60):  # VS Code scrolls its notebook itself: wheel the view into sight
            box = element.bounding_box()
            if box is not None and 0 <= box["y"] <= 300:
                break
            page.mouse.wheel(0, 400)
            page.wait_for_timeout(150)
        token = card.query_selector_all(".tok.target")[1]
        try:
            token.hover(force=True, timeout=5000)
            how = "pointer"
        except Exception:  # noqa: BLE001 - VS Code scrolls its notebook itself: the view's own event
            token.dispatch_event("mouseenter")
            how = "mouseenter event"
        page.wait_for_timeout(300)
        shades = card.eval_on_selector_all(
            ".tok.source", "ns => ns.map(n => parseFloat(n.dataset.highlight || '0'))"
        )
        hover = f"{round(sum(shades), 4)} ({how})"
        try:
            card.screenshot(path=str(shot), timeout=5000)
        except Exception:  # noqa: BLE001 - a frame the application keeps moving: the whole window
            page.screenshot(path=str(shot))
    else:  # what shows instead: the first output that names an attnkit view
        notes = page.locator("text=run the cell or trust the notebook")
        if notes.count():
            notes.first.scroll_into_view_if_needed()
            page.wait_for_timeout(300)
        page.screenshot(path=str(shot))
        hover = f"{notes.count()} notes 'run the cell or trust the notebook' shown"
    context.close()
    return {"interactive views": ready, "static pictures": pictures, "hover shades sum": hover,
            "first frame heights": sorted(set(heights)) if first is not None else None,
            "requests from the views": sorted(set(leaving))}  # fmt: skip


def jupyter_app(browser, jupyter: str, app: str, out: Path, settle_ms: int) -> None:
    command, path = APPS[app]
    with tempfile.TemporaryDirectory() as home:
        folder = Path(home)
        shutil.copy(ROOT / "docs" / "tutorial.ipynb", folder / "tutorial.ipynb")
        env = {
            **os.environ,
            "JUPYTER_DATA_DIR": str(folder / "data"),
            "JUPYTER_CONFIG_DIR": str(folder / "cfg"),
        }
        env["JUPYTER_RUNTIME_DIR"] = str(folder / "run")
        port = free_port()
        argv = [jupyter, command, "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}"]
        argv += ["--ServerApp.token="]
        argv += [
            "--ServerApp.password=",
            f"--ServerApp.root_dir={folder}",
            "--ServerApp.disable_check_xsrf=True",
        ]
        server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(port)
            for state in ("untrusted", "trusted"):
                if state == "trusted":
                    subprocess.run([jupyter, "trust", str(folder / "tutorial.ipynb")], env=env, check=True,
                                   capture_output=True)  # fmt: skip
                url = f"http://127.0.0.1:{port}/{path}"
                found = inspect_page(browser, url, out / f"{app}-{state}.png", settle_ms)
                print(f"{app:<11} {state:<9} {found}", flush=True)
        finally:
            server.terminate()
            server.wait(20)


def code_server_app(browser, code_server: str, out: Path, settle_ms: int) -> None:
    """VS Code in the browser (code-server), its built-in notebook renderers, the saved outputs."""
    with tempfile.TemporaryDirectory() as home:
        folder = Path(home)
        (folder / "work").mkdir()
        shutil.copy(ROOT / "docs" / "tutorial.ipynb", folder / "work" / "tutorial.ipynb")
        port = free_port()
        argv = [code_server, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry"]
        argv += ["--user-data-dir", str(folder / "user"), "--extensions-dir", str(folder / "ext")]
        argv += ["--disable-update-check", "--disable-workspace-trust", str(folder / "work")]
        server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(port)
            url = f"http://127.0.0.1:{port}/?folder={folder / 'work'}"
            found = inspect_page(browser, url, out / "vscode.png", settle_ms, click="tutorial.ipynb")
            print(f"{'vscode':<11} {'saved':<9} {found}", flush=True)
        finally:
            server.terminate()
            server.wait(20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--jupyter", help="the jupyter command of an environment with lab, notebook, nbclassic"
    )
    parser.add_argument("--code-server", help="the code-server command (VS Code in the browser)")
    parser.add_argument("--apps", default=",".join(APPS), help="which Jupyter applications")
    parser.add_argument("--out", default="/tmp/notebook-apps", help="where the screenshots go")
    parser.add_argument("--settle", type=int, default=15000, help="milliseconds to let a notebook draw")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        executable = shutil.which("chromium") or shutil.which("chromium-browser")
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        if args.jupyter:
            for app in args.apps.split(","):
                jupyter_app(browser, args.jupyter, app, out, args.settle)
        if args.code_server:
            code_server_app(browser, args.code_server, out, args.settle * 2)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
