//go:build research

package answer

// Research harnesses for the answer gate, over an index built by
// `docent eval --golden FILE --index-dir DIR`:
//
//	DOCENT_RESEARCH_INDEX=/tmp/hb DOCENT_RESEARCH_OUT=/tmp/dump.json \
//	  go test -tags research -run ResearchDump ./answer/
//
// ResearchDump and ResearchPipelineDump write per-question features as
// JSON (the second after the Standalone rewrite, with every candidate's
// units); ResearchVariants and ResearchParts print the docs' spellings
// and the parts the rewriter finds; ResearchAnswers runs both handbook
// sets through the offline pipeline and prints, per question, the
// outcome, the gate's reason, the citations and whether missing facts
// were in a cited or another candidate chunk; ResearchDebug prints the
// candidates, pages and sources of the questions whose id contains
// DOCENT_RESEARCH_ONLY (Q replaces the question text).

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"

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

// TestResearchVariants prints, for every question of the sets, the words
// the corpus does not hold and the variant the Corpus finds for them.
func TestResearchVariants(t *testing.T) {
	ix, _, _, _ := researchRetriever(t)
	ctx := context.Background()
	var chunks []docent.Chunk
	_ = ix.Scan(ctx, func(c docent.Chunk) error { chunks = append(chunks, c); return nil })
	corp := NewCorpus(chunks)
	for _, set := range []string{"../examples/handbook/golden.yaml", "../examples/handbook/asked.yaml"} {
		g, err := eval.LoadGolden(set)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range g.Questions {
			var unk []string
			for _, w := range strings.FieldsFunc(q.Question, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }) {
				terms := search.Analyze(w)
				if len(terms) != 1 || corp.DF(terms[0]) > 0 {
					continue
				}
				v, ok := corp.Variant(w)
				if ok {
					unk = append(unk, w+"=>"+v)
				} else {
					unk = append(unk, w)
				}
			}
			t.Logf("%-14s %-32s %s", q.Kind, q.ID, strings.Join(unk, " "))
		}
	}
}

// TestResearchParts prints the parts the Standalone rewriter splits each
// question of the sets into.
func TestResearchParts(t *testing.T) {
	for _, set := range []string{"../examples/handbook/golden.yaml", "../examples/handbook/asked.yaml"} {
		g, err := eval.LoadGolden(set)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range g.Questions {
			parts, _ := splitAsks(q.Question)
			if len(parts) > 1 || q.Kind == eval.KindMulti {
				t.Logf("%-6s %-32s %q", q.Kind[:4], q.ID, parts)
			}
		}
	}
}

// TestResearchPipelineDump dumps, for every question of the sets, what
// the gate sees after the Standalone rewrite and the pipeline's
// retrieval (sub-queries merged): query terms with corpus df, the parts,
// and each candidate with its ranks, terms and units.
func TestResearchPipelineDump(t *testing.T) {
	ix, r, _, _ := researchRetriever(t)
	ctx := context.Background()
	stats := NewCorpusStats(ix)
	corp, err := stats.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Stages{Retriever: r, Rewriter: Standalone{Corpus: stats}}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type unitOut struct {
		Text       string
		Kind       int
		Terms, Ctx []string
	}
	type candOut struct {
		Doc, Section, Updated string
		Title                 string
		Head                  []string
		Exp                   bool
		KwRank, VecRank       int
		Score, Cos            float64
		Terms                 []string
		Units                 []unitOut
		Part                  int
	}
	type rowOut struct {
		Set, ID, Kind, Q, Query string
		Parts                   []string
		Terms                   []string
		DF                      []int
		ExpSections             []string
		Facts                   []string
		Cands                   []candOut
	}
	keys := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	var rows []rowOut
	for _, set := range []string{"../examples/handbook/golden.yaml", "../examples/handbook/asked.yaml"} {
		g, err := eval.LoadGolden(set)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range g.Questions {
			rw, _ := p.st.Rewriter.Rewrite(ctx, RewriteRequest{Question: q.Question})
			hits, _, err := p.retrieve(ctx, search.ModeDefault, rw.Query, nil, nil, docent.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			exp := map[string]bool{}
			row := rowOut{Set: set, ID: q.ID, Kind: string(q.Kind), Q: q.Question, Query: rw.Query, Parts: rw.SubQueries, Facts: q.Facts}
			for _, e := range q.Expect {
				exp[e.Doc] = true
				row.ExpSections = append(row.ExpSections, e.Doc+"#"+e.Section)
			}
			row.Terms = queryTerms(rw.Query)
			for _, tm := range row.Terms {
				row.DF = append(row.DF, corp.DF(tm))
			}
			for _, h := range hits {
				_, path, _ := strings.Cut(h.Chunk.DocID, ":")
				c := candOut{Doc: path, Section: strings.Join(h.Chunk.Section, " > "), Updated: h.Chunk.UpdatedAt.Format("2006-01-02"),
					Exp: exp[path], KwRank: h.KeywordRank, VecRank: h.VectorRank, Score: h.Score, Cos: h.VectorScore,
					Terms: keys(termSet(h.Chunk.Text)), Title: h.Chunk.Title,
					Head: keys(termSet(h.Chunk.Title + " " + strings.Join(h.Chunk.Section, " ")))}
				for _, u := range splitUnits(h.Chunk) {
					c.Units = append(c.Units, unitOut{Text: u.Text, Kind: int(u.Kind), Terms: keys(u.Terms), Ctx: keys(u.Context)})
				}
				row.Cands = append(row.Cands, c)
			}
			rows = append(rows, row)
		}
	}
	f, err := os.Create(os.Getenv("DOCENT_RESEARCH_OUT"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(map[string]any{"N": corp.N(), "DF": corp.df, "rows": rows}); err != nil {
		t.Fatal(err)
	}
}

// TestResearchAnswers runs the offline pipeline over the sets and prints,
// per question, the outcome, the gate's detail and the answer text, so
// that gate and generator changes can be read question by question.
// DOCENT_RESEARCH_ONLY limits it to ids containing the given text.
func TestResearchAnswers(t *testing.T) {
	ix, r, _, _ := researchRetriever(t)
	stats := NewCorpusStats(ix)
	minScore, _ := strconv.ParseFloat(os.Getenv("DOCENT_RESEARCH_MINSCORE"), 64)
	cands, _ := strconv.Atoi(os.Getenv("DOCENT_RESEARCH_CANDS"))
	p, err := New(Stages{Retriever: r, Rewriter: Standalone{Corpus: stats}, Reranker: PageOrder{},
		Gate: NewRelevance(GateOptions{Corpus: stats, MinScore: minScore}, nil)}, nil, Options{Candidates: cands})
	if err != nil {
		t.Fatal(err)
	}
	only := os.Getenv("DOCENT_RESEARCH_ONLY")
	for _, set := range []string{"../examples/handbook/golden.yaml", "../examples/handbook/asked.yaml"} {
		g, err := eval.LoadGolden(set)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := eval.RunGolden(context.Background(), g, eval.AnswererFunc(func(ctx context.Context, q docent.Question) (docent.Answer, error) {
			return p.Answer(ctx, q)
		}))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("SUMMARY %s answered %.3f uncertain %.3f notfound %.3f linked %.3f correct %.3f declined %.3f nf-acc %.3f",
			set, rep.AnsweredRate, rep.UncertainRate, rep.FalseNotFoundRate, rep.LinkedFirstRate, rep.CorrectRate, rep.DeclinedRate, rep.NotFoundAccuracy)
		for i, q := range g.Questions {
			row := rep.Rows[i]
			if only != "" && !strings.Contains(q.ID, only) {
				continue
			}
			a, _ := p.Answer(context.Background(), docent.Question{Text: q.Question})
			res := "FAIL"
			if row.Pass {
				res = "ok"
			}
			var gate string
			for _, s := range a.Trace.Stages {
				if s.Name == StageGate {
					gate = s.Detail
				}
			}
			var cites []string
			for _, c := range a.Citations {
				_, path, _ := strings.Cut(c.DocID, ":")
				cites = append(cites, path+"#"+c.Section)
			}
			var inCited, inCands []string
			used := map[string]bool{}
			for _, id := range a.Trace.Used {
				used[id] = true
			}
			for _, f := range row.MissingFacts {
				for _, alt := range strings.Split(f, "|") {
					alt = strings.ToLower(strings.TrimSpace(alt))
					for _, h := range a.Trace.Candidates {
						if strings.Contains(strings.ToLower(h.Chunk.Text), alt) {
							if used[h.Chunk.ID] {
								inCited = append(inCited, alt)
							} else {
								inCands = append(inCands, alt)
							}
						}
					}
				}
			}
			t.Logf("%s %-4s %-30s %-9s rank=%d | %s\n    Q: %s\n    gate: %s\n    cites: %v\n    missing facts: %v (in cited %v, in other candidates %v)\n    A: %s",
				set[len(set)-11:len(set)-5], res, q.ID, a.Status, row.FirstRank, q.Kind, q.Question, gate, cites, row.MissingFacts, len(inCited) > 0, len(inCands) > 0, a.Text)
		}
	}
}

// TestResearchDebug prints, for the questions whose id contains
// DOCENT_RESEARCH_ONLY, the candidates, the gate's pages and sources.
func TestResearchDebug(t *testing.T) {
	ix, r, _, _ := researchRetriever(t)
	ctx := context.Background()
	stats := NewCorpusStats(ix)
	corp, _ := stats.Get(ctx)
	cands, _ := strconv.Atoi(os.Getenv("DOCENT_RESEARCH_CANDS"))
	p, _ := New(Stages{Retriever: r, Rewriter: Standalone{Corpus: stats}, Reranker: PageOrder{}}, nil, Options{Candidates: cands})
	g := NewRelevance(GateOptions{Corpus: stats}, nil)
	only := os.Getenv("DOCENT_RESEARCH_ONLY")
	for _, set := range []string{"../examples/handbook/golden.yaml", "../examples/handbook/asked.yaml"} {
		gs, _ := eval.LoadGolden(set)
		for _, q := range gs.Questions {
			if only == "" || !strings.Contains(q.ID, only) {
				continue
			}
			if qq := os.Getenv("Q"); qq != "" {
				q.Question = qq
			}
			rw, _ := p.st.Rewriter.Rewrite(ctx, RewriteRequest{Question: q.Question})
			hits, _, _ := p.retrieve(ctx, search.ModeDefault, rw.Query, nil, nil, docent.Filter{})
			rr, _ := p.st.Reranker.Rerank(ctx, RerankRequest{Query: rw.Query, Hits: hits})
			v := g.judge(rw.Query, rr.Hits, corp)
			t.Logf("== %s: %s (query %q) want=%d", q.ID, q.Question, rw.Query, v.want)
			for _, tm := range v.q.terms {
				t.Logf("   term %-12s idf %.2f df %d sal %v named %v", tm.Term, tm.IDF, tm.DF, tm.Salient, tm.Named)
			}
			for i, h := range rr.Hits {
				if i < 12 {
					b := bestUnit(h, v.q, v.want)
					t.Logf("   hit %2d %s#%s ord %d best %.2f/%.2f %.60q", i, h.Chunk.DocID, strings.Join(h.Chunk.Section, ">"), h.Chunk.Ord, b.cov, b.score, b.u.Text)
				}
			}
			for i, pg := range v.pages {
				if i >= 4 {
					break
				}
				h := rr.Hits[pg.best.hit]
				t.Logf("   page %s cov %.2f mass %.2f best %.2f/%.2f [%s] %q", pg.key, pg.cov, pg.mass, pg.best.cov, pg.best.score, strings.Join(h.Chunk.Section, ">"), pg.best.u.Text)
			}
			d := g.decide(v)
			t.Logf("   %s: %s", d.Status, d.Detail)
			for _, s := range d.Sources {
				t.Logf("   src %d %s#%s", s.N, s.Hit.Chunk.DocID, strings.Join(s.Hit.Chunk.Section, ">"))
			}
			res, _ := NewExtractive().Generate(ctx, GenerateRequest{Question: q.Question, Query: rw.Query, Sources: d.Sources, Terms: d.Terms, Conflict: d.Conflict})
			t.Logf("   A: %s", res.Text)
		}
	}
}
