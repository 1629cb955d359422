"""The rendered book as a reader sees it, in headless Chromium.

Builds the book (or reuses ``book/_build/html`` when it is newer than every executed notebook and
book source), serves it over HTTP on localhost and opens every page: no SEVERE console entry,
every ``<img>`` loaded (``naturalWidth > 0``), every equation typeset by MathJax (an
``mjx-container`` inside each ``.math`` element), and the sidebar navigation reaches every
chapter of ``book/_toc.yml``.

Needs Debian's ``chromium`` and ``chromium-driver`` (``make browser-deps`` installs them as root);
skipped, saying why, when they are not installed.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest
import yaml

from sdsl.paths import BOOK, EXECUTED

CHROMIUM = Path(os.environ.get("SDSL_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("SDSL_CHROMEDRIVER", "/usr/bin/chromedriver"))
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,1024",
)
HTML = BOOK / "_build" / "html"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("book")]


def _toc_files() -> list[str]:
    """``root`` and every ``file`` of the table of contents, in order."""
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk({k: v for k, v in toc.items() if k != "root"})
    return files


def _book_is_fresh() -> bool:
    index = HTML / "index.html"
    if not index.is_file():
        return False
    built = min((HTML / page).stat().st_mtime for page in _pages(HTML))  # not _static's copies
    sources = [*EXECUTED.glob("*.ipynb"), *EXECUTED.glob("*.md"), *BOOK.glob("*.md"), *BOOK.glob("*.yml")]
    return all(p.stat().st_mtime <= built for p in sources) and all(
        (HTML / f"{f}.html").is_file() for f in _toc_files()
    )


@pytest.fixture(scope="module")
def book_html() -> Path:
    """The built book: reused when fresh, else every notebook is run (unchanged ones are skipped)
    and the book is built with warnings as errors."""
    if not _book_is_fresh():
        from sdsl.build.pipeline import build_book, run

        run()
        build_book()
    assert (HTML / "index.html").is_file()
    return HTML


@pytest.fixture(scope="module")
def server(book_html):
    """The book served over HTTP on a free localhost port (as a reader's browser would get it)."""
    handler = functools.partial(_QuietHandler, directory=str(book_html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output readable
        pass


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not (p.is_file() and os.access(p, os.X_OK))]
    if missing:
        pytest.skip(
            f"headless Chromium is not installed ({', '.join(missing)} missing): install Debian's "
            "packages with `apt-get install -y chromium chromium-driver` (make browser-deps, as root)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tmp_path_factory.mktemp("chromium-profile")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _pages(html: Path) -> list[str]:
    """Every HTML page of the book (relative paths), without Sphinx's static folders."""
    return sorted(
        p.relative_to(html).as_posix()
        for p in html.rglob("*.html")
        if not p.relative_to(html).parts[0].startswith("_")
    )


def _load(driver, url: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return Array.from(document.images).every(i => i.complete)")
    )


_UNTYPESET = """
return Array.from(document.querySelectorAll('.math'))
  .filter(e => !e.querySelector('mjx-container'))
  .map(e => e.textContent.trim().slice(0, 60));
"""


def test_every_page_loads_without_console_errors_images_and_math(book_html, server, browser):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    pages = _pages(book_html)
    assert len(pages) >= len(_toc_files()), f"only {pages} built"
    problems: list[str] = []
    math_pages = 0
    browser.get_log("browser")  # drop anything logged before the first page
    for page in pages:
        _load(browser, urljoin(server, page))
        n_math = browser.execute_script("return document.querySelectorAll('.math').length")
        if n_math:
            math_pages += 1
            try:
                WebDriverWait(browser, 30).until(lambda d: not d.execute_script(_UNTYPESET))
            except TimeoutException:
                left = browser.execute_script(_UNTYPESET)
                problems.append(f"{page}: {len(left)} of {n_math} equation(s) not typeset by MathJax, e.g. {left[:3]}")
        broken = browser.execute_script(
            "return Array.from(document.images).filter(i => !(i.naturalWidth > 0)).map(i => i.src)"
        )
        if broken:
            problems.append(f"{page}: image(s) that did not load: {broken}")
        severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        for e in severe:
            problems.append(f"{page}: console {e['level']}: {e['message']}")
    assert not problems, "\n".join(problems)
    assert math_pages > 0, "no page has an equation: the MathJax check checked nothing"


def test_navigation_reaches_every_chapter(book_html, server, browser):
    """Follow the sidebar and the previous/next links from the home page, as a reader would."""
    expected = {f"{f}.html" for f in _toc_files()}
    seen: set[str] = set()
    queue = ["index.html"]
    links_found = 0
    while queue:
        page = queue.pop(0)
        if page in seen:
            continue
        seen.add(page)
        _load(browser, urljoin(server, page))
        hrefs = browser.execute_script(
            "return Array.from(document.querySelectorAll("
            "'nav.bd-docs-nav a, .prev-next-area a')).map(a => a.href)"
        )
        links_found += len(hrefs)
        for href in hrefs:
            u = urlparse(href)
            if not href.startswith(server) or not u.path.endswith(".html"):
                continue
            rel = u.path[len(urlparse(server).path):]
            if rel not in seen:
                queue.append(rel)
    assert links_found, "no navigation links found (nav.bd-docs-nav, .prev-next-area): theme changed?"
    missing = sorted(expected - seen)
    assert not missing, f"the navigation does not reach: {missing} (reached {sorted(seen)})"
