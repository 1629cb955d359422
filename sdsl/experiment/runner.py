"""The runner of the experiment: corpus and tokenizer, every training run, alpha for every pair at
every temperature, wall-clock timing of every pair, then the raw results with provenance
(:mod:`sdsl.experiment.collect`).

Work folder ``out`` (default ``build/experiment/<scale>``)::

    state.json          scale, settings digest, sessions (start, end, command)
    corpus/             tokenizer.json, train/val/prompts token ids (.npy), sources.json
    models/<run>/       checkpoints (save_pretrained, safetensors)
    train/<run>.json    metrics and loss curve of one run
    greedy/<target>.npy the target's greedy continuation of every greedy prompt
    alpha/<key>.json    one pair at one temperature (counts, per-prompt statistics)
    wallclock/<key>.json
    done/               one marker per finished task (:mod:`sdsl.experiment.tasks`)
    results/            the tables, tokenizer.json and provenance.yml (what is committed)

Resuming (``resume=True``) skips every finished task; a run started with other settings refuses to
resume. Seeds: every random choice derives from ``Scale.seed`` and the task's name
(:func:`sdsl.experiment.pairs.seed_for`).
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdsl.experiment import collect as _collect
from sdsl.experiment import corpus as _corpus
from sdsl.experiment import tokenizer as _tok
from sdsl.experiment.collect import pair_key as _pair_key
from sdsl.experiment.config import SCALES, RunSpec, Scale
from sdsl.experiment.greedy import greedy_continuations, measure_alpha_greedy
from sdsl.experiment.pairs import (
    counts_to_iterations,
    make_prompts,
    measure_alpha,
    seed_for,
    teacher_forced_overlap,
)
from sdsl.experiment.tasks import Task, atomic_write_bytes, atomic_write_text, execute_tasks
from sdsl.measure.estimators import alpha_from_accepted
from sdsl.paths import BUILD

__all__ = ["Experiment", "default_out", "run"]

#: Assumed throughput for the cost estimates of the progress bar (the bar's rate adapts).
_EST_FLOPS = 40e9


def default_out(scale: str) -> Path:
    return BUILD / "experiment" / scale


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
        """The prompt texts, in the order the measurements use them (temperature 1 the first
        ``max_prompts``, greedy the first ``max_prompts_greedy``)."""
        m = self.scale.measurement
        tok = self.tokenizer()
        n = max(m.max_prompts, m.max_prompts_greedy)
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
    def continuations_path(self, target: RunSpec) -> Path:
        return self.out / "greedy" / f"{target.run_id}.npy"

    def continuations_task(self, target: RunSpec, advance) -> None:
        """The target's greedy continuation of every greedy prompt (:mod:`sdsl.experiment.greedy`),
        saved for the greedy alpha of each of its drafts."""
        import torch

        torch.set_num_threads(self.decode_threads)
        m = self.scale.measurement
        ys = greedy_continuations(
            self.model(target.run_id), self.prompt_ids()[: m.max_prompts_greedy], m.new_tokens, batch=m.greedy_batch
        )
        buf = io.BytesIO()
        np.save(buf, np.asarray(ys, dtype=np.int32))
        atomic_write_bytes(self.continuations_path(target), buf.getvalue())

    def alpha_task(self, draft: RunSpec, target: RunSpec, temperature: float, advance) -> None:
        import torch

        torch.set_num_threads(self.decode_threads)
        m = self.scale.measurement
        d, t = self.model(draft.run_id), self.model(target.run_id)
        seed = seed_for(self.scale.seed, "alpha", draft.run_id, target.run_id, int(temperature * 1000))
        t0 = time.perf_counter()
        if temperature > 0:
            meas = measure_alpha(
                d, t, self.hf_tokenizer(), list(self.prompts()), temperature=temperature, measurement=m, seed=seed
            )
            method = {"method": "speculative sampling", "harness_prompts": meas.n_prompts, "harness_identical": None}
        else:
            ys = np.load(self.continuations_path(target)).tolist()
            meas = measure_alpha_greedy(d, t, self.prompt_ids(), ys, measurement=m, seed=seed)
            method = {
                "method": "greedy replay",
                "harness_prompts": meas.harness_prompts,
                "harness_identical": meas.harness_identical,
            }
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
            repeats=m.timing_repeats,
            max_gamma=m.max_gamma,
            seed=seed_for(self.scale.seed, "wallclock", draft.run_id, target.run_id),
        )
        row = {"draft": draft.run_id, "target": target.run_id, "temperature": temp, "alpha": alpha, **res}
        atomic_write_text(self.out / "wallclock" / f"{_pair_key(draft.run_id, target.run_id)}.json", json.dumps(row))

    # ------------------------------------------------------------------ the task list
    def tasks(self) -> list[Task]:
        """Phase 0 the corpus, 1 the training runs (largest first, in parallel), 2 the alpha
        measurements at temperature 1 and the targets' greedy continuations (in parallel), 3 the
        greedy alpha measurements (in parallel), 4 the wall-clock timings (one at a time, nothing
        beside them)."""
        s, m = self.scale, self.scale.measurement
        out = [Task("corpus", "corpus", 15.0 if s.corpus == "debian" else 2.0, phase=0)]
        for r in sorted(s.runs(), key=self.train_cost, reverse=True):
            out.append(Task(f"train/{r.run_id}", "train", self.train_cost(r), phase=1, parallel=True))
        per_alpha = m.max_prompts * m.new_tokens * 0.5e-3
        per_greedy = m.greedy_check_prompts * m.new_tokens * 5e-3 + m.max_prompts_greedy * 5e-3
        if any(temp == 0 for temp in m.temperatures):
            for t in s.targets():
                cost = m.max_prompts_greedy * m.new_tokens * 0.3e-3
                out.append(Task(f"greedy/{t.run_id}", "greedy", cost, phase=2, parallel=True))
        for d, t in s.pairs():
            for temp in m.temperatures:
                key = _pair_key(d.run_id, t.run_id, temp)
                if temp > 0:
                    out.append(Task(f"alpha/{key}", "alpha", per_alpha, phase=2, parallel=True))
                else:
                    out.append(Task(f"alpha/{key}", "alpha", per_greedy, phase=3, parallel=True))
        per_wall = m.timing_prompts * m.timing_new_tokens * (2 + 3 * m.timing_repeats) * 1.5e-3
        for d, t in s.pairs():
            out.append(Task(f"wallclock/{_pair_key(d.run_id, t.run_id)}", "wallclock", per_wall, phase=4))
        return out

    def work(self, task_id: str, advance) -> None:
        """Do the task ``task_id`` (an id of :meth:`tasks`)."""
        kind, _, key = task_id.partition("/")
        if kind == "corpus":
            return self.corpus_task(advance)
        runs = {r.run_id: r for r in self.scale.runs()}
        if kind == "train":
            return self.train_task(runs[key], advance)
        if kind == "greedy":
            return self.continuations_task(runs[key], advance)
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


def _work(scale_name: str, out: str, device: str, threads: int, task_id: str, advance) -> None:
    """Module-level entry point of a task (picklable for worker processes): one
    :class:`Experiment` per process and work folder, reused across tasks."""
    from sdsl.experiment.config import get_scale

    key = (scale_name, out, device, threads)
    if key not in _EXPERIMENTS:
        _quiet()
        _EXPERIMENTS[key] = Experiment(
            get_scale(scale_name), out, device=device, threads=threads, decode_threads=threads
        )
    _EXPERIMENTS[key].work(task_id, advance)


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


def run(
    scale: Scale,
    out: str | os.PathLike | None = None,
    *,
    resume: bool = False,
    device: str = "cpu",
    threads: int = 1,
    workers: int = 2,
    progress: bool = True,
    command: str | None = None,
    corpus_only: bool = False,
) -> Path:
    """Run (or resume) every task of ``scale`` in ``out`` and write ``out/results``; returns it.
    With ``corpus_only`` only the corpus and tokenizer are made (``out/corpus``, returned): a
    folder to carry to a machine without the corpus's Debian packages and resume there.

    ``workers`` processes with ``threads`` torch threads each run the training runs and the alpha
    measurements side by side (:mod:`sdsl.experiment.tasks`); the wall-clock timings run alone.
    ``scale`` must be one of :data:`sdsl.experiment.config.SCALES` (workers rebuild it by name).

    Raises ValueError if ``out`` holds a run and ``resume`` is False, or holds a run of other
    settings, or holds anything the experiment did not make (``out`` must be new, empty, or a
    work folder it made: :func:`sdsl._owned.claim`), before anything is written.
    """
    from sdsl._owned import claim, is_owned

    if scale.name not in SCALES or SCALES[scale.name] != scale:
        raise ValueError(f"scale {scale.name!r} is not one of the named scales {sorted(SCALES)}")
    out = Path(out) if out is not None else default_out(scale.name)
    state_path = out / "state.json"
    state = _read_state(state_path)
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
    session: dict[str, Any] = {"start": time.time(), "end": None, "command": command or " ".join(sys.argv)}
    state["sessions"].append(session)
    atomic_write_text(state_path, json.dumps(state, indent=1))
    _quiet()
    exp = Experiment(scale, out, device=device, threads=threads, decode_threads=threads)
    work = partial(_work, scale.name, str(out), str(device), int(threads))

    session["load_average_1min"] = []

    def log(msg: str) -> None:
        from tqdm.auto import tqdm

        load = os.getloadavg()[0]
        session["load_average_1min"].append(round(load, 2))
        session["last_task_end"] = time.time()  # the end of a session that is killed
        atomic_write_text(state_path, json.dumps(state, indent=1))
        tqdm.write(f"[{time.strftime('%H:%M:%S')}] {msg} (load average {load:.1f})", file=sys.stderr)

    def terminate(signum, frame):  # a kill (SIGTERM) still records the session's end
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        execute_tasks(
            [t for t in exp.tasks() if t.phase == 0] if corpus_only else exp.tasks(),
            work,
            out / "done",
            session=len(state["sessions"]) - 1,
            workers=workers,
            progress=progress,
            log=log,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
        session["end"] = time.time()
        atomic_write_text(state_path, json.dumps(state, indent=1))
    return out / "corpus" if corpus_only else exp.collect()
