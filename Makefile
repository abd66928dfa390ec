# docent — see README.md. `make run` runs the embedded demo; `make test` tests everything.
GO       ?= go
BIN      ?= bin/docent
SCIFACT  ?= ../shared/eval/scifact
BASELINE ?= bin/baseline
ROUNDS   ?= 3
# Pages of the synthetic Confluence space the scale benchmark syncs.
SCALE_PAGES ?= 50000
PKGS     := ./...
# templ's generator runs at the version of the runtime in go.mod, so the
# committed *_templ.go files are what CI regenerates.
TEMPL    = $(GO) run github.com/a-h/templ/cmd/templ@$(shell $(GO) list -m -f '{{.Version}}' github.com/a-h/templ)

.PHONY: build run test test-typesense bench baseline load fuzz fuzz-brief generate templ-check lint fmt-check vet eval clean

build:
	$(GO) build -o $(BIN) ./cmd/docent

run: build
	./$(BIN) serve

# The test command the README and CI use: formatting, vet, generated templ
# code up to date, then every test with the race detector (the fuzz targets'
# seed corpora among them) but the QUALITY tests, which run without it,
# then each fuzz target explored for FUZZBRIEF (the three at once: each is
# bounded by time, not by work). Parallel tests run four at a time: most
# of them wait on a local server, a browser or a child process as much as
# they compute.
#
# RACE leaves two dependencies uninstrumented: modernc.org/sqlite/lib
# (SQLite's C translated to Go: its memory is SQLite's own, behind its own
# sync.Mutex locks, which still order docent's code around them) and
# bcrypt's blowfish (a hash's private buffers). Instrumented, with -race's
# checkptr, they made every query 3-7x and every password hash 10x slower:
# most of the suite's CPU. Every docent package and every other dependency
# stays instrumented. (Leaving all of modernc.org out, libc too, was 2x
# faster again but made the detector report races inside encoding/json's
# type cache, in tests that plain -race passes: libc's atomics, compiled
# without -race, no longer tell the detector what they order.)
#
# QUALITY are the tests that run the answerer over a question set or audit
# a corpus's chunks: single-threaded scoring, 8x slower under -race, whose
# concurrent paths (the HTTP clients, the sync engine, the pipeline) the
# other tests drive under -race. They run here without it, still with
# -cover; `go test -race ./...` by hand runs them too.
RACE    := -race -gcflags='modernc.org/sqlite/lib=-race=false' \
	-gcflags='golang.org/x/crypto/bcrypt=-race=false' -gcflags='golang.org/x/crypto/blowfish=-race=false'
QUALITY := ^(TestEvalGolden|TestEvalAsked|TestEvalHeldout|TestEvalCalibrateAndJudge|TestModelPathReachesTheModel|TestModelPathRealDocs|TestLLMGoldenScripted|TestRealdocsChunkHygiene|TestAskFirstTries|TestAskCitesTheInstallSection)$$
test: fmt-check vet templ-check
	$(GO) test $(RACE) -cover -count=1 -parallel 4 -timeout 15m -skip '$(QUALITY)' $(PKGS)
	$(GO) test -cover -count=1 -parallel 4 -timeout 15m -run '$(QUALITY)' ./cmd/docent
	$(MAKE) --no-print-directory fuzz-brief

# The Typesense backend's contract suite against a real cluster:
#   make test-typesense TYPESENSE_URL=http://localhost:8108 TYPESENSE_API_KEY=xyz
test-typesense:
	@test -n "$(TYPESENSE_URL)" || { echo "set TYPESENSE_URL (and TYPESENSE_API_KEY)"; exit 2; }
	TYPESENSE_URL=$(TYPESENSE_URL) TYPESENSE_API_KEY=$(TYPESENSE_API_KEY) $(GO) test -count=1 -v -run Real ./search/typesense/

vet:
	$(GO) vet $(PKGS)
	cd bench/baseline && $(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

lint: fmt-check vet

# Benchmarks: on SciFact (when present) docent beside a standard BM25 engine,
# Bleve, run alternately for ROUNDS rounds with the ratios (index throughput,
# query latency, peak RSS, nDCG@10 and recall@100 on short and long queries).
# The baseline is its own Go module (bench/baseline), never linked into
# docent. Then the synthetic 200k-chunk corpus, then Go micro-benchmarks,
# the wiki sources' conversion + chunking path in docs/s, and a
# SCALE_PAGES-page synthetic Confluence space synced through the real engine
# with a counting OpenAI-compatible embedder, then re-synced after 1% edits.
bench: build baseline
	./$(BIN) bench --scifact $(SCIFACT) --baseline $(BASELINE) --rounds $(ROUNDS) --synthetic 200000
	$(GO) test -run '^$$' -bench . -benchtime 1x ./search/... ./eval/...
	$(GO) test -run '^$$' -bench Registry -benchtime 20x ./store/
	$(GO) test -run '^$$' -bench ConvertAndChunk -benchtime 3s ./connectors/confluence/ ./connectors/notion/
	DOCENT_SCALE_PAGES=$(SCALE_PAGES) $(GO) test -run '^$$' -bench ConfluenceScale -benchtime 1x -timeout 60m ./connectors/confluence/

# Fuzz targets: `make test` runs their seed corpora (testdata/fuzz and the
# golden inputs), then explores each for FUZZBRIEF; `make fuzz` explores each
# for FUZZTIME. New failures land in the package's testdata/fuzz/ and join
# the seeds.
FUZZTIME ?= 2m
FUZZBRIEF ?= 10s
FUZZ_TARGETS := ./connectors/confluence:FuzzConvert ./connectors/notion:FuzzConvert ./search:FuzzChunk
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== $$pkg $$fn ($(FUZZTIME))"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s || exit 1; \
	done

# Each fuzz target for FUZZBRIEF, all at once; the outputs are printed in
# order once they are done, and any failure fails the target.
fuzz-brief:
	@dir=$$(mktemp -d); pids=""; i=0; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; i=$$((i+1)); \
		( echo "== $$pkg $$fn ($(FUZZBRIEF))"; \
		  $(GO) test $$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZBRIEF) -fuzzminimizetime 10s ) > $$dir/$$i.log 2>&1 & \
		pids="$$pids $$!"; \
	done; \
	fail=0; for p in $$pids; do wait $$p || fail=1; done; \
	cat $$dir/*.log | grep -v '^fuzz: elapsed'; rm -rf $$dir; exit $$fail

# Load test, not part of `make test`: starts `docent serve` (the demo
# handbook) on a random port over a temporary data dir and drives /api/ask
# with 32, then 200 concurrent clients for LOAD_DURATION each, asking the
# questions of LOAD_QUESTIONS in turn; prints
# requests/s, p50/p95/p99, responses by status, and the server's RSS and
# open files before, after each phase and LOAD_SETTLE after the load.
# Fails on a 5xx, < 99% 200s, a 503 without Retry-After, or RSS or open
# files not back within 20%.
LOAD_CLIENTS   ?= 32,200
LOAD_DURATION  ?= 60s
LOAD_SETTLE    ?= 60s
LOAD_QUESTIONS ?= examples/handbook/asked.yaml
load: build
	./$(BIN) load --clients $(LOAD_CLIENTS) --duration $(LOAD_DURATION) --settle $(LOAD_SETTLE) --questions $(LOAD_QUESTIONS)

# The baseline engine for `make bench`, tested on a tiny set first.
baseline:
	cd bench/baseline && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd bench/baseline && $(GO) build -o $(CURDIR)/$(BASELINE) .

# Retrieval quality on SciFact and the handbook golden set.
eval: build
	./$(BIN) eval --golden examples/handbook/golden.yaml
	./$(BIN) eval --beir $(SCIFACT) --mode all

generate:
	$(TEMPL) generate -path templates
	$(GO) generate $(PKGS)

# Regenerates the templ components and fails when that changes a
# committed file (as templ's own ensure-generated task does).
templ-check:
	@$(TEMPL) generate -path templates >/dev/null 2>&1 || { echo "templ generate failed"; exit 1; }
	@git diff --exit-code -- templates || { echo "templates/*_templ.go are out of date: run make generate and commit"; exit 1; }
	@test -z "$$(git ls-files --others --exclude-standard -- templates)" || { echo "generated files not committed:"; git ls-files --others --exclude-standard -- templates; exit 1; }

clean:
	rm -rf bin
