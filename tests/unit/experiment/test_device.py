"""The experiment's code is device-agnostic: every tensor fed to a model is made on the model's
device, and every decision is taken on the CPU.

No GPU is needed to test this. With torch's default device set to ``meta`` (tensors without
data), any tensor made without naming a device lands on a device other than the model's, which is
what happens to such a tensor on a GPU machine (made on the CPU, the model on ``cuda``). Where
the GPU raises a device mismatch, a CPU kernel fed a meta tensor may instead return garbage, so
the runs under the ``meta`` default also run under :class:`NoMixedDevices`, a torch function mode
that refuses any call mixing tensors of two devices. Each function runs once normally and once so
guarded, and the two results must be identical: the same arithmetic on the same device.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._pytree import tree_leaves  # noqa: E402

from sdsl.experiment.config import ModelShape, Recipe, RunSpec  # noqa: E402
from sdsl.experiment.greedy import draft_matches, greedy_continuations  # noqa: E402
from sdsl.experiment.pairs import teacher_forced_overlap  # noqa: E402
from sdsl.experiment.training import build_model, evaluate_loss, train_run  # noqa: E402
from sdsl.measure.sampling import autoregressive_generate, model_device, speculative_generate  # noqa: E402

V = 64


class NoMixedDevices(TorchFunctionMode):
    """Refuse every torch call whose tensor arguments live on more than one device."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        devices = {t.device.type for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        if len(devices) > 1:
            raise RuntimeError(f"{getattr(func, '__name__', func)} mixes devices {sorted(devices)}")
        return func(*args, **kwargs)


@contextlib.contextmanager
def default_device(name: str):
    before = torch.get_default_device()
    torch.set_default_device(name)
    try:
        yield
    finally:
        torch.set_default_device(before)


def _model(width: int, layers: int, seed: int):
    return build_model(ModelShape(width, layers, 2), V, 64, seed=seed).eval()


def _both(fn):
    """``fn()`` with the default device left alone, then with it set to ``meta`` and no call
    allowed to mix devices."""
    plain = fn()
    with default_device("meta"), NoMixedDevices():
        moved = fn()
    return plain, moved


def test_the_guard_catches_a_tensor_made_without_a_device():
    # the check itself: an input made without a device is refused at the first op that meets the
    # model's weights; one made on the model's device passes and gives the plain logits
    model = _model(16, 1, 0)
    with torch.inference_mode():
        ref = model(input_ids=torch.tensor([[1, 2, 3]])).logits
        with default_device("meta"), NoMixedDevices():
            with pytest.raises(RuntimeError, match=r"embedding mixes devices \['cpu', 'meta'\]"):
                model(input_ids=torch.tensor([[1, 2, 3]]))
            ok = model(input_ids=torch.tensor([[1, 2, 3]], device=model_device(model))).logits
    assert torch.equal(ok, ref)


def test_speculative_and_plain_decoding_do_not_depend_on_the_default_device():
    target, draft = _model(32, 2, 1), _model(16, 1, 2)
    prompt = [1, 5, 9, 2]

    def spec(temperature):
        gen = torch.Generator().manual_seed(3)
        r = speculative_generate(
            target, draft, prompt, gamma=3, max_new_tokens=12, temperature=temperature, generator=gen
        )
        return r.tokens, r.accepted, r.beta_sum

    for temperature in (1.0, 0.0):
        plain, moved = _both(lambda t=temperature: spec(t))
        assert plain == moved
    plain, moved = _both(
        lambda: (
            autoregressive_generate(
                target, prompt, max_new_tokens=8, temperature=1.0, generator=torch.Generator().manual_seed(4)
            ).tokens
        )
    )
    assert plain == moved


def test_greedy_replay_and_overlap_do_not_depend_on_the_default_device():
    target, draft = _model(32, 2, 1), _model(16, 1, 2)
    prompts = [[1, 2, 3], [4, 5, 6], [7, 8]]
    ys_plain, ys_moved = _both(lambda: greedy_continuations(target, prompts, 6, batch=2))
    assert ys_plain == ys_moved
    m_plain, m_moved = _both(lambda: draft_matches(draft, prompts, ys_plain, batch=2))
    assert all(np.array_equal(a, b) for a, b in zip(m_plain, m_moved))
    wins = torch.randint(0, V, (4, 9), generator=torch.Generator().manual_seed(5), device="cpu")
    o_plain, o_moved = _both(lambda: teacher_forced_overlap(draft, target, wins, batch=2))
    assert o_plain.equals(o_moved)


def test_training_and_evaluation_do_not_depend_on_the_default_device():
    rng = np.random.default_rng(0)
    train_ids = rng.integers(0, V, 4000).astype(np.uint16)
    val = torch.from_numpy(rng.integers(0, V, (6, 17)).astype(np.int64))
    rec = Recipe(batch_size=4, seq_len=16, curve_points=4, curve_evals=2, curve_eval_windows=2, eval_windows=6)
    run = RunSpec(ModelShape(16, 1, 2), 640)

    models = [build_model(run.shape, V, 32, seed=7) for _ in range(2)]  # built on the CPU, as on a GPU machine

    def train():
        model = models.pop()
        res = train_run(model, run, train_ids, val, rec, torch.Generator().manual_seed(8))
        return res.metrics["val_loss"], [c["train_loss"] for c in res.curve], evaluate_loss(model, val)[0]

    plain, moved = _both(train)
    assert plain == moved


def test_bf16_training_runs_under_autocast_and_learns():
    rng = np.random.default_rng(1)
    # a learnable stream: a fixed cycle of 32 tokens
    train_ids = np.tile(np.arange(32, dtype=np.uint16), 400)
    val = torch.from_numpy(np.tile(np.arange(32), 2)[:33][None, :].repeat(4, 0).astype(np.int64))
    run = RunSpec(ModelShape(32, 1, 2), 16 * 32 * 60)
    losses = {}
    for precision in ("fp32", "bf16"):
        rec = Recipe(batch_size=16, seq_len=32, curve_points=4, curve_evals=1, eval_windows=4, precision=precision)
        model = build_model(run.shape, V, 64, seed=9)
        losses[precision] = train_run(
            model, run, train_ids, val, rec, torch.Generator().manual_seed(int(rng.integers(9)))
        )
        assert all(p.dtype == torch.float32 for p in model.parameters())  # weights stay float32
    for res in losses.values():
        assert res.metrics["val_loss"] < 0.5 * np.log(V)  # the cycle is learnt: far below a uniform guess
    # autocast is in effect: bfloat16 rounding moves the training losses (fp32 would repeat them)
    assert losses["bf16"].curve[0]["train_loss"] != losses["fp32"].curve[0]["train_loss"]


def test_an_unknown_precision_is_refused_with_the_allowed_ones():
    with pytest.raises(ValueError, match=r"precision must be one of \['fp32', 'bf16'\], got 'fp16'"):
        Recipe(precision="fp16")
