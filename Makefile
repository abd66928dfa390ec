# docent — see README.md. `make run` runs the embedded demo; `make test` tests everything.
GO       ?= go
BIN      ?= bin/docent
SCIFACT  ?= ../shared/eval/scifact
PKGS     := ./...
# templ's generator runs at the version of the runtime in go.mod, so the
# committed *_templ.go files are what CI regenerates.
TEMPL    = $(GO) run github.com/a-h/templ/cmd/templ@$(shell $(GO) list -m -f '{{.Version}}' github.com/a-h/templ)

.PHONY: build run test test-typesense bench generate templ-check lint fmt-check vet eval clean

build:
	$(GO) build -o $(BIN) ./cmd/docent

run: build
	./$(BIN) serve

# The test command the README and CI use: formatting, vet, generated templ
# code up to date, then every test with the race detector.
test: fmt-check vet templ-check
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
# (when present) and on a synthetic 200k-chunk corpus; then Go micro-benchmarks.
bench: build
	./$(BIN) bench --scifact $(SCIFACT) --synthetic 200000
	$(GO) test -run '^$$' -bench . -benchtime 1x ./search/... ./eval/...
	$(GO) test -run '^$$' -bench Registry -benchtime 20x ./store/

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
