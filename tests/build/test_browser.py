"""The rendered book as a reader sees it, in headless Chromium.

Builds the book (or reuses ``book/_build/html`` when it is newer than every executed notebook and
book source), serves it over HTTP on localhost and opens every page as a reader would:

- every page loads without a SEVERE console entry, every ``<img>`` loads, every equation is typeset
  by MathJax, and the sidebar navigation reaches every chapter of ``book/_toc.yml``;
- every item of the registry (``sdsl.book.registry``: the paper's Tables 1 to 9 and Figures 1 to 5,
  and the companion's tables and figures that a chapter shows) is on its chapter's page: right
  before the line of download links of its artifact stands an image with a non-zero natural size
  (a figure) or an HTML table;
- no page shows ``<Figure size``, a traceback, a Python warning, stderr output or an absolute path
  of a machine, and no table is wider than its column without a scroll box around it;
- the code a reader sees without opening a toggle stays under :data:`MAX_CODE_SHARE` of the page's
  visible text;
- a full-page screenshot of every page is written under ``build/screenshots/`` for a person to look
  at.

Every page is loaded once, in one browser session (the ``visits`` fixture), and each test reads
what that visit collected.

Needs Debian's ``chromium`` and ``chromium-driver`` (``make browser-deps`` installs them as root);
skipped, saying why, when they are not installed.
"""

from __future__ import annotations

import base64
import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest
import yaml

from sdsl.book.registry import REGISTRY
from sdsl.paths import BOOK, BUILD, EXECUTED, ROOT

CHROMIUM = Path(os.environ.get("SDSL_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("SDSL_CHROMEDRIVER", "/usr/bin/chromedriver"))
WIDTH = 1280
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    f"--window-size={WIDTH},1024",
    "--hide-scrollbars",
)
HTML = BOOK / "_build" / "html"
SCREENSHOTS = BUILD / "screenshots"
#: The most of a page's visible text that may be code a reader sees without opening a toggle
#: (hidden inputs, the bash lines of "how to rerun" sections and inline literals excepted).
MAX_CODE_SHARE = 0.12
#: What an absolute path of a machine looks like in a page's text.
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?:home|work|tmp|root|usr|opt|var|srv|mnt|Users|private)/[\w.-]")

pytestmark = pytest.mark.slow


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
        p.relative_to(html).as_posix() for p in html.rglob("*.html") if not p.relative_to(html).parts[0].startswith("_")
    )


def _content_pages(html: Path) -> list[str]:
    """The pages of the table of contents (not Sphinx's search and index pages)."""
    return [f"{f}.html" for f in _toc_files() if (html / f"{f}.html").is_file()]


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


# In document order: the images, tables and artifact links of the article; for the item's first
# artifact link, the nearest image or table before its line of links (no other item's links between).
_ITEM = r"""
const [chapter, name] = arguments;
const article = document.querySelector('article') || document.body;
const els = Array.from(article.querySelectorAll('img, table, a[href*="_static/artifacts/"]'));
const isLink = e => e.tagName === 'A';
const re = new RegExp('/_static/artifacts/' + chapter + '/' + name.replace(/[.]/g, '\\.') + '\\.(csv|svg|png|data\\.csv)$');
const i = els.findIndex(e => isLink(e) && re.test(new URL(e.href).pathname));
if (i < 0) return {found: false, reason: 'no download link to ' + chapter + '/' + name};
const line = els[i].closest('p') || els[i].parentElement;
for (let j = i - 1; j >= 0; j--) {
  const e = els[j];
  if (isLink(e)) {
    if ((e.closest('p') || e.parentElement) === line) continue;
    return {found: false, reason: 'the element before its download line is another item\'s download line'};
  }
  if (e.tagName === 'IMG') return {found: true, kind: 'image', width: e.naturalWidth, height: e.naturalHeight};
  return {found: true, kind: 'table', rows: e.rows.length};
}
return {found: false, reason: 'nothing before its download line'};
"""


_PAGE = r"""
const article = document.querySelector('article') || document.body;
const vis = e => e.checkVisibility ? e.checkVisibility() : !!e.offsetParent;
const code = Array.from(article.querySelectorAll('div.cell_input pre, div.highlight pre'))
  .filter(e => vis(e) && !e.closest('.cell_output'));
const width = article.getBoundingClientRect().width;
const wide = Array.from(article.querySelectorAll('table')).filter(vis).filter(t => {
  if (t.getBoundingClientRect().width <= width + 1) return false;
  for (let p = t.parentElement; p && p !== article; p = p.parentElement) {
    const o = getComputedStyle(p).overflowX;
    if ((o === 'auto' || o === 'scroll') && p.getBoundingClientRect().width <= width + 1) return false;
  }
  return true;
}).map(t => (t.id || t.className || 'table') + ' ' + Math.round(t.getBoundingClientRect().width) + 'px');
return {
  text: article.innerText, all: article.textContent,
  code: code.reduce((s, e) => s + e.innerText.length, 0),
  stderr: article.querySelectorAll('.stderr, .output.error, .output.traceback').length,
  wide: wide,
};
"""


_NAV = """
return Array.from(document.querySelectorAll('nav.bd-docs-nav a, .prev-next-area a')).map(a => a.href);
"""


def _visit(browser, server: str, page: str, items: list[str]) -> dict:
    """Everything the tests read of one page, from one load of it: the console, the equations
    (waiting for MathJax), the images, the article's text and tables, the navigation links, the
    registry items of its chapter, and a full-page screenshot."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    _load(browser, urljoin(server, page))
    out: dict = {"math": browser.execute_script("return document.querySelectorAll('.math').length"), "untypeset": []}
    if out["math"]:
        try:
            WebDriverWait(browser, 30).until(lambda d: not d.execute_script(_UNTYPESET))
        except TimeoutException:
            out["untypeset"] = browser.execute_script(_UNTYPESET)
    out["broken"] = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.naturalWidth > 0)).map(i => i.src)"
    )
    out["severe"] = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    out["report"] = browser.execute_script(_PAGE)
    out["nav"] = browser.execute_script(_NAV)
    out["items"] = {
        name: browser.execute_script(_ITEM, page.removeprefix("executed/").removesuffix(".html"), name)
        for name in items
    }
    height = int(
        browser.execute_script("return Math.max(document.documentElement.scrollHeight, document.body.scrollHeight)")
    )
    # the whole page in one viewport (not a clip of a scrolled one: fixed sidebars stay in place)
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    out["screenshot"] = SCREENSHOTS / (page.replace("/", "__").removesuffix(".html") + ".png")
    out["screenshot"].write_bytes(base64.b64decode(shot["data"]))
    return out


@pytest.fixture(scope="module")
def visits(book_html, server, browser) -> dict[str, dict]:
    """Every page of the book visited once, in one browser session (page -> :func:`_visit`)."""
    if SCREENSHOTS.exists():  # build/screenshots/ is this test's own folder
        shutil.rmtree(SCREENSHOTS)
    SCREENSHOTS.mkdir(parents=True)
    by_page: dict[str, list[str]] = {}
    for item in REGISTRY:
        if item.shown:
            by_page.setdefault(f"executed/{item.chapter}.html", []).append(item.artifacts[0])
    browser.get_log("browser")  # drop anything logged before the first page
    return {page: _visit(browser, server, page, by_page.get(page, [])) for page in _pages(book_html)}


def test_every_page_loads_without_console_errors_images_and_math(book_html, visits):
    pages = _pages(book_html)
    assert len(pages) >= len(_toc_files()), f"only {pages} built"
    problems: list[str] = []
    for page, v in visits.items():
        if v["untypeset"]:
            left = v["untypeset"]
            problems.append(f"{page}: {len(left)} of {v['math']} equation(s) not typeset by MathJax, e.g. {left[:3]}")
        if v["broken"]:
            problems.append(f"{page}: image(s) that did not load: {v['broken']}")
        for e in v["severe"]:
            problems.append(f"{page}: console {e['level']}: {e['message']}")
    assert not problems, "\n".join(problems)
    assert any(v["math"] for v in visits.values()), "no page has an equation: the MathJax check checked nothing"


def test_navigation_reaches_every_chapter(server, visits):
    """Follow the sidebar and the previous/next links from the home page, as a reader would."""
    expected = {f"{f}.html" for f in _toc_files()}
    seen: set[str] = set()
    queue = ["index.html"]
    links_found = 0
    while queue:
        page = queue.pop(0)
        if page in seen or page not in visits:
            continue
        seen.add(page)
        hrefs = visits[page]["nav"]
        links_found += len(hrefs)
        for href in hrefs:
            u = urlparse(href)
            if not href.startswith(server) or not u.path.endswith(".html"):
                continue
            rel = u.path[len(urlparse(server).path) :]
            if rel not in seen:
                queue.append(rel)
    assert links_found, "no navigation links found (nav.bd-docs-nav, .prev-next-area): theme changed?"
    missing = sorted(expected - seen)
    assert not missing, f"the navigation does not reach: {missing} (reached {sorted(seen)})"


def test_every_registry_item_is_on_its_page(visits):
    """The paper's tables and figures, and the companion's that a chapter shows, each stand on their
    chapter's page as an image with a non-zero natural size or an HTML table."""
    problems = []
    items = [i for i in REGISTRY if i.shown]
    assert sum(i.paper for i in items) == 14, "the registry must list Tables 1-9 and Figures 1-5"
    for item in items:
        page = visits.get(f"executed/{item.chapter}.html")
        if page is None:
            problems.append(f"{item.key} ({item.chapter}): the chapter's page was not built")
            continue
        got = page["items"][item.artifacts[0]]
        want = "image" if item.figure else "table"
        if not got["found"]:
            problems.append(f"{item.key} ({item.chapter}): {got['reason']}")
        elif got["kind"] != want:
            problems.append(
                f"{item.key} ({item.chapter}): a {got['kind']} stands before its download links, not a {want}"
            )
        elif want == "image" and not (got["width"] > 0 and got["height"] > 0):
            problems.append(f"{item.key} ({item.chapter}): its image has natural size {got['width']}x{got['height']}")
        elif want == "table" and got["rows"] < 2:
            problems.append(f"{item.key} ({item.chapter}): its table has {got['rows']} row(s)")
    assert not problems, "\n".join(problems)


def test_no_page_shows_build_artifacts_paths_or_overflowing_tables(book_html, visits):
    problems = []
    root = str(ROOT)
    for page in _content_pages(book_html):
        r = visits[page]["report"]
        everything = r["all"]  # the whole article, hidden code and folded outputs included
        for needle, what in (
            ("<Figure size", "a figure's repr instead of the figure"),
            ("Traceback (most recent call last)", "a traceback"),
        ):
            if needle in everything:
                problems.append(f"{page}: {what} ({needle!r})")
        warning = re.search(r"\b[A-Z]\w*Warning\b: ", everything)
        if warning:
            problems.append(f"{page}: a Python warning: {everything[warning.start() : warning.start() + 80]!r}")
        if r["stderr"]:
            problems.append(f"{page}: {r['stderr']} stderr or error output(s)")
        for found in {m.group(0) for m in ABSOLUTE_PATH.finditer(everything)} | (
            {root} if root in everything else set()
        ):
            problems.append(f"{page}: an absolute path ({found!r}...)")
        for t in r["wide"]:
            problems.append(f"{page}: a table wider than its column without a scroll box: {t}")
    assert not problems, "\n".join(problems)


def test_visible_code_stays_a_small_share_of_each_page(book_html, visits):
    shares = {}
    for page in _content_pages(book_html):
        r = visits[page]["report"]
        shares[page] = r["code"] / max(len(r["text"]), 1)
    over = {p: f"{s:.1%}" for p, s in shares.items() if s > MAX_CODE_SHARE}
    print("visible code share per page:", {p: f"{s:.1%}" for p, s in shares.items()})
    assert not over, f"pages whose visible code is over {MAX_CODE_SHARE:.0%} of their text: {over}"


def test_full_page_screenshots(book_html, visits):
    """A full-page PNG of every page under build/screenshots/ (for a person to look at)."""
    written = [v["screenshot"] for v in visits.values()]
    assert len(written) == len(_pages(book_html)) and all(p.stat().st_size > 1000 for p in written)
