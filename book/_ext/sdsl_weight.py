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


def _trim(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for source_map in (out / "_static").rglob("*.map"):
        source_map.unlink()
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        trimmed = _FONTAWESOME_JS.sub("", text)
        if trimmed != text:
            page.write_text(trimmed, encoding="utf-8")
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
