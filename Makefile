# The two set-up commands of the README. Each creates .venv on first use and re-installs when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check --constraint constraints.txt

.PHONY: report test lint bench clean golden bytecode docs reference constraints

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

# The documentation site, offline, into build/site (open build/site/index.html). make test builds it with --strict.
docs: $(VENV)/.installed-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

# The generated pages of docs/reference/ (project file, results.json, command line), after a change to the code
# they are generated from; the suite fails while they differ.
reference: $(VENV)/.installed
	$(BIN)/python -m reportgen.commands.reference docs/reference

# Pin what the .venv of `make test` holds now (after a change of dependencies in pyproject.toml).
constraints: $(VENV)/.installed-test
	{ sed -n '1,3p' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v '^reportgen'; } > constraints.new
	mv constraints.new constraints.txt

golden: $(VENV)/.installed-test
	REPORTGEN_REGENERATE_GOLDEN=1 $(BIN)/python -m pytest tests/test_golden.py

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP) -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP) -e '.[test]'
	touch $@ $(VENV)/.installed

clean:
	rm -rf build dist .pytest_cache .mypy_cache .ruff_cache
