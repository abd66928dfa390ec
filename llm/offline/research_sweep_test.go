package offline

// Sweep of training choices on SciFact train (exploration only):
//
//	DOCENT_RESEARCH=1 DOCENT_SWEEP2=name,name go test ./llm/offline -run TestSciFactSweep2 -v -timeout 30m

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/search"
)

func TestSciFactSweep2(t *testing.T) {
	if os.Getenv("DOCENT_RESEARCH") == "" {
		t.Skip("set DOCENT_RESEARCH=1 to run the SciFact measurements")
	}
	set := loadBEIR(t, scifactDir())
	ctx := context.Background()
	texts := make([]string, len(set.docs))
	analyzed := make([][]string, len(set.docs))
	for i, d := range set.docs {
		texts[i] = d.Title + "\n" + d.Text
		analyzed[i] = search.Analyze(texts[i])
	}
	qrels := set.train
	if os.Getenv("DOCENT_SPLIT") == "test" {
		qrels = set.test
	}
	ix := newBM25(analyzed, 1.2, 0.75)
	kwRuns := map[string][]scored{}
	for q := range qrels {
		kwRuns[q] = topK(ix.scores(search.Analyze(set.queries[q])), 100)
	}
	type cfg struct {
		name string
		o    Options
		pr   func(p *params)
	}
	cfgs := []cfg{
		{"default", Options{}, func(p *params) {}},
		{"shift2", Options{}, func(p *params) { p.shift = 2 }},
		{"shift5", Options{}, func(p *params) { p.shift = 5 }},
		{"harm10", Options{Window: 10}, func(p *params) { p.harmonic = true }},
		{"harm5", Options{Window: 5}, func(p *params) { p.harmonic = true }},
		{"p025", Options{}, func(p *params) { p.eigPower = 0.25 }},
		{"p05", Options{}, func(p *params) { p.eigPower = 0.5 }},
		{"a1e-4", Options{}, func(p *params) { p.sifA = 1e-4 }},
		{"a3e-4", Options{}, func(p *params) { p.sifA = 3e-4 }},
		{"a3e-3", Options{}, func(p *params) { p.sifA = 3e-3 }},
		{"npc0", Options{}, func(p *params) { p.npc = 0 }},
		{"npc2", Options{}, func(p *params) { p.npc = 2 }},
		{"idf", Options{}, func(p *params) { p.idfPool = true }},
		{"min1", Options{MinCount: 1}, func(p *params) {}},
		{"pow4", Options{}, func(p *params) { p.powerIters = 4 }},
		{"doc05", Options{}, func(p *params) { p.docMix = 0.5 }},
		{"doc1", Options{}, func(p *params) { p.docMix = 1 }},
		{"tri64", Options{}, func(p *params) { p.triDims = 64 }},
		{"doc2", Options{}, func(p *params) { p.docMix = 2 }},
		{"doc4", Options{}, func(p *params) { p.docMix = 4 }},
		{"doc1idf", Options{}, func(p *params) { p.docMix = 1; p.idfPool = true }},
		{"doc2idf", Options{}, func(p *params) { p.docMix = 2; p.idfPool = true }},
		{"doc2idfh10", Options{Window: 10}, func(p *params) { p.docMix = 2; p.idfPool = true; p.harmonic = true }},
		{"doc2idfnpc2", Options{}, func(p *params) { p.docMix = 2; p.idfPool = true; p.npc = 2 }},
		{"doc2idf384", Options{Dim: 384}, func(p *params) { p.docMix = 2; p.idfPool = true }},
	}
	if s := os.Getenv("DOCENT_SWEEP2"); s != "" {
		cfgs = slices.DeleteFunc(cfgs, func(c cfg) bool { return !strings.Contains(","+s+",", ","+c.name+",") })
	}
	for _, c := range cfgs {
		start := time.Now()
		e := NewEmbedder(c.o)
		c.pr(&e.pr)
		if _, err := e.Fit(ctx, texts); err != nil {
			t.Fatal(err)
		}
		fit := time.Since(start)
		dvecs, _ := e.EmbedDocuments(ctx, texts)
		dnRuns := map[string][]scored{}
		for q := range qrels {
			qv, _ := e.EmbedDocuments(ctx, []string{set.queries[q]})
			s := make([]float64, len(dvecs))
			for d, v := range dvecs {
				s[d] = dot(qv[0], v)
			}
			dnRuns[q] = topK(s, 100)
		}
		toRun := func(f func(q string) []scored) map[string][]string {
			run := map[string][]string{}
			for q := range qrels {
				for _, s := range f(q) {
					run[q] = append(run[q], set.docs[s.doc].ID)
				}
			}
			return run
		}
		vec := evaluate(toRun(func(q string) []scored { return dnRuns[q] }), qrels)
		// union recall: every doc of either top-100 counts.
		var union float64
		for q, rel := range qrels {
			seen := map[int]bool{}
			for _, s := range kwRuns[q] {
				seen[s.doc] = true
			}
			for _, s := range dnRuns[q] {
				seen[s.doc] = true
			}
			h := 0
			for d := range seen {
				if rel[set.docs[d].ID] {
					h++
				}
			}
			union += float64(h) / float64(len(rel))
		}
		union /= float64(len(qrels))
		fused := evaluate(toRun(func(q string) []scored { return fuseMinMax(kwRuns[q], dnRuns[q], 0.3/1.3) }), qrels)
		t.Logf("%-8s fit %5.1fs vec nDCG %.4f R100 %.4f | union %.4f | fused nDCG %.4f R100 %.4f",
			c.name, fit.Seconds(), vec.ndcg10, vec.r100, union, fused.ndcg10, fused.r100)
	}
}
