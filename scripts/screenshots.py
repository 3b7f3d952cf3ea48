"""Screenshots of pages as a user sees them, for looking at (not a test).

    .venv/bin/python scripts/screenshots.py http://127.0.0.1:8501 /tmp/shots depth "depth?present=1&step=2" ...

Each argument after the output folder is a path (with its query); each is shot at 1400×900 and at a
projector's 1280×720, after the page's script has finished and the charts have drawn.  A path ending
in `#Label` presses the button with that label first (e.g. `depth?step=2#Reveal`).
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
SIZES = {"1400x900": (1400, 900), "1280x720": (1280, 720)}


def shoot(base: str, out: Path, paths: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                                args=ARGS)
        for path in paths:
            path, _, press = path.partition("#")
            for size, (width, height) in SIZES.items():
                page = context.new_page()
                page.set_viewport_size({"width": width, "height": height})
                page.goto(f"{base}/{path}", wait_until="domcontentloaded")
                page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=60_000)
                if press:
                    page.get_by_role("button", name=press).first.click()
                    page.wait_for_timeout(500)
                    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']",
                                           timeout=60_000)
                page.wait_for_timeout(1500)  # charts finish drawing after the script run
                name = re.sub(r"[/?&=#]", "_", path + ("#" + press if press else "")) or "home"
                page.screenshot(path=str(out / f"{name}@{size}.png"))
                page.close()
                print(out / f"{name}@{size}.png")
        context.close()


if __name__ == "__main__":
    shoot(sys.argv[1].rstrip("/"), Path(sys.argv[2]), sys.argv[3:])
