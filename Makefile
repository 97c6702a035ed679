# The two set-up commands of the README. Each creates .venv on first use and re-installs when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# The other Python versions reportgen supports: `make test` builds the example on each one found on PATH
OTHER_PYTHONS ?= python3.12 python3.13

# A .venv made by another Python (an older checkout, another PYTHON=) is made anew: its packages would not import
WANT := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
HAVE := $(shell test -x $(BIN)/python && $(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
ifneq ($(HAVE),)
ifneq ($(HAVE),$(WANT))
$(info .venv holds Python $(HAVE) but $(PYTHON) is $(WANT): making it anew)
$(shell rm -rf $(VENV))
endif
endif

.PHONY: report test check lint package bench clean golden bytecode docs reference constraints other-pythons browser corpus

report: $(VENV)/.installed bytecode
	$(BIN)/reportgen build inputs/example.yaml -o build
	$(BIN)/reportgen schema -o build/schema.json

# The whole suite, as CI runs it: the linters, the documentation site, the packages, every test, then the example
# built on the other supported Pythons.
test: lint docs package browser
	$(BIN)/reportgen calibrate --check
	$(BIN)/python -m pytest
	$(MAKE) --no-print-directory other-pythons

# The system tools some tests use, from Debian's packages, installed where apt exists and this user may install:
# headless Chromium (tests/test_browser.py) and poppler-utils' pdftoppm (the PDF's pages as pictures: no page half
# blank, tests/test_report.py). Elsewhere those tests are skipped with a message.
SYSTEM_TOOLS := chromium:chromium pdftoppm:poppler-utils
browser:
	@for pair in $(SYSTEM_TOOLS); do \
	  tool=$${pair%%:*}; package=$${pair#*:}; \
	  command -v $$tool >/dev/null 2>&1 || { [ $$tool = chromium ] && command -v chromium-browser >/dev/null 2>&1; } || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    { apt-get install -y --no-install-recommends $$package >/dev/null 2>&1 || \
	      { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends $$package >/dev/null 2>&1; }; } && \
	    echo "installed $$package (Debian) for the tests that need $$tool"; } || \
	  echo "no $$tool, and apt cannot install it here: the tests that need it will be skipped"; \
	done

# The example built on each other supported Python found (on PATH, else among pyenv's versions), in
# build/venv-<name> (made once per constraints), its results.json compared with this Python's: the same numbers on
# every supported version.
other-pythons: report
	@for name in $(OTHER_PYTHONS); do \
	  python=$$name; \
	  if ! $$python -c 'import venv' >/dev/null 2>&1; then \
	    python=$$(ls -d "$${PYENV_ROOT:-$$HOME/.pyenv}"/versions/$${name#python}*/bin/$$name 2>/dev/null | tail -1); fi; \
	  if [ -z "$$python" ] || ! $$python -c 'import venv' >/dev/null 2>&1; then \
	    echo "$$name: not found, skipped"; continue; fi; \
	  venv=build/venv-$$name; \
	  if ! cmp -s constraints.txt $$venv/constraints.txt; then \
	    rm -rf $$venv && $$python -m venv $$venv && \
	    $$venv/bin/python -m pip install --quiet --disable-pip-version-check --constraint constraints.txt . && \
	    cp constraints.txt $$venv/constraints.txt || exit 1; fi; \
	  (cd build && ../$$venv/bin/reportgen build ../inputs/example.yaml -o $$name --format html,pdf,json) || exit 1; \
	  cmp build/example/results.json build/$$name/example/results.json || exit 1; \
	  echo "$$name ($$python): the example builds, with the same results.json"; \
	done

# The fast tier, for the inner loop (under 90 s): the linters, then the suite without its slow tests (many processes,
# signals, PDFs) and with each property tried on a tenth of its examples.
check: lint
	REPORTGEN_TIER=fast $(BIN)/python -m pytest -m "not slow" -n auto

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
# they are generated from, and the report's methodology appendix (templates/partials/methodology.html), after a
# change to docs/methods.md's appendix blocks; the suite fails while they differ.
reference: $(VENV)/.installed-test
	$(BIN)/python -m reportgen.commands.reference docs/reference

# Pin what the .venv of `make test` holds now (after a change of dependencies in pyproject.toml).
constraints: $(VENV)/.installed-test
	{ sed -n '1,3p' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v '^reportgen'; } > constraints.new
	mv constraints.new constraints.txt

# The calibration table recomputed from the corpus of published curves (reportgen/corpus/curves/): after adding a
# curve, or changing a predictor. It writes reportgen/corpus/{calibration.json,cases.csv,NOTICE} and
# docs/calibration.md, and states its time; make test fails while they differ from what it would write.
corpus: $(VENV)/.installed-test
	$(BIN)/reportgen calibrate --jobs 2

# The golden files' diff against what the code makes now; REVIEWED=1 writes them, once the diff is read.
golden: $(VENV)/.installed-test
	$(BIN)/python -m tests.test_golden $(if $(REVIEWED),--reviewed)

$(VENV)/bin/python:
	@echo "creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)

# An install shows its progress, one line a package as pip fetches it, and keeps pip's whole output in .venv/pip.log,
# which is printed when pip fails (its status is read from the log: a shell's pipeline keeps only the last one's)
INSTALL = $(BIN)/python -m pip install --disable-pip-version-check --progress-bar off --constraint constraints.txt
define install
	@echo "installing $(1) into $(VENV) (about a minute the first time; pip's output: $(VENV)/pip.log)"
	@{ $(INSTALL) $(2) 2>&1 || echo "ERROR: pip failed"; } | tee $(VENV)/pip.log | \
	  awk '/^Collecting /{ n++; name = $$2; sub(/[<>=!~;[].*/, "", name); printf "  %3d %s\n", n, name; fflush() }'
	@if grep -q '^ERROR' $(VENV)/pip.log; then cat $(VENV)/pip.log; exit 1; fi
	@echo "installed: $(VENV)/bin/reportgen"
endef

$(VENV)/.installed: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(call install,reportgen,-e .)
	@touch $@

$(VENV)/.installed-test: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(call install,reportgen and its test tools,-e '.[test]')
	@touch $@ $(VENV)/.installed

clean:
	rm -rf build dist .pytest_cache .mypy_cache .ruff_cache
