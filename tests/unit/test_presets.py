"""data/presets.csv: sourced sizes (recomputed from the architecture columns), tokens left unknown
where no source states them, mixture-of-experts targets refused."""

from __future__ import annotations

import math

import pytest

from sdsl import data
from sdsl import plan as P


def param_count(
    formula: str,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    intermediate: int,
    vocab: int,
    tied: int,
) -> int:
    """Parameters of one dense architecture. ``formula``: ``llama`` (Llama 3, Mistral: no biases,
    two RMSNorms per layer), ``qwen2`` (Qwen1.5/2.5: biases on q, k, v), ``qwen3`` (per-head RMSNorm
    of q and k), ``gemma2`` (four RMSNorms per layer), ``olmo2`` (RMSNorms after attention and MLP
    and of q and k over all heads), ``opt`` / ``opt350`` (OPT: biases, LayerNorms, 2048 + 2 learned
    positions; OPT-350M projects a 512-wide embedding in and out)."""
    d, q, kv, ff = hidden, heads * head_dim, kv_heads * head_dim, intermediate
    if formula in ("opt", "opt350"):
        e = 512 if formula == "opt350" else d
        proj = 2 * 512 * d if formula == "opt350" else 0
        layer = 4 * (d * d + d) + (d * ff + ff) + (ff * d + d) + 4 * d
        return vocab * e + 2050 * d + proj + layers * layer + (0 if formula == "opt350" else 2 * d)
    attn, norms = d * q + 2 * d * kv + q * d, 2 * d
    if formula == "qwen2":
        attn += q + 2 * kv
    elif formula == "qwen3":
        norms += 2 * head_dim
    elif formula == "gemma2":
        norms = 4 * d
    elif formula == "olmo2":
        norms = 2 * d + q + kv
    return vocab * d * (1 if tied else 2) + layers * (attn + 3 * d * ff + norms) + d


FORMULA = {
    "OPT": "opt",
    "Qwen1.5": "qwen2",
    "Qwen2.5": "qwen2",
    "Qwen3": "qwen3",
    "Gemma-2": "gemma2",
    "OLMo-2": "olmo2",
}
ROWS = data.records("presets")


def _known(x):
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def test_formulas_reproduce_the_method_notes_exact_counts():
    """The counts the method notes give (s.6), from the architectures alone."""
    assert param_count("opt", 40, 5120, 40, 40, 128, 20480, 50272, 1) == 12853473280
    assert param_count("opt350", 24, 1024, 16, 16, 64, 4096, 50272, 1) == 331196416
    assert param_count("qwen2", 40, 5120, 40, 40, 128, 13696, 152064, 0) == 14167290880
    assert param_count("qwen2", 24, 896, 14, 2, 64, 4864, 151936, 1) == 494032768
    assert param_count("llama", 80, 8192, 64, 8, 128, 28672, 128256, 0) == 70553706496


@pytest.mark.parametrize("row", [r for r in ROWS if _known(r["layers"])], ids=lambda r: r["preset"])
def test_every_architecture_gives_its_parameter_count(row):
    f = FORMULA.get(row["family"], "llama")
    if row["preset"] == "opt-350m":
        f = "opt350"
    args = [
        row[c]
        for c in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab", "tied_embeddings")
    ]
    assert param_count(f, *args) == row["params"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["preset"])
def test_size_agrees_with_the_card(row):
    """Cards print a size truncated (Llama-3.2-1B: 1.23B for 1.2358B) or the nominal size of the
    name (OLMo-2-13B: 13.7B): within one unit of the last printed digit, or 6 % for a nominal size;
    the exact counts are checked against the architectures above."""
    unit = 2 * data.printed_tolerance("presets").set_index("preset").loc[row["preset"], "card_params"]
    assert abs(row["params"] - row["card_params"]) <= max(unit, 0.06 * row["params"])


def test_table_covers_the_issues_families_from_1b_to_405b():
    dense = [r for r in ROWS if r["architecture"] == "dense" and r["role"] == "target"]
    fams = {r["family"] for r in dense}
    assert {"Llama-3.1", "Llama-3.2", "Qwen2.5", "Qwen3", "Gemma-2", "Mistral", "OLMo-2", "OPT"} <= fams
    sizes = [r["params"] for r in dense]
    assert min(sizes) < 1.5e9 and max(sizes) > 4e11
    for r in ROWS:
        assert r["params_source"] and r["tokens_source"] and r["arch_source"], r["preset"]
        if not _known(r["tokens"]):
            assert "unknown" in r["tokens_source"] or "not stated" in r["tokens_source"], r["preset"]


def test_unknown_tokens_are_asked_for_not_guessed():
    with pytest.raises(ValueError, match="pre-training tokens D' of Mistral-7B-v0.3 are not stated"):
        P.check_inputs("mistral-7b-v0.3")
    with pytest.raises(ValueError, match="draft_tokens .* not stated"):
        P.check_inputs("mistral-7b-v0.3", target_tokens=8e12)
    inp = P.check_inputs("mistral-7b-v0.3", target_tokens=8e12, draft_tokens=8e12)
    assert inp.target.params == 7248023552


@pytest.mark.parametrize("name", ["qwen3-30b-a3b", "qwen3-235b-a22b", "Mixtral-8x7B"])
def test_mixture_of_experts_is_refused_with_one_clear_line(name):
    with pytest.raises(ValueError, match="mixture-of-experts model .* dense targets") as err:
        P.get_preset(name)
    assert "\n" not in str(err.value)


def test_draft_only_presets_are_refused_as_targets():
    drafts = [r["preset"] for r in ROWS if r["role"] == "draft"]
    assert "opt-125m" in drafts
    for name in drafts:
        with pytest.raises(ValueError, match=f"'{name}' .* is a draft-only preset"):
            P.get_preset(name)


def test_presets_differing_only_in_case_are_refused(monkeypatch):
    rows = [dict(r) for r in ROWS]
    twin = dict(next(r for r in rows if r["preset"] == "llama-3-70b"), preset="Llama-3-70B", model="Other")
    monkeypatch.setattr(P, "preset_records", lambda: (*rows, twin))
    with pytest.raises(ValueError, match="'llama-3-70b' and 'Llama-3-70B', which differ only in case"):
        P.get_preset("opt-13b")
