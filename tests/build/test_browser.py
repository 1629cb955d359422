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
