"""The runner of the experiment, in the order the test needs: the calibration runs are trained and
measured, the prediction of ``N*`` with its interval is computed from them and written with its
sha256 and time, and only then are the test drafts placed around it, trained, measured and timed.
Every task (training, measuring, timing, predicting) runs in a worker process: on this machine in a
pool of ``workers`` processes of the standard library (:class:`concurrent.futures.ProcessPoolExecutor`;
no Ray needed), which on a GPU packs ``workers`` tasks onto the one device at once; on a Ray
cluster with ``address`` (``ray.init(address=...)``), :data:`TASKS_PER_GPU` tasks per GPU when the
models run on GPUs.

Phases, in order (:meth:`Experiment.phases`)::

    corpus                the corpus and the tokenizer
    calibration training  drafts, fit targets and held-out targets (largest first, in parallel)
    calibration alpha     alpha of every (calibration draft, fit target) pair (in parallel)
    prediction            N* per target with its bootstrap interval (sdsl.experiment.predict),
                          written to prediction/prediction_committed.csv before any test draft,
                          with the sizes the baselines pick (sdsl.experiment.baselines)
    test training         the test drafts of the grid around the prediction (in parallel)
    test alpha            alpha of every (test draft, target) pair, held-out targets included
    grid extension        where a target's measured optimum lies at an end of the grid, sizes
                          beyond that end (Experiment.extend_task)
    extension training    those drafts, then their alpha with every target (extension alpha)
    seed replicates       for every target, the test shapes nearest its measured optimum that
                          have one seed get a second (Experiment.replicate_task)
    replicate training    those drafts, then their alpha with every target (replicate alpha)
    wall clock            plain and speculative decoding of every test pair, one at a time

Work folder ``out`` (default ``build/experiment/<scale>``)::

    state.json          scale, settings digest, sessions (start, end, command)
    corpus/             tokenizer.json, train/val/prompts token ids (.npy), sources.json
    models/<run>/       checkpoints (save_pretrained, safetensors)
    train/<run>.json    metrics and loss curve of one run
    alpha/<key>.json    one pair at one temperature (counts, per-prompt statistics)
    prediction/         prediction_committed.csv, baselines_committed.csv and prediction.json (their
                        sha256, the time, the test grid, the design's checks),
                        grid_extension.json and replicates.json (the drafts the rules added)
    wallclock/<key>.json
    done/               one marker per finished task (wall and CPU time, start and end in UTC)
    results/            the tables, tokenizer.json and provenance.yml (what is committed)

Resuming (``resume=True``) skips every task with a marker; the test grid is read back from
``prediction/prediction.json``, so a resumed run tests the prediction it committed. A run started
with other settings refuses to resume. Seeds: every random choice derives from ``Scale.seed`` and
the task's name (:func:`sdsl.experiment.pairs.seed_for`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdsl.experiment import collect as _collect
from sdsl.experiment import corpus as _corpus
from sdsl.experiment import tokenizer as _tok
from sdsl.experiment.collect import pair_key as _pair_key
from sdsl.experiment.config import PHASES, SCALES, ModelShape, RunSpec, Scale
from sdsl.experiment.pairs import counts_to_iterations, make_prompts, measure_alpha, seed_for, teacher_forced_overlap
from sdsl.experiment.results import atomic_write_text
from sdsl.measure.estimators import alpha_from_accepted
from sdsl.paths import BUILD, ROOT

__all__ = ["Experiment", "Task", "default_out", "run"]

#: Assumed throughput for the cost estimates of the progress bar.
_EST_FLOPS = 30e9
#: On a Ray cluster whose tasks run on GPUs, the tasks that share one GPU (each asks for this
#: fraction of one): the models of the experiment are small, and one per GPU would leave it idle.
TASKS_PER_GPU = 4


#: Where the measured optimum of a target lies at an end of the test grid, the grid is extended
#: once beyond that end by this many sizes, so that the measured N* is bracketed (the committed
#: prediction is not touched; the extension drafts are test drafts like the others).
GRID_EXTENSION = 5


def default_out(scale: str) -> Path:
    return BUILD / "experiment" / scale


@dataclass(frozen=True)
class Task:
    """One unit of work of a phase: its id (``kind/key``), kind and estimated cost (seconds)."""

    task_id: str
    kind: str
    cost: float


@dataclass(frozen=True)
class Phase:
    """A phase: its name, its tasks, and whether they run side by side."""

    name: str
    tasks: list[Task]
    parallel: bool = True


class Experiment:
    """One scale's tasks in one work folder, every model on ``device`` (training and decoding;
    sampling decisions are made on the CPU from the logits, :func:`sdsl.measure.sampling.model_device`)."""

    def __init__(
        self, scale: Scale, out: str | os.PathLike, *, device: str = "cpu", threads: int = 1, decode_threads: int = 1
    ) -> None:
        self.scale, self.out, self.device = scale, Path(out), str(device)
        self.threads, self.decode_threads = int(threads), int(decode_threads)
        self._models: dict[str, object] = {}
        self._cache: dict[str, object] = {}

    # ------------------------------------------------------------------ corpus and tokenizer
    def corpus_task(self, advance) -> None:
        s = self.scale
        docs, infos = _corpus.load_sources(s.corpus)
        chunks = _corpus.chunk_documents(docs, s.max_chunk_chars)
        splits = _corpus.split_chunks(
            chunks, s.val_fraction, s.prompt_fraction, np.random.default_rng(seed_for(s.seed, "split"))
        )
        advance(0.2)
        tok = _tok.train_tokenizer([c.text for c in splits["train"]], s.vocab_size)
        advance(0.6)
        folder = self.out / "corpus"
        folder.mkdir(parents=True, exist_ok=True)
        stats: dict[str, dict[str, Any]] = {}
        for name, part in splits.items():
            ids = _tok.encode_documents(tok, [c.text for c in part])
            np.save(folder / f"{name}.npy", ids)
            by_source = {
                src: sum(len(c.text) for c in part if c.source == src) for src in sorted({c.source for c in part})
            }
            stats[name] = {"chunks": len(part), "tokens": int(ids.size), "characters_by_source": by_source}
        total = sum(v["tokens"] for v in stats.values())
        if total < s.min_corpus_tokens:
            raise ValueError(f"the corpus has {total} tokens, the scale needs at least {s.min_corpus_tokens}")
        train, budget = stats["train"]["tokens"], max(r.tokens for r in s.runs())
        if s.max_epochs is not None and budget > s.max_epochs * train:
            raise ValueError(
                f"the largest token budget ({budget:,}) is {budget / train:.2f} epochs of the training split "
                f"({train:,} tokens), more than the scale's max_epochs ({s.max_epochs})"
            )
        atomic_write_text(folder / "tokenizer.json", _tok.tokenizer_json(tok))
        atomic_write_text(
            folder / "sources.json",
            json.dumps(
                {
                    "sources": [asdict(i) for i in infos],
                    "splits": stats,
                    "chunks": len(chunks),
                    "tokenizer_sha256": _tok.sha256_text(_tok.tokenizer_json(tok)),
                },
                indent=1,
            ),
        )

    def _cached(self, key: str, make):
        """``make()`` once per key and experiment (the corpus, tokenizer and prompts are read once)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def tokenizer(self):
        return self._cached("tokenizer", lambda: _tok.load_tokenizer(self.out / "corpus" / "tokenizer.json"))

    def hf_tokenizer(self):
        return self._cached("hf_tokenizer", lambda: _tok.to_transformers(self.tokenizer()))

    def split(self, name: str) -> np.ndarray:
        return self._cached(f"split/{name}", lambda: np.load(self.out / "corpus" / f"{name}.npy"))

    def val_windows(self):
        """The validation windows of the final loss (the same for every run)."""
        import torch

        from sdsl.experiment.training import windows

        def make():
            w = windows(self.split("val"), self.scale.recipe.seq_len)
            return torch.from_numpy(w[: min(self.scale.recipe.eval_windows, w.shape[0])])

        return self._cached("val_windows", make)

    def prompts(self) -> tuple[str, ...]:
        """The prompt texts, in the order the measurements use them (the first ``max_prompts``)."""
        m = self.scale.measurement
        tok = self.tokenizer()
        n = max(m.max_prompts, m.timing_prompts)
        return self._cached(
            "prompts",
            lambda: tuple(
                make_prompts(self.split("prompts"), tok.token_to_id(_tok.EOS), m.prompt_tokens, n, tok.decode)
            ),
        )

    def prompt_ids(self) -> tuple[list[int], ...]:
        """The prompts as the harness encodes them (the target's tokenizer)."""
        tok = self.hf_tokenizer()
        return self._cached("prompt_ids", lambda: tuple(tok(p)["input_ids"] for p in self.prompts()))

    # ------------------------------------------------------------------ training
    def train_cost(self, run: RunSpec) -> float:
        from sdsl.experiment.training import flops_per_token

        return (
            flops_per_token(self.scale.params(run.shape), run.shape, self.scale.recipe.seq_len)
            * run.tokens
            / _EST_FLOPS
        )

    def train_task(self, run: RunSpec, advance) -> None:
        import torch

        from sdsl.experiment.training import build_model, train_run

        s, rec = self.scale, self.scale.recipe
        torch.set_num_threads(self.threads)
        tok = self.tokenizer()
        model = build_model(
            run.shape,
            tok.get_vocab_size(),
            2 * rec.seq_len,
            seed_for(s.seed, "init", run.run_id),
            eos_token_id=tok.token_to_id(_tok.EOS),
        ).to(self.device)
        gen = torch.Generator().manual_seed(seed_for(s.seed, "order", run.run_id))
        val = self.val_windows().to(self.device)
        res = train_run(
            model,
            run,
            self.split("train"),
            val,
            rec,
            gen,
            on_step=lambda i, n: advance(0.97 * i / n) if i % 20 == 0 else None,
        )
        model.to("cpu").save_pretrained(str(self.out / "models" / run.run_id))
        atomic_write_text(
            self.out / "train" / f"{run.run_id}.json", json.dumps({"metrics": res.metrics, "curve": res.curve})
        )

    def model(self, run_id: str):
        if run_id not in self._models:
            from transformers import GPT2LMHeadModel

            if len(self._models) >= 6:  # keep a few loaded: pairs are ordered by target
                self._models.pop(next(iter(self._models)))
            model = GPT2LMHeadModel.from_pretrained(str(self.out / "models" / run_id))
            # transformers declares PreTrainedModel.to as functools.wraps(torch.nn.Module.to), which types
            # the bound method as the unbound function (self first): the device reads as the model
            self._models[run_id] = model.to(self.device).eval()  # type: ignore[arg-type]
        return self._models[run_id]

    # ------------------------------------------------------------------ pairs
    def alpha_task(self, draft: RunSpec, target: RunSpec, temperature: float, advance) -> None:
        import torch

        torch.set_num_threads(self.decode_threads)
        m = self.scale.measurement
        d, t = self.model(draft.run_id), self.model(target.run_id)
        seed = seed_for(self.scale.seed, "alpha", draft.run_id, target.run_id, int(temperature * 1000))
        t0 = time.perf_counter()
        meas = measure_alpha(
            d, t, self.hf_tokenizer(), list(self.prompts()), temperature=temperature, measurement=m, seed=seed
        )
        method = {"method": "speculative sampling", "harness_prompts": meas.n_prompts, "harness_identical": None}
        seconds = time.perf_counter() - t0
        ov = teacher_forced_overlap(d, t, self.val_windows()[: m.overlap_windows])
        row = {
            "draft": draft.run_id,
            "target": target.run_id,
            "temperature": float(temperature),
            "gamma": m.gamma,
            "n_prompts": meas.n_prompts,
            **method,
            "reached_target": "yes" if meas.reached_target else "no",
            "half_width": meas.half_width,
            "overlap": float(ov["overlap"].mean()),
            "overlap_se": float(ov["overlap"].std(ddof=1) / np.sqrt(len(ov))),
            "agree": float(ov["agree"].mean()),
            "agree_se": float(ov["agree"].std(ddof=1) / np.sqrt(len(ov))),
            "measure_s": seconds,
        }
        atomic_write_text(
            self.out / "alpha" / f"{_pair_key(draft.run_id, target.run_id, temperature)}.json",
            json.dumps(
                {
                    "pair": row,
                    "counts": meas.counts.to_dict(orient="list"),
                    "prompts": meas.prompts.to_dict(orient="list"),
                }
            ),
        )

    def wallclock_task(self, draft: RunSpec, target: RunSpec, advance) -> None:
        import torch

        from sdsl.experiment.wallclock import time_pair

        torch.set_num_threads(self.decode_threads)
        m = self.scale.measurement
        temp = float(m.temperatures[0])
        rec = json.loads((self.out / "alpha" / f"{_pair_key(draft.run_id, target.run_id, temp)}.json").read_text())
        it = counts_to_iterations(pd.DataFrame(rec["counts"]))
        it = it[it["drafted"] > 0]
        alpha = alpha_from_accepted(it["accepted"], it["drafted"]).alpha
        tok = self.hf_tokenizer()
        prompts = [tok(p)["input_ids"] for p in self.prompts()[: m.timing_prompts]]
        res = time_pair(
            self.model(target.run_id),
            self.model(draft.run_id),
            prompts,
            alpha=alpha,
            new_tokens=m.timing_new_tokens,
            temperature=temp,
            rounds=m.timing_rounds,
            max_gamma=m.max_gamma,
            seed=seed_for(self.scale.seed, "wallclock", draft.run_id, target.run_id),
        )
        row = {"draft": draft.run_id, "target": target.run_id, "temperature": temp, "alpha": alpha, **res}
        atomic_write_text(self.out / "wallclock" / f"{_pair_key(draft.run_id, target.run_id)}.json", json.dumps(row))

    # ------------------------------------------------------------------ the prediction
    def prediction_path(self) -> Path:
        return self.out / "prediction" / "prediction.json"

    def predict_task(self, advance) -> None:
        """N* of every target from the calibration runs only, and the sizes the baselines pick from
        them (:func:`sdsl.experiment.baselines.rule_sizes`), written before any test draft
        (:func:`sdsl.experiment.predict.commit_prediction`)."""
        from sdsl.experiment.baselines import rule_sizes
        from sdsl.experiment.predict import COUNTS, commit_prediction

        s = self.scale
        runs = pd.DataFrame([self.train_record(r)["metrics"] | {"role": s.role(r)} for r in s.runs()])
        pairs = pd.DataFrame([self.alpha_record(d, t)["pair_alpha"] for d, t in s.calibration_pairs()])
        sizes = [
            rule_sizes(
                runs,
                pairs,
                count=count,
                rng=np.random.default_rng(seed_for(s.seed, "baselines", count)),
                n_resamples=s.prediction_resamples,
            )[0]
            for count in COUNTS
        ]
        commit_prediction(s, runs, pairs, self.out / "prediction", pd.concat(sizes, ignore_index=True))

    def train_record(self, run: RunSpec) -> dict:
        return json.loads((self.out / "train" / f"{run.run_id}.json").read_text())

    def alpha_record(self, draft: RunSpec, target: RunSpec) -> dict:
        """The alpha record of a pair at the first temperature, with ``pair_alpha``: ``draft,
        target, alpha, half_width`` (alpha the MLE of the counts)."""
        temp = float(self.scale.measurement.temperatures[0])
        rec = json.loads((self.out / "alpha" / f"{_pair_key(draft.run_id, target.run_id, temp)}.json").read_text())
        it = counts_to_iterations(pd.DataFrame(rec["counts"]))
        it = it[it["drafted"] > 0]
        rec["pair_alpha"] = {
            "draft": draft.run_id,
            "target": target.run_id,
            "alpha": alpha_from_accepted(it["accepted"], it["drafted"]).alpha,
            "half_width": rec["pair"]["half_width"],
        }
        return rec

    def grid_runs(self) -> list[RunSpec]:
        """The test drafts placed around the committed prediction (empty before it is written)."""
        p = self.prediction_path()
        if not p.is_file():
            return []
        return self.scale.test_runs(json.loads(p.read_text())["grid_n_stars"])

    def extension_path(self) -> Path:
        return self.out / "prediction" / "grid_extension.json"

    def _added_runs(self, path: Path, replicate: int) -> list[RunSpec]:
        """The test drafts a rule wrote to ``path`` (``shapes``), as runs of ``replicate``; empty
        before the rule ran."""
        if not path.is_file():
            return []
        shapes = json.loads(path.read_text())["shapes"]
        return [RunSpec(ModelShape(*sh), self.scale.common_tokens, replicate) for sh in shapes]

    def extension_runs(self) -> list[RunSpec]:
        """The test drafts added beyond an end of the grid (:meth:`extend_task`; empty before)."""
        return self._added_runs(self.extension_path(), 1)

    def replicates_path(self) -> Path:
        return self.out / "prediction" / "replicates.json"

    def replicate_runs(self) -> list[RunSpec]:
        """The second seeds added near the measured optima (:meth:`replicate_task`; empty before)."""
        return self._added_runs(self.replicates_path(), 2)

    def test_runs(self) -> list[RunSpec]:
        """Every test draft: the grid around the prediction, its extension and the second seeds
        near the measured optima."""
        return self.grid_runs() + self.extension_runs() + self.replicate_runs()

    def _measured_optima(self, drafts: list[RunSpec]) -> dict[str, dict]:
        """Per target (fit and held out), :func:`sdsl.experiment.predict.smooth_optimum` of its
        measured alpha over ``drafts``."""
        from sdsl.experiment.predict import smooth_optimum

        s = self.scale
        out: dict[str, dict] = {}
        for t in s.target_runs() + s.held_out_runs():
            n = np.array([float(s.params(d.shape)) for d in drafts])
            recs = [self.alpha_record(d, t) for d in drafts]
            a = np.array([r["pair_alpha"]["alpha"] for r in recs])
            sd = np.array([r["pair_alpha"]["half_width"] for r in recs]) / 1.96
            out[t.run_id] = smooth_optimum(n, a, sd, float(s.params(t.shape)))
        return out

    def replicate_task(self, advance) -> None:
        """For every target, the :attr:`DraftGrid.seeds_near` test shapes nearest its measured
        optimum (the smooth fit over the grid and its extension) that have one seed get a second
        (replicate 2), so that the drafts near the measured optima, like those near the
        predictions, are measured twice. Written to ``replicates.json`` (the optima, the shapes
        added); the committed prediction is not touched."""
        s = self.scale
        drafts = self.grid_runs() + self.extension_runs()
        optima = self._measured_optima(drafts)
        shapes = sorted({d.shape for d in drafts}, key=s.params)
        twice = {d.shape for d in drafts if d.replicate == 2}
        near = s.test_grid.nearest(shapes, [o["n_star"] for o in optima.values()], s.vocab_size)
        added = [sh for sh in near if sh not in twice]
        rec = {
            "optima": {k: {"n_star": v["n_star"], "where": v["where"]} for k, v in optima.items()},
            "shapes": [[sh.width, sh.layers, sh.heads] for sh in added],
            "runs": [RunSpec(sh, s.common_tokens, 2).run_id for sh in added],
        }
        atomic_write_text(self.replicates_path(), json.dumps(rec, indent=1))

    def extend_task(self, advance) -> None:
        """Where the smooth fit to a target's measured throughput on the grid peaks at an end of
        it, the measured optimum is not bracketed: add :data:`GRID_EXTENSION` sizes beyond that
        end (:meth:`sdsl.experiment.config.DraftGrid.beyond`), for every target at once. Written
        to ``grid_extension.json`` (the ends found, the shapes added); the committed prediction is
        not touched."""
        s, grid = self.scale, self.grid_runs()
        ends = {k: v["where"] for k, v in self._measured_optima(grid).items()}
        shapes = [d.shape for d in grid]
        added: list[ModelShape] = []
        for side in ("upper", "lower"):
            if side in ends.values():
                added += s.test_grid.beyond(shapes, side == "upper", GRID_EXTENSION, s.vocab_size)
        rec = {
            "ends": ends,
            "shapes": [[sh.width, sh.layers, sh.heads] for sh in added],
            "runs": [RunSpec(sh, s.common_tokens, 1).run_id for sh in added],
        }
        atomic_write_text(self.extension_path(), json.dumps(rec, indent=1))

    def all_runs(self) -> dict[str, RunSpec]:
        return {r.run_id: r for r in self.scale.runs() + self.test_runs()}

    # ------------------------------------------------------------------ the phases
    def phases(self) -> list[Callable[[], Phase]]:
        """The phases in order (module docstring), each made when it starts: the test phases
        need the committed prediction."""
        s, m = self.scale, self.scale.measurement
        per_alpha = m.max_prompts * m.new_tokens * 4e-3
        per_wall = m.timing_prompts * m.timing_new_tokens * m.timing_rounds * 6e-3

        def train(runs: list[RunSpec]) -> list[Task]:
            return [
                Task(f"train/{r.run_id}", "train", self.train_cost(r))
                for r in sorted(runs, key=self.train_cost, reverse=True)
            ]

        def alpha(pairs) -> list[Task]:
            return [
                Task(f"alpha/{_pair_key(d.run_id, t.run_id, temp)}", "alpha", per_alpha)
                for d, t in pairs
                for temp in m.temperatures
            ]

        return [
            lambda: Phase("corpus", [Task("corpus", "corpus", 15.0 if s.corpus == "debian" else 2.0)], parallel=False),
            lambda: Phase("calibration training", train(s.runs())),
            lambda: Phase("calibration alpha", alpha(s.calibration_pairs())),
            lambda: Phase("prediction", [Task("predict", "predict", 30.0)], parallel=False),
            lambda: Phase("test training", train(self.grid_runs())),
            lambda: Phase("test alpha", alpha(s.test_pairs(self.grid_runs()))),
            lambda: Phase("grid extension", [Task("extend", "extend", 5.0)], parallel=False),
            lambda: Phase("extension training", train(self.extension_runs())),
            lambda: Phase("extension alpha", alpha(s.test_pairs(self.extension_runs()))),
            lambda: Phase("seed replicates", [Task("replicate", "replicate", 5.0)], parallel=False),
            lambda: Phase("replicate training", train(self.replicate_runs())),
            lambda: Phase("replicate alpha", alpha(s.test_pairs(self.replicate_runs()))),
            lambda: Phase(
                "wall clock",
                [
                    Task(f"wallclock/{_pair_key(d.run_id, t.run_id)}", "wallclock", per_wall)
                    for d, t in s.test_pairs(self.test_runs())
                ],
                parallel=False,
            ),
        ]

    def work(self, task_id: str, advance) -> None:
        """Do the task ``task_id`` (an id of :meth:`phases`)."""
        kind, _, key = task_id.partition("/")
        if kind == "corpus":
            return self.corpus_task(advance)
        if kind == "predict":
            return self.predict_task(advance)
        if kind == "extend":
            return self.extend_task(advance)
        if kind == "replicate":
            return self.replicate_task(advance)
        runs = self.all_runs()
        if kind == "train":
            return self.train_task(runs[key], advance)
        parts = key.split("__")
        if kind == "alpha":
            return self.alpha_task(runs[parts[0]], runs[parts[1]], float(parts[2][1:]), advance)
        if kind == "wallclock":
            return self.wallclock_task(runs[parts[0]], runs[parts[1]], advance)
        raise ValueError(f"unknown task {task_id!r}")

    # ------------------------------------------------------------------ results
    def collect(self) -> Path:
        """Assemble the raw results of every finished task into ``out/results``
        (:func:`sdsl.experiment.collect.collect`)."""
        return _collect.collect(self)


_EXPERIMENTS: dict[tuple, Experiment] = {}


def _quiet() -> None:
    """No hub access, no per-load progress bars or config warnings from transformers."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _work(scale_name: str, out: str, device: str, threads: int, task_id: str) -> dict[str, Any]:
    """The body of every task, in a worker process or a Ray task: one :class:`Experiment` per worker process and work folder,
    reused across tasks. Returns the task's wall time, the CPU time of its process, its start
    and end (seconds since the epoch) and the node and process it ran on."""
    import socket

    from sdsl.experiment.config import get_scale

    start, t0, c0 = time.time(), time.perf_counter(), time.process_time()
    key = (scale_name, out, device, threads)
    if key not in _EXPERIMENTS:
        _quiet()
        _EXPERIMENTS[key] = Experiment(
            get_scale(scale_name), out, device=device, threads=threads, decode_threads=threads
        )
    _EXPERIMENTS[key].work(task_id, lambda f: None)
    return {
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
        "start": start,
        "end": time.time(),
        "node": socket.gethostname(),
        "pid": os.getpid(),
    }


def done_marker(done_dir: Path, task_id: str) -> Path:
    return Path(done_dir) / (task_id.replace("/", "__") + ".json")


class _Executor:
    """Where the tasks run: :class:`_Processes` (this machine) or :class:`_Ray` (a cluster). A
    task is submitted by its id and returns :func:`_work`'s record."""

    def record(self) -> dict[str, Any]:  # pragma: no cover - the subclasses say
        raise NotImplementedError

    def submit(self, task_id: str) -> Any:  # pragma: no cover
        raise NotImplementedError

    def ready(self, handles: list) -> list:  # pragma: no cover
        """The handles of ``handles`` that have finished (at least one; blocks until then)."""
        raise NotImplementedError

    def result(self, handle: Any) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def cancel(self, handles) -> None:  # pragma: no cover
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover
        raise NotImplementedError


class _Processes(_Executor):
    """A pool of ``workers`` processes on this machine, started fresh (``spawn``: no state of the
    driver, CUDA included, is inherited), each reusing its :class:`Experiment` across tasks; on a
    GPU every worker puts its models on the one device, so ``workers`` tasks share it."""

    def __init__(self, args: tuple[str, str, str, int], workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.args, self.workers = args, int(workers)
        self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))

    def record(self) -> dict[str, Any]:
        return {"kind": "processes", "workers": self.workers, "start": "spawn"}

    def submit(self, task_id: str):
        scale_name, out, device, threads = self.args
        return self.pool.submit(_work, scale_name, out, device, threads, task_id)

    def ready(self, handles: list) -> list:
        from concurrent.futures import FIRST_COMPLETED, wait

        return list(wait(handles, return_when=FIRST_COMPLETED).done)

    def result(self, handle) -> dict[str, Any]:
        return handle.result()

    def cancel(self, handles) -> None:
        for h in handles:
            h.cancel()

    def close(self) -> None:
        """Cancel what has not started and end the workers now (a killed run must not leave its
        tasks running: their results would have no marker)."""
        procs = list(getattr(self.pool, "_processes", {}).values())  # the pool offers no kill of its own
        self.pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=10)


class _Ray(_Executor):
    """The Ray cluster at ``address``: every task a Ray task of ``threads`` CPUs and, on GPUs,
    ``1 / TASKS_PER_GPU`` of one."""

    def __init__(self, args: tuple, address: str, threads: int, gpus: bool) -> None:
        import ray

        self.ray = ray
        self.started = start_ray(address, 0)
        self.address = address
        self.remote: Any = ray.remote(
            num_cpus=int(threads), num_gpus=(1.0 / TASKS_PER_GPU) if gpus else 0, max_retries=0
        )(_work)
        self.args = args

    def record(self) -> dict[str, Any]:
        return {"kind": "ray", "address": self.address, "version": self.ray.__version__}

    def submit(self, task_id: str):
        return self.remote.remote(*self.args, task_id)

    def ready(self, handles: list) -> list:
        done, _ = self.ray.wait(handles, num_returns=1)
        return list(done)

    def result(self, handle) -> dict[str, Any]:
        return self.ray.get(handle)

    def cancel(self, handles) -> None:
        for h in handles:
            self.ray.cancel(h)

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def _execute(
    phase: Phase,
    ex: _Executor,
    done_dir: Path,
    *,
    session: int,
    log: Callable[[str], None],
) -> None:
    """Run the tasks of ``phase`` without a marker on the executor ``ex``, all at once when the
    phase is parallel (the executor runs as many as it has workers), else one after the other;
    write each one's marker when it finishes. A task that raises leaves no marker; its error is
    raised once the tasks already running have finished (those not started are cancelled)."""
    todo = [t for t in phase.tasks if not done_marker(done_dir, t.task_id).is_file()]
    if not todo:
        return
    log(f"phase {phase.name}: {len(todo)} task(s)")
    kinds = {t.task_id: t.kind for t in todo}

    def finish(task_id: str, rec: dict) -> None:
        atomic_write_text(
            done_marker(done_dir, task_id),
            json.dumps({"task": task_id, "kind": kinds[task_id], "phase": phase.name, "session": int(session), **rec}),
        )
        log(f"done {task_id} in {rec['seconds']:.1f} s")

    if not phase.parallel:
        for t in todo:
            finish(t.task_id, ex.result(ex.submit(t.task_id)))
        return
    pending = {ex.submit(t.task_id): t.task_id for t in todo}
    error: BaseException | None = None
    while pending:
        for handle in ex.ready(list(pending)):
            tid = pending.pop(handle)
            try:
                finish(tid, ex.result(handle))
            except Exception as exc:  # noqa: BLE001 - re-raised below, after the running tasks
                if error is None:
                    error = exc
                    ex.cancel(list(pending))
    if error is not None:
        raise error


@contextlib.contextmanager
def _worker_environment(threads: int) -> Iterator[None]:
    """The environment the worker processes start with (they are spawned while it holds): no hub
    access, no tokenizer threads, ``threads`` OpenMP and BLAS threads unless set; restored after."""
    keys = {
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": str(int(threads)),
        "OPENBLAS_NUM_THREADS": str(int(threads)),
    }
    saved = {k: os.environ.get(k) for k in keys}
    for k, v in keys.items():
        os.environ.setdefault(k, v)
    try:
        yield
    finally:
        for k, before in saved.items():
            if before is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = before


def _read_state(path: Path) -> dict | None:
    """A work folder's ``state.json`` (``None`` when there is none); ValueError, one line naming
    the file, when it is not one the runner wrote."""
    if not path.is_file():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is damaged ({exc}): it is not a run's state") from None
    if not (isinstance(state, dict) and {"scale", "digest", "sessions"} <= set(state)):
        raise ValueError(f"{path} is not a run's state (a JSON object with scale, digest and sessions)")
    return state


def start_ray(address: str | None, workers: int):
    """``ray.init``: a local Ray with ``workers`` CPUs (``address`` None), or the cluster at
    ``address``. Returns whether this call started it (then the runner shuts it down). Only a run
    with ``address`` uses Ray (:class:`_Ray`)."""
    import ray

    if ray.is_initialized():
        return False
    env = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
    env |= {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    # Ray starts its workers 15 nice levels below the driver by default; the tasks are the run's
    # work, so they keep the driver's priority (start the driver under nice to lower it)
    os.environ.setdefault("RAY_worker_niceness", "0")
    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": "ERROR",
        "log_to_driver": True,
        "runtime_env": {"env_vars": env},
    }
    if address is None:
        kwargs |= {"num_cpus": int(workers), "object_store_memory": 100 * 1024 * 1024}
    ray.init(address=address, **kwargs)
    return True


def run(
    scale: Scale,
    out: str | os.PathLike | None = None,
    *,
    resume: bool = False,
    device: str = "cpu",
    threads: int = 1,
    workers: int = 2,
    address: str | None = None,
    progress: bool = True,
    command: str | None = None,
    corpus_only: bool = False,
    stop_after: str | None = None,
    other_corpus: bool = False,
) -> Path:
    """Run (or resume) every phase of ``scale`` in ``out`` and write ``out/results``; returns it.
    With ``corpus_only`` only the corpus and tokenizer are made (``out/corpus``, returned): a
    folder to carry to a machine without the corpus's Debian packages and resume there. With
    ``stop_after`` (a phase of :data:`sdsl.experiment.config.PHASES`) the run stops once that
    phase is done and returns ``out``: ``stop_after="prediction"`` trains and measures the
    calibration runs and writes the prediction, so that it can be committed before a resumed run
    trains any test draft.

    Before the corpus is made, its Debian sources are compared with those the committed run read
    (:func:`sdsl.experiment.corpus.source_differences`): a source whose text differs refuses the
    run, naming the version to install, unless ``other_corpus``.

    Every task runs with ``threads`` torch threads in a worker process: one of ``workers``
    processes on this machine (a standard-library pool; on a CUDA ``device`` they share it), or a
    Ray task on the cluster at ``address`` (Ray is imported only then). ``scale`` must be one of
    :data:`sdsl.experiment.config.SCALES` (the tasks rebuild it by name). ``progress``: a line
    on stderr per finished task.

    Raises ValueError if ``out`` holds a run and ``resume`` is False, or holds a run of other
    settings, or holds anything the experiment did not make (``out`` must be new, empty, or a
    work folder it made: :func:`sdsl._owned.claim`), before anything is written.
    """
    from sdsl._owned import claim, is_owned

    if scale.name not in SCALES or SCALES[scale.name] != scale:
        raise ValueError(f"scale {scale.name!r} is not one of the named scales {sorted(SCALES)}")
    last = _last_phase(stop_after, corpus_only)
    out = Path(out) if out is not None else default_out(scale.name)
    state_path = out / "state.json"
    state = _read_state(state_path)
    if state is None and resume:  # before anything is written
        raise ValueError(f"--resume: --out {out} holds no run to resume (no state.json): drop --resume to start one")
    # a work folder made before folders were marked is recognised by its state.json
    claim(out, "--out folder", owned=state is not None and not is_owned(out))
    if state is not None:
        if not resume:
            raise ValueError(
                f"--out {out} already holds a run (state.json): pass --resume to continue it, or choose another --out"
            )
        if state["digest"] != scale.digest():
            raise ValueError(
                f"--out {out} holds a run of other settings (scale {state['scale']}, digest "
                f"{state['digest']}, now {scale.digest()}): cannot resume it"
            )
    else:
        state = {"scale": scale.name, "digest": scale.digest(), "sessions": []}
    if not other_corpus and not (out / "done" / "corpus.json").exists():
        _check_corpus(scale)
    session: dict[str, Any] = {"start": time.time(), "end": None, "command": command or " ".join(sys.argv)}
    state["sessions"].append(session)
    atomic_write_text(state_path, json.dumps(state, indent=1))
    _quiet()
    exp = Experiment(scale, out, device=device, threads=threads, decode_threads=threads)
    session["load_average_1min"] = []

    def log(msg: str) -> None:
        load = os.getloadavg()[0]
        session["load_average_1min"].append(round(load, 2))
        session["last_task_end"] = time.time()  # the end of a session that is killed
        atomic_write_text(state_path, json.dumps(state, indent=1))
        if progress:
            print(f"[{time.strftime('%H:%M:%S')}] {msg} (load average {load:.1f})", file=sys.stderr, flush=True)

    def terminate(signum, frame):  # a kill (SIGTERM) still records the session's end
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    ex: _Executor | None = None
    try:
        with _worker_environment(threads):
            t_start = time.perf_counter()
            args = (scale.name, str(out.resolve()), str(device), int(threads))
            if address is None:
                ex = _Processes(args, workers)
            else:
                ex = _Ray(args, address, threads, str(device).startswith("cuda"))
            session["executor"] = ex.record() | {"start_s": round(time.perf_counter() - t_start, 2)}
            phases = exp.phases()[: last + 1]
            for make in phases:
                _execute(make(), ex, out / "done", session=len(state["sessions"]) - 1, log=log)
    finally:
        if ex is not None:
            ex.close()
        signal.signal(signal.SIGTERM, previous)
        session["end"] = time.time()
        atomic_write_text(state_path, json.dumps(state, indent=1))
    if corpus_only:
        return out / "corpus"
    return out if stop_after is not None and stop_after != PHASES[-1] else exp.collect()


def _check_corpus(scale: Scale) -> None:
    """Refuse (ValueError, one line) a corpus whose Debian sources differ from the committed run's."""
    if scale.corpus == "committed":
        return
    _, infos = _corpus.load_sources(scale.corpus)
    diffs = _corpus.source_differences(infos, _corpus.recorded_sources())
    if diffs:
        raise ValueError(
            f"the corpus differs from the committed run's ({_corpus.RECORDED_SOURCES.relative_to(ROOT)}): "
            + "; ".join(diffs)
            + "; or pass --other-corpus to train on the sources installed here"
        )


def _last_phase(stop_after: str | None, corpus_only: bool) -> int:
    """The index in :data:`sdsl.experiment.config.PHASES` of the last phase to run."""
    if corpus_only:
        return 0
    if stop_after is None:
        return len(PHASES) - 1
    if stop_after not in PHASES:
        raise ValueError(f"stop_after must be one of {list(PHASES)}, got {stop_after!r}")
    return PHASES.index(stop_after)
