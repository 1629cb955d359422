"""sdsl.model.hardware: the roofline of a decoding step and the plans it implies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdsl.model import hardware as H
from sdsl.model import laws
from sdsl.model import optimum as optimum

M, D_T = 70553706496, 15e12
Y = float(laws.perplexity(M, D_T))


def alpha_of_n(n, d=15e12):
    return laws.acceptance_rate(laws.perplexity(n, d), Y)


LLAMA70 = H.Architecture(params=M, layers=80, q_dim=8192, kv_dim=1024, embedding_params=128256 * 8192)


def test_step_time_by_hand():
    acc = H.Accelerator(
        "toy", peak_flops=1e12, bandwidth=1e11, memory=1e12, step_overhead=1e-3, layer_overhead=1e-4, bytes_per_param=2,
        attention_flops=5e11, attention_bandwidth=5e10,
    )  # fmt: skip
    s = H.Architecture(params=1e9, layers=10, q_dim=1000, kv_dim=100)
    # weight products: max(2e9 * b=2 FLOPs at 1e12, 2e9 bytes at 1e11); attention over L=100 + k=1
    # positions: max(4*10*1000*2*101 FLOPs at 5e11, 2*10*100*2 bytes * 2 * 101 at 5e10)
    products = max(2 * 1e9 * 2 / 1e12, 2e9 / 1e11)
    attention = max(4 * 10 * 1000 * 2 * 101 / 5e11, 2 * 10 * 100 * 2 * 2 * 101 / 5e10)
    assert float(H.step_time(s, acc, 2, 100, 1)) == pytest.approx(1e-3 + 1e-3 + products + attention, rel=1e-12)
    # 100 tokens each: the products are compute-bound
    products = 2 * 1e9 * 2 * 100 / 1e12
    attention = max(4 * 10 * 1000 * 2 * 100 * 200 / 5e11, 2 * 10 * 100 * 2 * 2 * 200 / 5e10)
    assert float(H.step_time(s, acc, 2, 100, 100)) == pytest.approx(2e-3 + products + attention, rel=1e-12)


def test_speedup_falls_below_one_where_no_draft_length_pays():
    """At a large batch the target's verification of b (gamma + 1) tokens is compute-bound: every
    draft length loses, and the plan reports the best of them below 1 instead of 'plain decoding' at
    1.0; the best draft length falls with the batch."""
    acc = H.get_accelerator("h200")
    plans = [H.plan_on_hardware(LLAMA70, alpha_of_n, acc.times(4), (1e7, M / 2), batch=b) for b in (1, 64, 1024)]
    assert plans[0].pays and plans[0].speedup > 1.5
    assert not plans[-1].pays and plans[-1].speedup < 1 and plans[-1].gamma_star == 1
    assert [p.gamma_star for p in plans] == sorted((p.gamma_star for p in plans), reverse=True)


def test_a_fixed_draft_length_is_evaluated_not_searched():
    acc = H.get_accelerator("h200").times(2)
    free = H.plan_on_hardware(LLAMA70, alpha_of_n, acc, (1e7, M / 2))
    fixed = H.plan_on_hardware(LLAMA70, alpha_of_n, acc, (1e7, M / 2), gamma=2)
    assert fixed.gamma_star == 2 and fixed.gamma_fixed and not free.gamma_fixed
    assert fixed.speedup <= free.speedup
    n = fixed.n_star
    assert H.speedup_at(n, float(alpha_of_n(n)), LLAMA70, acc, gamma=2) == (2, pytest.approx(fixed.speedup, rel=1e-9))
    with pytest.raises(ValueError, match="gamma .* integer >= 1"):
        H.plan_on_hardware(LLAMA70, alpha_of_n, acc, (1e7, M / 2), gamma=0)


@pytest.mark.parametrize(
    "m, d_draft, d_target", [(M, 15e12, 15e12), (14167290880, 180e9, 4e12), (12853473280, 180e9, 180e9)]
)
def test_flop_model_is_the_batch1_memory_bound_limit(m, d_draft, d_target):
    """With infinite compute, no overhead, no KV cache and batch 1 the roofline plan is the paper's
    plan with an integer gamma: same N* (1e-9: both are the one kernel on proportional objectives), same gamma*, and a
    speedup equal to the tokens-per-FLOP ratio T(N*) * 2M."""
    y = float(laws.perplexity(m, d_target))
    shape = H.Architecture(params=m, layers=40, q_dim=0, kv_dim=0)
    hp = H.plan_on_hardware(
        shape, lambda n: laws.acceptance_rate(laws.perplexity(n, d_draft), y), H.flop_limit(), (1e7, m / 2)
    )
    ref = optimum.optimal_draft_size(m, d_draft, d_target, integer=True, n_bounds=(1e7, m / 2))
    assert hp.n_star == pytest.approx(ref.n_star, rel=1e-9)
    assert hp.gamma_star == ref.gamma_star
    assert hp.speedup == pytest.approx(ref.speedup, rel=1e-9)
    assert hp.verify_cost == 1.0 and hp.target_bound == "memory"


def test_plan_matches_a_brute_force_search():
    acc = H.get_accelerator("h100-sxm").times(2)
    hp = H.plan_on_hardware(LLAMA70, alpha_of_n, acc, (1e7, M / 2), batch=16, context=2048)
    n = np.geomspace(1e7, M / 2, 3000)
    best = max((H.speedup_at(x, float(alpha_of_n(x)), LLAMA70, acc, 16, 2048)[1], x) for x in n)
    assert hp.speedup >= best[0] * (1 - 1e-9)
    assert hp.speedup == pytest.approx(best[0], rel=1e-5)


def test_gamma_falls_with_batch_size_and_speculation_stops_paying():
    """The practitioners' observation (best draft length falls with batch size) follows from the
    roofline: verification turns compute-bound once batch * (gamma + 1) passes the ridge point."""
    acc = H.get_accelerator("h100-sxm").times(2)
    plans = [H.plan_on_hardware(LLAMA70, alpha_of_n, acc, (1e7, M / 2), batch=b) for b in (1, 8, 32, 64, 128, 512)]
    gammas = [p.gamma_star for p in plans]
    assert gammas == sorted(gammas, reverse=True) and gammas[0] > gammas[-1]
    assert [p.speedup for p in plans] == sorted([p.speedup for p in plans], reverse=True)
    assert plans[0].target_bound == "memory" and plans[-1].gamma_star <= 1


def test_overlap_hides_the_draft():
    """Overlapped drafting (step = max(draft, verify)) never loses to sequential drafting, and with
    the draft's cost hidden the best draft is at least as large."""
    acc = H.get_accelerator("h200")
    for b in (1, 32):
        seq = H.plan_on_hardware(LLAMA70, alpha_of_n, acc, (1e7, M / 2), batch=b)
        ov = H.plan_on_hardware(LLAMA70, alpha_of_n, acc, (1e7, M / 2), batch=b, overlap=True)
        assert ov.speedup >= seq.speedup
        assert ov.n_star >= seq.n_star


def test_tensor_parallel_and_memory():
    a = H.get_accelerator("h100-sxm")
    assert a.memory == 80e9
    two = a.times(2)
    assert (two.peak_flops, two.bandwidth, two.memory, two.count) == (2 * a.peak_flops, 2 * a.bandwidth, 160e9, 2)
    assert two.attention_bandwidth_rate == 2 * a.attention_bandwidth_rate and two.layer_overhead == a.layer_overhead
    hp = H.plan_on_hardware(LLAMA70, alpha_of_n, a, (1e7, M / 2))
    assert not hp.fits_in_memory  # 141 GB of bf16 weights on one 80 GB device
    assert H.plan_on_hardware(
        LLAMA70, alpha_of_n, a.with_bytes_per_param(1, "fp8").times(2), (1e7, M / 2)
    ).fits_in_memory


def test_draft_shape_keeps_the_aspect_ratio():
    d = H.draft_shape(M / 1000, LLAMA70)
    assert d.layers == pytest.approx(8.0) and d.kv_dim == pytest.approx(102.4) and d.embedding_params == 0
    assert d.kv_elements_per_token() / LLAMA70.kv_elements_per_token() == pytest.approx(1000 ** (-2 / 3))


def test_errors():
    with pytest.raises(ValueError, match="unknown hardware 'h100'; did you mean .*'h100-sxm'"):
        H.get_accelerator("h100")
    with pytest.raises(ValueError, match="batch .* must be >= 1"):
        H.step_time(LLAMA70, H.get_accelerator("h200"), 0, 0, 1)
    with pytest.raises(ValueError, match="n_range must satisfy"):
        H.plan_on_hardware(LLAMA70, alpha_of_n, H.get_accelerator("h200"), (1e9, 1e8))
    with pytest.raises(ValueError, match="gpus .* integer >= 1"):
        H.get_accelerator("h200").times(0)
    assert math.isinf(H.flop_limit().peak_flops)
