# docent — see README.md. `make run` runs the embedded demo; `make test` tests everything.
GO       ?= go
BIN      ?= bin/docent
SCIFACT  ?= ../shared/eval/scifact
PKGS     := ./...

.PHONY: build run test test-typesense bench fuzz generate lint fmt-check vet eval clean

build:
	$(GO) build -o $(BIN) ./cmd/docent

run: build
	./$(BIN) serve

# The test command the README and CI use: formatting, vet, then every test with the race detector.
test: fmt-check vet
	$(GO) test -race -cover -count=1 -timeout 15m $(PKGS)

# The Typesense backend's contract suite against a real cluster:
#   make test-typesense TYPESENSE_URL=http://localhost:8108 TYPESENSE_API_KEY=xyz
test-typesense:
	@test -n "$(TYPESENSE_URL)" || { echo "set TYPESENSE_URL (and TYPESENSE_API_KEY)"; exit 2; }
	TYPESENSE_URL=$(TYPESENSE_URL) TYPESENSE_API_KEY=$(TYPESENSE_API_KEY) $(GO) test -count=1 -v -run Real ./search/typesense/

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

lint: fmt-check vet

# Benchmarks: index throughput, query latency p50/p95/p99, peak RSS on SciFact
# (when present) and on a synthetic 200k-chunk corpus; then Go micro-benchmarks,
# and the wiki sources' conversion + chunking path in docs/s.
bench: build
	./$(BIN) bench --scifact $(SCIFACT) --synthetic 200000
	$(GO) test -run '^$$' -bench . -benchtime 1x ./search/... ./eval/...
	$(GO) test -run '^$$' -bench Registry -benchtime 20x ./store/
	$(GO) test -run '^$$' -bench ConvertAndChunk -benchtime 3s ./connectors/confluence/ ./connectors/notion/

# Fuzz targets: `make test` runs their seed corpora (testdata/fuzz and the
# golden inputs); `make fuzz` explores each for FUZZTIME. New failures land in
# the package's testdata/fuzz/ and join the seeds.
FUZZTIME ?= 2m
FUZZ_TARGETS := ./connectors/confluence:FuzzConvert ./connectors/notion:FuzzConvert ./search:FuzzChunk
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== $$pkg $$fn ($(FUZZTIME))"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s || exit 1; \
	done

# Retrieval quality on SciFact and the handbook golden set.
eval: build
	./$(BIN) eval --golden examples/handbook/golden.yaml
	./$(BIN) eval --beir $(SCIFACT) --mode all

generate:
	$(GO) generate $(PKGS)

clean:
	rm -rf bin
