# The two set-up commands of the README. Each creates .venv on first use and re-installs when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.PHONY: report test lint bench clean golden bytecode

report: $(VENV)/.installed bytecode
	$(BIN)/reportgen build inputs/example.yaml -o build
	$(BIN)/reportgen schema -o build/schema.json

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest

lint: $(VENV)/.installed-test
	$(BIN)/ruff check reportgen tests bench
	$(BIN)/mypy reportgen

# bench/run.py byte-compiles reportgen itself before it measures
bench: $(VENV)/.installed-test
	$(BIN)/python bench/run.py

# An editable install is not byte-compiled, and where PYTHONDONTWRITEBYTECODE is set every command would compile
# reportgen's modules again (0.05-0.15 s of each cold run). A no-op when the bytecode is current.
bytecode: | $(VENV)/bin/python
	$(BIN)/python -m compileall -q reportgen

golden: $(VENV)/.installed-test
	REPORTGEN_REGENERATE_GOLDEN=1 $(BIN)/python -m pytest tests/test_golden.py

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(PIP) -e '.[test]'
	touch $@ $(VENV)/.installed

clean:
	rm -rf build dist .pytest_cache .mypy_cache .ruff_cache
