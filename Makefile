# The two README commands:  make book   and   make test
# Both install the pinned environment (requirements.lock) into .venv first; nothing else is needed
# but Python 3.11 and make. Other targets are listed by `make help`.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | sha256sum | cut -c1-16)

.PHONY: help install book notebooks test lint format check accept matrix bench browser-deps lock clean wheel-check

help:
	@echo "make book     install, execute every notebook with papermill, build book/_build/html/index.html"
	@echo "make test     install, then run the whole test suite (what CI runs)"
	@echo "make lint     ruff check, ruff format --check and mypy on sdsl/ (the rules of pyproject.toml; also the first step of make test)"
	@echo "make format   ruff format: rewrite the code in the project's format"
	@echo "make check    regenerate every table and figure and compare with baseline/"
	@echo "make accept   make the regenerated outputs the new baseline (on purpose)"
	@echo "make matrix   the regeneration check under every CPU kernel this machine can run"
	@echo "make bench    run the benchmark scripts"
	@echo "make wheel-check  build the wheel, install it in a fresh venv outside the repository, run sdsl there"
	@echo "make lock     re-pin requirements.lock (with hashes) from requirements.in; environment.yml installs from it"

$(STAMP): requirements.lock pyproject.toml
	rm -f $(VENV)/.installed-*
	$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, got " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

install: $(STAMP)

notebooks: install
	$(BIN)/python -m sdsl.build.pipeline run

book: install
	$(BIN)/python -m sdsl.build.pipeline book

# Headless Chromium for the rendered-book test (Debian packages); without root or apt the
# browser test is skipped and says why.
browser-deps:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium and chromium-driver (Debian) for the browser test"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >/dev/null \
		|| echo "could not install chromium: the browser test will be skipped"; \
	else echo "chromium not installed and not root: the browser test will be skipped"; fi

# The kernel matrix (make matrix, about 10 minutes: the check under every CPU kernel) is not part of
# make test; .ci/run runs it after the README's test command.
# pytest on 2 workers, each test file on one of them (--dist loadfile): a module's fixtures (the
# smoke run of the experiment, the executed notebooks) are then made once, not once per worker.
test: install browser-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@# mypy (a minute on one core) runs beside pytest, whose two workers often wait on kernels and the
	@# browser; its report follows pytest's, and either failing fails the target
	$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & mypy=$$!; \
	$(BIN)/python -m pytest -n 2 --dist loadfile; tests=$$?; \
	wait $$mypy; typed=$$?; echo "mypy: $$(tail -n 1 $(VENV)/mypy.log)"; \
	[ $$typed -eq 0 ] || cat $(VENV)/mypy.log; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]
	tools/wheel_check.sh $(PYTHON)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .

check: install
	$(BIN)/python -m sdsl.build.check

accept: install
	$(BIN)/python -m sdsl.build.check --accept

matrix: install
	$(BIN)/python -m sdsl.build.matrix

wheel-check:
	tools/wheel_check.sh $(PYTHON)

bench: install
	$(BIN)/python benchmarks/bench_cli.py
	$(BIN)/python benchmarks/bench_optimum.py
	$(BIN)/python benchmarks/bench_grid.py
	$(BIN)/python benchmarks/bench_build.py
	$(BIN)/python benchmarks/bench_harness.py
	$(BIN)/python benchmarks/bench_training.py

# uv keeps the versions already in requirements.lock (pass UV_LOCK_FLAGS=--upgrade to re-resolve);
# torch's CPU build comes from PyTorch's CPU index (UV_LOCK_FLAGS replaces it, e.g. with
# --find-links to a folder of wheels).
UV_LOCK_FLAGS ?= --extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match
lock: install
	$(BIN)/uv pip compile requirements.in --python $(BIN)/python --generate-hashes --no-annotate \
		--custom-compile-command "make lock" $(UV_LOCK_FLAGS) -o requirements.lock

clean:
	rm -rf book/_build book/executed build
