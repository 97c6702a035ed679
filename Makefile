# The two set-up commands of the README. Each creates .venv on first use and re-installs when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check --constraint constraints.txt

.PHONY: report test check lint package bench clean golden bytecode docs reference constraints

report: $(VENV)/.installed bytecode
	$(BIN)/reportgen build inputs/example.yaml -o build
	$(BIN)/reportgen schema -o build/schema.json

# The whole suite, as CI runs it: the linters, the documentation site, the packages, then every test.
test: lint docs package
	$(BIN)/python -m pytest

# The fast tier, for the inner loop (under 90 s): the linters, then the suite without its slow tests (many processes,
# signals, PDFs) and with each property tried on a tenth of its examples.
check: lint
	REPORTGEN_TIER=fast $(BIN)/python -m pytest -m "not slow"

lint: $(VENV)/.installed-test
	$(BIN)/ruff check reportgen tests bench
	$(BIN)/mypy reportgen

# The wheel and the sdist, built and checked for what they must carry (tests/check_package.py).
package: $(VENV)/.installed-test
	$(BIN)/python -m tests.check_package

# bench/run.py byte-compiles reportgen itself before it measures
bench: $(VENV)/.installed-test
	$(BIN)/python bench/run.py

# An editable install is not byte-compiled, and where PYTHONDONTWRITEBYTECODE is set every command would compile
# reportgen's modules again (0.05-0.15 s of each cold run). A no-op when the bytecode is current.
bytecode: | $(VENV)/bin/python
	$(BIN)/python -m compileall -q reportgen

# The documentation site, offline and strict (a broken link or anchor fails it), into build/site (open
# build/site/index.html). Part of make test.
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
