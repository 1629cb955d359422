"""Keep the built site light (loaded via ``sphinx: local_extensions``).

When the HTML is written, this removes from the output what no page loads:

- the source maps (``*.map``) of the theme's scripts and styles;
- Font Awesome's script (1.5 MB, loaded by every page): the theme's stylesheet already draws the
  icons from Font Awesome's web fonts, of which the WOFF2 files are kept and the TrueType ones go;
- the parts of the offline MathJax copy (``sphinx-mathjax-offline`` ships all of MathJax 3, 24 MB)
  that the pages cannot request: they load ``startup.js``, whose loader requests the core, TeX
  input, CommonHTML output with its fonts, the TeX extensions it autoloads and the assistive MathML;
  everything else (the combined components, the menu, the SVG and MathML outputs, the speech
  engine) goes.

- a file of the artifacts' folders that another of its chapter holds byte for byte (a figure's
  data that are the table beside it): the first of them is kept, a table's CSV before a figure's
  data, and every page's link to another is pointed at it;
- the theme's template stubs (``webpack-macros.html``: Jinja macros that no page loads, shipped
  unrendered).

The notebooks' sources are not copied at all (``html_copy_source: false`` in ``_config.yml``): their
papermill metadata name the build machine's paths.
"""

import re
from pathlib import Path

_FONTAWESOME_JS = re.compile(r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\n?')

#: What the pages' MathJax may request, relative to ``_static/mathjax``: the startup component
#: (``mathjax_path`` in ``_config.yml``), the components its loader loads (``mathjax3_config``),
#: the TeX extensions the ``input/tex`` component autoloads and the CommonHTML fonts.
MATHJAX_KEEP = (
    "startup.js",
    "core.js",
    "input/tex.js",
    "input/tex/extensions",
    "output/chtml.js",
    "output/chtml/fonts/tex.js",
    "output/chtml/fonts/woff-v2",
    "a11y/assistive-mml.js",
)


def _trim_mathjax(root: Path) -> None:
    if not root.is_dir():
        return
    keep = [root / k for k in MATHJAX_KEEP]
    for path in [p for p in root.rglob("*") if p.is_file()]:
        if not any(path == k or k in path.parents for k in keep):
            path.unlink()
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()


def duplicates(folder: Path) -> dict[str, str]:
    """Files of ``folder`` (relative paths) that another file of the same subfolder holds byte for
    byte, each mapped to the one kept: in each group of equal files, a table's CSV before a figure's
    data (``.data.csv``), then the first by name."""
    import hashlib

    groups: dict[tuple[str, str], list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        groups.setdefault((path.parent.as_posix(), digest), []).append(rel)
    out: dict[str, str] = {}
    for files in groups.values():
        keep = sorted(files, key=lambda f: (f.endswith(".data.csv"), f))[0]
        out.update({f: keep for f in files if f != keep})
    return out


def _drop_duplicate_artifacts(out: Path, pages: dict[Path, str]) -> None:
    """Remove the duplicates (:func:`duplicates`) of ``_static/artifacts`` and point every link of
    ``pages`` (path -> text, updated in place) at the file kept."""
    folder = out / "_static" / "artifacts"
    if not folder.is_dir():
        return
    dups = duplicates(folder)
    if not dups:
        return
    pattern = re.compile(
        "_static/artifacts/(" + "|".join(re.escape(d) for d in sorted(dups, key=len, reverse=True)) + ')(?=["#?])'
    )
    for page, text in pages.items():
        pages[page] = pattern.sub(lambda m: "_static/artifacts/" + dups[m.group(1)], text)
    for dup in dups:
        (folder / dup).unlink()


def _trim(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for source_map in (out / "_static").rglob("*.map"):
        source_map.unlink()
    for stub in (out / "_static").rglob("*.html"):  # the theme's Jinja macros, never rendered
        if "{%" in stub.read_text(encoding="utf-8", errors="replace"):
            stub.unlink()
    pages = {page: page.read_text(encoding="utf-8") for page in out.rglob("*.html")}
    before = dict(pages)
    for page, text in pages.items():
        pages[page] = _FONTAWESOME_JS.sub("", text)
    _drop_duplicate_artifacts(out, pages)
    for page, text in pages.items():
        if text != before[page]:
            page.write_text(text, encoding="utf-8")
    for unused in [out / "_static" / "scripts" / "fontawesome.js", *(out / "_static" / "vendor").rglob("*.ttf")]:
        if unused.is_file():
            unused.unlink()
    _trim_mathjax(out / "_static" / "mathjax")


#: The MathJax component the pages load (``sphinx-mathjax-offline`` sets the combined
#: ``tex-chtml.js`` in its own setup, which a value in ``_config.yml`` does not override).
MATHJAX_PATH = "mathjax/startup.js"


def _use_startup(app, config):
    config.mathjax_path = MATHJAX_PATH


def setup(app):
    app.connect("config-inited", _use_startup, priority=900)
    app.connect("build-finished", _trim)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
