"""The rendered book as a reader sees it, in headless Chromium.

Builds the book (or reuses ``book/_build/html`` when it is newer than every executed notebook and
book source), serves it over HTTP on localhost and opens every page as a reader would:

- every page loads without a SEVERE console entry, every ``<img>`` loads, every equation is typeset
  by MathJax, and the sidebar navigation reaches every chapter of ``book/_toc.yml``;
- every item of the registry (``sdsl.book.registry``: the paper's Tables 1 to 9 and Figures 1 to 5,
  and the companion's tables and figures that a chapter shows) is on its chapter's page: right
  before the line of download links of its artifact stands an image with a non-zero natural size
  (a figure) or an HTML table;
- no page shows ``<Figure size``, a traceback, a Python warning, stderr output, an absolute path
  of a machine or the wording of tickets and copies (:data:`STALE_WORDS`);
- at a 1400 px window (its scroll bar showing), no table is wider than its column, folded tables
  opened, and nothing inside a page scrolls sideways to show one; no figure is shown at under half
  its natural width unless it is a thumbnail of the landing page, and no figure's text shows under
  :data:`MIN_TEXT_PT` points (the smallest text at natural size that ``save_figure`` records in the
  SVG, scaled by the width shown);
- every "made by" and "reads" link of the artifact index resolves to a page of the built book and
  an anchor on it;
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
import gzip
import http.server
import io
import math
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
WIDTH = 1400
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
)
HTML = BOOK / "_build" / "html"
SCREENSHOTS = BUILD / "screenshots"
#: The most of a page's visible text that may be code a reader sees without opening a toggle
#: (hidden inputs, the bash lines of "how to rerun" sections and inline literals excepted).
MAX_CODE_SHARE = 0.12
#: What an absolute path of a machine looks like in a page's text.
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?:home|work|tmp|root|usr|opt|var|srv|mnt|Users|private)/[\w.-]")

#: The smallest text a figure may show, in points at the size the page shows it.
MIN_TEXT_PT = 9.0
#: The most a page may transfer (document, styles, scripts, fonts, MathJax, images), served as a
#: static host serves it (text gzip-compressed): a reader on a slow connection waits for all of it.
MAX_PAGE_BYTES = 1_500_000
#: Wording of tickets and copies that the book's prose must not use.
STALE_WORDS = ("the issue asks", "our seed", "what we hold", "not its equations", "shared/seeds")

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
    """Serves the book as a static host does (GitHub Pages, Read the Docs, Netlify): text (HTML,
    CSS, JavaScript, SVG, JSON) gzip-compressed when the browser accepts it, images and fonts as
    they are."""

    def log_message(self, *args):  # keep pytest's output readable
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        ctype = self.guess_type(str(path))
        text = ctype.startswith("text/") or ctype in _COMPRESSED
        if not (text and path.is_file() and "gzip" in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


_COMPRESSED = ("application/javascript", "text/javascript", "image/svg+xml", "application/json")


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
const folds = Array.from(article.querySelectorAll('details.sdsl-fold')).filter(d => !d.open);
folds.forEach(d => { d.open = true; });
const vis = e => e.checkVisibility ? e.checkVisibility() : !!e.offsetParent;
const columnWidth = article.getBoundingClientRect().width;
const overwide = Array.from(article.querySelectorAll('table')).filter(vis)
  .filter(t => t.getBoundingClientRect().width > columnWidth + 1)
  .map(t => (t.id || 'table') + ' ' + Math.round(t.getBoundingClientRect().width) + 'px');
const scrolled = Array.from(article.querySelectorAll('div, table')).filter(vis).filter(e => {
  const o = getComputedStyle(e).overflowX;
  return (o === 'auto' || o === 'scroll') && e.querySelector('table') && e.scrollWidth > e.clientWidth + 1;
}).map(e => (e.className || e.tagName) + ' ' + e.scrollWidth + '>' + e.clientWidth);
const figures = Array.from(article.querySelectorAll('img')).filter(vis).map(i => ({
  src: i.getAttribute('src'), url: i.src, natural: i.naturalWidth, shown: i.getBoundingClientRect().width,
  thumbnail: !!i.closest('.sd-card')}));
const sources = Array.from(article.querySelectorAll('a[href*="_code/"]')).map(a => a.href);
const tables = Array.from(article.querySelectorAll('table')).filter(vis).map(t => Math.round(t.getBoundingClientRect().width));
folds.forEach(d => { d.open = false; });
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
  wide: wide, overwide: overwide, scrolled: scrolled, figures: figures, sources: sources, tables: tables,
  column: columnWidth,
};
"""


# The bytes a page loads: the document and every resource it requested (cached ones included),
# as transferred (the encoded body: gzip for text) and as decoded
_BYTES = """
const e = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
return {transferred: e.reduce((s, r) => s + r.encodedBodySize, 0), decoded: e.reduce((s, r) => s + r.decodedBodySize, 0),
        requests: e.length};
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
    out["bytes"] = browser.execute_script(_BYTES)
    out["broken"] = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.naturalWidth > 0)).map(i => i.src)"
    )
    out["severe"] = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    out["report"] = browser.execute_script(_PAGE)
    out["reader"] = browser.execute_script(_READER)
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


def test_every_page_transfers_at_most_1_5_mb(visits):
    heavy = {p: v["bytes"] for p, v in visits.items() if v["bytes"]["transferred"] > MAX_PAGE_BYTES}
    assert all(v["bytes"]["requests"] > 1 for v in visits.values()), (
        "a page loaded no style or script: nothing was measured"
    )
    assert not heavy, "pages over 1.5 MB transferred: " + "; ".join(
        f"{p}: {b['transferred'] / 1e6:.2f} MB ({b['decoded'] / 1e6:.2f} MB decoded, {b['requests']} requests)"
        for p, b in heavy.items()
    )


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


def test_tables_read_whole_at_1400_px(book_html, visits):
    """No table is wider than the text column and none scrolls sideways, folded ones opened."""
    problems, widest = [], {}
    for page in _content_pages(book_html):
        r = visits[page]["report"]
        widest[page] = (len(r["tables"]), max(r["tables"], default=0))
        problems += [f"{page}: a table wider than its {r['column']:.0f} px column: {t}" for t in r["overwide"]]
        problems += [f"{page}: a table that scrolls sideways: {t}" for t in r["scrolled"]]
    print("tables per page (count, widest px):", widest)
    assert not problems, "\n".join(problems)


_SMALLEST = re.compile(r"smallest text ([0-9.]+) pt at natural size, ([0-9.]+) dpi")


def _smallest_text(path: Path) -> tuple[float, float] | None:
    """(points, dpi) that ``save_figure`` recorded in a figure file: the smallest text at natural
    size and the pixels per inch of the file (a PNG's text chunk, an SVG's description); an SVG's
    pixels are CSS pixels, 96 per inch."""
    if path.suffix == ".png":
        from PIL import Image

        with Image.open(path) as im:
            m = _SMALLEST.search(im.text.get("Description", ""))
        return (float(m.group(1)), float(m.group(2))) if m else None
    m = _SMALLEST.search(path.read_text(encoding="utf-8"))
    return (float(m.group(1)), 96.0) if m else None


def test_figures_are_shown_large_enough_to_read(book_html, visits):
    """No figure at under half its natural width (thumbnails aside), and no figure's text under
    MIN_TEXT_PT points at the width shown."""
    problems, smallest = [], []
    for page in _content_pages(book_html):
        for f in visits[page]["report"]["figures"]:
            if f["thumbnail"] or not f["natural"]:
                continue
            scale = f["shown"] / f["natural"]
            if scale < 0.5:
                problems.append(f"{page}: {f['src']} shown at {scale:.0%} of its natural width")
            recorded = _smallest_text(book_html / urlparse(f["url"]).path.lstrip("/"))
            if recorded is None:
                problems.append(f"{page}: {f['src']} does not record its smallest text (save_figure writes it)")
            else:
                # a text of p points is p * dpi / 72 pixels of the file, shown at scale, in CSS points
                shown_pt = recorded[0] * recorded[1] / 96 * scale
                smallest.append(shown_pt)
                # 0.05 pt: the recorded size is rounded to 0.01 pt and widths to a CSS pixel
                if shown_pt < MIN_TEXT_PT - 0.05:
                    problems.append(f"{page}: {f['src']} shows text at {shown_pt:.1f} pt (< {MIN_TEXT_PT} pt)")
    assert smallest, "no figure recorded its text size: the check checked nothing"
    print(f"smallest figure text shown: {min(smallest):.2f} pt")
    assert not problems, "\n".join(problems)


def test_prose_has_no_ticket_or_copy_wording(book_html, visits):
    problems = []
    for page in _content_pages(book_html):
        text = visits[page]["report"]["all"].lower()
        problems += [f"{page}: {w!r}" for w in STALE_WORDS if w in text]
    assert not problems, "\n".join(problems)


def test_made_by_links_resolve_inside_the_book(book_html, server, visits):
    """Every link of the artifact index to a function's source or a dataset is a page of the built
    book, with the line anchor it names."""
    links = visits["artifacts.html"]["report"]["sources"]
    assert len(links) >= len(REGISTRY), f"only {len(links)} source links on the artifact index"
    problems = []
    for href in links:
        u = urlparse(href)
        if not href.startswith(server):
            problems.append(f"{href}: outside the book")
            continue
        page = book_html / u.path[len(urlparse(server).path) :]
        if not page.is_file():
            problems.append(f"{href}: no such page in the built book")
        elif u.fragment and f'id="{u.fragment}"' not in page.read_text(encoding="utf-8"):
            problems.append(f"{href}: the page has no anchor {u.fragment!r}")
    assert not problems, "\n".join(problems)


# --- What a reader reads: tables, bold, figures' alternative texts, the prose's words, the run
# section (collected at 1400 px, folded tables opened).
_READER = r"""
const article = document.querySelector('article') || document.body;
const folds = Array.from(article.querySelectorAll('details')).filter(d => !d.open);
folds.forEach(d => { d.open = true; });
const numref = new Set(Array.from(article.querySelectorAll('a[href^="#"]:not(.headerlink)'))
  .filter(a => !a.closest('caption')).map(a => decodeURIComponent(a.getAttribute('href').slice(1))));
const tables = Array.from(article.querySelectorAll('table')).map(t => {
  const cap = t.querySelector('caption');
  const num = cap && cap.querySelector('.caption-number');
  const cells = Array.from(t.querySelectorAll('tbody td')).map(td => ({
    text: td.innerText.trim(), align: getComputedStyle(td).textAlign,
    code: !!td.querySelector('code')}));
  const head = Array.from(t.querySelectorAll('thead th')).map(th => th.innerText.trim());
  const rows = Array.from(t.querySelectorAll('tbody tr')).map(tr => Array.from(tr.cells).map(c => c.innerText.trim()));
  return {id: t.id, number: num ? num.innerText.trim() : '', caption: cap ? cap.innerText.trim() : '',
          cited: numref.has(t.id), cells: cells, run: !!t.closest('section[id$="-run"], section#run-this-chapter-yourself'),
          sdsl: t.classList.contains('sdsl-table'), head: head, rows: rows};
});
const skip = 'h1,h2,h3,h4,h5,h6,th,caption,summary,dt,.caption-number,.sdsl-verdict,nav,code,pre,mjx-container';
const bold = Array.from(article.querySelectorAll('*')).filter(e => {
  if (e.closest(skip)) return false;
  const own = Array.from(e.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join('');
  return /\d/.test(own) && parseInt(getComputedStyle(e).fontWeight) >= 600;
}).map(e => e.innerText.trim().slice(0, 60));
const figures = Array.from(article.querySelectorAll('figure')).filter(f => f.querySelector('img')).map(f => {
  const img = f.querySelector('img'); const cap = f.querySelector('figcaption .caption-text');
  return {alt: img.getAttribute('alt') || '', src: img.getAttribute('src'), url: img.src,
          caption: cap ? cap.innerText.trim() : ''};
});
const prose = article.cloneNode(true);
prose.querySelectorAll('pre, code, div.cell_input, script, style, mjx-assistive-mml, .headerlink, section#run-this-chapter-yourself').forEach(e => e.remove());
prose.querySelectorAll('mjx-container').forEach(e => e.replaceWith(' '));
document.body.appendChild(prose);
const proseText = prose.innerText;
prose.remove();
const runSection = article.querySelector('section#run-this-chapter-yourself');
const codes = Array.from(article.querySelectorAll('code')).filter(c => !c.closest('pre'))
  .map(c => ({text: c.innerText.trim(), run: !!(runSection && runSection.contains(c))}));
const links = Array.from(article.querySelectorAll('a[href]')).map(a => ({href: a.getAttribute('href'), url: a.href, text: a.innerText.trim()}));
const pres = Array.from(article.querySelectorAll('pre')).map(p => p.innerText);
const short = Array.from(article.querySelectorAll('p')).find(p => p.innerText.trim().startsWith('In short'));
const list = short && short.nextElementSibling && short.nextElementSibling.tagName === 'UL' ? short.nextElementSibling : null;
const inShort = list ? Array.from(list.children).map(li => {
  const clone = li.cloneNode(true);
  clone.querySelectorAll('mjx-container').forEach(e => e.replaceWith(' '));
  document.body.appendChild(clone); const text = clone.innerText; clone.remove();
  return {text: text, links: Array.from(li.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))};
}) : [];
folds.forEach(d => { d.open = false; });
return {tables: tables, bold: bold, figures: figures, prose: proseText, codes: codes, links: links, pres: pres,
        run: runSection ? runSection.innerText : '', short: inShort};
"""


def _chapters() -> list[str]:
    from sdsl.build.parameters import load_runs

    return list(load_runs())


def _chapter_pages(book_html: Path) -> list[str]:
    return [f"executed/{c}.html" for c in _chapters() if (book_html / "executed" / f"{c}.html").is_file()]


#: A number as a table cell prints it: digits with separators, a decimal part, a power of ten.
_NUMBER = re.compile(r"[\u2212+-]?\d[\d,]*(?:\.\d+)?(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?")


def _significant(token: str) -> int:
    """The significant digits of a printed number (its mantissa's, for a power of ten)."""
    mantissa = token.split(" × ")[0].lstrip("\u2212+-").replace(",", "")
    digits = mantissa.replace(".", "").lstrip("0")
    if "." not in mantissa:
        digits = digits.rstrip("0")
    return len(digits)


def test_tables_are_numbered_cited_and_print_numbers_to_read(book_html, visits):
    """Every table of a chapter has a numbered caption ("Table 3.2") and is cited from the prose of
    its page ({numref}); no table is cut into parts by width; a cell that is a number is
    right-aligned and prints at most four significant digits (a count below 100,000 as it is)."""
    problems = []
    numbered = 0
    for page in _chapter_pages(book_html):
        r = visits[page]["reader"]
        if re.search(r"Part \d+ of \d+", visits[page]["report"]["all"]):
            problems.append(f"{page}: a table cut into parts ('Part N of M')")
        for t in r["tables"]:
            name = t["number"] or t["id"] or "a table"
            if not re.fullmatch(r"Table \d+\.\d+", t["number"]):
                problems.append(
                    f"{page}: a table without a numbered caption (first cells {[c['text'] for c in t['cells'][:3]]})"
                )
                continue
            numbered += 1
            if not t["cited"]:
                problems.append(f"{page}: {name} is not cited in the text ({{numref}})")
            for c in t["cells"]:
                text = c["text"]
                if c["code"] or not _NUMBER.fullmatch(text.replace("\u202f", "")):
                    continue
                if c["align"] not in ("right", "end"):
                    problems.append(f"{page}: {name}: the number {text!r} is aligned {c['align']}")
                plain = text.replace(",", "").lstrip("\u2212+-")
                if "." not in plain and "×" not in plain:
                    if int(plain) >= 100_000:
                        problems.append(f"{page}: {name}: {text!r} printed as an integer of {len(plain)} digits")
                elif _significant(text) > 4:
                    problems.append(f"{page}: {name}: {text!r} has {_significant(text)} significant digits")
    assert numbered, "no numbered table on any chapter page: the check checked nothing"
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:80])


#: Digits that are part of a name, not a number: a model (Qwen1.5-14B), an item of the paper or of
#: the book (Table 3, Fig. 2.1, Eq. 5).
_NAMES = re.compile(r"[A-Za-z][\w.\u2032'-]*\d[\w.-]*|\b(?:Tables?|Figures?|Fig\.|Eqs?\.|Sections?|Chapter)\s+[\d.]+")


def test_bold_marks_a_verdict_only(book_html, visits):
    """No number of the prose or of a table is bold (myst-nb sets glued numbers in bold; a verdict
    set in bold carries the class sdsl-verdict): bold text holds no digit outside a name."""
    problems = [
        f"{page}: bold {b!r}"
        for page in _content_pages(book_html)
        for b in visits[page]["reader"]["bold"]
        if re.search(r"\d", _NAMES.sub("", b))
    ]
    assert not problems, "\n".join(problems[:60])


_HASHED = re.compile(r"(?:^|/)[0-9a-f]{16,}\.(?:svg|png)$|^[0-9a-f]{16,}")


def test_figures_have_their_caption_as_alternative_text(book_html, visits):
    problems, seen = [], 0
    for page in _content_pages(book_html):
        for f in visits[page]["reader"]["figures"]:
            seen += 1
            alt = f["alt"].strip()
            if not alt or _HASHED.search(alt) or alt.endswith((".svg", ".png")):
                problems.append(f"{page}: {f['src']} has the alternative text {alt!r}")
            elif f["caption"]:
                words = [w for w in re.findall(r"[a-z]{4,}", alt.lower())][:6]
                missing = [w for w in words if w not in f["caption"].lower()]
                if not words or missing:
                    problems.append(f"{page}: {f['src']}: alternative text {alt[:60]!r} is not its caption")
            if "\\" in alt or "$" in alt:
                problems.append(f"{page}: {f['src']}: LaTeX in its alternative text {alt[:80]!r}")
    assert seen, "no figure found: the check checked nothing"
    assert not problems, "\n".join(problems)


#: Build talk: how the book is made, in place of what it says.
BUILD_TALK = (
    "runs.yml",
    "model hub",
    "ray task",
    "in ci",
    "under last:",
    "papermill",
    "artifacts tree",
    "staging",
    "the executor",
    "jupytext",
)
#: A Python value in a sentence: a dict or list of quoted keys, a float's repr of a large number,
#: numpy's scalars, Python's constants.
_PYTHON = re.compile(r"\{'|\['\w|': |np\.float|np\.int|\b\d{7,}\.0\b|\bNone\b|\bTrue\b|\bFalse\b|\bnan\b")
#: snake_case, except in a repository's name (bigcode/tiny_starcoder_py) and a GGUF quantisation
#: type (q8_0, Q4_K_M), which are the names a reader types
_SNAKE = re.compile(r"(?<![\w/.-])(?![qQ]\d_)[a-z][a-z0-9]*_[a-z0-9_]+\b")


def _parameters(chapter: str) -> set[str]:
    from sdsl.build.parameters import notebook_parameters

    return set(notebook_parameters(chapter))


def test_prose_tables_and_legends_speak_the_readers_words(book_html, visits, svg_texts):
    """No Python value, snake_case identifier or build talk in the prose, the tables or the figures'
    text of a chapter; a chapter's parameter names only in its section "Run this chapter yourself"
    (and in code blocks)."""
    problems = []
    for page in [*_chapter_pages(book_html), "intro.html"]:
        r = visits[page]["reader"]
        text = r["prose"]
        for m in {m.group(0) for m in _SNAKE.finditer(text)}:
            problems.append(f"{page}: snake case {m!r}")
        for m in {m.group(0) for m in _PYTHON.finditer(text)}:
            problems.append(f"{page}: a Python value {m!r}")
        for c in r["codes"]:  # a Python value set as code in a sentence is still a Python value
            if not c["run"] and _PYTHON.search(c["text"]):
                problems.append(f"{page}: a Python value as code {c['text'][:60]!r}")
        low = " ".join(text.lower().split())
        problems += [f"{page}: build talk {w!r}" for w in BUILD_TALK if re.search(rf"\b{re.escape(w)}(?!\w)", low)]
        if page.startswith("executed/"):
            chapter = page.removeprefix("executed/").removesuffix(".html")
            params = _parameters(chapter)
            named = {c["text"] for c in r["codes"] if not c["run"] and c["text"] in params}
            problems += [f"{page}: the parameter {n!r} named outside its run section" for n in sorted(named)]
    for src, texts in svg_texts.items():
        for t in texts:
            if _SNAKE.search(t) or _PYTHON.search(t):
                problems.append(f"{src}: figure text {t!r}")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:120])


def test_every_chapter_offers_its_notebook_and_the_command_that_reruns_it(book_html, visits):
    import json

    problems = []
    for page in _chapter_pages(book_html):
        chapter = page.removeprefix("executed/").removesuffix(".html")
        r = visits[page]["reader"]
        if not r["run"]:
            problems.append(f"{page}: no section 'Run this chapter yourself'")
            continue
        for suffix in (".ipynb", ".md"):
            hits = [link for link in r["links"] if link["href"].endswith(f"_static/notebooks/{chapter}{suffix}")]
            target = book_html / "_static" / "notebooks" / f"{chapter}{suffix}"
            if not hits:
                problems.append(f"{page}: no link to {chapter}{suffix}")
            elif not target.is_file():
                problems.append(f"{page}: {chapter}{suffix} is linked but not in the site")
        if not any(p.strip().startswith(f"papermill {chapter}.ipynb") for p in r["pres"]):
            problems.append(f"{page}: no command 'papermill {chapter}.ipynb ...'")
        nb = book_html / "_static" / "notebooks" / f"{chapter}.ipynb"
        if nb.is_file():
            text = nb.read_text(encoding="utf-8")
            found = ABSOLUTE_PATH.search(text)
            if found:
                problems.append(f"{nb.name}: an absolute path {text[found.start() : found.start() + 60]!r}")
            cells = json.loads(text)["cells"]
            tags = [t for c in cells for t in c.get("metadata", {}).get("tags", [])]
            if tags.count("parameters") != 1 or "injected-parameters" in tags:
                problems.append(f"{nb.name}: papermill needs one parameters cell and no injected one: tags {tags}")
    landing = visits["intro.html"]["reader"]
    if "pip install" not in " ".join(landing["pres"]):
        problems.append("intro.html: does not say how to install the package")
    for page, v in visits.items():
        for link in v["reader"]["links"]:
            if "github.com/sdsl-companion" in link["href"]:
                problems.append(f"{page}: links a repository address that cannot be verified: {link['href']}")
    assert not problems, "\n".join(problems)


def test_the_site_ships_no_duplicate_file_or_template_stub(book_html):
    import hashlib

    seen: dict[str, str] = {}
    problems = []
    for path in sorted(p for p in book_html.rglob("*") if p.is_file()):
        rel = path.relative_to(book_html).as_posix()
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest in seen and len(data) > 64:
            problems.append(f"{rel} is a copy of {seen[digest]} ({len(data):,} bytes)")
        seen.setdefault(digest, rel)
        if path.suffix == ".html" and not rel.startswith("_code/") and b"{%" in data:
            problems.append(f"{rel}: unrendered Jinja ('{{%')")
    assert not problems, "\n".join(problems)


# --- A phone: 390 x 844 CSS px, its page at full width.
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}
_WIDEST = r"""
const w = document.documentElement.clientWidth;
const over = Array.from(document.querySelectorAll('article *')).filter(e => {
  const r = e.getBoundingClientRect();
  if (r.right <= w + 1) return false;
  for (let p = e.parentElement; p; p = p.parentElement) {
    const o = getComputedStyle(p).overflowX;
    if ((o === 'auto' || o === 'scroll' || o === 'hidden') && p.getBoundingClientRect().right <= w + 1) return false;
  }
  return true;
}).slice(0, 3).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right) + 'px: ' + (e.innerText || '').slice(0, 40));
return {scroll: document.documentElement.scrollWidth, client: w, over: over};
"""


@pytest.fixture(scope="module")
def phone(book_html, server, browser, visits) -> dict[str, dict]:
    """Every content page loaded at a phone's width (after the desktop visits)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        out = {}
        for page in _content_pages(book_html):
            _load(browser, urljoin(server, page))
            out[page] = browser.execute_script(_WIDEST)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return out


def test_no_page_is_wider_than_a_phone(phone):
    problems = [
        f"{page}: {r['scroll']} px wide on a {r['client']} px phone; {r['over']}"
        for page, r in phone.items()
        if r["scroll"] > r["client"] + 1
    ]
    assert phone, "no page measured"
    assert not problems, "\n".join(problems)


# --- Figures: every text of an SVG (matplotlib writes each as a group text_N whose comment is the
# text) inside the figure and clear of every other text and of the legends, at the size the figure
# is drawn (what a phone's full-size view shows; a page only scales it).
_SVG = r"""
const R = document.documentElement.getBoundingClientRect();
const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
const label = g => { const c = Array.from(g.childNodes).find(n => n.nodeType === 8); return c ? c.textContent.trim() : ''; };
const texts = Array.from(document.querySelectorAll('g[id^="text_"]')).map(g => {
  const leg = g.closest('g[id^="legend_"]');
  const glyphs = Array.from(g.querySelectorAll('use, path')).map(box).filter(b => b[2] > b[0] && b[3] > b[1]);
  return {id: g.id, text: label(g), box: box(g), glyphs: glyphs, legend: leg ? leg.id : ''};
}).filter(t => t.box[2] > t.box[0] && t.box[3] > t.box[1]);
const legends = Array.from(document.querySelectorAll('g[id^="legend_"]')).map(g => ({id: g.id, box: box(g)}));
return {root: [R.left, R.top, R.right, R.bottom], texts: texts, legends: legends};
"""


def _overlap(a, b) -> float:
    """The smaller side of the intersection of two boxes (px), 0 when they do not meet."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, min(w, h))


def _text_overlap(a: dict, b) -> float:
    """How far the text ``a`` runs into ``b`` (a text or a box), glyph by glyph (px): the boxes of
    whole texts are too coarse for a rotated label, whose box spans the tick labels beside it."""
    if _overlap(a["box"], b["box"] if isinstance(b, dict) else b) <= 1.0:
        return 0.0
    theirs = b["glyphs"] or [b["box"]] if isinstance(b, dict) else [b]
    return max((_overlap(g, h) for g in a["glyphs"] or [a["box"]] for h in theirs), default=0.0)


@pytest.fixture(scope="module")
def svg_layout(book_html, server, browser, visits) -> dict[str, dict]:
    """The boxes of every text of every SVG figure a content page shows, at a 1400 px and at a
    390 px viewport (src -> width -> layout)."""
    urls = {}
    for page in _content_pages(book_html):
        for f in visits[page]["report"]["figures"]:
            if f["src"].endswith(".svg"):
                urls[f["src"].rsplit("/", 1)[-1]] = f["url"]
    out: dict[str, dict] = {}
    for width in (WIDTH, 390):
        browser.set_window_size(width, 1024)
        for name, url in sorted(urls.items()):
            browser.get(url)
            out.setdefault(name, {})[width] = browser.execute_script(_SVG)
    browser.set_window_size(WIDTH, 1024)
    return out


@pytest.fixture(scope="module")
def svg_texts(svg_layout) -> dict[str, list[str]]:
    return {name: [t["text"] for t in by[WIDTH]["texts"]] for name, by in svg_layout.items()}


def test_no_figure_text_is_clipped_or_overlaps(svg_layout, visits, book_html):
    """Every text of every SVG figure lies inside the figure, overlaps no other text by more than
    one pixel, and no legend covers a text outside it (at 1400 px and at a phone's width)."""
    assert svg_layout, "no SVG figure found: the check checked nothing"
    where = {}
    for page in _content_pages(book_html):
        for f in visits[page]["reader"]["figures"]:
            where[f["src"].rsplit("/", 1)[-1]] = (page, f["caption"][:50])
    problems = []
    for name, by in svg_layout.items():
        shown = where.get(name, (name, ""))
        for width, lay in by.items():
            root = lay["root"]
            for t in lay["texts"]:
                b = t["box"]
                if b[0] < root[0] - 0.5 or b[1] < root[1] - 0.5 or b[2] > root[2] + 0.5 or b[3] > root[3] + 0.5:
                    problems.append(f"{shown}: at {width} px {t['text']!r} is cut at the figure's edge")
            texts = lay["texts"]
            for i, a in enumerate(texts):
                for b in texts[i + 1 :]:
                    if _text_overlap(a, b) > 1.0:
                        problems.append(f"{shown}: at {width} px {a['text']!r} overlaps {b['text']!r}")
                for leg in lay["legends"]:
                    if a["legend"] != leg["id"] and _text_overlap(a, leg["box"]) > 1.0:
                        problems.append(f"{shown}: at {width} px the legend covers {a['text']!r}")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(sorted(set(problems))[:80])


# --- One fact, one value; headlines with their caveats.
_SUP = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
#: A count or size as the book prints it: 4 × 10¹², 4.000T, 70.55B, 1.5e+13, 15.
_QUANTITY = re.compile(r"(?P<m>\d+(?:\.\d+)?)(?: × 10(?P<e>[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)|e(?P<e2>[+-]?\d+)|\s?(?P<s>[kMBT])\b)?")
_SUFFIX = {"k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
_UNITS = {"trillion": 1e12, "billion": 1e9, "million": 1e6}


def _quantity(text: str, unit: float = 1.0) -> float | None:
    """The first count or size printed in ``text``, in units of one (``unit`` scales a bare number)."""
    m = _QUANTITY.search(text.replace(",", ""))
    if m is None:
        return None
    v = float(m.group("m"))
    if m.group("e"):
        return v * 10.0 ** int(m.group("e").translate(_SUP))
    if m.group("e2"):
        return v * 10.0 ** int(m.group("e2"))
    if m.group("s"):
        return v * _SUFFIX[m.group("s")]
    return v * unit


def _models() -> list[str]:
    from sdsl import data

    names = set(data.load("presets")["model"]) | set(data.load("models")["model"])
    return sorted(names, key=len, reverse=True)


_QUANTITIES = {"D′": re.compile(r"^D[′'](?:\s|$)|target tokens"), "M": re.compile(r"^M\s*\(")}
#: Headers and rows that state the paper's printed value beside the book's, on purpose.
_AS_PRINTED = re.compile(r"print(?:ed|s)|paper|implied|that gives", re.I)


def _table_facts(table: dict, models: list[str]):
    """(model, quantity, value) of a table: a column headed D′ or M of a row naming a model, or a
    table of inputs (a row "target" naming the model, rows headed D′ or M); not the paper's
    printed values."""
    head, rows = table["head"], table["rows"]
    if _AS_PRINTED.search(table["caption"]) and "read as" not in table["caption"]:
        return  # a table of the paper's inputs as printed, labelled so
    if head and head[0] in ("input", "quantity") and rows:
        named = [r[1] for r in rows if r and r[0] == "target" and len(r) > 1]
        if named and named[0] in models:
            for r in rows:
                for q, pattern in _QUANTITIES.items():
                    if len(r) > 1 and pattern.search(r[0]) and not _AS_PRINTED.search(r[0]):
                        v = _quantity(r[1])
                        if v is not None:
                            yield named[0], q, v
        return
    for r in rows:
        if any(_AS_PRINTED.search(c) for c in r):
            continue
        model = next((c for c in r if c in models), None)
        if model is None:
            continue
        for h, c in zip(head, r):
            for q, pattern in _QUANTITIES.items():
                if pattern.search(h) and not _AS_PRINTED.search(h):
                    unit = next((u for w, u in _UNITS.items() if w in h), 1.0)
                    v = _quantity(c, unit)
                    if v is not None:
                        yield model, q, v


def test_one_fact_one_value_across_pages(book_html, visits):
    """A model's input (its size M, its tokens D′) is printed with one value on every page, in every
    table and sentence that states it (the paper's printed value, labelled so, aside); and every
    number of the landing page's answers is printed the same on a page that sentence links to."""
    models = _models()
    said: dict[tuple[str, str], dict[float, list[str]]] = {}
    prose = re.compile(
        r"(?P<model>" + "|".join(re.escape(m) for m in models) + r")(?:['’]s)?(?: target)?(?:['’]s)?"
        r"(?:\s*\(\$?M\$?\s*=\s*[^,)]*,)?\s*D[′']\s*(?:=|read as|of|is)\s*(?P<v>[^\s,;)]+(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?)"
    )
    for page in _content_pages(book_html):
        r = visits[page]["reader"]
        for t in r["tables"]:
            for model, q, v in _table_facts(t, models):
                said.setdefault((model, q), {}).setdefault(round(v, -int(math.floor(math.log10(v))) + 2), []).append(
                    f"{page} {t['number'] or 'table'}"
                )
        for m in prose.finditer(r["prose"]):
            v = _quantity(m.group("v"))
            if v and not re.search(r"print", r["prose"][max(0, m.start() - 80) : m.end() + 80]):
                said.setdefault((m.group("model"), "D′"), {}).setdefault(
                    round(v, -int(math.floor(math.log10(v))) + 2), []
                ).append(f"{page} text {m.group(0)[:60]!r}")
    assert said.get(("Qwen1.5-14B", "D′")), "no page states Qwen1.5-14B's D′: the check checked nothing"
    problems = [
        f"{model}'s {q} is printed as "
        + "; ".join(f"{v:.3g} ({', '.join(sorted(set(w))[:3])})" for v, w in vals.items())
        for (model, q), vals in sorted(said.items())
        if len(vals) > 1 and (max(vals) / min(vals) - 1) > 0.01
    ]
    # the landing page's answers: each number as a page the sentence links to prints it
    items = visits["intro.html"]["reader"]["short"]
    # does it reproduce, does the central claim hold, how to size a draft, how far the plan holds on
    # real hardware, and whether it holds against others' measurements
    assert len(items) == 5, f"the landing page's 'In short' has {len(items)} answers, not five: {items}"
    number = re.compile(r"(?<![\w.,])[\u2212-]?\d+(?:,\d{3})*(?:\.\d+)?(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?(?: %)?(?![\w])")
    for item in items:
        pages = {urlparse(urljoin("http://x/", h)).path.lstrip("/") for h in item["links"]}
        texts = [" ".join(visits[p]["report"]["all"].split()) for p in pages if p in visits]
        assert texts, f"an answer of the landing page links no chapter: {item['text'][:80]}"
        for m in number.finditer(_NAMES.sub(" ", item["text"])):
            token = m.group(0)
            if not any(token in t for t in texts):
                problems.append(f"intro.html prints {token!r} ({item['text'][:50]}...) but {sorted(pages)} do not")
    assert not problems, "\n".join(problems)


def test_headlines_carry_their_caveats(book_html, visits):
    """The planning chapter's headline interval is the one `sdsl plan` prints for its run (the
    bootstrap one part of it), on the chapter and on the landing page; a speedup is a wall-clock
    one wherever a sentence says "speedup" or "speeds up" (tokens per FLOP are called so)."""
    from sdsl import plan as P
    from sdsl.book.tables import printed_as
    from sdsl.build.parameters import load_runs, notebook_parameters
    from sdsl.plan.interval import n_star_intervals

    params = {**notebook_parameters("plan_draft"), **(load_runs()["plan_draft"] or {})}
    from sdsl.chapters.plan_draft import PLAN_PARAMETERS as keys

    inputs = P.check_inputs(**{k: params[k] for k in keys})
    head = n_star_intervals(inputs, P.plan(inputs).n_star)["headline"]
    assert set(head["sources"]) == {"law", "constants", "coefficients"}, head
    interval = f"[{printed_as(head['low'], '.4g')}, {printed_as(head['high'], '.4g')}]"
    problems = []
    for page in ("executed/plan_draft.html", "intro.html"):
        if interval not in " ".join(visits[page]["reader"]["prose"].split()):
            problems.append(f"{page} does not state sdsl plan's interval {interval}")
    speed = re.compile(r"\bspeed(?:up|s? [\w ]{0,30}?\bup)\b", re.I)
    wall = re.compile(r"wall[- ]clock|theorem 3\.8|measured|latenc", re.I)
    for page in _content_pages(book_html):
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(visits[page]["reader"]["prose"].split())):
            if speed.search(sentence) and not wall.search(sentence):
                problems.append(f"{page}: a speedup that is not said to be wall-clock: {sentence[:140]!r}")
    assert not problems, "\n".join(problems)


def test_a_chapters_rerun_command_runs_its_downloaded_notebook(book_html, visits, tmp_path):
    """The command a chapter's page prints reruns the notebook a reader downloads from it, as
    printed (the acceptance chapter: the quickest that needs no other chapter), and writes its
    tables into the folder it names."""
    import subprocess
    import sys

    chapter = "acceptance"
    command = next(p for p in visits[f"executed/{chapter}.html"]["reader"]["pres"] if p.startswith("papermill "))
    shutil.copyfile(book_html / "_static" / "notebooks" / f"{chapter}.ipynb", tmp_path / f"{chapter}.ipynb")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("SDSL_ARTIFACTS", None)
    done = subprocess.run(
        ["bash", "-c", command.strip() + " --no-progress-bar"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / f"my_{chapter}.ipynb").is_file() and (tmp_path / f"my_{chapter}" / "table1.csv").is_file()
