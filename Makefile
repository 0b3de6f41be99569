# tabletop: `make run` starts the whole stack, `make test` runs every test.
# Both create the virtual environment when it is missing.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-unit test-integration test-e2e bench lint openapi venv clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/tabletop run

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest tests -p no:cacheprovider

test-unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit

test-integration: $(STAMP)
	$(BIN)/python -m pytest tests/integration

test-e2e: $(STAMP)
	$(BIN)/python -m pytest tests/e2e

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py --out BENCHMARKS.md

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

openapi: $(STAMP)
	$(BIN)/python -m services.gateway.openapi_dump openapi/openapi.json

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
