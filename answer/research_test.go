//go:build research

package answer

// Research harnesses for the answer gate, over an index built by
// `docent eval --golden FILE --index-dir DIR`:
//
//	DOCENT_RESEARCH_INDEX=/tmp/hb DOCENT_RESEARCH_OUT=/tmp/dump.json \
//	  go test -tags research -run ResearchDump ./answer/

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

func researchRetriever(t *testing.T) (*local.Index, *search.Retriever, map[string]int, int) {
	dir := os.Getenv("DOCENT_RESEARCH_INDEX")
	if dir == "" {
		t.Skip("DOCENT_RESEARCH_INDEX not set")
	}
	ctx := context.Background()
	ix, err := local.Open(ctx, dir+"/index.db", local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	emb := offline.NewEmbedder(offline.Options{ModelPath: dir + "/offline-embedder.bin"})
	r, err := search.NewRetriever(ix, emb, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	df := map[string]int{}
	n := 0
	_ = ix.Scan(ctx, func(c docent.Chunk) error {
		n++
		for t := range termSet(c.Text) {
			df[t]++
		}
		return nil
	})
	return ix, r, df, n
}

// TestResearchDump dumps per-question features of the golden sets named
// by DOCENT_RESEARCH_SETS (comma-separated paths; default the handbook's
// golden.yaml and asked.yaml): terms with corpus df, and the top 20
// candidates with ranks, cosine, coverage and the terms they lack.
func TestResearchDump(t *testing.T) {
	_, r, df, n := researchRetriever(t)
	ctx := context.Background()
	sets := []string{"../examples/handbook/golden.yaml", "../examples/handbook/asked.yaml"}
	if s := os.Getenv("DOCENT_RESEARCH_SETS"); s != "" {
		sets = strings.Split(s, ",")
	}
	type cand struct {
		Doc, Section    string
		Exp             bool
		Cov, Cos, Score float64
		KwRank, VecRank int
		Missing         []string
		Text            string
	}
	type row struct {
		Set, ID, Kind, Q string
		Terms            []string
		DF               []int
		Salient          []string // terms written capitalized, all-caps or as a code/number

		N     int
		Cands []cand
	}
	var rows []row
	for _, set := range sets {
		g, err := eval.LoadGolden(set)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range g.Questions {
			res, err := r.Retrieve(ctx, search.Request{Text: q.Question, K: 20})
			if err != nil {
				t.Fatal(err)
			}
			hits := res.Hits
			terms := queryTerms(q.Question)
			sets := make([]map[string]bool, len(hits))
			for i, h := range hits {
				sets[i] = termSet(h.Chunk.Text)
			}
			sc := newScorer(terms, sets, nil, DefaultWeights)
			exp := map[string]bool{}
			for _, e := range q.Expect {
				exp[e.Doc] = true
			}
			rw := row{Set: set, ID: q.ID, Kind: string(q.Kind), Q: q.Question, Terms: terms, N: n}
			for _, t := range terms {
				rw.DF = append(rw.DF, df[t])
			}
			rw.Salient = researchSalient(q.Question)
			for i, h := range hits {
				_, p, _ := strings.Cut(h.Chunk.DocID, ":")
				var miss []string
				for _, t := range terms {
					if !sets[i][t] {
						miss = append(miss, t)
					}
				}
				rw.Cands = append(rw.Cands, cand{Doc: p, Section: strings.Join(h.Chunk.Section, " > "), Exp: exp[p],
					Cov: sc.coverage(sets[i], nil, 0), Cos: h.VectorScore, Score: h.Score,
					KwRank: h.KeywordRank, VecRank: h.VectorRank, Missing: miss, Text: h.Chunk.Text})
			}
			rows = append(rows, rw)
		}
	}
	f, err := os.Create(os.Getenv("DOCENT_RESEARCH_OUT"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(rows); err != nil {
		t.Fatal(err)
	}
}

// researchSalient returns the analyzed terms of words written with a
// capital letter after the first word, in all caps, or mixing letters
// and digits.
func researchSalient(q string) []string {
	var out []string
	words := strings.FieldsFunc(q, func(r rune) bool {
		return r == ' ' || r == '/' || r == ',' || r == '?' || r == '"' || r == '(' || r == ')'
	})
	for i, w := range words {
		w = strings.Trim(w, ".:;!'-")
		if w == "" {
			continue
		}
		hasUpper := strings.ToLower(w) != w
		hasDigit := strings.ContainsAny(w, "0123456789")
		if (hasUpper && i > 0) || (hasUpper && len(w) > 1 && strings.ToUpper(w) == w) || hasDigit {
			out = append(out, search.Analyze(w)...)
		}
	}
	return out
}
