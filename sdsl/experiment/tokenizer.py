"""The one tokenizer every model of the family shares (speculative sampling compares ``p(x)`` and
``q(x)`` token by token, so draft and target need one vocabulary).

A byte-level BPE (``tokenizers``: GPT-2's byte-level pre-tokenizer and decoder, no prefix space)
trained on the training split only, with one special token ``<|endoftext|>`` (id 0) that separates
documents. Training is deterministic: the same texts in the same order give the same JSON
(``tests/unit/experiment/test_tokenizer.py``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "EOS",
    "encode_documents",
    "load_tokenizer",
    "to_transformers",
    "tokenizer_json",
    "train_tokenizer",
]

#: The document separator (also BOS/EOS of the models).
EOS = "<|endoftext|>"


def train_tokenizer(texts: Iterable[str], vocab_size: int, *, min_frequency: int = 2):
    """A byte-level BPE ``tokenizers.Tokenizer`` of ``vocab_size`` tokens (256 bytes, the merges,
    ``<|endoftext|>``) trained on ``texts``.

    Parameters
    ----------
    texts : the training documents, in a fixed order.
    vocab_size : size of the vocabulary, at least 257 (every byte and the special token).
    min_frequency : a pair must occur this often to be merged.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if int(vocab_size) < 257:
        raise ValueError(f"vocab_size must be >= 257 (256 bytes and {EOS}), got {vocab_size!r}")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=int(vocab_size),
        min_frequency=int(min_frequency),
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    return tok


def tokenizer_json(tok) -> str:
    """The tokenizer as canonical JSON text (what is committed and hashed)."""
    return tok.to_str(pretty=True)


def load_tokenizer(path: str | os.PathLike):
    """A ``tokenizers.Tokenizer`` from its JSON file."""
    from tokenizers import Tokenizer

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"tokenizer file {p} does not exist")
    return Tokenizer.from_file(str(p))


def to_transformers(tok):
    """The tokenizer as a ``transformers.PreTrainedTokenizerFast`` (what :mod:`sdsl.measure.harness`
    calls), with ``<|endoftext|>`` as BOS, EOS and padding."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOS, eos_token=EOS, pad_token=EOS, unk_token=None)


def encode_documents(tok, texts: Sequence[str]) -> np.ndarray:
    """All ``texts`` encoded and concatenated, each followed by ``<|endoftext|>``, as ``uint16``
    token ids (the vocabulary must fit in 16 bits)."""
    if tok.get_vocab_size() > 65535:
        raise ValueError(f"vocabulary of {tok.get_vocab_size()} tokens does not fit in uint16")
    eos = tok.token_to_id(EOS)
    encs = tok.encode_batch(list(texts))
    total = sum(len(e.ids) + 1 for e in encs)
    out = np.empty(total, dtype=np.uint16)
    i = 0
    for e in encs:
        n = len(e.ids)
        out[i : i + n] = e.ids
        out[i + n] = eos
        i += n + 1
    return out


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
