//go:build research

package offline

// Measurements through the real index (search/local) on BEIR SciFact:
//
//	go test -tags research ./llm/offline -run TestSciFactLocal -v -timeout 30m
//
// DOCENT_SCIFACT overrides the data directory.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

// searcher is anything with the index's Search signature.
type searcher interface {
	Search(ctx context.Context, q search.Query) ([]docent.Hit, error)
}

// runLocal runs every query of qrels through s and returns the ranked doc ids.
func runLocal(tb testing.TB, s searcher, set *beirSet, qrels map[string]map[string]bool, qvecs map[string][]float32, mode search.Mode, k int) map[string][]string {
	tb.Helper()
	run := map[string][]string{}
	for q := range qrels {
		hits, err := s.Search(context.Background(), search.Query{Text: set.queries[q], Vector: qvecs[q], K: k, Mode: mode})
		if err != nil {
			tb.Fatal(err)
		}
		for _, h := range hits {
			if !slices.Contains(run[q], h.Chunk.DocID) {
				run[q] = append(run[q], h.Chunk.DocID)
			}
		}
	}
	return run
}

func TestSciFactLocal(t *testing.T) {
	set := loadBEIR(t, scifactDir())
	ctx := context.Background()
	texts := make([]string, len(set.docs))
	for i, d := range set.docs {
		texts[i] = d.Title + "\n\n" + d.Text
	}
	start := time.Now()
	e := NewEmbedder(Options{})
	if _, err := e.Fit(ctx, texts); err != nil {
		t.Fatal(err)
	}
	vecs, err := e.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fit+embed %s: %s", e.Name(), time.Since(start))
	path := filepath.Join(t.TempDir(), "index.db")
	ix, err := local.Open(ctx, path, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	chunks := make([]docent.Chunk, len(set.docs))
	for i, d := range set.docs {
		chunks[i] = docent.Chunk{ID: d.ID, DocID: d.ID, Source: "scifact", Title: d.Title, Text: texts[i], Vector: vecs[i]}
	}
	for i := 0; i < len(chunks); i += 500 {
		if err := ix.Upsert(ctx, chunks[i:min(i+500, len(chunks))]); err != nil {
			t.Fatal(err)
		}
	}
	ix.Close()
	qvecs := map[string][]float32{}
	for q, text := range set.queries {
		v, _ := e.EmbedDocuments(ctx, []string{text})
		qvecs[q] = v[0]
	}
	open := func(o local.Options) *local.Index {
		ix, err := local.Open(ctx, path, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	splits := []struct {
		name  string
		qrels map[string]map[string]bool
	}{{"train", set.train}, {"test", set.test}}

	base := open(local.Options{})
	for _, sp := range splits {
		for _, mode := range []search.Mode{search.ModeKeyword, search.ModeVector, search.ModeHybrid} {
			t.Logf("%-5s %-22s %s", sp.name, mode, evaluate(runLocal(t, base, set, sp.qrels, qvecs, mode, 100), sp.qrels))
		}
	}
	if os.Getenv("DOCENT_SWEEP") == "" {
		return
	}
	for _, c := range []struct {
		name string
		o    local.Options
	}{
		{"fields 1/1/1", local.Options{TitleWeight: 1, SectionWeight: 1, TextWeight: 1}},
		{"fields 3/1.5/1", local.Options{TitleWeight: 3, SectionWeight: 1.5, TextWeight: 1}},
		{"score w=0.2", local.Options{Fusion: search.Fusion{Method: search.FusionScore, KeywordWeight: 0.8, VectorWeight: 0.2}}},
		{"score w=0.3", local.Options{Fusion: search.Fusion{Method: search.FusionScore, KeywordWeight: 0.7, VectorWeight: 0.3}}},
		{"score w=0.4", local.Options{Fusion: search.Fusion{Method: search.FusionScore, KeywordWeight: 0.6, VectorWeight: 0.4}}},
		{"rrf", local.Options{Fusion: search.Fusion{Method: search.FusionRRF, KeywordWeight: 1, VectorWeight: 1}}},
	} {
		ix := open(c.o)
		for _, sp := range splits[:1] {
			mode := search.ModeHybrid
			if strings.HasPrefix(c.name, "fields") {
				mode = search.ModeKeyword
			}
			t.Logf("%-5s %-22s %s", sp.name, fmt.Sprint(mode, " ", c.name), evaluate(runLocal(t, ix, set, sp.qrels, qvecs, mode, 100), sp.qrels))
		}
	}
}
