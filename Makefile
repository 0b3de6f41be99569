# tabletop: `make run` starts the whole stack, `make test` runs every test.
# Both create the virtual environment when it is missing.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# `make run` needs the runtime alone: the test tools (the dev extra) are `make test`'s, and a
# fresh clone's first start need not wait for them.
RUN_STAMP := $(VENV)/.installed-run

.PHONY: run test test-unit test-integration test-e2e bench lint openapi venv clean browser postgres \
        plots

# The bot kit (sdk/python, package tabletop-client) after the project: the CLIs and tests use it.
$(STAMP): pyproject.toml sdk/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet -e sdk/python
	touch $(STAMP) $(RUN_STAMP)

# The runtime and the bot kit (the CLIs speak through it); the dev extra, if `make test`
# installed it, holds all of this already (its rule touches this stamp too).
$(RUN_STAMP): pyproject.toml sdk/python/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m pip install --quiet -e sdk/python
	touch $(RUN_STAMP)

venv: $(STAMP)

# The browser tests drive Debian's chromium through Playwright (never `playwright install`,
# which downloads a browser): install the package when it is missing. Where apt-get cannot
# run (not root, no sudo) or cannot install it (no package source), those tests are skipped
# and say so; the rest of the suite still runs. A package source that does not answer costs at
# most the `timeout`s below, not the CI run.
APT := $(shell [ "$$(id -u)" = 0 ] && echo apt-get || (sudo -n true 2>/dev/null && echo "sudo apt-get"))
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ -n "$(APT)" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium for the browser tests"; \
	    timeout 300 $(APT) update -qq || timeout 300 $(APT) update -qq; \
	    DEBIAN_FRONTEND=noninteractive timeout 900 $(APT) install -y -qq chromium || \
	      echo "WARNING: apt-get could not install chromium: tests/e2e/test_browser.py will be skipped"; \
	  else \
	    echo "chromium is missing and apt-get cannot run here: tests/e2e/test_browser.py will be skipped"; \
	  fi; }

# The archive's contract tests run on a real PostgreSQL too: tests/integration/postgres_server.py
# starts one from Debian's programs (initdb and postgres, kept off PATH in
# /usr/lib/postgresql/<version>/bin). Install the package when neither place has them, unless
# TABLETOP_TEST_POSTGRES_URL names a server to use. Unlike the browser's, these tests never
# skip: where PostgreSQL cannot be installed they fail, and say why.
postgres:
	@[ -n "$$TABLETOP_TEST_POSTGRES_URL" ] || command -v initdb >/dev/null 2>&1 || \
	  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  if [ -n "$(APT)" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing postgresql for the archive's tests"; \
	    timeout 300 $(APT) update -qq || timeout 300 $(APT) update -qq; \
	    DEBIAN_FRONTEND=noninteractive timeout 900 $(APT) install -y -qq --no-install-recommends \
	      postgresql || \
	      echo "WARNING: apt-get could not install postgresql: the archive's tests will fail"; \
	  else \
	    echo "postgresql is missing and apt-get cannot run here: the archive's tests will fail"; \
	  fi; }

run: $(RUN_STAMP)
	$(BIN)/tabletop run

# `tabletop tournament ... --plots DIR` draws with matplotlib, the `plots` extra: `make run`
# installs the runtime only (`make test`'s dev extra has it already). Installs it into .venv.
plots: $(RUN_STAMP)
	@$(BIN)/python -c 'import matplotlib' 2>/dev/null || \
	  $(BIN)/python -m pip install --quiet -e '.[plots]'
	@echo "matplotlib is installed in $(VENV): tabletop tournament --plots DIR draws its charts"

test: $(STAMP) browser postgres
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest tests -p no:cacheprovider

test-unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit

test-integration: $(STAMP) postgres
	$(BIN)/python -m pytest tests/integration

test-e2e: $(STAMP) browser
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
