"""
Check the built site as a reader would: ``python docs/check_site.py [docs/_build/html]``.

Serves the built HTML on loopback, opens the index, the API reference, the
semantics, performance and errors pages in headless Chromium (Debian's
``/usr/bin/chromium``, driven by Playwright), and fails on any console error, uncaught
page error or failed request, any internal link that does not load, any image that did
not load, or any code block wider than the page's column (its long lines cut off at
the edge). Saves a screenshot of each page under ``docs/_build/screenshots/``.
"""

import argparse
import functools
import http.server
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

PAGES = ["index.html", "api.html", "semantics.html", "performance.html", "errors.html"]
CHROMIUM = "/usr/bin/chromium"
# no background traffic: the machine's network is closed, and it must not matter
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site; logs nothing."""

    def log_message(self, format: str, *args: object) -> None:
        """Say nothing per request."""


def _internal_links(page: object, base: str) -> set[str]:
    """The page's links into the site, without fragments."""
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")  # type: ignore[attr-defined]
    return {h.split("#")[0] for h in hrefs if h.startswith(base)}


def check(site: Path, screenshots: Path) -> list[str]:
    """Every problem found on the pages; empty when the site is sound."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}/"
    problems: list[str] = []
    links: set[str] = set()
    screenshots.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []  # of the page being checked
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))
            page.on(
                "response",
                lambda r: r.status >= 400 and errors.append(f"HTTP {r.status} for {r.url}"),
            )
            for name in PAGES:
                errors.clear()
                response = page.goto(base + name, wait_until="networkidle")
                if response is None or not response.ok:
                    problems.append(f"{name}: HTTP {response and response.status}")
                problems += [f"{name}: {e}" for e in errors]
                broken = page.eval_on_selector_all(
                    "img", "els => els.filter(e => !e.complete || !e.naturalWidth).map(e => e.src)"
                )
                problems += [f"{name}: image not loaded: {src}" for src in broken]
                wide = page.eval_on_selector_all(
                    "article pre",
                    "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e =>"
                    " `${e.scrollWidth} px in ${e.clientWidth}: ${e.textContent.slice(0, 40)}`)",
                )
                problems += [f"{name}: code block wider than the page: {w}" for w in wide]
                links |= _internal_links(page, base)
                page.screenshot(path=str(screenshots / f"{Path(name).stem}.png"), full_page=True)
            browser.close()
        for link in sorted(links):
            try:
                with urllib.request.urlopen(link, timeout=10) as r:  # loopback
                    r.read()
            except urllib.error.URLError as e:
                problems.append(f"broken link: {urllib.parse.urlparse(link).path}: {e}")
    finally:
        server.shutdown()
    print(
        f"checked {len(PAGES)} pages and {len(links)} internal links; screenshots in {screenshots}"
    )
    return problems


def main() -> int:
    """Check the site; print the problems; exit 1 on any."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", default=Path(__file__).parent / "_build" / "html")
    args = parser.parse_args()
    site = Path(args.site)
    problems = check(site, site.parent / "screenshots")
    for problem in problems:
        print(problem)
    print("OK: no console error, broken link or missing image" if not problems else "FAILED")
    return int(bool(problems))


if __name__ == "__main__":
    sys.exit(main())
