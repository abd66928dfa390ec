//go:build research

package research

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/bm25"
	"github.com/docent-hq/docent/search/local"
)

// TestKeyword prints nDCG@10 / R@100 of BM25 variants, keyword-only and
// through the default pipeline, on the query sets of $DOCENT_SPLITS
// (default "train"; with $DOCENT_LONG=0 the long-query sets are left out).
// Variants come from $DOCENT_KEYWORD, a list of name=coverage/k1/b entries
// separated by spaces, or the list below; the default pipeline runs with
// each vector weight of $DOCENT_VECTOR_WEIGHTS (default 0.4, the
// product's).
func TestKeyword(t *testing.T) {
	s := mustSciFact(t)
	type variant struct {
		name string
		p    bm25.Params
	}
	variants := []variant{
		{"coverage 0", bm25.Params{}},
		{"coverage 0.5", bm25.Params{Coverage: 0.5}},
		{"coverage 1", bm25.Params{Coverage: 1}},
		{"coverage 2", bm25.Params{Coverage: 2}},
	}
	if v := os.Getenv("DOCENT_KEYWORD"); v != "" {
		variants = nil
		for _, f := range strings.Fields(v) {
			name, spec, _ := strings.Cut(f, "=")
			var p bm25.Params
			w := &p.Weights
			if _, err := fmt.Sscanf(spec, "%g/%g/%g/%g/%g/%g", &p.Coverage, &p.K1, &p.B, &w[0], &w[1], &w[2]); err != nil {
				t.Fatalf("variant %q: want name=coverage/k1/b/title/section/text: %v", f, err)
			}
			variants = append(variants, variant{name, p})
		}
	}
	splits := strings.Split(envOr("DOCENT_SPLITS", "train"), ",")
	var weights []float64
	for _, w := range strings.Split(envOr("DOCENT_VECTOR_WEIGHTS", "0.4"), ",") {
		var x float64
		if _, err := fmt.Sscan(w, &x); err != nil {
			t.Fatalf("DOCENT_VECTOR_WEIGHTS: %v", err)
		}
		weights = append(weights, x)
	}
	for _, v := range variants {
		ix := s.open(t, local.Options{Keyword: v.p})
		for _, split := range splits {
			sets := []string{split}
			if os.Getenv("DOCENT_LONG") != "0" {
				sets = append(sets, longSets(split)...)
			}
			for _, set := range sets {
				rep := s.score(t, ix, set, search.ModeKeyword, search.RetrieverOptions{})
				line := fmt.Sprintf("%-14s %-20s  bm25 %.4f / %.4f", v.name, set, rep.NDCG10, rep.Recall100)
				for _, w := range weights {
					f := search.DefaultFusion()
					f.VectorWeight = w
					rep := s.score(t, ix, set, search.ModeDefault, search.RetrieverOptions{Fusion: f})
					line += fmt.Sprintf("  default(%.2g) %.4f / %.4f", w, rep.NDCG10, rep.Recall100)
				}
				t.Log(line)
			}
		}
	}
}

func longSets(split string) []string {
	var out []string
	for _, k := range eval.LongKinds {
		out = append(out, split+"/"+k)
	}
	return out
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// TestRetriever prints the default pipeline's nDCG@10 / R@100 on the short
// queries of $DOCENT_SPLITS (default "train") for each Retriever variant
// of $DOCENT_RETRIEVER: name=feedbackDocs/feedbackWeight/firstPassShare/
// candidates/tailFrom/vectorWeight entries separated by spaces (0 keeps a
// default, as in RetrieverOptions).
func TestRetriever(t *testing.T) {
	s := mustSciFact(t)
	ix := s.open(t, local.Options{})
	type variant struct {
		name string
		o    search.RetrieverOptions
	}
	variants := []variant{{"defaults", search.RetrieverOptions{}}}
	for _, f := range strings.Fields(os.Getenv("DOCENT_RETRIEVER")) {
		name, spec, _ := strings.Cut(f, "=")
		var o search.RetrieverOptions
		var w float64
		if _, err := fmt.Sscanf(spec, "%d/%g/%g/%d/%d/%g", &o.FeedbackDocs, &o.FeedbackWeight, &o.FirstPassShare, &o.Candidates, &o.TailFrom, &w); err != nil {
			t.Fatalf("variant %q: %v", f, err)
		}
		if w > 0 {
			o.Fusion = search.DefaultFusion()
			o.Fusion.VectorWeight = w
		}
		variants = append(variants, variant{name, o})
	}
	for _, v := range variants {
		line := fmt.Sprintf("%-14s", v.name)
		for _, split := range strings.Split(envOr("DOCENT_SPLITS", "train"), ",") {
			rep := s.score(t, ix, split, search.ModeDefault, v.o)
			line += fmt.Sprintf("  %s %.4f / %.4f", split, rep.NDCG10, rep.Recall100)
		}
		t.Log(line)
	}
}
