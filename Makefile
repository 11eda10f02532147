# Two commands matter: `make demo` (the app on 127.0.0.1:7860 with example data, offline baseline)
# and `make test` (ruff, then the whole test suite: what CI runs). Both create .venv and install
# everything first. `make test-fast` leaves out the tests marked slow (tests/system, tests/browser,
# the generators' determinism check); `make lint` is ruff alone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DATA ?= data
export GRADIO_ANALYTICS_ENABLED := False
export HF_HUB_DISABLE_TELEMETRY := 1

.PHONY: install system-deps data demo lint test test-fast bench clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	# pyrender pins PyOpenGL 3.1.0, with which OSMesa fails: a second step installs 3.1.10
	# (pip reports the pin conflict and exits 0).
	$(PY) -m pip install -q "PyOpenGL==3.1.10"
	touch $@

install: $(VENV)/.installed system-deps

system-deps:
	bash scripts/install_system_deps.sh

data: install
	$(PY) -m examples.generate --out $(DATA)

demo: data
	HF_HUB_OFFLINE=$${HF_HUB_OFFLINE:-1} $(PY) app.py --data-dir $(DATA) --backend baseline

PYTEST := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest tests -q -p no:cacheprovider --timeout=600

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

test: install lint
	$(PYTEST) $(PYTEST_ARGS)

test-fast: install
	$(PYTEST) -m "not slow" $(PYTEST_ARGS)

bench: data
	$(PY) scripts/bench.py

clean:
	rm -rf tests/.cache test-artifacts
