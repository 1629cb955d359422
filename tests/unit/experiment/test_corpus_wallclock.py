"""The corpus split and Theorem 3.8 of Leviathan et al. (2023)."""

from __future__ import annotations

import numpy as np
import pytest

from sdsl.experiment import corpus
from sdsl.experiment.wallclock import best_integer_gamma, theorem38_speedup


def test_the_committed_slice_is_genesis():
    docs, info = corpus.read_kjv(corpus.KJV_SLICE)
    assert len(docs) == 50 and docs[0].doc_id == "Ge1"
    assert docs[0].text.startswith("In the beginning God created the heaven and the earth.")
    assert info.documents == 50


def test_chunks_respect_the_limit_and_keep_the_text():
    docs, _ = corpus.read_kjv(corpus.KJV_SLICE)
    chunks = corpus.chunk_documents(docs[:5], 500)
    assert all(len(c.text) <= 500 for c in chunks)
    assert "".join(c.text.replace(" ", "") for c in chunks) == "".join(d.text.replace(" ", "") for d in docs[:5])


def test_split_is_seeded_disjoint_and_complete():
    docs, _ = corpus.read_kjv(corpus.KJV_SLICE)
    chunks = corpus.chunk_documents(docs, 1000)
    a = corpus.split_chunks(chunks, 0.1, 0.05, np.random.default_rng(5))
    b = corpus.split_chunks(chunks, 0.1, 0.05, np.random.default_rng(5))
    assert {k: [c.doc_id for c in v] for k, v in a.items()} == {k: [c.doc_id for c in v] for k, v in b.items()}
    ids = [c.doc_id for v in a.values() for c in v]
    assert sorted(ids) == sorted(c.doc_id for c in chunks) and len(set(ids)) == len(ids)
    with pytest.raises(ValueError, match="val_fraction must lie in"):
        corpus.split_chunks(chunks, 0.6, 0.05, np.random.default_rng(5))


def test_bad_kjv_line_is_named():
    with pytest.raises(ValueError, match="KJV text line 2"):
        corpus.parse_kjv("Ge1:1 In the beginning\nnot a verse")


def test_theorem38_against_its_formula_and_best_gamma_against_brute_force():
    for alpha in (0.2, 0.5, 0.8, 0.95):
        for c in (0.05, 0.3, 1.0):
            g = np.arange(1, 13)
            direct = (1 - alpha ** (g + 1)) / ((1 - alpha) * (g * c + 1))
            np.testing.assert_allclose(theorem38_speedup(alpha, g, c), direct, rtol=1e-12)
            assert best_integer_gamma(alpha, c, 12) == int(g[np.argmax(direct)])
    assert theorem38_speedup(0.0, 3, 0.1) == pytest.approx(1 / 1.3)
    with pytest.raises(ValueError, match="c \\(cost ratio\\) must be > 0"):
        theorem38_speedup(0.5, 2, 0.0)


def test_the_median_interval_has_its_binomial_coverage():
    from math import comb

    from sdsl.experiment.wallclock import median_interval

    med, lo, hi, cover = median_interval([5.0, 1.0, 4.0, 2.0, 3.0])
    # five rounds: the extremes, covering 1 - 2 / 2^5
    assert (med, lo, hi) == (3.0, 1.0, 5.0) and cover == pytest.approx(1 - 2 / 32, rel=1e-15)
    x = np.arange(20.0)
    med, lo, hi, cover = median_interval(x)
    k = int(lo) + 1  # the k-th order statistic (values 0..19)
    exact = 1 - 2 * sum(comb(20, i) for i in range(k)) / 2**20
    assert cover == pytest.approx(exact, rel=1e-12) and cover >= 0.95 and hi == x[20 - k]
    with pytest.raises(ValueError, match="must not be empty"):
        median_interval([])


def test_a_source_whose_text_differs_from_the_committed_runs_is_named_with_the_version_to_install():
    """A Debian point release of python3.11-doc (3.11.2-6+deb12u8 against +deb12u9: 1,956 of 11 M
    characters) changed the tokenizer and moved the third run's predicted N* by 23 %: such a corpus
    is named, both versions and digests, with the command that installs the recorded one."""
    import dataclasses

    from sdsl.experiment import corpus as C

    recorded = C.recorded_sources()
    assert {"kjv", "fortunes", "python-docs"} <= set(recorded)
    docs = recorded["python-docs"]
    same = C.SourceInfo("python-docs", "x", "python3.11-doc", docs["version"], "PSF", 1, 1, docs["sha256"])
    assert C.source_differences([same], recorded) == []
    other = dataclasses.replace(same, version="3.11.2-6+deb12u8", sha256="1528ea8aee8c" + "0" * 52)
    (line,) = C.source_differences([other], recorded)
    assert "python3.11-doc 3.11.2-6+deb12u8" in line and f"read {docs['version']}" in line
    assert f"apt-get install -y python3.11-doc={docs['version']}" in line
    # a source the committed run did not read (the GPU scale's Linux documentation) is not compared
    assert C.source_differences([dataclasses.replace(same, source="linux-docs", sha256="0")], recorded) == []
