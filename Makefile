# Two commands do all the set-up on a fresh machine:
#   make demo   creates .venv, installs duograd with every extra, runs the walkthrough
#   make test   the same set-up, then every test (python tests/run_all.py)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

.PHONY: demo quick test graphviz chromium bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[all]"
	touch $@

# Graphviz's native `dot` where the platform allows it; the matplotlib fallback otherwise.
# apt's output is kept in a temporary file and shown only if the install fails.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    log=$$(mktemp); \
	    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz) \
	        >"$$log" 2>&1; then rm -f "$$log"; \
	    else cat "$$log"; rm -f "$$log"; \
	      echo "Installing Graphviz failed (apt output above): graph pictures use the matplotlib fallback"; fi; \
	  else echo "Graphviz not installed: graph pictures use the matplotlib fallback"; fi; }

# Headless Chromium for the report's layout test (tests/walkthrough/test_report_layout.py),
# installed the same way; without it those tests skip and say why.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    log=$$(mktemp); \
	    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
	        >"$$log" 2>&1; then rm -f "$$log"; \
	    else rm -f "$$log"; \
	      echo "Installing Chromium failed: the report's layout tests will skip"; fi; \
	  else echo "Chromium not installed: the report's layout tests will skip"; fi; }

demo: $(VENV)/.installed graphviz
	$(PY) walkthrough.py

quick: $(VENV)/.installed graphviz
	$(PY) walkthrough.py --quick

test: $(VENV)/.installed graphviz chromium
	$(PY) tests/run_all.py

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
