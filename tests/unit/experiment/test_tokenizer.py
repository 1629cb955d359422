"""The shared BPE tokenizer: deterministic training, lossless round trip, document separators."""

from __future__ import annotations

import numpy as np
import pytest

from sdsl.experiment import corpus, tokenizer

pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def texts():
    docs, _ = corpus.read_kjv(corpus.KJV_SLICE)
    return [d.text for d in docs[:20]]


def test_training_twice_gives_the_same_tokenizer(texts):
    a = tokenizer.tokenizer_json(tokenizer.train_tokenizer(texts, 400))
    b = tokenizer.tokenizer_json(tokenizer.train_tokenizer(texts, 400))
    assert a == b


def test_vocabulary_size_and_lossless_round_trip(texts):
    tok = tokenizer.train_tokenizer(texts, 400)
    assert tok.get_vocab_size() == 400
    assert tok.token_to_id(tokenizer.EOS) == 0
    sample = "And God said, Let there be light: caf\u00e9 \u2013 unseen bytes \u00fc."
    assert tok.decode(tok.encode(sample).ids) == sample  # byte level: nothing is unknown


def test_encode_documents_separates_documents_with_eos(texts):
    tok = tokenizer.train_tokenizer(texts, 300)
    ids = tokenizer.encode_documents(tok, ["In the beginning", "God created"])
    assert ids.dtype == np.uint16
    eos = np.flatnonzero(ids == 0)
    assert len(eos) == 2 and eos[-1] == len(ids) - 1
    assert tok.decode(ids[: eos[0]].tolist()) == "In the beginning"


def test_transformers_wrapper_encodes_like_the_tokenizer(texts):
    pytest.importorskip("transformers")
    tok = tokenizer.train_tokenizer(texts, 300)
    hf = tokenizer.to_transformers(tok)
    assert hf("the earth")["input_ids"] == tok.encode("the earth").ids
    assert hf.eos_token_id == 0


def test_too_small_a_vocabulary_is_refused(texts):
    with pytest.raises(ValueError, match="vocab_size must be >= 257"):
        tokenizer.train_tokenizer(texts, 100)
