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

.PHONY: install system-deps data demo lint test test-fast bench space-check clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# pyrender 0.1.45 (replaced by pyrender-maintained, the same module) must not stay beside it
	$(PY) -m pip uninstall -q -y pyrender 2>/dev/null || true
	$(PY) -m pip install -q -r requirements-dev.txt
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

# `make bench` also makes the real-size data (scripts/make_realsize.py -> data/realsize, minutes);
# `make bench-quick` is the small-machine variant (small sizes, concurrency up to 16).
.PHONY: bench-quick
bench: data
	$(PY) scripts/bench.py $(BENCH_ARGS)

bench-quick: data
	$(PY) scripts/bench.py --quick $(BENCH_ARGS)

# What a Hugging Face Space does (packages.txt, then `pip install -r requirements.txt` alone into a
# fresh venv, then `python app.py` with SPACE_ID set), each tab used in headless Chromium, then
# again with the GL libraries hidden. Downloads packages: not part of `make test`.
space-check: $(VENV)/.installed
	$(PY) scripts/space_check.py $(SPACE_CHECK_ARGS)

clean:
	rm -rf tests/.cache test-artifacts
