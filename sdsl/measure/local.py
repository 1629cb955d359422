"""The small local draft/target pair, committed to the repository, and the code that builds it.

The measure chapter, the harness's tests and its benchmark need a real pair of causal language
models that share a vocabulary, offline. :func:`build_local_pair` trains one in about a second (a
character-level tokenizer over ``data/prompts.txt`` and two GPT-2 models of different sizes), but
float32 training is not reproducible across CPUs: torch's AVX-512 and AVX2 kernels give the same
initial weights, differ by 1.6e-5 after one AdamW step and by up to 0.14 after 60, so another CPU
trains another pair (alpha 0.664 against 0.636). The chapter therefore decodes the pair committed
under ``data/local_pair/`` (:func:`committed_pair`), whose provenance file ``data/local_pair.yml``
records how it was built (command, seed, versions, machine) and the sha256 of every file, checked
on every load. ``python -m sdsl.measure.local build`` rebuilds it (on purpose: the measure
chapter's baseline then changes).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "PAIR_SEED",
    "read_prompts",
    "build_char_tokenizer",
    "build_local_pair",
    "load_model",
    "load_tokenizer",
    "pair_files",
    "committed_pair",
    "write_committed_pair",
    "main",
]

#: Seed of the committed pair (the measure chapter's seed).
PAIR_SEED = 20260225


def read_prompts(path: str | os.PathLike, n: int | None = None) -> list[str]:
    """The non-empty, non-comment lines of a prompts file (first ``n`` if given)."""
    lines = [ln.strip() for ln in Path(path).read_text(encoding="utf-8").splitlines()]
    prompts = [ln for ln in lines if ln and not ln.startswith("#")]
    if not prompts:
        raise ValueError(f"prompts file {path} has no prompts")
    if n is not None:
        if int(n) < 1:
            raise ValueError(f"n_prompts must be >= 1, got {n!r}")
        prompts = prompts[: int(n)]
    return prompts


def build_char_tokenizer(texts: Iterable[str], path: str | os.PathLike | None = None, *, extra_chars: str = ""):
    """A character-level ``PreTrainedTokenizerFast`` (``tokenizers`` WordLevel over single
    characters, special tokens ``<unk>``, ``<eos>``), built offline from ``texts``; saved to
    ``path`` (``save_pretrained``) if given."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set("".join(texts)) | set(extra_chars))
    vocab = {"<unk>": 0, "<eos>": 1}
    for ch in chars:
        vocab.setdefault(ch, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>", pad_token="<eos>")
    if path is not None:
        fast.save_pretrained(str(path))
    return fast


def _train_lm(
    model, ids: torch.Tensor, *, steps: int, seq_len: int, batch: int, lr: float, generator: torch.Generator
) -> float:
    """A few AdamW steps of next-token training on random windows of ``ids``; returns last loss."""
    import torch

    if steps <= 0:
        return float("nan")
    model.train()
    # fused AdamW: one kernel per step instead of a Python loop over the parameter tensors
    try:
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0, fused=True)
    except (RuntimeError, TypeError):  # a device or torch without the fused kernel
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    n = ids.numel() - seq_len
    offsets = torch.arange(seq_len)
    loss = None
    for _ in range(steps):
        start = torch.randint(0, max(n, 1), (batch,), generator=generator)
        x = ids[start[:, None] + offsets]  # batch x seq_len windows, one gather
        loss = model(input_ids=x, labels=x).loss  # labels are shifted inside the model
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    return float(loss.detach()) if loss is not None else float("nan")


def build_local_pair(
    folder: str | os.PathLike,
    *,
    texts: Sequence[str] | None = None,
    seed: int = 0,
    target_layers: int = 2,
    target_width: int = 64,
    draft_layers: int = 1,
    draft_width: int | None = 32,
    n_head: int = 4,
    n_positions: int = 256,
    train_steps: int = 60,
    draft_train_steps: int = 20,
    batch: int = 16,
    seq_len: int = 32,
    lr: float = 1e-2,
    initializer_range: float = 0.02,
    draft_tokenizer_texts: Sequence[str] | None = None,
) -> tuple[Path, Path]:
    """Build a small GPT-2 draft/target pair offline into ``folder`` (``draft/``, ``target/``).

    A character-level tokenizer over ``texts`` (default: the repository's ``data/prompts.txt``) is
    saved with both models. The target is a ``GPT2Config`` with seeded random weights trained for
    ``train_steps`` AdamW steps on ``texts``. The draft has ``draft_layers`` layers of width
    ``draft_width`` (default: a 1 x 32 draft for a 2 x 64 target, both trained from seeded random
    weights, like a small and a large model of one family: alpha about 0.6 at temperature 1 with the
    notebook's seed). If
    its width is the target's (``draft_width=None`` or equal) it starts as the target truncated to
    its first layers (embeddings, first blocks, final norm and head copied: a cheap "early exit"
    draft that already agrees with the target); then ``draft_train_steps`` steps.
    ``train_steps = 0`` leaves seeded random weights (``initializer_range`` sets how peaked their
    distributions are). ``draft_tokenizer_texts`` gives the draft its own tokenizer (a different
    vocabulary, to exercise the refusal of mismatched pairs). Returns ``(draft_path,
    target_path)``, loadable with :func:`load_model`. Small on purpose: about a second on one CPU
    thread (60 + 20 AdamW steps at learning rate 1e-2).
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = Path(folder)
    if texts is None:
        from sdsl.paths import DATA

        texts = read_prompts(DATA / "prompts.txt")
    texts = list(texts)
    if not texts:
        raise ValueError("texts is empty: the tokenizer and the training need some text")
    draft_width = target_width if draft_width is None else int(draft_width)
    if draft_layers < 1 or target_layers < 1:
        raise ValueError(f"layers must be >= 1, got draft {draft_layers}, target {target_layers}")
    paths = {}
    target_model = None
    for role, layers, width, tok_texts, steps in (
        ("target", target_layers, target_width, texts, train_steps),
        ("draft", draft_layers, draft_width, draft_tokenizer_texts or texts, draft_train_steps),
    ):
        path = folder / role
        tokenizer = build_char_tokenizer(tok_texts, path)
        cfg = GPT2Config(
            vocab_size=len(tokenizer),
            n_positions=n_positions,
            n_embd=width,
            n_layer=layers,
            n_head=n_head,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            initializer_range=initializer_range,
            bos_token_id=tokenizer.eos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            # no pad id in the model config (the tokenizer keeps one): with pad == eos, every
            # forward without an attention mask would check the inputs for padding
            pad_token_id=None,
            # GELU with the tanh approximation as one fused op (GPT-2's "gelu_new" is the same
            # function written out in Python-level tensor ops, several times slower)
            activation_function="gelu_pytorch_tanh",
        )
        torch.manual_seed(seed * 2 + (role == "draft"))  # GPT-2 init draws from torch's global RNG
        model = GPT2LMHeadModel(cfg)
        if (
            role == "draft"
            and target_model is not None
            and width == target_width
            and draft_tokenizer_texts is None
            and layers <= target_layers
        ):
            src = target_model.state_dict()
            model.load_state_dict({k: v for k, v in src.items() if k in model.state_dict()})
        ids = torch.tensor([i for t in texts for i in tokenizer(t)["input_ids"] + [tokenizer.eos_token_id]])
        gen = torch.Generator().manual_seed(seed + 7919 * (role == "draft"))
        _train_lm(
            model,
            ids,
            steps=steps,
            seq_len=min(seq_len, n_positions, ids.numel() - 1),
            batch=batch,
            lr=lr,
            generator=gen,
        )
        model.save_pretrained(str(path))
        paths[role] = path
        if role == "target":
            target_model = model
    return paths["draft"], paths["target"]


def load_model(name_or_path: Any, *, dtype: Any = None):
    """``AutoModelForCausalLM.from_pretrained(name_or_path)`` in eval mode (an already loaded model
    is returned as is). Local path or hub name; ``dtype`` e.g. ``torch.float32``."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        return name_or_path.eval()
    from transformers import AutoModelForCausalLM

    kwargs = {"dtype": dtype} if dtype is not None else {}
    return AutoModelForCausalLM.from_pretrained(str(name_or_path), **kwargs).eval()


def load_tokenizer(name_or_path: Any):
    """``AutoTokenizer.from_pretrained(name_or_path)`` (a tokenizer object is returned as is). A
    local folder whose ``tokenizer_config.json`` names a class this transformers does not have (the
    committed pair, saved by transformers 5 as ``TokenizersBackend``, read by transformers 4.56) is
    read as the fast tokenizer of its ``tokenizer.json``."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        return name_or_path
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    try:
        return AutoTokenizer.from_pretrained(str(name_or_path))
    except ValueError:
        folder = Path(name_or_path)
        if not (folder / "tokenizer.json").is_file():
            raise
        config = folder / "tokenizer_config.json"
        saved = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
        special = ("unk_token", "eos_token", "pad_token", "bos_token", "model_max_length")
        return PreTrainedTokenizerFast(
            tokenizer_file=str(folder / "tokenizer.json"), **{k: saved[k] for k in special if k in saved}
        )


def pair_files(folder: str | os.PathLike) -> dict[str, str]:
    """sha256 of every file of a pair folder (``draft/`` and ``target/``), by relative POSIX path."""
    folder = Path(folder)
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            out[p.relative_to(folder).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def committed_pair(folder: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """``(draft_path, target_path)`` of the committed pair, after checking every file against the
    sha256 recorded in its provenance file (``data/local_pair.yml``).

    Raises ``ValueError`` naming the file when one is missing, changed or not recorded.
    """
    import yaml

    from sdsl.paths import DATA

    folder = Path(folder) if folder is not None else DATA / "local_pair"
    prov_path = folder.with_suffix(".yml")
    if not prov_path.is_file():
        raise ValueError(
            f"{prov_path}: the provenance file of the local pair is missing; rebuild it with "
            "`python -m sdsl.measure.local build`"
        )
    recorded = (yaml.safe_load(prov_path.read_text(encoding="utf-8")) or {}).get("files") or {}
    found = pair_files(folder) if folder.is_dir() else {}
    for rel, sha in recorded.items():
        if rel not in found:
            raise ValueError(f"{folder / rel}: file of the local pair is missing (recorded in {prov_path.name})")
        if found[rel] != sha:
            raise ValueError(
                f"{folder / rel}: sha256 {found[rel][:12]}... differs from {sha[:12]}... recorded in "
                f"{prov_path.name}; the committed pair was changed"
            )
    extra = sorted(set(found) - set(recorded))
    if extra:
        raise ValueError(f"{folder / extra[0]}: file not recorded in {prov_path.name}")
    return folder / "draft", folder / "target"


def _machine() -> dict[str, str]:
    import torch

    from sdsl._machine import cpu_model

    return {
        "cpu": cpu_model(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": str(torch.get_num_threads()),
    }


def write_committed_pair(folder: str | os.PathLike | None = None, seed: int = PAIR_SEED) -> Path:
    """Build the local pair into ``folder`` (default ``data/local_pair``) with the prompts of
    ``data/prompts.txt`` and ``seed``, and write its provenance file beside it. Returns the folder."""
    import shutil
    import tempfile
    from importlib import metadata

    import torch
    import yaml

    from sdsl.paths import DATA

    folder = Path(folder) if folder is not None else DATA / "local_pair"
    texts = read_prompts(DATA / "prompts.txt")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="sdsl-pair-") as tmp:
        build_local_pair(tmp, texts=texts, seed=seed)
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(tmp, folder)
    prov = {
        "title": "Local GPT-2 draft/target pair of the measure chapter",
        "source": "trained on this project's data/prompts.txt by sdsl.measure.local.build_local_pair",
        "licence": "MIT (the project's code licence); trained on text written for this project",
        "description": (
            "A 1-layer x 32 draft and a 2-layer x 64 target (GPT-2, character-level "
            "tokenizer), trained for 20 and 60 AdamW steps from seeded random weights. "
            "Committed because float32 training differs between CPUs' kernels."
        ),
        "command": "python -m sdsl.measure.local build",
        "seed": int(seed),
        "versions": {name: metadata.version(name) for name in ("torch", "transformers", "tokenizers")},
        "python": sys.version.split()[0],
        "machine": _machine(),
        "files": pair_files(folder),
    }
    folder.with_suffix(".yml").write_text(yaml.safe_dump(prov, sort_keys=False), encoding="utf-8")
    return folder


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sdsl.measure.local build [FOLDER]``: rebuild the committed pair."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "build" or len(args) > 2:
        print("usage: python -m sdsl.measure.local build [FOLDER]", file=sys.stderr)
        return 2
    folder = write_committed_pair(args[1] if len(args) == 2 else None)
    print(f"wrote {folder} and {folder.with_suffix('.yml')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
