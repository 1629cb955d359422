"""What the reader reads, written as a reader writes it (loaded via ``sphinx: local_extensions``).

- A number glued into the prose (myst-nb's ``{glue:text}``, a ``pasted-text`` span) in Python's
  notation is written as printed: ``2.836e+08`` as 2.836 × 10⁸, ``1e+07`` as 10⁷, a minus sign
  instead of a hyphen.
- A figure's image gets its caption as its alternative text (myst-nb gives it the hash file name),
  its LaTeX written out (``$\\alpha$`` as α).

Both run after myst-nb has chosen each output's format (its post-transform of priority 4).
"""

import re

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from sdsl.book.tables import as_printed

_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")
#: LaTeX of the captions, as text.
_LATEX = (
    (r"\\mathcal\{(\w)\}", r"\1"),
    (r"\\alpha", "α"),
    (r"\\gamma", "γ"),
    (r"\\mu", "μ"),
    (r"\\sum", "Σ"),
    (r"\\le(q)?\b", "≤"),
    (r"\\ge(q)?\b", "≥"),
    (r"\\times", "×"),
    (r"\\ln\b", "ln"),
    (r"\\cdot", "·"),
    (r"\^\{?\*\}?", "*"),
    (r"\^\{(\d+)\}", lambda m: m.group(1).translate(_SUPERSCRIPT)),
    (r"'", "′"),
    (r"\\[a-zA-Z]+", ""),
    (r"[{}$\\]", ""),
)


def plain_latex(latex: str) -> str:
    """Inline LaTeX as the text it shows (``N^*`` -> N*, ``\\alpha`` -> α, ``10^{14}`` -> 10¹⁴)."""
    text = latex
    for pattern, repl in _LATEX:
        text = re.sub(pattern, repl, text)
    return " ".join(text.split())


def caption_text(node: nodes.Node) -> str:
    """The text of a caption, its math written out."""
    out = []
    for child in node.findall(lambda n: isinstance(n, (nodes.Text, nodes.math))):
        if isinstance(child, nodes.math):
            out.append(plain_latex(child.astext()))
        elif not any(isinstance(p, nodes.math) for p in _parents(child)):
            out.append(child.astext())
    return " ".join("".join(out).split())


def _parents(node):
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


class ReaderText(SphinxPostTransform):
    default_priority = 50

    def run(self, **kwargs):
        for span in self.document.findall(nodes.inline):
            if "pasted-text" in span["classes"]:
                for text in list(span.findall(nodes.Text)):
                    printed = as_printed(str(text))
                    if printed != str(text):
                        text.parent.replace(text, nodes.Text(printed))
        for figure in self.document.findall(nodes.figure):
            captions = [c for c in figure.children if isinstance(c, nodes.caption)]
            if not captions:
                continue
            alt = caption_text(captions[0])
            for image in figure.findall(nodes.image):
                image["alt"] = alt


def setup(app):
    app.add_post_transform(ReaderText)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
