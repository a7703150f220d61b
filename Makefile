# The two commands: `make demo` (main job) and `make test`. Both set up .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow check format bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,vectors]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/attnkit translate "The cat sits on the mat." --plot attention.png
	@echo "attention heatmap written to attention.png"

test: $(STAMP)
	OMP_NUM_THREADS=2 $(BIN)/python -m pytest

# the tests marked slow (subprocess training runs: resume after a kill, Ctrl-C, two-process DDP); CI runs them
test-slow: $(STAMP)
	OMP_NUM_THREADS=2 $(BIN)/python -m pytest -m slow

check: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff format src tests benchmarks
	$(BIN)/ruff check --fix src tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/attention.py

clean:
	rm -rf $(VENV) build *.egg-info
