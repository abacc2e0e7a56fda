# sgplab — see README.md. Every target works with only Go installed; OpenBLAS
# is used automatically when libopenblas is installed and links.
GO       ?= go
PROFILE  ?= quick
SGPLAB   := bin/sgplab
PAPERS   := $(basename $(notdir $(wildcard paper_configs/*.toml)))

# -tags openblas only if the library is present AND a cgo link against it
# works; override with `make TAGS=` to force pure-Go BLAS.
ifeq ($(origin TAGS),undefined)
TAGS := $(shell GO=$(GO) ./.ci/blas-tags)
endif
ifneq ($(TAGS),)
export CGO_LDFLAGS := -lopenblas
endif
# OpenBLAS's own worker threads fight the goroutines sgplab already runs on
# every core: small BLAS calls from several goroutines then spin (measured:
# an SGPR fit of 1 s took > 60 s with the default threads). One BLAS thread
# per call unless the caller sets it.
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: build test fmt-check vet bench peerbench fuzz docs example-csv demo reproduce-% leaderboard leaderboard-report clean help

help:
	@echo "make build | test | bench | peerbench [PEERBENCH_FLAGS=...] | fuzz [FUZZTIME=30s FUZZPKGS=./...] | docs | demo | example-csv | reproduce-<paper> [PROFILE=quick|full] | leaderboard [PROFILE=quick|full] [SHARD=i/n] | clean"
	@echo "papers: $(PAPERS)"

build:
	$(GO) build $(TAGS) -o $(SGPLAB) ./cmd/sgplab

fmt-check:
	@bad=$$(gofmt -l .); if [ -n "$$bad" ]; then echo "gofmt needed on:"; echo "$$bad"; exit 1; fi

vet:
	$(GO) vet $(TAGS) ./...

test: fmt-check vet
	$(GO) test $(TAGS) -timeout 15m ./...

bench:
	$(GO) test $(TAGS) -run '^$$' -bench . -benchmem ./...

# sgplab against GPyTorch 1.10 (bench/peerbench; docs/performance.md,
# "Against GPyTorch"): seconds per step and time to a converged model,
# interleaved. Needs Python with torch and gpytorch (PEER_PYTHON,
# PEER_PYTHONPATH); without them it says what to install and exits 0.
# Not part of make test. E.g. make peerbench PEERBENCH_FLAGS="-shapes sgpr/10000/200".
peerbench:
	$(GO) build $(TAGS) -o bin/peerbench ./bench/peerbench
	bin/peerbench $(PEERBENCH_FLAGS)

# Every native fuzz target (func FuzzX) for FUZZTIME each (FUZZPKGS limits
# the packages, e.g. make fuzz FUZZPKGS=./datasets/... FUZZTIME=1m); new failing
# inputs land in the package's testdata/fuzz/FuzzX/, which `make test`
# then replays with the seed corpora. Every target runs even when one fails;
# the failed ones (and packages whose targets cannot be listed) are named at
# the end and make exits non-zero. Go 1.26's fuzz coordinator can end a
# duration run with "context deadline exceeded" and no failing input
# (go.dev/issue/75804): such a target runs once more. A count, FUZZTIME=1000000x,
# has no deadline to race.
FUZZTIME ?= 30s
FUZZPKGS ?= ./...
fuzz:
	@failed=""; log=$$(mktemp); trap 'rm -f "$$log" "$$log.rc"' EXIT; \
	for pkg in $$($(GO) list $(FUZZPKGS)); do \
	  if ! targets=$$($(GO) test $(TAGS) -list '^Fuzz' $$pkg); then \
	    echo "$$targets"; failed="$$failed $$pkg(listing)"; continue; \
	  fi; \
	  for f in $$(echo "$$targets" | grep '^Fuzz'); do \
	    for try in 1 2; do \
	      echo "== $$pkg $$f ($(FUZZTIME))"; \
	      { $(GO) test $(TAGS) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg 2>&1; echo $$? > "$$log.rc"; } | tee "$$log"; \
	      [ "$$(cat "$$log.rc")" = 0 ] && break; \
	      if [ $$try = 1 ] && grep -q 'context deadline exceeded' "$$log" && ! grep -q 'Failing input written' "$$log"; then \
	        echo "== $$f: context deadline exceeded without a failing input (go.dev/issue/75804): once more"; continue; \
	      fi; \
	      failed="$$failed $$pkg.$$f"; break; \
	    done; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi; \
	echo "fuzz: every target passed"

# docs/methods.md: every method's defaults and parameters (go test
# ./cmd/sgplab checks that the committed page is current).
docs: build
	$(SGPLAB) methods --markdown > docs/methods.md

# The CSV experiments/csv.toml sweeps (a user's own data file in a grid).
example-csv: build
	$(SGPLAB) data example-csv out/example-csv

# A small grid of exact GPR / SGPR / SVGP on embedded synthetic data: runs in
# under a minute and writes a table and a figure into out/demo/.
demo: build
	$(SGPLAB) run --profile $(PROFILE) experiments/demo.toml
	$(SGPLAB) report --profile $(PROFILE) experiments/demo.toml

# One target per paper config: make reproduce-vof PROFILE=full
reproduce-%: build
	@test -f paper_configs/$*.toml || { echo "no paper_configs/$*.toml; papers: $(PAPERS)"; exit 2; }
	@# Exit status 3 (some runs failed, e.g. a dataset that is not staged):
	@# the report still follows and lists them with how to get the data.
	$(SGPLAB) run --profile $(PROFILE) paper_configs/$*.toml || [ $$? -eq 3 ]
	$(SGPLAB) report --profile $(PROFILE) paper_configs/$*.toml

# Every registered method on the same seeded splits, at two sizes, with its
# cost (issue 19): experiments/leaderboard.toml. PROFILE=quick (default,
# ≤ 30 min on an idle 2-core machine) or full. SHARD=i/n runs one shard
# into out/leaderboard/shard-i-of-n.db; then `sgplab results merge
# out/leaderboard/shard-*.db -o out/leaderboard/results.db` and
# `make leaderboard-report` (see docs/leaderboard.md).
leaderboard: build
ifeq ($(SHARD),)
	$(SGPLAB) run --profile $(PROFILE) experiments/leaderboard.toml || [ $$? -eq 3 ]
	$(SGPLAB) report --profile $(PROFILE) experiments/leaderboard.toml
else
	$(SGPLAB) run --profile $(PROFILE) --shard $(SHARD) --db out/leaderboard/shard-$(subst /,-of-,$(SHARD)).db experiments/leaderboard.toml || [ $$? -eq 3 ]
endif

leaderboard-report: build
	$(SGPLAB) report --profile $(PROFILE) experiments/leaderboard.toml

clean:
	rm -rf bin out
