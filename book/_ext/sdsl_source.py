"""The book's own rendered source (loaded via ``sphinx: local_extensions``).

The artifact index links every table and figure to the function that makes it and to the datasets
it reads (:func:`sdsl.book.registry.source_link`, :func:`sdsl.book.registry.data_link`). Those
links go to pages of the book itself, which work offline and need no repository address: for every
Python module a registry function lives in, ``_code/<path>.html`` shows the file highlighted with
its line numbers as anchors (``#L-<line>``), and for every dataset of ``data/`` a registry item
reads, ``_code/data/<file>.html`` shows the file and its provenance file. This is what
``sphinx.ext.viewcode`` does for documented objects; the book documents none with autodoc, so the
pages come from the registry instead.
"""

from html import escape
from pathlib import Path


def source_files():
    """The repository's files the artifact index links to (paths relative to the repository)."""
    from sdsl.book.registry import REGISTRY, data_files, module_file

    files = {module_file(item.function) for item in REGISTRY}
    for item in REGISTRY:
        for name in item.data:
            files.update(data_files(name))
    return sorted(files)


def _page(root: Path, rel: str):
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    text = (root / rel).read_text(encoding="utf-8")
    try:
        lexer = get_lexer_for_filename(rel, stripnl=False)
    except ClassNotFound:
        from pygments.lexers.special import TextLexer

        lexer = TextLexer(stripnl=False)
    formatter = HtmlFormatter(linenos="inline", lineanchors="L", anchorlinenos=True, wrapcode=True)
    body = (
        f"<h1><code>{escape(rel)}</code></h1>"
        f'<div class="highlight sdsl-source">{highlight(text, lexer, formatter)}</div>'
    )
    return f"_code/{rel}", {"title": rel, "body": body}, "page.html"


def _collect(app):
    from sdsl.paths import ROOT

    for rel in source_files():
        yield _page(ROOT, rel)


def setup(app):
    app.connect("html-collect-pages", _collect)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
