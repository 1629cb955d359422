"""The bad-input corpus, as tables: the command line, damaged copies of data/, the
notebooks' parameters and the public API. Every case must get exit status 2 (command line) or a
ValueError (everything else) with one line that names the offending flag, parameter, file, line or
column and what is allowed; nothing may be written.

Each row is ``(id, input, expected)``: ``expected`` holds substrings that must all be in the one
line (the name as the user typed it, and what is allowed or what is wrong). The tests are
``tests/unit/test_bad_inputs_*.py``; ``test_bad_inputs_count.py`` prints the count by area.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bad_data import DATA_DAMAGE, DATA_VALID, copy_data, rewrite, set_sha  # noqa: F401 (the data part)

from sdsl.paths import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
SCRAPE = str(FIXTURES / "vllm_after.txt")
PRINTOUT = str(FIXTURES / "engines" / "vllm_spec_decode_pr26498.txt")
ITERATIONS = str(FIXTURES / "engines" / "trtllm_iteration_stats.json")
SPECULATIVE = str(FIXTURES / "engines" / "llamacpp_speculative_pr3006.txt")
ABOUT_SEED = "[0, 2^63 - 1]"
DRAWS = "[100, 10000]"
HW = ["plan", "--preset", "opt-13b", "--hardware", "h200"]

# --------------------------------------------------------------------------------------------
# command line: argv after `sdsl`; the message must name the flag as typed

CLI: list[tuple[str, list[str], tuple[str, ...]]] = [
    # negative numbers are values, refused for their sign (argparse read them as options)
    (
        "target-params-negative",
        ["plan", "--target-params", "-70e9", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "> 0", "'-70e9'"),
    ),
    (
        "target-params-minus-inf",
        ["plan", "--target-params", "-inf", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "> 0"),
    ),
    (
        "target-params-equals-negative",
        ["plan", "--target-params=-70e9", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "> 0"),
    ),
    ("draft-tokens-negative", ["plan", "--preset", "opt-13b", "--draft-tokens", "-1e12"], ("--draft-tokens", "> 0")),
    ("n-range-negative", ["plan", "--preset", "opt-13b", "--n-range", "-1e8", "1e9"], ("--n-range", "[100000, 1e+14]")),
    # outside the law's domain: no overflow, no N* of 6e55
    (
        "target-params-1",
        ["plan", "--target-params", "1", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "[1e+08, 1e+14]"),
    ),
    (
        "target-params-1e300",
        ["plan", "--target-params", "1e300", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "[1e+08, 1e+14]", "extrapolated"),
    ),
    (
        "target-tokens-1",
        ["plan", "--target-params", "7e10", "--target-tokens", "1", "--draft-tokens", "1"],
        ("--target-tokens", "[1e+09, 1e+16]"),
    ),
    (
        "draft-tokens-1",
        ["plan", "--target-params", "7e10", "--target-tokens", "1e12", "--draft-tokens", "1"],
        ("--draft-tokens", "[1e+09, 1e+16]"),
    ),
    (
        "target-params-nan",
        ["plan", "--target-params", "nan", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "a number > 0"),
    ),
    (
        "target-params-hex",
        ["plan", "--target-params", "0x10", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "a number > 0", "'0x10'"),
    ),
    (
        "target-params-text",
        ["plan", "--target-params", "abc", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "a number > 0", "'abc'"),
    ),
    # bootstrap draws bounded, seeds exact and used
    ("bootstrap-1e12", ["plan", "--preset", "opt-13b", "--bootstrap", "1e12"], ("--bootstrap", DRAWS)),
    ("bootstrap-1e8", ["plan", "--preset", "opt-13b", "--bootstrap", "1e8"], ("--bootstrap", DRAWS)),
    ("bootstrap-1e30", ["plan", "--preset", "opt-13b", "--bootstrap", "1e30"], ("--bootstrap", DRAWS)),
    ("bootstrap-one-draw", ["plan", "--preset", "opt-13b", "--bootstrap", "1"], ("--bootstrap", DRAWS)),
    ("bootstrap-negative", ["plan", "--preset", "opt-13b", "--bootstrap", "-5"], ("--bootstrap", DRAWS)),
    ("bootstrap-fraction", ["plan", "--preset", "opt-13b", "--bootstrap", "2.5"], ("--bootstrap", "an integer")),
    ("bootstrap-text", ["plan", "--preset", "opt-13b", "--bootstrap", "ten"], ("--bootstrap", "an integer")),
    ("seed-text-without-bootstrap", ["plan", "--preset", "opt-13b", "--seed", "abc"], ("--seed", ABOUT_SEED)),
    ("seed-without-bootstrap", ["plan", "--preset", "opt-13b", "--seed", "4"], ("--seed", "--bootstrap")),
    ("seed-negative", ["plan", "--preset", "opt-13b", "--bootstrap", "200", "--seed", "-1"], ("--seed", ABOUT_SEED)),
    ("seed-fraction", ["plan", "--preset", "opt-13b", "--bootstrap", "200", "--seed", "1.5"], ("--seed", ABOUT_SEED)),
    ("seed-too-large", ["plan", "--preset", "opt-13b", "--bootstrap", "200", "--seed", "1e30"], ("--seed", ABOUT_SEED)),
    # N* on the end of the searched range is no optimum
    (
        "n-star-on-low-bound",
        ["plan", "--preset", "llama-3-70b", "--n-range", "1e9", "3e10"],
        ("--n-range", "lower end", "widen"),
    ),
    (
        "constants-push-n-star-to-bound",
        ["plan", "--preset", "opt-13b", "--constants", "1,2,3,4,5"],
        ("--n-range", "N* lies outside"),
    ),
    # given twice: last-wins is refused
    ("preset-twice", ["plan", "--preset", "opt-13b", "--preset", "llama-3-70b"], ("--preset", "given twice")),
    (
        "draft-tokens-twice",
        ["plan", "--preset", "opt-13b", "--draft-tokens", "1e12", "--draft-tokens", "2e12"],
        ("--draft-tokens", "given twice"),
    ),
    (
        "target-params-twice",
        [
            "plan",
            "--target-params",
            "7e10",
            "--target-params",
            "8e10",
            "--target-tokens",
            "1e12",
            "--draft-tokens",
            "1e12",
        ],
        ("--target-params", "given twice"),
    ),
    (
        "n-range-twice",
        ["plan", "--preset", "opt-13b", "--n-range", "1e7", "1e9", "--n-range", "1e8", "1e9"],
        ("--n-range", "given twice"),
    ),
    # the search range
    ("n-range-reversed", ["plan", "--preset", "opt-13b", "--n-range", "1e9", "1e8"], ("--n-range", "two increasing")),
    ("n-range-one-value", ["plan", "--preset", "opt-13b", "--n-range", "1e8"], ("--n-range", "expected 2")),
    (
        "n-range-above-target",
        ["plan", "--preset", "llama-3-70b", "--n-range", "1e8", "1e12"],
        ("--n-range", "exceeds the target size"),
    ),
    ("n-range-tiny", ["plan", "--preset", "opt-13b", "--n-range", "1", "1e9"], ("--n-range", "[100000, 1e+14]")),
    ("n-range-text", ["plan", "--preset", "opt-13b", "--n-range", "abc", "1e9"], ("--n-range", "a number")),
    (
        "n-range-plane-leaves",
        ["plan", "--preset", "opt-13b", "--n-range", "1e5", "1e9"],
        ("--n-range", "leaves (0, 1)"),
    ),
    # the target
    ("preset-typo", ["plan", "--preset", "lama-3-70b"], ("--preset", "did you mean 'llama-3-70b'")),
    ("preset-empty", ["plan", "--preset", ""], ("--preset", "preset name")),
    ("preset-moe", ["plan", "--preset", "qwen3-30b-a3b"], ("--preset", "mixture-of-experts", "dense target")),
    ("no-target", ["plan"], ("--preset", "--target-params", "--target-tokens")),
    ("target-tokens-missing", ["plan", "--target-params", "7e10"], ("--target-tokens", "missing")),
    (
        "draft-tokens-missing",
        ["plan", "--target-params", "7e10", "--target-tokens", "1e12"],
        ("--draft-tokens", "required"),
    ),
    # loss-law constants and the acceptance plane
    (
        "constants-negative-a",
        ["plan", "--preset", "llama-3-70b", "--constants", "1,-2,3,0.3,0.3"],
        ("--constants", "A must be > 0"),
    ),
    ("constants-text", ["plan", "--preset", "llama-3-70b", "--constants", "1,2,x,0.3,0.3"], ("--constants", "numbers")),
    (
        "constants-unknown-name",
        ["plan", "--preset", "opt-13b", "--constants", "chinchilla"],
        ("--constants", "besiroglu2024"),
    ),
    ("constants-three", ["plan", "--preset", "opt-13b", "--constants", "1,2,3"], ("--constants", "five numbers")),
    (
        "constants-overflow",
        ["plan", "--preset", "opt-13b", "--constants", "1000,1,1,1,1"],
        ("--constants", "overflows", "nats"),
    ),
    (
        "alpha-source-unknown",
        ["plan", "--preset", "llama-3-70b", "--alpha-source", "magic"],
        ("--alpha-source", "'paper', 'refit', 'published'"),
    ),
    (
        "alpha-source-published-without-temperature",
        ["plan", "--preset", "llama-3-70b", "--alpha-source", "published"],
        ("--alpha-source", "'published'", "--temperature", ">= 0"),
    ),
    (
        "temperature-without-published",
        ["plan", "--preset", "llama-3-70b", "--temperature", "0.7"],
        ("--temperature", "--alpha-source", "published", "knows no temperature"),
    ),
    (
        "temperature-with-refit",
        ["plan", "--preset", "llama-3-70b", "--alpha-source", "refit", "--temperature", "0"],
        ("--temperature", "refitted", "knows no temperature"),
    ),
    (
        "temperature-negative",
        ["plan", "--preset", "llama-3-70b", "--alpha-source", "published", "--temperature", "-0.5"],
        ("--temperature", ">= 0", "'-0.5'"),
    ),
    (
        "temperature-not-a-number",
        ["plan", "--preset", "llama-3-70b", "--alpha-source", "published", "--temperature", "hot"],
        ("--temperature", ">= 0", "'hot'"),
    ),
    (
        "temperature-nan",
        ["plan", "--preset", "llama-3-70b", "--alpha-source", "published", "--temperature", "nan"],
        ("--temperature", ">= 0"),
    ),
    (
        "temperature-too-hot-for-the-law",
        ["plan", "--preset", "llama-3-70b", "--alpha-source", "published", "--temperature", "9"],
        ("acceptance rate leaves (0, 1)", "T = 9"),
    ),
    (
        "alpha-source-missing-file",
        ["plan", "--preset", "llama-3-70b", "--alpha-source", "/no/such/file.csv"],
        ("--alpha-source", "does not exist"),
    ),
    # candidate drafts
    ("draft-params-negative", ["plan", "--preset", "opt-13b", "--draft-params", "-1"], ("--draft-params", "> 0")),
    (
        "draft-params-above-target",
        ["plan", "--preset", "opt-13b", "--draft-params", "1e12"],
        ("--draft-params", "not smaller than the target"),
    ),
    ("draft-params-text", ["plan", "--preset", "opt-13b", "--draft-params", "abc"], ("--draft-params", "a number")),
    # unknown options, with the closest suggested
    ("unknown-option", ["plan", "--preset", "opt-13b", "--bogus"], ("unrecognized arguments", "--bogus")),
    (
        "misspelt-option",
        ["plan", "--preset", "opt-13b", "--boostrap", "100"],
        ("--boostrap", "did you mean", "'--bootstrap'"),
    ),
    ("stray-positional", ["plan", "--preset", "opt-13b", "extra"], ("unrecognized arguments", "extra")),
    ("flag-with-value", ["plan", "--preset", "opt-13b", "--integer-gamma=yes"], ("--integer-gamma", "yes")),
    ("unknown-command", ["frobnicate"], ("COMMAND", "'plan'")),
    ("no-command", [], ("COMMAND", "required")),
    # options that the others make unused
    ("gamma-max-without-hardware", ["plan", "--preset", "opt-13b", "--gamma-max", "5"], ("--gamma-max", "--hardware")),
    ("batch-without-hardware", ["plan", "--preset", "llama-3-70b", "--batch", "8"], ("--batch", "--hardware")),
    ("overlap-without-hardware", ["plan", "--preset", "opt-13b", "--overlap"], ("--overlap", "--hardware")),
    ("gpus-without-hardware", ["plan", "--preset", "opt-13b", "--gpus", "2"], ("--gpus", "--hardware")),
    ("dtype-without-hardware", ["plan", "--preset", "opt-13b", "--dtype", "fp8"], ("--dtype", "--hardware")),
    (
        "verify-tokens-without-latency",
        ["plan", "--preset", "opt-13b", "--draft-latency", "1e-3", "--target-latency", "1e-2", "--verify-tokens", "4"],
        ("--verify-latency", "--verify-tokens"),
    ),
    # the hardware model and the wall clock
    ("hardware-unknown", ["plan", "--preset", "opt-13b", "--hardware", "h300"], ("--hardware", "'h200'")),
    ("gpus-zero", ["plan", "--preset", "opt-13b", "--hardware", "h200", "--gpus", "0"], ("--gpus", "[1, 1024]")),
    ("dtype-unknown", ["plan", "--preset", "opt-13b", "--hardware", "h200", "--dtype", "int4"], ("--dtype", "'fp8'")),
    ("batch-zero", ["plan", "--preset", "opt-13b", "--hardware", "h200", "--batch", "0"], ("--batch", ">= 1")),
    ("batch-empty", ["plan", "--preset", "opt-13b", "--hardware", "h200", "--batch", ""], ("--batch", "empty")),
    (
        "context-negative",
        ["plan", "--preset", "opt-13b", "--hardware", "h200", "--context", "-1"],
        ("--context", ">= 0"),
    ),
    (
        "gamma-max-zero",
        ["plan", "--preset", "opt-13b", "--hardware", "h200", "--gamma-max", "0"],
        ("--gamma-max", "[1, 1024]"),
    ),
    (
        "step-overhead-negative",
        ["plan", "--preset", "opt-13b", "--hardware", "h200", "--step-overhead", "-1"],
        ("--step-overhead", ">= 0"),
    ),
    ("cost-ratio-negative", ["plan", "--preset", "opt-13b", "--cost-ratio", "-1"], ("--cost-ratio", ">= 0")),
    (
        "two-cost-sources",
        ["plan", "--preset", "llama-3-70b", "--cost-ratio", "0.1", "--hardware", "h200"],
        ("--cost-ratio", "--hardware", "one source"),
    ),
    ("draft-latency-alone", ["plan", "--preset", "llama-3-70b", "--draft-latency", "1e-3"], ("--target-latency",)),
    (
        "draft-latency-zero",
        ["plan", "--preset", "opt-13b", "--draft-latency", "0", "--target-latency", "1"],
        ("--draft-latency", "> 0"),
    ),
    (
        "verify-faster-than-one-step",
        [
            "plan",
            "--preset",
            "opt-13b",
            "--draft-latency",
            "1e-3",
            "--target-latency",
            "0.03",
            "--verify-latency",
            "0.01",
            "--verify-tokens",
            "4",
        ],
        ("--verify-latency", "--target-latency", "below"),
    ),
    (
        "verify-tokens-one",
        [
            "plan",
            "--preset",
            "opt-13b",
            "--draft-latency",
            "1e-3",
            "--target-latency",
            "0.03",
            "--verify-latency",
            "0.04",
            "--verify-tokens",
            "1",
        ],
        ("--verify-tokens", ">= 2"),
    ),
    # sdsl speedup
    ("speedup-alpha-above-one", ["speedup", "--alpha", "1.5", "--cost-ratio", "0.1"], ("--alpha", "(0, 1)")),
    (
        "speedup-latency-ratio-overflows",
        ["speedup", "--alpha", "0.7", "--draft-latency", "1e308", "--target-latency", "1e-300"],
        ("--draft-latency / --target-latency", "beyond the largest float"),
    ),
    ("speedup-alpha-text", ["speedup", "--alpha", "abc", "--c", "0.1"], ("--alpha", "(0, 1)")),
    ("speedup-alpha-negative", ["speedup", "--alpha", "-0.5", "--c", "0.1"], ("--alpha", "(0, 1)")),
    ("speedup-no-cost", ["speedup", "--alpha", "0.5"], ("--cost-ratio", "--draft-latency")),
    (
        "speedup-gamma-fraction",
        ["speedup", "--alpha", "0.5", "--cost-ratio", "0.1", "--gamma", "2.5"],
        ("--gamma", "an integer"),
    ),
    (
        "speedup-gamma-negative",
        ["speedup", "--alpha", "0.5", "--cost-ratio", "0.1", "--gamma", "-1"],
        ("--gamma", "[0, 1024]"),
    ),
    ("speedup-cost-negative", ["speedup", "--alpha", "0.8", "--c", "-0.1"], ("--cost-ratio", ">= 0")),
    ("speedup-alpha-twice", ["speedup", "--alpha", "0.8", "--c", "0.1", "--alpha", "0.9"], ("--alpha", "given twice")),
    ("speedup-alpha-missing", ["speedup", "--c", "0.1"], ("--alpha", "required")),
    # sdsl presets
    ("presets-stray-argument", ["presets", "--plan", "extra"], ("unrecognized arguments", "extra")),
    ("presets-misspelt-option", ["presets", "--plann"], ("--plann", "did you mean '--plan'")),
    # sdsl alpha
    ("alpha-missing-file", ["alpha", "/no/such/scrape.txt"], ("/no/such/scrape.txt", "no such file")),
    ("alpha-level-two", ["alpha", "--level", "2", SCRAPE], ("--level", "(0, 1)")),
    ("alpha-level-text", ["alpha", "--level", "abc", SCRAPE], ("--level", "(0, 1)")),
    ("alpha-gamma-zero", ["alpha", "--gamma", "0", SCRAPE], ("--gamma", "[1, 1024]")),
    ("alpha-seed-negative", ["alpha", "--seed", "-1", SCRAPE], ("--seed", ABOUT_SEED)),
    ("alpha-seed-unused", ["alpha", "--seed", "3", SCRAPE], ("--seed", "per-request")),
    ("alpha-format-unknown", ["alpha", "--format", "nope", SCRAPE], ("--format", "'vllm-prometheus'")),
    ("alpha-delta-one-file", ["alpha", "--delta", SCRAPE], ("--delta", "two files")),
    ("alpha-draft-without-target", ["alpha", "--draft-params", "1e9", SCRAPE], ("--draft-params", "--preset")),
    ("alpha-target-without-draft", ["alpha", "--preset", "opt-13b", SCRAPE], ("--draft-params",)),
    ("alpha-preset-typo", ["alpha", "--preset", "lama", "--draft-params", "1e9", SCRAPE], ("--preset", "did you mean")),
    (
        "alpha-draft-above-target",
        ["alpha", "--preset", "opt-13b", "--draft-params", "1e12", SCRAPE],
        ("--draft-params", "below the target size"),
    ),
    (
        "alpha-draft-tokens-unused",
        ["alpha", "--target-params", "7e10", "--draft-params", "1e9", "--draft-tokens", "1e12", SCRAPE],
        ("--draft-tokens", "--target-tokens"),
    ),
    ("alpha-no-file", ["alpha"], ("FILE", "required")),
    (
        "alpha-unknown-file",
        ["alpha", str(ROOT / "LICENSE")],
        ("not a recognised source", "vllm-spec-decode", "sglang-requests", "llamacpp-log", "trtllm-iteration-stats"),
    ),
    ("alpha-gamma-against-printout", ["alpha", "--gamma", "4", PRINTOUT], ("--gamma", "conflicts with k = 10")),
    ("alpha-delta-printouts", ["alpha", "--delta", PRINTOUT, PRINTOUT], ("--delta", "applies to /metrics")),
    ("alpha-gamma-below-drafts", ["alpha", "--gamma", "2", ITERATIONS], ("--gamma", "below draft tokens / steps")),
    ("alpha-gamma-against-n-draft", ["alpha", "--gamma", "8", SPECULATIVE], ("--gamma", "n_draft = 16")),
    # sdsl presets --plan takes no value and no planning flags of sdsl plan
    ("presets-plan-with-value", ["presets", "--plan=yes"], ("--plan", "'yes'")),
    ("presets-plan-hardware", ["presets", "--plan", "--hardware", "h200"], ("unrecognized arguments", "--hardware")),
    ("presets-plan-batch", ["presets", "--plan", "--batch", "2"], ("unrecognized arguments", "--batch 2")),
    ("presets-plan-unknown-flag", ["presets", "--json", "--plan", "--bogus"], ("unrecognized arguments", "--bogus")),
    ("presets-json-with-value", ["presets", "--json=1"], ("--json", "'1'")),
    # sdsl speedup
    (
        "speedup-gamma-above-limit",
        ["speedup", "--alpha", "0.8", "--c", "0.1", "--gamma", "2000"],
        ("--gamma", "[0, 1024]", "'2000'"),
    ),
    ("speedup-gamma-text", ["speedup", "--alpha", "0.8", "--c", "0.1", "--gamma", "abc"], ("--gamma", "[0, 1024]")),
    ("speedup-alpha-one", ["speedup", "--alpha", "1", "--c", "0.1"], ("--alpha", "(0, 1)", "'1'")),
    ("speedup-alpha-zero", ["speedup", "--alpha", "0", "--c", "0.1"], ("--alpha", "(0, 1)", "'0'")),
    ("speedup-alpha-nan", ["speedup", "--alpha", "nan", "--c", "0.1"], ("--alpha", "(0, 1)", "'nan'")),
    ("speedup-alpha-equals-negative", ["speedup", "--alpha=-0.5", "--c", "0.1"], ("--alpha", "(0, 1)", "'-0.5'")),
    ("speedup-c-infinite", ["speedup", "--alpha", "0.8", "--c", "inf"], ("--cost-ratio", ">= 0", "'inf'")),
    ("speedup-c-text", ["speedup", "--alpha", "0.8", "--c", "abc"], ("--cost-ratio", ">= 0", "'abc'")),
    ("speedup-c-twice", ["speedup", "--alpha", "0.8", "--c", "0.1", "--c", "0.2"], ("--cost-ratio", "given twice")),
    (
        "speedup-c-and-latencies",
        ["speedup", "--alpha", "0.8", "--c", "0.1", "--draft-latency", "1e-3", "--target-latency", "1e-2"],
        ("--cost-ratio", "--draft-latency", "one source"),
    ),
    (
        "speedup-c-and-verify-latency",
        ["speedup", "--alpha", "0.5", "--c", "0.1", "--verify-latency", "0.02"],
        ("--cost-ratio", "--verify-latency", "one source"),
    ),
    (
        "speedup-verify-latency-alone",
        ["speedup", "--alpha", "0.5", "--verify-latency", "0.02"],
        ("--draft-latency", "--target-latency"),
    ),
    (
        "speedup-verify-tokens-one",
        [
            "speedup",
            "--alpha",
            "0.8",
            "--draft-latency",
            "1e-3",
            "--target-latency",
            "1e-2",
            "--verify-tokens",
            "1",
            "--verify-latency",
            "0.02",
        ],
        ("--verify-tokens", ">= 2"),
    ),
    (
        "speedup-draft-latency-zero",
        ["speedup", "--alpha", "0.8", "--draft-latency", "0", "--target-latency", "1e-2"],
        ("--draft-latency", "> 0"),
    ),
    (
        "speedup-draft-latency-alone",
        ["speedup", "--alpha", "0.8", "--draft-latency", "1e-3"],
        ("--draft-latency", "--target-latency", "both"),
    ),
    ("speedup-json-with-value", ["speedup", "--alpha", "0.8", "--c", "0.1", "--json=1"], ("--json", "'1'")),
    (
        "speedup-unknown-flag",
        ["speedup", "--alpha", "0.8", "--c", "0.1", "--bogus"],
        ("unrecognized arguments", "--bogus"),
    ),
    # the hardware model and batch flags of sdsl plan
    ("batch-negative", HW + ["--batch", "-1"], ("--batch", ">= 1", "'-1'")),
    ("batch-text", HW + ["--batch", "abc"], ("--batch", ">= 1", "'abc'")),
    ("batch-fraction", HW + ["--batch", "2.5"], ("--batch", "an integer", "'2.5'")),
    ("batch-infinite", HW + ["--batch", "inf"], ("--batch", ">= 1", "'inf'")),
    ("batch-empty-item", HW + ["--batch", "1,,2"], ("--batch", "'1,,2'", "empty item")),
    ("batch-trailing-comma", HW + ["--batch", "1,2,"], ("--batch", "empty item")),
    ("batch-bad-item-in-list", HW + ["--batch", "1,2,x"], ("--batch", ">= 1", "'x'")),
    ("batch-repeated-value", HW + ["--batch", "1", "--batch", "1"], ("--batch", "lists 1 twice")),
    ("batch-repeated-in-list", HW + ["--batch", "4,8,4"], ("--batch", "lists 4 twice")),
    ("context-text", HW + ["--context", "abc"], ("--context", ">= 0", "'abc'")),
    ("context-nan", HW + ["--context", "nan"], ("--context", ">= 0", "'nan'")),
    ("context-repeated-value", HW + ["--context", "0,0"], ("--context", "lists 0 twice")),
    ("gpus-fraction", HW + ["--gpus", "2.5"], ("--gpus", "an integer in [1, 1024]", "'2.5'")),
    ("gpus-text", HW + ["--gpus", "abc"], ("--gpus", "an integer in [1, 1024]", "'abc'")),
    ("gpus-negative", HW + ["--gpus", "-2"], ("--gpus", "an integer in [1, 1024]", "'-2'")),
    ("gpus-twice", HW + ["--gpus", "2", "--gpus", "4"], ("--gpus", "given twice")),
    ("step-overhead-text", HW + ["--step-overhead", "abc"], ("--step-overhead", ">= 0", "'abc'")),
    ("step-overhead-infinite", HW + ["--step-overhead", "inf"], ("--step-overhead", ">= 0", "'inf'")),
    ("gamma-max-fraction", HW + ["--gamma-max", "2.5"], ("--gamma-max", "[1, 1024]", "'2.5'")),
    ("gamma-max-above-limit", HW + ["--gamma-max", "2000"], ("--gamma-max", "[1, 1024]", "'2000'")),
    ("hardware-empty", ["plan", "--preset", "opt-13b", "--hardware", ""], ("--hardware", "non-empty")),
    ("hardware-twice", HW + ["--hardware", "h100-sxm"], ("--hardware", "given twice")),
    ("dtype-twice", HW + ["--dtype", "fp8", "--dtype", "bf16"], ("--dtype", "given twice")),
    ("overlap-with-value", HW + ["--overlap=yes"], ("--overlap", "'yes'")),
    ("draft-model-empty", ["plan", "--preset", "opt-13b", "--draft-model", ""], ("--draft-model", "non-empty")),
    ("target-model-empty", ["plan", "--preset", "opt-13b", "--target-model", ""], ("--target-model", "non-empty")),
    # other flags given twice
    (
        "seed-twice",
        ["plan", "--preset", "opt-13b", "--bootstrap", "100", "--seed", "1", "--seed", "2"],
        ("--seed", "given twice"),
    ),
    (
        "cost-ratio-twice",
        ["plan", "--preset", "opt-13b", "--cost-ratio", "0.1", "--cost-ratio", "0.2"],
        ("--cost-ratio", "given twice"),
    ),
    ("cost-ratio-nan", ["plan", "--preset", "opt-13b", "--cost-ratio", "nan"], ("--cost-ratio", ">= 0", "'nan'")),
    (
        "alpha-source-twice",
        ["plan", "--preset", "opt-13b", "--alpha-source", "refit", "--alpha-source", "paper"],
        ("--alpha-source", "given twice"),
    ),
    (
        "constants-twice",
        ["plan", "--preset", "opt-13b", "--constants", "besiroglu2024", "--constants", "hoffmann2022"],
        ("--constants", "given twice"),
    ),
    (
        "seed-with-zero-bootstrap",
        ["plan", "--preset", "opt-13b", "--bootstrap", "0", "--seed", "3"],
        ("--seed 3", "--bootstrap"),
    ),
    (
        "seed-hex",
        ["plan", "--preset", "opt-13b", "--bootstrap", "100", "--seed", "0x10"],
        ("--seed", ABOUT_SEED, "'0x10'"),
    ),
    (
        "option-before-command",
        ["--verbose", "plan", "--preset", "opt-13b"],
        ("--verbose", "unrecognized arguments", "sdsl COMMAND"),
    ),
    ("option-without-command", ["--bogus=1"], ("--bogus=1", "unrecognized arguments")),
    (
        "alpha-source-folder",
        ["plan", "--preset", "opt-13b", "--alpha-source", str(FIXTURES)],
        ("--alpha-source", "is a folder"),
    ),
    ("alpha-source-empty", ["plan", "--preset", "opt-13b", "--alpha-source", ""], ("--alpha-source", "'paper'")),
    ("constants-empty", ["plan", "--preset", "opt-13b", "--constants", ""], ("--constants", "'besiroglu2024'")),
    (
        "constants-six",
        ["plan", "--preset", "opt-13b", "--constants", "1,2,3,4,5,6"],
        ("--constants", "five numbers", "6 values"),
    ),
    ("constants-nan", ["plan", "--preset", "opt-13b", "--constants", "nan,1,1,0.3,0.3"], ("--constants", "finite")),
    (
        "draft-params-repeated",
        ["plan", "--preset", "opt-13b", "--draft-params", "1e9", "--draft-params", "1e9"],
        ("--draft-params", "twice"),
    ),
    ("draft-params-zero", ["plan", "--preset", "opt-13b", "--draft-params", "0"], ("--draft-params", "> 0", "'0'")),
    (
        "draft-tokens-list",
        ["plan", "--preset", "opt-13b", "--draft-tokens", "1e12,2e12"],
        ("--draft-tokens", "> 0", "'1e12,2e12'"),
    ),
    (
        "target-tokens-infinite",
        ["plan", "--target-params", "7e10", "--target-tokens", "inf", "--draft-tokens", "1e12"],
        ("--target-tokens", "> 0", "'inf'"),
    ),
    ("n-range-equal", ["plan", "--preset", "opt-13b", "--n-range", "1e8", "1e8"], ("--n-range", "two increasing")),
    ("n-range-infinite", ["plan", "--preset", "opt-13b", "--n-range", "1e8", "inf"], ("--n-range", "[100000, 1e+14]")),
    ("integer-gamma-with-value", ["plan", "--preset", "opt-13b", "--integer-gamma=1"], ("--integer-gamma", "'1'")),
    ("tokens-unknown-preset", ["plan", "--preset", "mistral-7b-v0.3"], ("--target-tokens", "not stated")),
    # numbers a float cannot hold: overflow to infinity, subnormal (1/x overflows), integers past 2^53
    ("speedup-c-subnormal", ["speedup", "--alpha", "0.8", "--c", "1e-320"], ("--cost-ratio", "subnormal", "'1e-320'")),
    ("speedup-c-subnormal-1e-310", ["speedup", "--alpha", "0.8", "--c", "1e-310"], ("--cost-ratio", "subnormal")),
    ("speedup-c-smallest-subnormal", ["speedup", "--alpha", "0.8", "--c", "5e-324"], ("--cost-ratio", "subnormal")),
    (
        "speedup-c-overflows",
        ["speedup", "--alpha", "0.8", "--c", "1e400"],
        ("--cost-ratio", "beyond the largest float"),
    ),
    (
        "speedup-draft-latency-subnormal",
        ["speedup", "--alpha", "0.8", "--draft-latency", "1e-320", "--target-latency", "1"],
        ("--draft-latency", "subnormal"),
    ),
    (
        "speedup-latency-ratio-underflows",
        ["speedup", "--alpha", "0.8", "--draft-latency", "1e-200", "--target-latency", "1e200"],
        ("--draft-latency / --target-latency", "below 2.23e-308"),
    ),
    (
        "plan-latency-ratio-underflows",
        ["plan", "--preset", "opt-13b", "--draft-latency", "1e-300", "--target-latency", "1e10"],
        ("--draft-latency / --target-latency", "smallest normal float"),
    ),
    (
        "plan-cost-ratio-subnormal",
        ["plan", "--preset", "opt-13b", "--cost-ratio", "4e-320"],
        ("--cost-ratio", "subnormal", "give 0 or at least"),
    ),
    ("speedup-alpha-subnormal", ["speedup", "--alpha", "1e-320", "--c", "0.1"], ("--alpha", "(0, 1)", "subnormal")),
    (
        "target-params-overflows",
        ["plan", "--target-params", "1e400", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "[1e+08, 1e+14]", "beyond the largest float"),
    ),
    (
        "target-tokens-overflows",
        ["plan", "--target-params", "7e10", "--target-tokens", "1e999", "--draft-tokens", "1e12"],
        ("--target-tokens", "beyond the largest float"),
    ),
    (
        "target-params-subnormal",
        ["plan", "--target-params", "1e-320", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        ("--target-params", "[1e+08, 1e+14]", "subnormal"),
    ),
    (
        "draft-tokens-overflows",
        ["plan", "--preset", "opt-13b", "--draft-tokens", "2e308"],
        ("--draft-tokens", "beyond"),
    ),
    ("gpus-huge", HW + ["--gpus", "1e100"], ("--gpus", "an integer in [1, 1024]", "'1e100'")),
    ("gpus-overflows", HW + ["--gpus", "1e400"], ("--gpus", "an integer in [1, 1024]", "'1e400'")),
    ("gpus-too-many", HW + ["--gpus", "4096"], ("--gpus", "an integer in [1, 1024]", "'4096'")),
    ("batch-overflows", HW + ["--batch", "1e400"], ("--batch", ">= 1", "beyond the largest float")),
    ("context-overflows", HW + ["--context", "1e309"], ("--context", ">= 0", "beyond the largest float")),
    ("step-overhead-subnormal", HW + ["--step-overhead", "1e-320"], ("--step-overhead", "subnormal")),
    ("bootstrap-overflows", ["plan", "--preset", "opt-13b", "--bootstrap", "1e400"], ("--bootstrap", DRAWS)),
    ("gamma-max-huge", HW + ["--gamma-max", "1e100"], ("--gamma-max", "[1, 1024]")),
    (
        "speedup-gamma-overflows",
        ["speedup", "--alpha", "0.8", "--c", "0.1", "--gamma", "1e400"],
        ("--gamma", "[0, 1024]"),
    ),
    # the acceptance plane from a file whose points lie on one line: named by the flag, not by fit_plane
    (
        "alpha-source-collinear",
        ["plan", "--preset", "opt-13b", "--alpha-source", str(FIXTURES / "collinear_measurements.csv")],
        ("--alpha-source", "on one line", "collinear_measurements.csv"),
    ),
]


#: Command lines that look odd but are valid (exit 0), with the reason.
CLI_VALID: list[tuple[str, list[str]]] = [
    (
        "speedup-gamma-exponent",
        ["speedup", "--alpha", "0.8", "--c", "0.1", "--gamma", "1e3"],
    ),  # 1e3 is the integer 1000
    ("speedup-huge-cost", ["speedup", "--alpha", "0.8", "--c", "1e300"]),  # c >= 0: best gamma 0, speedup 1x, said so
    ("hardware-and-dtype-any-case", ["plan", "--preset", "opt-13b", "--hardware", "H200", "--dtype", "FP8"]),
    ("bootstrap-integral-float", ["plan", "--preset", "opt-13b", "--bootstrap", "100.0", "--json"]),  # exactly 100
    ("explicit-size-over-preset", ["plan", "--preset", "opt-13b", "--target-params", "7e10", "--json"]),  # documented
    (
        "draft-slower-than-target",
        ["plan", "--preset", "opt-13b", "--draft-latency", "1e-3", "--target-latency", "1e-4", "--json"],
    ),  # c = 10: the report says gamma 0, 1.000x
    ("context-beyond-memory", HW + ["--context", "1e12", "--json"]),  # reported with a does-not-fit warning
    # drafting for free, or nearly: the search stops at its largest draft length and says so in a note
    ("speedup-free-drafting", ["speedup", "--alpha", "0.9999999", "--c", "0", "--json"]),
    ("speedup-nearly-free-drafting", ["speedup", "--alpha", "0.9999999", "--c", "1e-12"]),
    ("speedup-smallest-normal-cost", ["speedup", "--alpha", "0.8", "--c", "2.2250738585072014e-308"]),
    (
        "speedup-latencies-far-apart",
        ["speedup", "--alpha", "0.8", "--draft-latency", "1e-150", "--target-latency", "1e150"],
    ),
    ("plan-free-drafting", ["plan", "--preset", "opt-13b", "--cost-ratio", "0", "--json"]),  # with a warning
]


# --------------------------------------------------------------------------------------------
# the other command lines: the pipeline, the regeneration check and the experiment. Each row is
# (id, command, argv, expected); the command is "pipeline" (python -m sdsl.build.pipeline), "check"
# (python -m sdsl.build.check) or "experiment" (python -m sdsl.experiment). "{tmp}" is a new folder.

README = str(ROOT / "README.md")

COMMANDS: list[tuple[str, str, list[str], tuple[str, ...]]] = [
    ("pipeline-no-command", "pipeline", [], ("COMMAND", "required")),
    ("pipeline-unknown-command", "pipeline", ["bogus"], ("'bogus'", "invalid choice")),
    ("pipeline-jobs-zero", "pipeline", ["run", "--jobs", "0"], ("--jobs", "an integer >= 1", "'0'")),
    ("pipeline-jobs-text", "pipeline", ["run", "--jobs", "abc"], ("--jobs", "an integer >= 1", "'abc'")),
    ("pipeline-jobs-equals-zero", "pipeline", ["book", "--jobs=0"], ("--jobs", ">= 1")),
    ("pipeline-jobs-negative", "pipeline", ["run", "--jobs", "-2"], ("--jobs", ">= 1", "'-2'")),
    ("pipeline-jobs-huge", "pipeline", ["run", "--jobs", "1e100"], ("--jobs", "2^53")),
    ("pipeline-jobs-overflows", "pipeline", ["run", "--jobs", "1e400"], ("--jobs", "beyond the largest float")),
    ("pipeline-jobs-fraction", "pipeline", ["run", "--jobs", "1.5"], ("--jobs", "an integer", "'1.5'")),
    ("pipeline-jobs-twice", "pipeline", ["run", "--jobs", "1", "--jobs", "2"], ("--jobs", "given twice")),
    ("pipeline-jobs-without-value", "pipeline", ["run", "--jobs"], ("--jobs", "expected one argument")),
    ("pipeline-book-extra-argument", "pipeline", ["book", "plan_draft"], ("unrecognized arguments", "plan_draft")),
    ("pipeline-unknown-option", "pipeline", ["run", "--frob"], ("unrecognized arguments", "--frob")),
    ("pipeline-option-before-command", "pipeline", ["--force", "run"], ("--force",)),
    ("pipeline-chapter-twice", "pipeline", ["run", "plan_draft", "plan_draft"], ("'plan_draft'", "named twice")),
    ("pipeline-unknown-chapter", "pipeline", ["run", "acceptence"], ("acceptence", "runs.yml")),
    ("check-jobs-zero", "check", ["--jobs", "0"], ("--jobs", ">= 1", "'0'")),
    ("check-jobs-overflows", "check", ["--jobs", "1e400"], ("--jobs", "beyond the largest float")),
    ("check-baseline-a-file", "check", ["plan_draft", "--baseline", README], ("--baseline", "is a file")),
    ("check-baseline-missing", "check", ["plan_draft", "--baseline", "{tmp}/none"], ("--baseline", "does not exist")),
    ("check-chapter-twice", "check", ["plan_draft", "plan_draft"], ("'plan_draft'", "named twice")),
    ("check-set-preset-word", "check", ["plan_draft", "--set", "plan_draft.preset=no"], ("preset", "'no'", "opt-13b")),
    (
        "check-set-number-overflows",
        "check",
        ["latency", "--set", "latency.n_boot=1e400"],
        ("--set", "n_boot", "[100, 10000]", "inf"),
    ),
    (
        "check-set-twice",
        "check",
        ["latency", "--set", "latency.n_boot=1e3", "--set", "latency.n_boot=2e3"],
        ("given twice",),
    ),
    ("check-keep-without-value", "check", ["--keep"], ("--keep", "expected one argument")),
    ("check-unknown-option", "check", ["--acept"], ("unrecognized arguments", "did you mean '--accept'")),
    ("experiment-no-command", "experiment", [], ("COMMAND", "required")),
    ("experiment-workers-zero", "experiment", ["run", "--workers", "0"], ("--workers", ">= 1", "'0'")),
    ("experiment-workers-text", "experiment", ["run", "--workers", "abc"], ("--workers", ">= 1", "'abc'")),
    ("experiment-threads-negative", "experiment", ["run", "--threads", "-1"], ("--threads", ">= 1", "'-1'")),
    ("experiment-threads-huge", "experiment", ["run", "--threads", "1e100"], ("--threads", "2^53")),
    ("experiment-scale-bogus", "experiment", ["run", "--scale", "bogus"], ("--scale", "'bogus'", "'smoke'")),
    ("experiment-extra-argument", "experiment", ["run", "extra"], ("unrecognized arguments", "extra")),
    ("experiment-flops-nan", "experiment", ["budget", "--flops-per-s", "nan"], ("--flops-per-s", "> 0", "'nan'")),
    ("experiment-flops-infinite", "experiment", ["budget", "--flops-per-s", "inf"], ("--flops-per-s", "> 0")),
    ("experiment-flops-overflows", "experiment", ["budget", "--flops-per-s", "1e400"], ("--flops-per-s", "beyond")),
    ("experiment-flops-zero", "experiment", ["budget", "--flops-per-s", "0"], ("--flops-per-s", "> 0", "'0'")),
    (
        "experiment-device-not-here",
        "experiment",
        ["run", "--scale", "smoke", "--out", "{tmp}/out", "--device", "cuda:99"],
        ("--device", "'cuda:99'", "not usable"),
    ),
    (
        "experiment-device-nonsense",
        "experiment",
        ["run", "--scale", "smoke", "--out", "{tmp}/out", "--device", "gpu"],
        ("--device", "'gpu'", "not usable"),
    ),
    (
        "experiment-resume-new-folder",
        "experiment",
        ["run", "--scale", "smoke", "--out", "{tmp}/new", "--resume", "--no-progress"],
        ("--resume", "holds no run to resume"),
    ),
    ("experiment-address-without-value", "experiment", ["run", "--address"], ("--address", "expected one argument")),
]

# --------------------------------------------------------------------------------------------
# notebook parameters: chapter, parameters (merged over the notebook's defaults by the tests that
# call check_parameters; given alone to execute_notebook)

NOTEBOOK: list[tuple[str, str, dict[str, Any], tuple[str, ...]]] = [
    # unknown names, with the nearest suggested
    ("plan-presett", "plan_draft", {"presett": "qwen2.5-72b"}, ("'presett'", "did you mean 'preset'", "allowed:")),
    ("acceptance-measurement", "acceptance", {"measurement": "/tmp/x.csv"}, ("'measurement'", "'measurements'")),
    ("latency-nboot", "latency", {"nboot": 100}, ("'nboot'", "'n_boot'")),
    ("beyond-level-typo", "beyond", {"levels": 0.9}, ("'levels'", "'level'")),
    ("scaling-unknown", "scaling", {"grid": 3}, ("'grid'", "allowed:", "m_points")),
    ("measure-prompt-typo", "measure_acceptance", {"n_prompt": 4}, ("'n_prompt'", "'n_prompts'")),
    ("scorecard-unknown", "scorecard", {"root": "/tmp"}, ("'root'", "artifacts_root")),
    ("optimal-target-typo", "optimal_draft", {"target": ["Qwen1.5-14B"]}, ("'target'", "'targets'")),
    # optimal_draft
    ("optimal-n-points-zero", "optimal_draft", {"n_points": 0}, ("n_points", "[2, 10000]")),
    ("optimal-n-points-float", "optimal_draft", {"n_points": 400.0}, ("n_points", "an integer")),
    ("optimal-n-min-negative", "optimal_draft", {"n_min": -1}, ("n_min", "[100000, 1e+14]")),
    ("optimal-gamma-step-zero", "optimal_draft", {"gamma_step": 0}, ("gamma_step", "[1e-05, 1]")),
    ("optimal-families-string", "optimal_draft", {"families": "OPT"}, ("families", "the string 'OPT'", "['OPT']")),
    ("optimal-families-unknown", "optimal_draft", {"families": ["OPT", "Llama"]}, ("families[1]", "'Qwen1.5'")),
    ("optimal-targets-empty", "optimal_draft", {"targets": []}, ("targets", "at least 1")),
    ("optimal-targets-unknown", "optimal_draft", {"targets": ["GPT-4"]}, ("targets[0]", "'Qwen1.5-14B'")),
    ("optimal-targets-repeated", "optimal_draft", {"targets": ["Qwen1.5-14B", "Qwen1.5-14B"]}, ("targets", "distinct")),
    (
        "optimal-d-target-unused",
        "optimal_draft",
        {"d_target": {"OPT-13B": 1e12}},
        ("d_target", "'OPT-13B'", "not be used"),
    ),
    (
        "optimal-d-target-tiny",
        "optimal_draft",
        {"d_target": {"Qwen1.5-14B": 1}},
        ("d_target['Qwen1.5-14B']", "[1e+09, 1e+16]"),
    ),
    ("optimal-d-target-list", "optimal_draft", {"d_target": [4e12]}, ("d_target", "mapping")),
    ("optimal-n-range-reversed", "optimal_draft", {"n_min": 1e9, "n_max": 1e8}, ("n_min", "n_max", "below")),
    ("optimal-n-max-above-target", "optimal_draft", {"n_max": 2e10}, ("n_min and n_max", "target size")),
    ("optimal-n-min-plane-leaves", "optimal_draft", {"n_min": 1e5}, ("n_min and n_max", "leaves (0, 1)")),
    ("optimal-constants-edge", "optimal_draft", {"constants": [1, 2, 3, 4, 5]}, ("constants", "no interior optimum")),
    ("optimal-coefficients-two", "optimal_draft", {"coefficients": [1, 2]}, ("coefficients", "3 numbers")),
    ("optimal-integer-one", "optimal_draft", {"integer": 1}, ("integer", "True or False")),
    ("optimal-n-points-huge", "optimal_draft", {"n_points": 10**9}, ("n_points", "[2, 10000]")),
    # latency
    ("latency-n-boot-zero", "latency", {"n_boot": 0}, ("n_boot", DRAWS)),
    ("latency-n-noise-huge", "latency", {"n_noise": 10**9}, ("n_noise", DRAWS)),
    ("latency-target-unmeasured", "latency", {"target": "Qwen1.5-14B"}, ("target", "'OPT-13B'")),
    ("latency-confidence-percent", "latency", {"confidence": 95}, ("confidence", "(0, 1)")),
    ("latency-seed-float", "latency", {"seed": 1.5}, ("seed", ABOUT_SEED)),
    ("latency-seed-string", "latency", {"seed": "42"}, ("seed", ABOUT_SEED)),
    ("latency-constants-unknown", "latency", {"constants": "chinchilla"}, ("constants", "'besiroglu2024'")),
    (
        "latency-coefficients-plane-leaves",
        "latency",
        {"coefficients": [0, 0, 2]},
        ("constants and coefficients", "leaves (0, 1)"),
    ),
    # beyond
    ("beyond-sweep-points-negative", "beyond", {"sweep_points": -1}, ("sweep_points", "[2, 1000]")),
    ("beyond-level-two", "beyond", {"level": 2}, ("level", "(0, 1)")),
    ("beyond-band-reversed", "beyond", {"band": [300, 150]}, ("band", "two increasing")),
    ("beyond-band-one", "beyond", {"band": [150]}, ("band", "two increasing")),
    ("beyond-sweep-range-reversed", "beyond", {"sweep_range": [1e12, 1e9]}, ("sweep_range", "two increasing")),
    ("beyond-sweep-range-tiny", "beyond", {"sweep_range": [1, 1e9]}, ("sweep_range low", "[1e+08, 1e+14]")),
    ("beyond-sweep-family-unknown", "beyond", {"sweep_family": "Qwen3"}, ("sweep_family", "'Qwen1.5'")),
    ("beyond-elasticity-step-zero", "beyond", {"elasticity_step": 0}, ("elasticity_step", "[1e-06, 0.1]")),
    ("beyond-n-resamples-zero", "beyond", {"n_resamples": 0}, ("n_resamples", DRAWS)),
    ("beyond-sweep-d-target-tiny", "beyond", {"sweep_d_target": 1}, ("sweep_d_target", "[1e+09, 1e+16]")),
    # measure_acceptance
    ("measure-n-prompts-zero", "measure_acceptance", {"n_prompts": 0}, ("n_prompts", ">= 1")),
    ("measure-n-prompts-more-than-file", "measure_acceptance", {"n_prompts": 10**6}, ("n_prompts", "prompts in")),
    ("measure-draft-alone", "measure_acceptance", {"draft": "gpt2"}, ("draft and target", "both")),
    (
        "measure-rebuild-unused",
        "measure_acceptance",
        {"draft": "gpt2", "target": "gpt2-medium", "rebuild_pair": True},
        ("rebuild_pair", "not be used"),
    ),
    (
        "measure-draft-missing-folder",
        "measure_acceptance",
        {"draft": "/no/such/model", "target": "/no/such/target"},
        ("draft", "does not exist"),
    ),
    ("measure-gammas-empty", "measure_acceptance", {"gammas": []}, ("gammas", "at least 1")),
    ("measure-gammas-repeated", "measure_acceptance", {"gammas": [2, 2]}, ("gammas", "distinct")),
    ("measure-gammas-zero", "measure_acceptance", {"gammas": [0, 2]}, ("gammas[0]", "[1, 64]")),
    ("measure-gammas-int", "measure_acceptance", {"gammas": 4}, ("gammas", "a list")),
    ("measure-temperature-negative", "measure_acceptance", {"temperature": -1}, ("temperature", "[0, 10]")),
    ("measure-threads-zero", "measure_acceptance", {"threads": 0}, ("threads", "[1, ")),
    ("measure-max-new-tokens-zero", "measure_acceptance", {"max_new_tokens": 0}, ("max_new_tokens", "[1, 4096]")),
    (
        "measure-prompts-file-missing",
        "measure_acceptance",
        {"prompts_file": "/no/such/prompts.txt"},
        ("prompts_file", "does not exist"),
    ),
    ("measure-n-resamples-one", "measure_acceptance", {"n_resamples": 1}, ("n_resamples", DRAWS)),
    ("measure-rebuild-string", "measure_acceptance", {"rebuild_pair": "yes"}, ("rebuild_pair", "True or False")),
    # scaling
    ("scaling-spacing-unknown", "scaling", {"spacing": "cubic"}, ("spacing", "'log', 'linear'")),
    ("scaling-data-high-below-grid", "scaling", {"data_high": 1e11}, ("data_high", "(1e+12, 1e+16]")),
    ("scaling-band-reversed", "scaling", {"band_low": 300.0, "band_high": 150.0}, ("band_low", "band_high", "below")),
    ("scaling-m-points-one", "scaling", {"m_points": 1}, ("m_points", "[2, 10000]")),
    ("scaling-m-low-tiny", "scaling", {"m_low": 1}, ("m_low", "[1e+08, 1e+14]")),
    ("scaling-m-range-reversed", "scaling", {"m_low": 1e12, "m_high": 1e9}, ("m_low", "m_high", "below")),
    ("scaling-refine-string", "scaling", {"refine": "yes"}, ("refine", "True or False")),
    ("scaling-rule-ratio-one", "scaling", {"rule_ratio": 1.0}, ("rule_ratio", "> 1")),
    # plan_draft (the checks of sdsl plan, named as the notebook's parameters)
    ("plan-n-boot-ten", "plan_draft", {"n_boot": 10}, ("n_boot", DRAWS)),
    ("plan-n-range-reversed", "plan_draft", {"n_range": [1e9, 1e8]}, ("n_range", "two increasing")),
    ("plan-preset-typo", "plan_draft", {"preset": "lama-3-70b"}, ("preset", "did you mean 'llama-3-70b'")),
    ("plan-seed-missing", "plan_draft", {"seed": None}, ("seed", "required")),
    (
        "plan-candidates-above-target",
        "plan_draft",
        {"candidates": {"big": 1e12}},
        ("candidates 'big'", "not smaller than the target"),
    ),
    (
        "plan-target-params-huge",
        "plan_draft",
        {"preset": None, "target_params": 1e300, "target_tokens": 1e12, "draft_tokens": 1e12},
        ("target_params", "[1e+08, 1e+14]"),
    ),
    # acceptance, scorecard
    ("acceptance-source-typo", "acceptance", {"coefficients_source": "refitt"}, ("coefficients_source", "'refit'")),
    (
        "acceptance-measurements-missing",
        "acceptance",
        {"measurements": "/no/such/file.csv"},
        ("measurements", "does not exist"),
    ),
    ("acceptance-measurements-number", "acceptance", {"measurements": 3}, ("measurements", "existing file")),
    (
        "scorecard-root-missing",
        "scorecard",
        {"artifacts_root": "/no/such/artifacts"},
        ("artifacts_root", "does not exist"),
    ),
    # more of the same kinds: wrong types, case, NaN and infinity, folders for files
    (
        "acceptance-source-none",
        "acceptance",
        {"coefficients_source": None},
        ("coefficients_source", "'paper', 'refit'"),
    ),
    (
        "acceptance-source-upper-case",
        "acceptance",
        {"coefficients_source": "PAPER"},
        ("coefficients_source", "did you mean 'paper'"),
    ),
    ("acceptance-measurements-empty", "acceptance", {"measurements": ""}, ("measurements", "existing file")),
    ("acceptance-measurements-folder", "acceptance", {"measurements": "/tmp"}, ("measurements", "is a folder")),
    ("acceptance-artifacts-dir-number", "acceptance", {"artifacts_dir": 3}, ("artifacts_dir", "folder")),
    ("optimal-targets-string", "optimal_draft", {"targets": "Qwen1.5-14B"}, ("targets", "the string 'Qwen1.5-14B'")),
    ("optimal-families-repeated", "optimal_draft", {"families": ["OPT", "OPT"]}, ("families", "distinct", "twice")),
    ("optimal-constants-three", "optimal_draft", {"constants": [1, 2, 3]}, ("constants", "5 numbers")),
    (
        "optimal-coefficients-nan",
        "optimal_draft",
        {"coefficients": [float("nan"), 1, 1]},
        ("coefficients[0]", "a number"),
    ),
    ("optimal-integer-none", "optimal_draft", {"integer": None}, ("integer", "True or False")),
    ("optimal-n-max-infinite", "optimal_draft", {"n_max": float("inf")}, ("n_max", "[100000, 1e+14]")),
    ("optimal-n-points-bool", "optimal_draft", {"n_points": True}, ("n_points", "[2, 10000]", "True")),
    ("optimal-gamma-step-string", "optimal_draft", {"gamma_step": "0.01"}, ("gamma_step", "[1e-05, 1]", "'0.01'")),
    ("optimal-d-target-unknown", "optimal_draft", {"d_target": {"Nope": 1e12}}, ("d_target", "'OPT-13B'", "'Nope'")),
    ("latency-target-lower-case", "latency", {"target": "opt-13b"}, ("target", "did you mean 'OPT-13B'")),
    ("latency-n-boot-fraction", "latency", {"n_boot": 100.5}, ("n_boot", DRAWS)),
    ("latency-confidence-one", "latency", {"confidence": 1.0}, ("confidence", "(0, 1)")),
    ("latency-seed-bool", "latency", {"seed": True}, ("seed", ABOUT_SEED)),
    ("scaling-n-spacing-unknown", "scaling", {"n_spacing": "x"}, ("n_spacing", "'log', 'linear'")),
    ("scaling-data-high-string", "scaling", {"data_high": "1e14"}, ("data_high", "(1e+12, 1e+16]")),
    ("scaling-refine-one", "scaling", {"refine": 1}, ("refine", "True or False")),
    ("scaling-seed-too-large", "scaling", {"seed": 2**64}, ("seed", ABOUT_SEED)),
    ("scaling-m-small-tiny", "scaling", {"m_small": 1}, ("m_small", "[1e+08, 1e+14]")),
    ("plan-no-target", "plan_draft", {"preset": None}, ("preset", "target_params", "target_tokens")),
    ("plan-alpha-source-unknown", "plan_draft", {"alpha_source": "x"}, ("alpha_source", "'paper', 'refit'")),
    ("plan-preset-moe", "plan_draft", {"preset": "qwen3-30b-a3b"}, ("preset", "mixture-of-experts")),
    ("plan-n-star-on-bound", "plan_draft", {"n_range": [1e9, 3e10]}, ("n_range", "lower end", "widen")),
    ("plan-candidates-negative", "plan_draft", {"candidates": {"a": -1}}, ("candidates 'a'", "> 0")),
    ("measure-gammas-fraction", "measure_acceptance", {"gammas": [2, 2.5]}, ("gammas[1]", "[1, 64]")),
    ("measure-threads-huge", "measure_acceptance", {"threads": 10**6}, ("threads", "[1, ")),
    ("measure-prompts-file-folder", "measure_acceptance", {"prompts_file": "/tmp"}, ("prompts_file", "is a folder")),
    ("beyond-seed-none", "beyond", {"seed": None}, ("seed", ABOUT_SEED)),
    ("beyond-band-string", "beyond", {"band": "150,300"}, ("band", "two increasing", "'150,300'")),
    ("beyond-band-nan", "beyond", {"band": [150, float("nan")]}, ("band high", "> 1")),
    ("beyond-level-zero", "beyond", {"level": 0}, ("level", "(0, 1)")),
    ("scorecard-root-is-file", "scorecard", {"artifacts_root": "/etc/passwd"}, ("artifacts_root", "is a file")),
    # numbers written as text: refused naming the parameter, the type and the value, also where the
    # check is sdsl plan's (which reads the command line's text)
    (
        "plan-n-boot-numeric-string",
        "plan_draft",
        {"n_boot": "200"},
        ("n_boot", "the string '200'", "a str", "200 without"),
    ),
    ("plan-seed-numeric-string", "plan_draft", {"seed": "3"}, ("seed", "the string '3'", "a str")),
    ("plan-n-range-item-string", "plan_draft", {"n_range": ["1e8", 1e9]}, ("n_range[0]", "the string '1e8'")),
    ("plan-n-range-one-string", "plan_draft", {"n_range": "1e8,1e9"}, ("n_range", "a str", "give [1e8, 1e9]")),
    ("plan-candidates-numeric-string", "plan_draft", {"candidates": "1e9"}, ("candidates", "the string '1e9'")),
    ("plan-candidates-value-string", "plan_draft", {"candidates": {"small": "1e9"}}, ("candidates['small']", "a str")),
    ("plan-draft-tokens-numeric-string", "plan_draft", {"draft_tokens": "15e12"}, ("draft_tokens", "'15e12'", "a str")),
    (
        "plan-constants-numeric-string",
        "plan_draft",
        {"constants": "406.4,410.7,1.69,0.34,0.28"},
        ("constants", "a str", "give [406.4, 410.7, 1.69, 0.34, 0.28]"),
    ),
    (
        "plan-target-params-numeric-string",
        "plan_draft",
        {"preset": None, "target_params": "7e10", "target_tokens": 1e12, "draft_tokens": 1e12},
        ("target_params", "the string '7e10'", "a str"),
    ),
    ("latency-n-boot-numeric-string", "latency", {"n_boot": "200"}, ("n_boot", DRAWS, "the string '200'", "a str")),
    ("measure-n-prompts-numeric-string", "measure_acceptance", {"n_prompts": "4"}, ("n_prompts", "'4'", "a str")),
    ("beyond-level-numeric-string", "beyond", {"level": "0.9"}, ("level", "(0, 1)", "give 0.9 without quotes")),
    # a repeated value of draft_tokens: the same plan twice, not two plans
    ("plan-draft-tokens-repeated", "plan_draft", {"draft_tokens": [1e12, 1e12]}, ("draft_tokens", "1e+12 twice")),
    (
        "plan-draft-tokens-repeated-apart",
        "plan_draft",
        {"draft_tokens": [2e12, 1e12, 2e12]},
        ("draft_tokens", "2e+12 twice"),
    ),
]

#: Notebook parameters that look odd but are valid (the reason in the comment).
NOTEBOOK_VALID: list[tuple[str, str, dict[str, Any]]] = [
    ("plan-candidates-one-size", "plan_draft", {"candidates": 1e9}),  # one candidate, as --draft-params 1e9
    ("plan-candidates-none", "plan_draft", {"candidates": []}),  # no candidate drafts to compare: the table is left out
    ("plan-no-bootstrap", "plan_draft", {"n_boot": 0}),  # 0 draws: no interval (the notebook says so); seed unused
    ("measure-draft-family-label", "measure_acceptance", {"draft_family": "my-family"}),  # a free label of the row
    ("scaling-m-small-above-grid", "scaling", {"m_small": 1e13}),  # one target size, not a point of the grid
]


# --------------------------------------------------------------------------------------------
# public API: a call (evaluated lazily) and what its message must hold


def _api() -> list[tuple[str, Callable[[], Any], tuple[str, ...]]]:
    import numpy as np

    import sdsl
    from sdsl import data
    from sdsl import plan as P
    from sdsl import validation as V
    from sdsl.build import check, pipeline
    from sdsl.data import records
    from sdsl.measure.engines.detect import read_files
    from sdsl.model import deploy as D
    from sdsl.model import speedup as S
    from sdsl.plan import deployment as DP
    from sdsl.plan import interval as I
    from sdsl.plan import lookup as L

    def inp():
        return P.check_inputs("opt-13b")

    return [
        ("optimal-gamma-alpha-above-one", lambda: sdsl.optimal_gamma(1.5, 1e8, 1e10), ("alpha", "(0, 1)", "1.5")),
        ("optimal-gamma-alpha-text", lambda: sdsl.optimal_gamma("x", 1e8, 1e10), ("alpha", "numeric")),
        ("optimal-gamma-draft-above-target", lambda: sdsl.optimal_gamma(0.6, 1e11, 1e10), ("m/n", ">= 1")),
        (
            "optimal-gamma-integer-two",
            lambda: sdsl.optimal_gamma(0.6, 1e8, 1e10, integer=2),
            ("integer", "True or False"),
        ),
        ("expected-tokens-gamma-negative", lambda: sdsl.expected_tokens(0.5, -1), ("gamma", "[0")),
        ("expected-tokens-alpha-nan", lambda: sdsl.expected_tokens(float("nan"), 3), ("alpha", "finite")),
        ("tokens-per-flop-n-zero", lambda: sdsl.tokens_per_flop(0.5, 0, 1e10, 3), ("n (draft parameters)", "> 0")),
        ("perplexity-n-negative", lambda: sdsl.perplexity(-1, 1e12), ("n (model parameters)", "> 0")),
        ("perplexity-d-infinite", lambda: sdsl.perplexity(1e8, float("inf")), ("d (pre-training tokens)", "finite")),
        ("perplexity-array-shows-count", lambda: sdsl.perplexity(np.full(97, np.inf), 1e12), ("97 of 97",)),
        ("optimal-draft-size-m-one", lambda: sdsl.optimal_draft_size(1, 1e12, 1e12), ("m", "[1e+08, 1e+14]")),
        ("optimal-draft-size-m-huge", lambda: sdsl.optimal_draft_size(1e300, 1e12, 1e12), ("m", "[1e+08, 1e+14]")),
        ("optimal-draft-size-d-one", lambda: sdsl.optimal_draft_size(7e10, 1, 1e12), ("d_draft", "[1e+09, 1e+16]")),
        (
            "optimal-draft-size-bounds-three",
            lambda: sdsl.optimal_draft_size(7e10, 1e12, 1e12, n_bounds=(1e9, 1e8, 3)),
            ("n_bounds", "two increasing"),
        ),
        (
            "optimal-draft-size-bounds-reversed",
            lambda: sdsl.optimal_draft_size(7e10, 1e12, 1e12, n_bounds=(1e9, 1e8)),
            ("n_bounds", "two increasing"),
        ),
        (
            "optimal-draft-size-integer-text",
            lambda: sdsl.optimal_draft_size(7e10, 1e12, 1e12, integer="yes"),
            ("integer", "True or False"),
        ),
        ("optimal-draft-size-m-string", lambda: sdsl.optimal_draft_size("7e10", 1e12, 1e12), ("m", "a number")),
        (
            "check-inputs-target-params-bool",
            lambda: P.check_inputs(target_params=True, target_tokens=1e12, draft_tokens=1e12),
            ("target_params", "a number"),
        ),
        ("check-inputs-n-boot-bool", lambda: P.check_inputs("opt-13b", n_boot=True, seed=1), ("n_boot", DRAWS)),
        ("check-inputs-n-boot-huge", lambda: P.check_inputs("opt-13b", n_boot=1e12, seed=1), ("n_boot", DRAWS)),
        (
            "check-inputs-integer-text",
            lambda: P.check_inputs("opt-13b", integer_gamma="yes"),
            ("integer_gamma", "True or False"),
        ),
        ("check-inputs-n-range-one", lambda: P.check_inputs("opt-13b", n_range="1e9"), ("n_range", "two increasing")),
        ("check-inputs-seed-negative", lambda: P.check_inputs("opt-13b", n_boot=100, seed=-3), ("seed", ABOUT_SEED)),
        (
            "check-inputs-candidates-repeated",
            lambda: P.check_inputs("opt-13b", candidates=[1e9, 1e9]),
            ("candidates", "twice"),
        ),
        (
            "check-inputs-draft-tokens-empty",
            lambda: P.check_inputs("opt-13b", draft_tokens=[]),
            ("draft_tokens", "empty"),
        ),
        (
            "bootstrap-n-boot-huge",
            lambda: P.bootstrap_n_star(inp(), n_boot=1e12, rng=np.random.default_rng(0)),
            ("n_boot", "[1, 10000]"),
        ),
        ("bootstrap-rng-int", lambda: P.bootstrap_n_star(inp(), n_boot=100, rng=3), ("rng", "Generator")),
        (
            "plan-table-rng-text",
            lambda: P.plan_table(P.check_inputs("opt-13b", n_boot=100, seed=1), rng="x"),
            ("rng", "Generator"),
        ),
        ("interval-level-two", lambda: P.n_star_interval([1.0, 2.0, 3.0], level=2), ("level", "(0, 1)")),
        ("interval-empty", lambda: P.n_star_interval([]), ("draws", "non-empty")),
        (
            "covariance-sensitivity-seed-negative",
            lambda: P.covariance_sensitivity(inp(), n_boot=100, seed=-1),
            ("seed", ABOUT_SEED),
        ),
        (
            "candidate-shares-d-negative",
            lambda: P.candidate_shares(inp(), -1, P.plan(inp())),
            ("d_draft", "[1e+09, 1e+16]"),
        ),
        ("get-preset-none", lambda: P.get_preset(None), ("preset", "preset name")),
        ("wall-clock-gamma-max-unused", lambda: DP.check_wall_clock(gamma_max=5), ("gamma_max", "hardware")),
        (
            "wall-clock-verify-tokens-alone",
            lambda: DP.check_wall_clock(draft_latency=1e-3, target_latency=1e-2, verify_tokens=3),
            ("verify_latency", "verify_tokens"),
        ),
        ("speedup-report-gamma-negative", lambda: S.speedup_report(0.7, 0.1, -1), ("gamma", ">= 0")),
        ("integer-draft-length-alpha-one", lambda: D.integer_draft_length(1.0, 1e8, 1e10), ("alpha", "(0, 1)")),
        ("data-load-unknown", lambda: data.load("nope"), ("'nope'", "available")),
        ("data-validate-list", lambda: data.validate([1, 2], "acceptance"), ("DataFrame", "list")),
        ("validate-integer-big-float", lambda: V.integer(2.0**60, "k"), ("k", "an integer")),
        ("validate-seed-text", lambda: V.seed("9007199254740993x"), ("seed", ABOUT_SEED)),
        (
            "execute-notebook-unknown-chapter",
            lambda: pipeline.execute_notebook("acceptence"),
            ("'acceptence'", "'acceptance'"),
        ),
        (
            "execute-notebook-not-a-dict",
            lambda: pipeline.execute_notebook("plan_draft", [("preset", "x")]),
            ("plan_draft", "dict"),
        ),
        (
            "execute-notebook-artifacts-dir",
            lambda: pipeline.execute_notebook("plan_draft", {"artifacts_dir": "/tmp"}),
            ("artifacts_dir", "artifacts="),
        ),
        ("run-unknown-chapter", lambda: pipeline.run(["acceptence"]), ("acceptence", "runs.yml")),
        (
            "run-override-unknown-parameter",
            lambda: pipeline.run(["acceptance"], overrides={"acceptance": {"coefficient_source": "refit"}}),
            ("'coefficient_source'", "'coefficients_source'"),
        ),
        (
            "run-override-bad-value",
            lambda: pipeline.run(["latency"], overrides={"latency": {"n_boot": 0}}),
            ("latency", "n_boot", DRAWS),
        ),
        # the N* interval (sdsl.plan.interval.n_star_intervals)
        ("intervals-level-two", lambda: I.n_star_intervals(inp(), level=2), ("level", "(0, 1)", "got 2")),
        ("intervals-level-text", lambda: I.n_star_intervals(inp(), level="x"), ("level", "(0, 1)", "'x'")),
        ("intervals-level-nan", lambda: I.n_star_intervals(inp(), level=float("nan")), ("level", "(0, 1)")),
        ("intervals-level-bool", lambda: I.n_star_intervals(inp(), level=True), ("level", "(0, 1)", "True")),
        ("intervals-n-boot-huge", lambda: I.n_star_intervals(inp(), n_boot=1e12, seed=1), ("n_boot", DRAWS)),
        ("intervals-n-boot-text", lambda: I.n_star_intervals(inp(), n_boot="abc", seed=1), ("n_boot", DRAWS, "'abc'")),
        ("intervals-n-boot-negative", lambda: I.n_star_intervals(inp(), n_boot=-1, seed=1), ("n_boot", DRAWS)),
        ("intervals-n-boot-five", lambda: I.n_star_intervals(inp(), n_boot=5, seed=1), ("n_boot", DRAWS, "got 5")),
        ("intervals-n-boot-fraction", lambda: I.n_star_intervals(inp(), n_boot=250.5, seed=1), ("n_boot", DRAWS)),
        ("intervals-seed-negative", lambda: I.n_star_intervals(inp(), n_boot=100, seed=-1), ("seed", ABOUT_SEED)),
        ("intervals-seed-text", lambda: I.n_star_intervals(inp(), n_boot=100, seed="x"), ("seed", ABOUT_SEED)),
        ("intervals-seed-fraction", lambda: I.n_star_intervals(inp(), n_boot=100, seed=1.5), ("seed", ABOUT_SEED)),
        ("intervals-seed-missing", lambda: I.n_star_intervals(inp(), n_boot=100), ("seed", "required", "n_boot")),
        ("intervals-seed-unused", lambda: I.n_star_intervals(inp(), seed=3), ("seed", "not used", "n_boot")),
        (
            "intervals-headline-unknown",
            lambda: I.n_star_intervals(inp(), headline=["law", "tables"]),
            ("headline", "law, constants, coefficients", "tables"),
        ),
        (
            "intervals-headline-string",
            lambda: I.n_star_intervals(inp(), headline="law"),
            ("headline", "the string 'law'", "['law']"),
        ),
        ("intervals-headline-empty", lambda: I.n_star_intervals(inp(), headline=[]), ("headline", "at least 1")),
        ("intervals-headline-number", lambda: I.n_star_intervals(inp(), headline=3), ("headline", "a list", "got 3")),
        (
            "intervals-headline-not-computed",
            lambda: I.n_star_intervals(inp(), headline=["coefficients"]),
            ("coefficients", "not computed", "--bootstrap"),
        ),
        ("intervals-n-star-negative", lambda: I.n_star_intervals(inp(), n_star=-1), ("n_star", "> 0", "-1")),
        ("intervals-n-star-nan", lambda: I.n_star_intervals(inp(), n_star=float("nan")), ("n_star", "> 0")),
        ("intervals-n-star-text", lambda: I.n_star_intervals(inp(), n_star="x"), ("n_star", "> 0", "'x'")),
        ("intervals-inputs-preset-name", lambda: I.n_star_intervals("opt-13b"), ("inputs", "check_inputs")),
        ("plan-interval-level-text", lambda: P.n_star_interval([1.0, 2.0, 3.0], level="x"), ("level", "(0, 1)")),
        # the lookup table (sdsl.plan.lookup)
        ("lookup-hardware-unknown", lambda: L.lookup_rows(hardware="tpu"), ("hardware", "'tpu'", "h100-sxm")),
        ("lookup-hardware-none", lambda: L.lookup_rows(hardware=None), ("hardware", "non-empty", "None")),
        ("lookup-batch-zero", lambda: L.lookup_rows(batch=0), ("batch", ">= 1", "got 0")),
        ("lookup-batch-bool", lambda: L.lookup_rows(batch=True), ("batch", ">= 1", "True")),
        ("lookup-batch-nan", lambda: L.lookup_rows(batch=float("nan")), ("batch", ">= 1", "nan")),
        ("lookup-batch-fraction", lambda: L.lookup_rows(batch=2.5), ("batch", "an integer", "2.5")),
        ("lookup-batch-text", lambda: L.lookup_rows(batch="2"), ("batch", ">= 1", "'2'")),
        ("lookup-context-negative", lambda: L.lookup_rows(context=-1), ("context", ">= 0", "-1")),
        ("lookup-table-context-text", lambda: L.lookup_table(context="0"), ("context", ">= 0", "'0'")),
        # the wall-clock options in Python
        (
            "wall-clock-batch-empty-item",
            lambda: DP.check_wall_clock(hardware="h200", batch="1,,2"),
            ("batch", "empty item"),
        ),
        ("wall-clock-batch-repeated", lambda: DP.check_wall_clock(hardware="h200", batch=[4, 4]), ("batch", "twice")),
        (
            "wall-clock-two-sources",
            lambda: DP.check_wall_clock(cost_ratio=0.1, hardware="h200"),
            ("cost_ratio", "hardware"),
        ),
        ("wall-clock-dtype-unknown", lambda: DP.check_wall_clock(hardware="h200", dtype="int4"), ("dtype", "'fp8'")),
        ("plan-preset-name-for-inputs", lambda: P.plan("opt-13b"), ("inputs", "check_inputs", "'opt-13b'")),
        ("plan-d-draft-negative", lambda: P.plan(inp(), -1), ("d_draft", "[1e+09, 1e+16]")),
        ("plan-table-not-inputs", lambda: P.plan_table({"preset": "opt-13b"}), ("inputs", "check_inputs")),
        ("candidate-shares-optimum-text", lambda: P.candidate_shares(inp(), 1e12, "x"), ("optimum", "sdsl.plan.plan")),
        (
            "bootstrap-not-inputs",
            lambda: P.bootstrap_n_star(None, n_boot=100, rng=np.random.default_rng(0)),
            ("inputs", "check_inputs"),
        ),
        (
            "bootstrap-d-draft-one",
            lambda: P.bootstrap_n_star(inp(), 1, n_boot=100, rng=np.random.default_rng(0)),
            ("d_draft", "[1e+09, 1e+16]"),
        ),
        ("covariance-sensitivity-not-inputs", lambda: P.covariance_sensitivity("opt-13b"), ("inputs", "check_inputs")),
        (
            "deployment-report-draft-model-empty",
            lambda: DP.deployment_report(inp(), P.plan(inp()), DP.check_wall_clock(), draft_model=""),
            ("draft_model", "non-empty"),
        ),
        (
            "check-inputs-draft-tokens-repeated",
            lambda: P.check_inputs("opt-13b", draft_tokens=[1e12, 3e11, 1e12]),
            ("draft_tokens", "1e+12 twice"),
        ),
        # the working directory is an empty temporary folder: 'latency.csv' is no file there
        ("data-load-name-with-csv", lambda: data.load("latency.csv"), ("latency.csv", "no such file", "'latency'")),
        ("data-records-name-with-yml", lambda: records("models.yml"), ("models.csv", "no such file", "'models'")),
        # silent before: a word read as True, text inside an array read as a number, a path in bytes
        (
            "wall-clock-overlap-word",
            lambda: DP.check_wall_clock(hardware="h200", overlap="no"),
            ("overlap", "True or False", "'no'"),
        ),
        (
            "wall-clock-overlap-number",
            lambda: DP.check_wall_clock(hardware="h200", overlap=1),
            ("overlap", "True or False"),
        ),
        ("wall-clock-overlap-alone-word", lambda: DP.check_wall_clock(overlap="yes"), ("overlap", "True or False")),
        (
            "wall-clock-batch-2d-array",
            lambda: DP.check_wall_clock(hardware="h200", batch=np.array([[1, 8]])),
            ("batch", "shape (1, 2)"),
        ),
        ("wall-clock-gpus-huge", lambda: DP.check_wall_clock(hardware="h200", gpus=1e100), ("gpus", "[1, 1024]")),
        (
            "wall-clock-gpus-numpy-float",
            lambda: DP.check_wall_clock(hardware="h200", gpus=np.float64(2.5)),
            ("gpus", "[1, 1024]"),
        ),
        (
            "wall-clock-latency-ratio-underflows",
            lambda: DP.check_wall_clock(draft_latency=1e-200, target_latency=1e200),
            ("draft_latency / target_latency", "smallest normal float"),
        ),
        (
            "perplexity-object-array-of-text",
            lambda: sdsl.perplexity(np.array(["1e8"], dtype=object), 1e12),
            ("n", "numeric", "'1e8'"),
        ),
        ("perplexity-text-array", lambda: sdsl.perplexity(np.array(["1e8", "2e8"]), 1e12), ("n", "numeric", "text")),
        ("perplexity-list-of-text", lambda: sdsl.perplexity(["1e8"], 1e12), ("n", "numeric", "text")),
        ("perplexity-list-with-none", lambda: sdsl.perplexity([1e8, None], 1e12), ("n", "numeric", "None")),
        ("perplexity-nested-bool", lambda: sdsl.perplexity([[1e8, True]], 1e12), ("n", "numeric", "bool")),
        (
            "optimal-gamma-object-array",
            lambda: sdsl.optimal_gamma(np.array(["0.6"], dtype=object), 1e8, 1e10),
            ("alpha", "numeric"),
        ),
        ("read-files-bytes-path", lambda: read_files([b"/path"]), ("paths[0]", "str or pathlib.Path", "b'/path'")),
        ("read-files-one-string", lambda: read_files("scrape.txt"), ("paths", "a list", "['scrape.txt']")),
        ("read-files-number", lambda: read_files([3]), ("paths[0]", "a file's path", "3")),
        # numbers a float cannot hold, given to the model's functions
        ("speedup-report-c-subnormal", lambda: S.speedup_report(0.8, 1e-320), ("c (cost coefficient)", "subnormal")),
        (
            "best-gamma-c-subnormal",
            lambda: S.best_gamma(0.8, 5e-324),
            ("c (cost coefficient)", "smallest normal float"),
        ),
        (
            "cost-from-latencies-ratio-underflows",
            lambda: S.cost_from_latencies(1e-200, 1e200),
            ("t_draft / t_target", "smallest normal float"),
        ),
        ("validate-number-overflowing-text", lambda: V.number("1e400", "x"), ("x", "beyond the largest float")),
        ("validate-integer-huge-text", lambda: V.integer("1e100", "k", low=1), ("k", "2^53")),
        # the pipeline: a chapter named twice runs once without a word no more
        ("run-chapter-twice", lambda: pipeline.run(["plan_draft", "plan_draft"]), ("'plan_draft'", "named twice")),
        (
            "run-override-numpy-array-for-a-number",
            lambda: pipeline.run(["latency"], overrides={"latency": {"n_boot": np.array([200, 300])}}),
            ("n_boot", DRAWS),
        ),
        (
            "execute-notebook-numpy-bad-value",
            lambda: pipeline.execute_notebook("latency", {"n_boot": np.int64(5)}),
            ("n_boot", DRAWS, "got 5"),
        ),
        (
            "check-function-chapter-twice",
            lambda: check.check(["plan_draft", "plan_draft"]),
            ("'plan_draft'", "named twice"),
        ),
        (
            "check-set-word-for-a-preset",
            lambda: check._check_arguments(["plan_draft"], 1, check.parse_overrides(["plan_draft.preset=no"])),
            ("preset", "'no'", "opt-13b"),
        ),
        (
            "check-set-yes-for-a-flag",
            lambda: check._check_arguments(["optimal_draft"], 1, check.parse_overrides(["optimal_draft.integer=yes"])),
            ("integer", "True or False", "'yes'"),
        ),
    ]


API = _api
