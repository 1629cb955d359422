"""Where everything in the book comes from: one entry per table and figure.

For each of the paper's Tables 1 to 9 and Figures 1 to 5, and for every artifact of the
companion's own, :data:`REGISTRY` records the chapter that shows it, the function that makes it, its
artifact files (under ``build/artifacts/<chapter>/``) and the datasets of ``data/`` it reads. The
book's artifact index page is generated from it (:func:`index_markdown`, by the local Sphinx
extension ``book/_ext/sdsl_pages.py``), and so are the landing page's thumbnails of the paper's
figures (:func:`gallery_markdown`); the browser test reads the book against it (each item present
on its page). A test keeps it complete: every artifact of ``baseline/`` is in it, and every
function, file and dataset it names exists.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ARXIV",
    "Item",
    "REGISTRY",
    "paper_items",
    "by_key",
    "artifact_files",
    "resolve",
    "source_link",
    "module_file",
    "data_files",
    "index_markdown",
    "chapter_title",
    "gallery_markdown",
    "thumbnail",
    "figure_label",
    "THUMBNAIL_PX",
]

#: The paper's arXiv page.
ARXIV = "https://arxiv.org/abs/2603.11053"


@dataclass(frozen=True)
class Item:
    """One table or figure: ``key`` (``Table 5``, ``Figure 2`` for the paper's; ``chapter/name`` for
    the companion's), what it shows, the chapter, the function (dotted path), the artifact names
    (without suffix; the first is the one shown), the datasets it reads, whether it is a figure and
    whether the chapter's page shows it (followed by its download links)."""

    key: str
    title: str
    chapter: str
    function: str
    artifacts: tuple[str, ...]
    data: tuple[str, ...] = ()
    figure: bool = False
    shown: bool = True

    @property
    def paper(self) -> bool:
        """Whether this is one of the paper's tables or figures."""
        return self.key.startswith(("Table ", "Figure "))


def _p(key, title, chapter, function, artifacts, data=(), figure=False):
    return Item(key, title, chapter, f"sdsl.chapters.{chapter}.{function}", tuple(artifacts), tuple(data), figure, True)


def _c(chapter, name, title, function, data=(), figure=False, shown=False, artifacts=None):
    mod = function if function.startswith("sdsl.") else f"sdsl.chapters.{chapter}.{function}"
    return Item(f"{chapter}/{name}", title, chapter, mod, tuple(artifacts or (name,)), tuple(data), figure, shown)


# The entries are a table, one call per line: the formatter would explode each into one argument per line.
# fmt: off
REGISTRY: tuple[Item, ...] = (
    # the paper's tables and figures
    _p("Table 1", "acceptance rates of the OPT drafts", "acceptance", "table1", ["table1"], ["acceptance"]),
    _p("Table 2", "acceptance rates of the Qwen drafts", "acceptance", "table2", ["table2"], ["acceptance"]),
    _p("Table 3", "the Eq. 5 plane refitted beside the paper's coefficients", "acceptance", "table3", ["table3"],
       ["acceptance", "paper_table3", "paper_metrics"]),
    _p("Table 4", "per-target linear, logarithmic and power-law fits", "acceptance", "table4",
       ["table4", "table4_vs_paper"], ["acceptance", "paper_table4"]),
    _p("Table 5", "the throughput-optimal draft size N* of the Qwen1.5 targets", "optimal_draft", "table5", ["table5"],
       ["paper_table5", "models"]),
    _p("Table 6", "latencies of the OPT-13B target's drafts and their distance from N*", "latency", "table6",
       ["table6"], ["paper_table6", "latency", "models"]),
    _p("Table 7", "the grid of the scaling analysis", "scaling", "table7", ["table7"], ["paper_table7"]),
    _p("Table 8", "the regression N*/M = mu + M0/M + g ln D + g' ln D'", "scaling", "table8", ["table8", "fit_metrics"],
       ["paper_table7", "paper_table8", "paper_metrics"]),
    _p("Table 9", "the regression N* = mu M + M0", "scaling", "table9", ["table9", "fit_metrics"],
       ["paper_table7", "paper_table9", "paper_metrics"]),
    _p("Figure 1", "acceptance rate against draft and target perplexity, with the Eq. 5 plane", "acceptance",
       "figure1", ["figure1", "figure1_sections"], ["acceptance", "paper_table3"], True),
    _p("Figure 2", "throughput against draft size for the Qwen1.5 targets", "optimal_draft", "figure2",
       ["figure2", "figure2_curves", "figure2_drafts"], ["paper_table5", "models"], True),
    _p("Figure 3", "acceptance rate against draft perplexity, with the fits of Table 4", "acceptance", "figure3",
       ["figure3"], ["acceptance"], True),
    _p("Figure 4", "latency against the distance of the draft from N*", "latency", "figure4", ["figure4"],
       ["latency", "paper_table6", "models"], True),
    _p("Figure 5", "N* and N*/M against M, D and D'", "scaling", "figure5", ["figure5", "grid_solution"],
       ["paper_table7"], True),
    # acceptance
    _c("acceptance", "table3_implied_df", "residual degrees of freedom implied by Table 3",
       "sdsl.model.alpha_fits.implied_residual_df", ["paper_table3"]),
    _c("acceptance", "eq5_coefficients", "the Eq. 5 coefficients used downstream, paper's and refitted",
       "sdsl.model.alpha_fits.fit_plane", ["acceptance", "paper_table3"]),
    # optimal_draft
    _c("optimal_draft", "gamma_check", "closed-form gamma* against a brute-force search", "gamma_check"),
    _c("optimal_draft", "hypotheses_14b", "candidate explanations of Table 5's Qwen1.5-14B rows",
       "sdsl.audit.table5.deviation_hypotheses", ["paper_table5", "models"]),
    _c("optimal_draft", "implied_d_target", "the target tokens D' each Table 5 row implies",
       "sdsl.audit.table5.implied_d_target", ["paper_table5"]),
    _c("optimal_draft", "variants", "N* under both loss laws and integer or continuous gamma", "variants",
       ["paper_table5", "models"]),
    _c("optimal_draft", "speedup", "speedup over plain decoding at N*", "speedup_table", ["paper_table5"]),
    # latency
    _c("latency", "rank_correlations", "rank correlations of latency with the distance from N*", "rank_correlations",
       ["latency", "paper_table6"]),
    _c("latency", "stratified_trend_test", "a trend test within each draft family", "stratified_trend_test",
       ["latency", "paper_table6"]),
    # scaling
    _c("scaling", "variants", "Tables 8 and 9 under every grid reading (spacing, data range)", "variants",
       ["paper_table7", "paper_table8", "paper_table9"]),
    _c("scaling", "variants_n_grid", "Tables 8 and 9 under the spacings of the N grid", "variants",
       ["paper_table7", "paper_table8", "paper_table9"]),
    _c("scaling", "size_ratio", "M/N* over target sizes", "sdsl.model.grid.size_ratio"),
    _c("scaling", "data_effects", "how far N* moves across M, D and D'", "sdsl.model.scaling_law.data_effects",
       ["paper_table7"]),
    # plan_draft
    _c("plan_draft", "plan", "N*, gamma*, alpha and the speedup for the planned target", "sdsl.plan.plan_table",
       ["presets", "paper_table3"], shown=True),
    _c("plan_draft", "candidates", "the candidate drafts as a share of the optimum", "candidates_table",
       ["presets"], shown=True),
    _c("plan_draft", "covariance_sensitivity", "the bootstrap interval with and without the covariance",
       "sdsl.plan.covariance_sensitivity", ["acceptance"], shown=True),
    _c("plan_draft", "figure_throughput", "throughput against draft size for the planned target", "figure_throughput",
       ["presets", "paper_table3"], figure=True, shown=True),
    _c("plan_draft", "table5_check", "the planning code on Table 5's inputs, as printed and with D' = 4e12",
       "table5_check", ["paper_table5"], shown=True),
    _c("plan_draft", "lookup", "N*, gamma*, alpha and the speedups for every dense target preset", "lookup",
       ["presets", "paper_table3", "accelerators"], shown=True),
    # measure_acceptance
    _c("measure_acceptance", "iterations", "drafted and accepted tokens of every iteration",
       "sdsl.measure.harness.measure_acceptance", ["prompts", "local_pair"], shown=True),
    _c("measure_acceptance", "requests", "TTFT, TPOT and TTOT of every request", "sdsl.measure.harness.measure_acceptance",
       ["prompts", "local_pair"]),
    _c("measure_acceptance", "summary", "alpha four ways and the latencies, per draft length", "summary_table",
       ["prompts", "local_pair"], shown=True),
    _c("measure_acceptance", "fig_position_rates", "acceptance rate by draft position", "figure_position_rates",
       ["prompts", "local_pair"], figure=True, shown=True),
    _c("measure_acceptance", "fig_accepted", "accepted tokens per iteration against the truncated geometric law",
       "figure_accepted", ["prompts", "local_pair"], figure=True, shown=True),
    _c("measure_acceptance", "acceptance_row", "the measurement as a row of data/acceptance.csv", "summary_row",
       ["prompts", "local_pair", "acceptance"], shown=True),
    _c("measure_acceptance", "paper_pair_families", "the paper's pairs by family and kind", "paper_pair_families",
       ["acceptance", "models"], shown=True),
    # beyond
    _c("beyond", "law_data", "the measured pairs with sizes and token counts", "sdsl.model.alpha_laws.law_data",
       ["acceptance", "models"], shown=True),
    _c("beyond", "laws", "the acceptance laws compared", "sdsl.model.alpha_laws.law_table", shown=True),
    _c("beyond", "law_parameters", "every law fitted on all pairs", "sdsl.model.alpha_laws.parameter_table",
       ["acceptance", "models"], shown=True),
    _c("beyond", "table4_check", "Table 4 regenerated through the law definitions", "table4_judged",
       ["acceptance", "models", "paper_table4"], shown=True),
    _c("beyond", "cv_predictions", "held-out predictions of every law", "sdsl.model.crossval.cv_predictions",
       ["acceptance", "models"]),
    _c("beyond", "law_ranking", "the laws ranked by held-out error", "sdsl.model.crossval.compare_laws",
       ["acceptance", "models"], shown=True),
    _c("beyond", "fig_predicted_observed", "held-out predicted against observed alpha", "figure_predicted_observed",
       ["acceptance", "models"], figure=True, shown=True),
    _c("beyond", "table5_check", "Table 5 through the generic law search", "sdsl.model.law_variants.table5_check",
       ["paper_table5"], shown=True),
    _c("beyond", "n_star_variants", "N* of every law, loss law and gamma at the targets of Tables 1 and 2",
       "sdsl.model.law_variants.n_star_variants", ["acceptance", "models"]),
    _c("beyond", "n_star_spread", "the spread of N* across the variants", "sdsl.model.law_variants.n_star_spread",
       ["acceptance", "models"], shown=True),
    _c("beyond", "fig_n_star", "N* of every variant", "figure_n_star", ["acceptance", "models"], figure=True,
       shown=True),
    _c("beyond", "ratio_sweep", "M/N* over target sizes for the cross-target laws",
       "sdsl.model.law_variants.ratio_sweep", ["acceptance", "models"]),
    _c("beyond", "ratio_rule", "where M/N* stays near 200", "sdsl.model.law_variants.ratio_rule_range",
       ["acceptance", "models"], shown=True),
    _c("beyond", "fig_ratio", "M/N* against M", "figure_ratio", ["acceptance", "models"], figure=True, shown=True),
    _c("beyond", "elasticities", "elasticities of N* and T(N*)", "sdsl.model.law_variants.elasticity_table",
       ["models", "paper_table3"], shown=True),
    _c("beyond", "fig_tornado", "the elasticities as a tornado chart", "figure_tornado", ["models", "paper_table3"],
       figure=True, shown=True),
    # scorecard
    _c("scorecard", "scorecard", "every printed number and claim with its status", "scorecard",
       ["paper_tables", "paper_claims", "paper_table3", "paper_table4", "paper_table5", "paper_table6",
        "paper_table7", "paper_table8", "paper_table9", "paper_metrics", "acceptance", "latency"], shown=True),
    _c("scorecard", "counts", "the counts per table, as printed and as reinterpreted", "counts_table",
       ["paper_tables", "paper_claims"], shown=True),
    _c("scorecard", "coverage", "every printed number matched to its row", "sdsl.audit.reproduction.coverage",
       ["paper_tables"], shown=True),
    _c("scorecard", "tolerances", "the stated tolerance of each table", "tolerance_table", shown=True),
    _c("scorecard", "fig_counts", "the counts as bars", "figure_counts", ["paper_tables", "paper_claims"],
       figure=True, shown=True),
    # laptop_scale (the model family trained here; reads the committed run under data/laptop_scale/)
    _c("laptop_scale", "runs", "the trained family by role: sizes with and without embeddings, tokens, losses",
       "table_runs", shown=True),
    _c("laptop_scale", "fig_loss_curves", "training loss against tokens seen, every run", "fig_loss_curves",
       figure=True, shown=True),
    _c("laptop_scale", "loss_law", "the calibration loss law against the published constants",
       "sdsl.experiment.analysis.calibration_loss", shown=True),
    _c("laptop_scale", "fig_loss_law", "validation loss against N with the calibration loss law", "fig_loss_law",
       figure=True, shown=True),
    _c("laptop_scale", "alpha", "alpha of every pair with its bootstrap interval",
       "sdsl.experiment.analysis.alpha_summary", shown=True),
    _c("laptop_scale", "prediction_committed", "N* predicted from the calibration runs, as written before the test",
       "table_committed", shown=True),
    _c("laptop_scale", "fig_prediction_draws", "bootstrap draws of the predicted N* by acceptance law",
       "fig_prediction_draws", figure=True, shown=True),
    _c("laptop_scale", "prediction", "predicted against empirical N* per target, throughput lost, verdict",
       "table_prediction", shown=True),
    _c("laptop_scale", "fig_throughput", "2 M T(N) per target: prediction and measurement with their bands",
       "fig_throughput", figure=True, shown=True),
    _c("laptop_scale", "alpha_out_of_sample", "alpha of the test pairs predicted from the calibration runs",
       "sdsl.experiment.analysis.out_of_sample_alpha"),
    _c("laptop_scale", "fig_alpha_out_of_sample", "predicted against measured alpha, held-out target included",
       "fig_alpha_out_of_sample", figure=True, shown=True),
    _c("laptop_scale", "prediction_non_embedding", "the same test with N counted without embeddings",
       "table_prediction", shown=True),
    _c("laptop_scale", "costs", "M / N*, tokens per parameter and the cost of the paper's regime",
       "sdsl.experiment.analysis.scale_costs", shown=True),
    _c("laptop_scale", "wallclock", "plain against speculative decoding, interleaved rounds, medians with intervals",
       "sdsl.experiment.analysis.wallclock_summary", shown=True),
    _c("laptop_scale", "wallclock_optimum", "the wall-clock best draft per target with the interval of its N",
       "sdsl.experiment.analysis.wallclock_optimum", shown=True),
    _c("laptop_scale", "fig_wallclock", "measured wall-clock speedup against N and Theorem 3.8", "fig_wallclock",
       figure=True, shown=True),
)
# fmt: on


def paper_items() -> list[Item]:
    """The paper's Tables 1 to 9 and Figures 1 to 5, in that order."""
    return [i for i in REGISTRY if i.paper]


def by_key(key: str) -> Item:
    """The item of ``key`` (``"Figure 2"``, ``"beyond/law_ranking"``); ``KeyError`` naming the known keys."""
    for item in REGISTRY:
        if item.key == key:
            return item
    raise KeyError(f"no item {key!r} in the registry; it has {[i.key for i in REGISTRY]}")


_SUFFIXES = (".csv", ".svg", ".png", ".data.csv")


def artifact_files(item: Item, root: Path | str) -> list[str]:
    """The files of ``item`` that exist under the artifacts tree ``root`` (``chapter/name.suffix``)."""
    root = Path(root)
    return [
        f"{item.chapter}/{a}{s}"
        for a in item.artifacts
        for s in _SUFFIXES
        if (root / item.chapter / f"{a}{s}").is_file() and not (s == ".csv" and a.endswith(".data"))
    ]


def resolve(function: str):
    """The object a dotted path names (``sdsl.chapters.acceptance.table1``); ``ValueError`` if none."""
    module, _, name = function.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"registry: {function!r} does not name an importable object ({exc})") from None


def module_file(function: str) -> str:
    """The Python file (relative to the repository) that defines ``function``."""
    from sdsl.paths import ROOT

    obj = inspect.unwrap(resolve(function))
    source = inspect.getsourcefile(obj)
    if source is None:
        raise ValueError(f"registry: {function!r} has no Python source file to link to")
    return Path(source).resolve().relative_to(ROOT).as_posix()


def source_link(function: str, prefix: str = "") -> str:
    """A link to the lines of ``function`` on the book's own page of its module (``_code/``, written
    by the local Sphinx extension ``book/_ext/sdsl_source.py``), relative to a page ``prefix``
    (``""`` at the book's root, ``"../"`` one folder down)."""
    obj = inspect.unwrap(resolve(function))
    line = inspect.getsourcelines(obj)[1]
    return f"{prefix}_code/{module_file(function)}.html#L-{line}"


def data_files(name: str) -> list[str]:
    """The files of dataset ``name`` of ``data/`` the book shows: its CSV or text file and its
    provenance file (relative to the repository)."""
    from sdsl.paths import DATA

    files = sorted(p.name for p in DATA.iterdir() if p.stem == name and p.suffix in (".csv", ".txt", ".yml"))
    if not files:
        raise ValueError(f"registry: dataset {name!r} has no file in data/")
    return [f"data/{f}" for f in files]


def _data_link(name: str, prefix: str = "") -> str:
    files = data_files(name)
    shown = next((f for f in files if not f.endswith(".yml")), files[0])
    # raw HTML: the pages of _code/ are written by the builder, not documents MyST could resolve
    return f'<a href="{prefix}_code/{shown}.html"><code>{shown.removeprefix("data/")}</code></a>'


def chapter_title(chapter: str) -> str:
    """The title of a chapter: the first heading of its notebook (``notebooks/<chapter>.md``)."""
    from sdsl.paths import ROOT

    path = ROOT / "notebooks" / f"{chapter}.md"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"{path}: no level-1 heading to take the chapter's title from")


def _files_cell(item: Item, root: Path | str, static_prefix: str) -> str:
    """The artifact's files, one line per artifact: its name and a link per kind (CSV, SVG, ...)."""
    labels = {".csv": "CSV", ".svg": "SVG", ".png": "PNG", ".data.csv": "data"}
    lines = []
    for a in item.artifacts:
        links = [
            f'<a href="{static_prefix}/{item.chapter}/{a}{suffix}">{label}</a>'
            for suffix, label in labels.items()
            if f"{item.chapter}/{a}{suffix}" in artifact_files(item, root)
        ]
        if links:
            lines.append(f"{a.replace('_', ' ')}: {', '.join(links)}")
    return "<br>".join(lines) or "\u2013"


def index_markdown(root: Path | str, static_prefix: str = "_static/artifacts") -> str:
    """The artifact index page's body (MyST): one table for the paper's items and one per chapter
    for the companion's, with the function that makes it (linked to its source), the artifact files
    (linked to the copies the book serves under ``static_prefix``) and the datasets it reads (linked
    to the book's pages of them)."""
    prefix = static_prefix[: -len("_static/artifacts")] if static_prefix.endswith("_static/artifacts") else ""

    def row(item: Item, with_chapter: bool) -> str:
        data = ", ".join(_data_link(d, prefix) for d in item.data) or "\u2013"
        fn = f'<a href="{source_link(item.function, prefix)}"><code>{item.function.rsplit(".", 1)[1]}</code></a>'
        name = item.key if item.paper else item.key.split("/", 1)[1].replace("_", " ")
        where = f" {{doc}}`{chapter_title(item.chapter)} <executed/{item.chapter}>` |" if with_chapter else ""
        return f"| {name} | {item.title} |{where} {fn} | {_files_cell(item, root, static_prefix)} | {data} |"

    out = [
        "## The paper's tables and figures",
        "",
        "| item | what it shows | chapter | made by | files | reads |",
        "|:--|:--|:--|:--|:--|:--|",
        *[row(i, True) for i in paper_items()],
        "",
    ]
    chapters = list(dict.fromkeys(i.chapter for i in REGISTRY if not i.paper))
    for ch in chapters:
        out += [
            f"## {chapter_title(ch)}",
            "",
            f"The companion's own tables and figures of the chapter {{doc}}`{chapter_title(ch)} <executed/{ch}>`.",
            "",
            "| item | what it shows | made by | files | reads |",
            "|:--|:--|:--|:--|:--|",
            *[row(i, False) for i in REGISTRY if not i.paper and i.chapter == ch],
            "",
        ]
    return "\n".join(out)


#: The width (px) of the landing page's thumbnails: twice the 246 px of a card, for sharp screens.
THUMBNAIL_PX = 492


def thumbnail(png: Path | str, dest: Path | str, width: int = THUMBNAIL_PX) -> Path:
    """Write a ``width``-px-wide copy of the figure ``png`` to ``dest`` in 256 colours (written only
    when missing or older than ``png``; no metadata, so two builds write the same bytes)."""
    from PIL import Image

    png, dest = Path(png), Path(dest)
    if dest.is_file() and dest.stat().st_mtime >= png.stat().st_mtime:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(png) as im:
        small = im.convert("RGB").resize((width, round(im.height * width / im.width)), Image.Resampling.LANCZOS)
    # 256 colours without dithering: a plot's flat colours and antialiased edges survive, and the
    # file is about a third of the full-colour one
    small = small.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    tmp = dest.with_name(f".{dest.name}.tmp")
    small.save(tmp, format="PNG", optimize=True)
    tmp.replace(dest)
    return dest


def figure_label(item: Item) -> str:
    """The label of the chapter's figure that regenerates the paper's ``item`` (``Figure 2`` ->
    ``optimal_draft-fig2``), as the notebook names it."""
    return f"{item.chapter}-fig{item.key.split()[1]}"


def gallery_markdown(
    root: Path | str,
    static_prefix: str = "_static/artifacts",
    thumbnails: Path | str | None = None,
    thumbnail_prefix: str = "_static/thumbnails",
) -> str:
    """A grid of the paper's five figures (sphinx-design cards, MyST), each a thumbnail of our
    regeneration (:func:`thumbnail`, written into ``thumbnails`` and linked under
    ``thumbnail_prefix``; without ``thumbnails``, the full PNG under ``static_prefix``) linked to
    the figure in its chapter. Raises ``ValueError`` naming a figure whose PNG is missing."""
    cards = []
    for item in (i for i in paper_items() if i.figure):
        png = Path(root) / item.chapter / f"{item.artifacts[0]}.png"
        if not png.is_file():
            raise ValueError(f"{png}: the landing page's thumbnail of {item.key} is missing; run the pipeline first")
        if thumbnails is not None:
            name = f"{item.chapter}-{item.artifacts[0]}.png"
            thumbnail(png, Path(thumbnails) / name)
            img = f"{thumbnail_prefix}/{name}"
        else:
            img = f"{static_prefix}/{item.chapter}/{item.artifacts[0]}.png"
        cards += [
            f":::{{grid-item-card}} {item.key}",
            f":link: {figure_label(item)}",
            ":link-type: ref",
            f":img-top: {img}",
            f":img-alt: {item.key}: {item.title}",
            "",
            item.title[0].upper() + item.title[1:] + ".",
            ":::",
            "",
        ]
    return "\n".join(["::::{grid} 1 2 3 3", ":gutter: 2", "", *cards, "::::"])
