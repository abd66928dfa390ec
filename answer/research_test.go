//go:build research

package answer

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

// TestResearchDump dumps per-question relevance features of the handbook
// golden set over an index built by `docent eval --index-dir DIR`.
// Run: DOCENT_RESEARCH_INDEX=/tmp/hb go test -tags research -run ResearchDump ./answer/
func TestResearchDump(t *testing.T) {
	dir := os.Getenv("DOCENT_RESEARCH_INDEX")
	if dir == "" {
		t.Skip("DOCENT_RESEARCH_INDEX not set")
	}
	ctx := context.Background()
	ix, err := local.Open(ctx, dir+"/index.db", local.Options{Fusion: search.Fusion{Method: "score", K: 60, KeywordWeight: 1, VectorWeight: 0.3}, Candidates: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	emb := offline.NewEmbedder(offline.Options{ModelPath: dir + "/offline-embedder.bin"})
	df := map[string]int{}
	n := 0
	_ = ix.Scan(ctx, func(c docent.Chunk) error {
		n++
		for t := range termSet(c.Text) {
			df[t]++
		}
		return nil
	})
	g, err := eval.LoadGolden("../examples/handbook/golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type cand struct {
		Doc, Section    string
		Exp             bool
		Cov, CovC, Cos  float64
		KwRank, VecRank int
		KwScore         float64
		Missing         []string
	}
	type row struct {
		ID, Kind, Q string
		Terms       []string
		DF          []int
		N           int
		Cands       []cand
	}
	var rows []row
	for _, q := range g.Questions {
		vs, err := emb.Embed(ctx, []string{q.Question})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(ctx, search.Query{Text: q.Question, Vector: vs[0], K: 20, Mode: search.ModeHybrid})
		if err != nil {
			t.Fatal(err)
		}
		terms := queryTerms(q.Question)
		sets := make([]map[string]bool, len(hits))
		for i, h := range hits {
			sets[i] = termSet(h.Chunk.Text)
		}
		sc := newScorer(terms, sets, nil, DefaultWeights)
		scC := newScorer(terms, sets, func(t string) (float64, bool) {
			d := float64(df[t])
			return math.Log(1 + (float64(n)-d+0.5)/(d+0.5)), true
		}, DefaultWeights)
		exp := map[string]bool{}
		for _, e := range q.Expect {
			exp[e.Doc] = true
		}
		r := row{ID: q.ID, Kind: string(q.Kind), Q: q.Question, Terms: terms, N: n}
		for _, t := range terms {
			r.DF = append(r.DF, df[t])
		}
		for i, h := range hits {
			_, p, _ := strings.Cut(h.Chunk.DocID, ":")
			var miss []string
			for _, t := range terms {
				if !sets[i][t] {
					miss = append(miss, t)
				}
			}
			r.Cands = append(r.Cands, cand{Doc: p, Section: strings.Join(h.Chunk.Section, " > "), Exp: exp[p],
				Cov: sc.coverage(sets[i], nil, 0), CovC: scC.coverage(sets[i], nil, 0), Cos: h.VectorScore,
				KwRank: h.KeywordRank, VecRank: h.VectorRank, KwScore: h.KeywordScore, Missing: miss})
		}
		rows = append(rows, r)
	}
	f, _ := os.Create(os.Getenv("DOCENT_RESEARCH_OUT"))
	defer f.Close()
	json.NewEncoder(f).Encode(rows)
}

// TestResearchAsk prints full answers for DOCENT_RESEARCH_Q (lines) or,
// when unset, every golden question.
func TestResearchAsk(t *testing.T) {
	dir := os.Getenv("DOCENT_RESEARCH_INDEX")
	if dir == "" {
		t.Skip("DOCENT_RESEARCH_INDEX not set")
	}
	ctx := context.Background()
	ix, err := local.Open(ctx, dir+"/index.db", local.Options{Fusion: search.Fusion{Method: "score", K: 60, KeywordWeight: 1, VectorWeight: 0.3}, Candidates: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	emb := offline.NewEmbedder(offline.Options{ModelPath: dir + "/offline-embedder.bin"})
	p := New(ix, emb, nil, nil, Options{})
	var qs []string
	if s := os.Getenv("DOCENT_RESEARCH_Q"); s != "" {
		qs = strings.Split(s, "\n")
	} else {
		g, _ := eval.LoadGolden("../examples/handbook/golden.yaml")
		for _, q := range g.Questions {
			if q.Kind != eval.KindUnanswerable {
				qs = append(qs, q.Question)
			}
		}
	}
	for _, q := range qs {
		a, _ := p.Answer(ctx, docent.Question{Text: q})
		t.Logf("Q: %s\n%s  top=%.3f\n%s", q, a.Status, a.Trace.TopScore, Format(a))
		for _, h := range a.Trace.Candidates[:min(6, len(a.Trace.Candidates))] {
			t.Logf("   rel=%.3f cos=%.3f kw=%d %s > %v", h.Relevance, h.VectorScore, h.KeywordRank, h.Chunk.DocID, h.Chunk.Section)
		}
	}
}
