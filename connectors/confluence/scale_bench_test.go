package confluence_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/confluence/confluencetest"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/llm/openai"
	"github.com/docent-hq/docent/search"
)

// embeddingsServer speaks OpenAI's POST /v1/embeddings and counts the
// inputs it embeds, holding none of them (a benchmark's memory is the
// engine's, not the fake's).
func embeddingsServer(tb testing.TB, inputs *atomic.Int64) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input      []string `json:"input"`
			Model      string   `json:"model"`
			Dimensions int      `json:"dimensions"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		inputs.Add(int64(len(req.Input)))
		type datum struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string  `json:"object"`
			Data   []datum `json:"data"`
			Model  string  `json:"model"`
		}{Object: "list", Model: req.Model}
		for i, text := range req.Input {
			out.Data = append(out.Data, datum{"embedding", i, llmtest.HashVector(text, max(req.Dimensions, 8))})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// peakRSS is the process's peak resident set (VmHWM), in MiB; 0 where
// /proc is not there.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkConfluenceScale syncs a synthetic Confluence Cloud space
// (DOCENT_SCALE_PAGES pages, default 50,000, of about 3 KB each, made by
// the fake as it answers) through the real engine, the local index and
// the OpenAI-compatible embedder against a local server that counts its
// inputs; then edits 1% of the pages and syncs again. It reports the full
// sync's pages/s and embedder inputs, the re-sync's time and inputs, and
// the process's peak RSS (the fakes' included):
//
//	DOCENT_SCALE_PAGES=50000 go test ./connectors/confluence -run '^$' -bench ConfluenceScale -benchtime 1x
func BenchmarkConfluenceScale(b *testing.B) {
	n := 50000
	if s := os.Getenv("DOCENT_SCALE_PAGES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 100 {
			b.Fatalf("DOCENT_SCALE_PAGES=%q: want a number of pages, at least 100", s)
		}
	}
	for b.Loop() {
		ctx := context.Background()
		srv := confluencetest.New(b, confluencetest.Cloud, "ENG")
		ids := make([]string, n)
		for i := range n {
			ids[i] = srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: fmt.Sprintf("Page %05d", i), Size: 3000})
		}
		src := newSource(b, "wiki", srv, nil)
		reg, idx := connectorstest.OpenStores(b)
		var inputs atomic.Int64
		emb, err := openai.NewEmbedder(openai.Options{BaseURL: embeddingsServer(b, &inputs), EmbeddingModel: "bench-embed", Dimensions: 64})
		if err != nil {
			b.Fatal(err)
		}
		eng := connectors.NewEngine(reg, idx, emb, search.Chunker{}, nil, connectors.EngineOptions{})
		start := time.Now()
		res, err := eng.Sync(ctx, src, nil)
		if err != nil || res.Added != n {
			b.Fatalf("full sync: %+v, %v", res, err)
		}
		full, fullInputs := time.Since(start), inputs.Load()

		srv.Tick(time.Hour)
		edited := max(n/100, 1)
		for i := range edited {
			srv.Edit(ids[i*100%n], func(p *confluencetest.Page) {
				p.Body = confluencetest.Body(p) + "<p>Edited: the rotation changed on Monday.</p>"
			})
		}
		inputs.Store(0)
		start = time.Now()
		res, err = eng.Sync(ctx, src, nil)
		if err != nil || res.Updated != edited {
			b.Fatalf("re-sync: %+v, %v", res, err)
		}
		resync := time.Since(start)
		b.ReportMetric(float64(n)/full.Seconds(), "pages/s")
		b.ReportMetric(full.Seconds(), "full-s")
		b.ReportMetric(float64(fullInputs), "full-inputs")
		b.ReportMetric(resync.Seconds(), "resync-s")
		b.ReportMetric(float64(inputs.Load()), "resync-inputs")
		b.ReportMetric(float64(res.Content.Reused), "resync-reused")
		b.ReportMetric(peakRSS(), "peak-RSS-MiB")
	}
}
