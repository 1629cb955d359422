"""The laptop-scale model-family experiment: train a family of small GPT-2 models on
freely licensed English text with one shared BPE tokenizer, measure alpha for every (draft,
target) pair by speculative sampling, fit the loss law and the acceptance laws, and test whether
the throughput-optimal draft size ``N*`` is predicted before the drafts it predicts are trained.

Modules:

* :mod:`sdsl.experiment.config`: the scales (``full``, ``smoke``): model shapes, token budgets,
  training recipe, measurement settings, seeds;
* :mod:`sdsl.experiment.corpus`: the corpus (KJV Bible, fortunes, Python 3.11 reST sources) and
  its fixed train / validation / prompt split;
* :mod:`sdsl.experiment.tokenizer`: the one byte-level BPE tokenizer every model shares;
* :mod:`sdsl.experiment.training`: model construction, parameter counts, the training loop;
* :mod:`sdsl.experiment.pairs`: alpha per pair (speculative sampling with :mod:`sdsl.measure.harness`,
  adaptive stopping on the interval's half width) and ``E[sum min(p, q)]`` on held-out text;
* :mod:`sdsl.experiment.wallclock`: cost ratios, Theorem 3.8 of Leviathan et al. and measured
  speedups;
* :mod:`sdsl.experiment.lossfit`: the Chinchilla loss law fitted as Hoffmann et al. and
  Besiroglu et al. did (Huber loss on log-loss, a grid of starts, bootstrap intervals);
* :mod:`sdsl.experiment.predict`: the prediction of ``N*`` from the smaller drafts and the
  empirical optimum;
* :mod:`sdsl.experiment.numbers`: the numbers the chapter's prose cites about the measurement,
  the laws, the prediction and the wall clock;
* :mod:`sdsl.experiment.results`: reading and writing the raw results with their schemas;
* :mod:`sdsl.experiment.runner`: the resumable runner with a progress bar (``python -m
  sdsl.experiment run``).

Heavy dependencies (torch, transformers, tokenizers) are imported inside the functions that need
them, so the analysis modules import quickly.
"""

__all__: list[str] = []
