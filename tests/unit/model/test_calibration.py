"""sdsl.model.calibration: the CPU preset comes from the committed measurements, and the fits
recover known numbers from simulated step times."""

from __future__ import annotations

import numpy as np
import pytest

from sdsl import data
from sdsl.model import calibration as C
from sdsl.model import hardware as H


def _rows():
    return [dict(r) for r in data.records("cpu_step_times")], [dict(r) for r in data.records("cpu_microbench")]


def test_cpu_preset_is_the_effective_fit_of_the_committed_measurements():
    """data/accelerators.csv's cpu-here row, to its printed 4 significant digits."""
    rows, _ = _rows()
    fit = C.fit_effective(rows)
    row = {r["accelerator"]: r for r in data.records("accelerators")}["cpu-here"]
    assert row["peak_flops"] == pytest.approx(fit.peak_flops, rel=5e-4)
    assert row["bandwidth"] == pytest.approx(fit.bandwidth, rel=5e-4)
    assert row["layer_overhead_s"] == pytest.approx(fit.layer_overhead, rel=5e-4)
    assert fit.step_overhead < 1e-9 and row["step_overhead_s"] == 0


def test_measurements_cover_sizes_tokens_batches_and_contexts():
    rows, bench = _rows()
    assert len({r["config"] for r in rows}) >= 6 and {r["architecture"] for r in rows} == {"gpt2", "llama"}
    assert {r["tokens"] for r in rows} >= {1, 2, 4, 8, 16, 32, 64} and {r["batch"] for r in rows} == {1, 4}
    assert len({r["context"] for r in rows}) >= 3
    assert {b["quantity"] for b in bench} == {"matmul_flops", "read_bandwidth", "peak_flops"}


def _simulated(acc, rows, noise, rng):
    out = []
    for r in rows:
        t = float(H.step_time(C.shape_of(r), acc, r["batch"], r["context"], r["tokens"]))
        out.append({**r, "seconds": t * float(np.exp(rng.normal(0, noise)))})
    return out


def test_fits_recover_a_known_roofline_from_simulated_step_times():
    rows, bench = _rows()
    truth = H.Accelerator("truth", 4e10, 8e9, np.inf, 2e-3, 1e-3, 4.0, "fp32")
    sim = _simulated(truth, rows, 0.0, np.random.default_rng(0))
    fit = C.fit_effective(sim)
    assert fit.peak_flops == pytest.approx(4e10, rel=1e-4) and fit.bandwidth == pytest.approx(8e9, rel=1e-4)
    assert fit.step_overhead == pytest.approx(2e-3, rel=1e-3) and fit.layer_overhead == pytest.approx(1e-3, rel=1e-3)
    assert C.error_summary(C.step_time_errors(sim, fit))["max_abs"] < 1e-4
    # overheads alone, on top of a known roofline: exact without noise, close with 5 % noise
    base = H.Accelerator("b", 4e10, 8e9, np.inf, 0, 0, 4.0, "fp32")
    assert C.fit_overheads(sim, base) == pytest.approx((2e-3, 1e-3), rel=1e-6)
    noisy = _simulated(truth, rows, 0.05, np.random.default_rng(1))
    t0, tl = C.fit_overheads(noisy, base)
    assert t0 == pytest.approx(2e-3, rel=0.3) and tl == pytest.approx(1e-3, rel=0.15)


def test_cross_validation_predicts_each_configuration_from_the_others():
    rows, bench = _rows()
    cv = C.cross_validated_errors(bench, rows)
    assert len(cv) == len(rows)
    s = C.error_summary(cv)
    assert 0 < s["median_abs"] < s["p90_abs"] <= s["max_abs"]
