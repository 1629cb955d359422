"""Pages of the book generated at build time (loaded via ``sphinx: local_extensions``).

Markers in a page's source are replaced, when Sphinx reads it, by MyST text generated from the
package and the artifacts the pipeline copied into ``_static/artifacts`` (never typed):

- ``<!-- sdsl:figure-gallery -->``: the paper's five figures as thumbnails (written into
  ``_static/thumbnails/``, this extension's own folder) linked to the figures in their chapters
  (:func:`sdsl.book.registry.gallery_markdown`);
- ``<!-- sdsl:reproduction -->``: the scorecard's counts, as printed and as reinterpreted
  (:func:`sdsl.book.landing.reproduction_markdown`);
- ``<!-- sdsl:headline -->``: what reproduces and what does not, in numbers
  (:func:`sdsl.book.landing.headline_markdown`);
- ``<!-- sdsl:artifact-index -->``: the artifact index (:func:`sdsl.book.registry.index_markdown`).

A marker whose inputs are missing (the pipeline has not run) stops the build with one line naming
what is missing.
"""

from pathlib import Path

from sphinx.errors import ExtensionError


def _generate(app, docname, source):
    text = source[0]
    if "<!-- sdsl:" not in text:
        return
    from sdsl.book import landing, registry

    root = Path(app.srcdir) / "_static" / "artifacts"
    prefix = "/".join([".."] * docname.count("/") + ["_static", "artifacts"])
    generators = {
        "<!-- sdsl:figure-gallery -->": lambda: registry.gallery_markdown(
            root, prefix, Path(app.srcdir) / "_static" / "thumbnails", prefix.replace("artifacts", "thumbnails")
        ),
        "<!-- sdsl:reproduction -->": lambda: landing.reproduction_markdown(root),
        "<!-- sdsl:headline -->": lambda: landing.headline_markdown(root),
        "<!-- sdsl:artifact-index -->": lambda: registry.index_markdown(root, prefix),
    }
    for marker, make in generators.items():
        if marker in text:
            try:
                text = text.replace(marker, make())
            except (ValueError, FileNotFoundError, KeyError) as exc:
                raise ExtensionError(f"{docname}: cannot generate {marker}: {exc}") from None
    source[0] = text


def setup(app):
    app.connect("source-read", _generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
