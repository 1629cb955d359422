"""The laptop-scale model-family experiment: train a family of small GPT-2 models on
freely licensed English text with one shared BPE tokenizer, measure alpha for every (draft,
target) pair by speculative sampling, and test whether the throughput-optimal draft size ``N*``
predicted from calibration runs (fit targets, a held-out target, small drafts) and written down
before any test draft exists matches the optimum measured on a fine grid of test drafts.

Modules:

* :mod:`sdsl.experiment.config`: the scales (``full``, ``gpu``, ``smoke``): the split into
  calibration runs and the rule that places the test drafts, token budgets, training recipe,
  measurement settings, seeds;
* :mod:`sdsl.experiment.corpus`: the corpus (KJV Bible, fortunes, Python 3.11 reST sources) and
  its fixed train / validation / prompt split;
* :mod:`sdsl.experiment.tokenizer`: the one byte-level BPE tokenizer every model shares;
* :mod:`sdsl.experiment.training`: model construction, parameter counts, the training loop;
* :mod:`sdsl.experiment.pairs`: alpha per pair (speculative sampling with :mod:`sdsl.measure.harness`,
  adaptive stopping on the interval's half width) and ``E[sum min(p, q)]`` on held-out text;
* :mod:`sdsl.experiment.wallclock`: Theorem 3.8 of Leviathan et al. and the benchmark of plain
  against speculative decoding in alternating rounds;
* :mod:`sdsl.experiment.lossfit`: the Chinchilla loss law fitted as Hoffmann et al. and
  Besiroglu et al. did (Huber loss on log-loss, a grid of starts, bootstrap intervals);
* :mod:`sdsl.experiment.predict`: the prediction of ``N*`` from the calibration runs with its
  bootstrap interval, and the empirical optimum on the test grid with its band;
* :mod:`sdsl.experiment.baselines`: the rules without the paper's laws that the prediction must
  beat (``M/200``, ``M/100``, the best calibration draft, a line of alpha in ``ln N``);
* :mod:`sdsl.experiment.analysis`: what the chapter reads off the committed results (alpha per
  pair, the calibration loss law, alpha out of sample, the wall-clock benchmark, the costs);
* :mod:`sdsl.experiment.results`: reading and writing the raw results with their schemas;
* :mod:`sdsl.experiment.runner`: the resumable runner, calibration, prediction, then test, every
  task in a worker process of this machine (no Ray needed) or a Ray task on a cluster
  (``python -m sdsl.experiment run``).

Heavy dependencies (torch, transformers, tokenizers) are imported inside the functions that need
them, so the analysis modules import quickly.
"""

__all__: list[str] = []
