package offline

// Research harness: measures the offline embedder on BEIR SciFact. It only
// runs with DOCENT_RESEARCH=1 and the data present:
//
//	DOCENT_RESEARCH=1 go test ./llm/offline -run TestSciFactResearch -v -timeout 30m
//
// DOCENT_SCIFACT overrides the data directory (default
// ../../../shared/eval/scifact relative to this package). The data is
// CC BY-NC and is never copied into the repository.

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/search"
)

type beirDoc struct {
	ID, Title, Text string
}

type beirSet struct {
	docs    []beirDoc
	queries map[string]string
	train   map[string]map[string]bool
	test    map[string]map[string]bool
}

func scifactDir() string {
	if d := os.Getenv("DOCENT_SCIFACT"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "eval", "scifact")
}

func loadBEIR(tb testing.TB, dir string) *beirSet {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		tb.Skipf("no BEIR data at %s", dir)
	}
	s := &beirSet{queries: map[string]string{}}
	readJSONL(tb, filepath.Join(dir, "corpus.jsonl"), func(raw []byte) {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			tb.Fatal(err)
		}
		s.docs = append(s.docs, beirDoc{d.ID, d.Title, d.Text})
	})
	readJSONL(tb, filepath.Join(dir, "queries.jsonl"), func(raw []byte) {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &q); err != nil {
			tb.Fatal(err)
		}
		s.queries[q.ID] = q.Text
	})
	s.train = readQrels(tb, filepath.Join(dir, "qrels", "train.tsv"))
	s.test = readQrels(tb, filepath.Join(dir, "qrels", "test.tsv"))
	return s
}

func readJSONL(tb testing.TB, path string, fn func([]byte)) {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
}

func readQrels(tb testing.TB, path string) map[string]map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) < 3 || f[2] == "0" {
			continue
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string]bool{}
		}
		out[f[0]][f[1]] = true
	}
	return out
}

// metrics are averaged retrieval figures.
type metrics struct {
	ndcg10, r10, r100, mrr10 float64
}

func (m metrics) String() string {
	return fmt.Sprintf("nDCG@10 %.4f  R@10 %.4f  R@100 %.4f  MRR@10 %.4f", m.ndcg10, m.r10, m.r100, m.mrr10)
}

// evaluate scores a run (query id -> ranked doc ids) against qrels.
func evaluate(run map[string][]string, qrels map[string]map[string]bool) metrics {
	var m metrics
	n := 0
	qids := slices.Sorted(func(yield func(string) bool) {
		for q := range qrels {
			if !yield(q) {
				return
			}
		}
	})
	for _, q := range qids {
		rel := qrels[q]
		ranked := run[q]
		n++
		var dcg, idcg float64
		hits10, hits100 := 0, 0
		rr := 0.0
		for i, d := range ranked {
			if i >= 100 {
				break
			}
			if !rel[d] {
				continue
			}
			if i < 10 {
				dcg += 1 / math.Log2(float64(i+2))
				hits10++
				if rr == 0 {
					rr = 1 / float64(i+1)
				}
			}
			hits100++
		}
		for i := 0; i < min(len(rel), 10); i++ {
			idcg += 1 / math.Log2(float64(i+2))
		}
		m.ndcg10 += dcg / idcg
		m.r10 += float64(hits10) / float64(len(rel))
		m.r100 += float64(hits100) / float64(len(rel))
		m.mrr10 += rr
	}
	f := 1 / float64(n)
	return metrics{m.ndcg10 * f, m.r10 * f, m.r100 * f, m.mrr10 * f}
}

// bm25 is a small in-memory BM25 for exploration.
type bm25 struct {
	k1, b    float64
	docLen   []float64
	avgLen   float64
	postings map[string][]posting
	n        int
}

type posting struct {
	doc int
	tf  float64
}

func newBM25(docs [][]string, k1, b float64) *bm25 {
	x := &bm25{k1: k1, b: b, postings: map[string][]posting{}, n: len(docs), docLen: make([]float64, len(docs))}
	var total float64
	for d, ts := range docs {
		x.docLen[d] = float64(len(ts))
		total += float64(len(ts))
		tf := map[string]float64{}
		for _, t := range ts {
			tf[t]++
		}
		for _, t := range slices.Sorted(func(yield func(string) bool) {
			for t := range tf {
				if !yield(t) {
					return
				}
			}
		}) {
			x.postings[t] = append(x.postings[t], posting{d, tf[t]})
		}
	}
	x.avgLen = total / float64(len(docs))
	return x
}

func (x *bm25) scores(q []string) []float64 {
	s := make([]float64, x.n)
	seen := map[string]bool{}
	for _, t := range q {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := x.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := math.Log(1 + (float64(x.n)-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			norm := x.k1 * (1 - x.b + x.b*x.docLen[p.doc]/x.avgLen)
			s[p.doc] += idf * p.tf * (x.k1 + 1) / (p.tf + norm)
		}
	}
	return s
}

type scored struct {
	doc   int
	score float64
}

func topK(s []float64, k int) []scored {
	out := make([]scored, 0, len(s))
	for d, v := range s {
		if v != 0 {
			out = append(out, scored{d, v})
		}
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

func dot(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

// fuseMinMax min-max normalizes each list and adds them with weights
// (1-w) for keyword and w for dense.
func fuseMinMax(kw, dense []scored, w float64) []scored {
	acc := map[int]float64{}
	add := func(l []scored, wt float64) {
		if len(l) == 0 {
			return
		}
		hi, lo := l[0].score, l[len(l)-1].score
		for _, s := range l {
			v := 1.0
			if hi > lo {
				v = (s.score - lo) / (hi - lo)
			}
			acc[s.doc] += wt * v
		}
	}
	add(kw, 1-w)
	add(dense, w)
	return sortAcc(acc)
}

func fuseRRF(kw, dense []scored, w float64, k float64) []scored {
	acc := map[int]float64{}
	for i, s := range kw {
		acc[s.doc] += (1 - w) / (k + float64(i+1))
	}
	for i, s := range dense {
		acc[s.doc] += w / (k + float64(i+1))
	}
	return sortAcc(acc)
}

func sortAcc(acc map[int]float64) []scored {
	out := make([]scored, 0, len(acc))
	for d, v := range acc {
		out = append(out, scored{d, v})
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return out
}

func TestSciFactResearch(t *testing.T) {
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
	start := time.Now()
	e := NewEmbedder(Options{})
	if _, err := e.Fit(ctx, texts); err != nil {
		t.Fatal(err)
	}
	t.Logf("fit %s in %s", e.Name(), time.Since(start))
	start = time.Now()
	dvecs, err := e.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("embedded %d docs in %s", len(texts), time.Since(start))
	ix := newBM25(analyzed, 1.2, 0.75)

	for _, split := range []struct {
		name  string
		qrels map[string]map[string]bool
	}{{"train", set.train}, {"test", set.test}} {
		kwRuns := map[string][]scored{}
		dnRuns := map[string][]scored{}
		for q := range split.qrels {
			kwRuns[q] = topK(ix.scores(search.Analyze(set.queries[q])), 1000)
			qv, _ := e.EmbedDocuments(ctx, []string{set.queries[q]})
			s := make([]float64, len(dvecs))
			for d, v := range dvecs {
				s[d] = dot(qv[0], v)
			}
			dnRuns[q] = topK(s, 1000)
		}
		toRun := func(f func(q string) []scored) map[string][]string {
			run := map[string][]string{}
			for q := range split.qrels {
				for _, s := range f(q) {
					run[q] = append(run[q], set.docs[s.doc].ID)
				}
			}
			return run
		}
		t.Logf("%s bm25    %s", split.name, evaluate(toRun(func(q string) []scored { return kwRuns[q] }), split.qrels))
		t.Logf("%s vector  %s", split.name, evaluate(toRun(func(q string) []scored { return dnRuns[q] }), split.qrels))
		for _, w := range []float64{0.2, 0.3, 0.4} {
			t.Logf("%s minmax w=%.1f %s", split.name, w, evaluate(toRun(func(q string) []scored {
				return fuseMinMax(kwRuns[q][:min(100, len(kwRuns[q]))], dnRuns[q][:100], w)
			}), split.qrels))
		}
		t.Logf("%s rrf     %s", split.name, evaluate(toRun(func(q string) []scored {
			return fuseRRF(kwRuns[q][:min(100, len(kwRuns[q]))], dnRuns[q][:100], 0.5, 60)
		}), split.qrels))
	}
}

// TestSciFactSweep compares training choices on the train split with the
// in-memory BM25 (exploration only).
func TestSciFactSweep(t *testing.T) {
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
	ix := newBM25(analyzed, 1.2, 0.75)
	kwRuns := map[string][]scored{}
	for q := range set.train {
		kwRuns[q] = topK(ix.scores(search.Analyze(set.queries[q])), 100)
	}
	type cfg struct {
		name string
		o    Options
		pr   params
	}
	cfgs := []cfg{
		{"default", Options{}, defaultParams},
		{"p=1", Options{}, func() params { p := defaultParams; p.eigPower = 1; return p }()},
		{"p=0.5 nonorm", Options{}, func() params { p := defaultParams; p.eigPower, p.rowNorm = 0.5, false; return p }()},
		{"win10", Options{Window: 10}, defaultParams},
		{"dim400", Options{Dim: 400}, defaultParams},
		{"min1", Options{MinCount: 1}, defaultParams},
	}
	if s := os.Getenv("DOCENT_SWEEP"); s != "" {
		cfgs = slices.DeleteFunc(cfgs, func(c cfg) bool { return !strings.Contains(","+s+",", ","+c.name+",") })
	}
	for _, c := range cfgs {
		start := time.Now()
		e := NewEmbedder(c.o)
		e.pr = c.pr
		if _, err := e.Fit(ctx, texts); err != nil {
			t.Fatal(err)
		}
		fit := time.Since(start)
		dvecs, _ := e.EmbedDocuments(ctx, texts)
		dnRuns := map[string][]scored{}
		for q := range set.train {
			qv, _ := e.EmbedDocuments(ctx, []string{set.queries[q]})
			s := make([]float64, len(dvecs))
			for d, v := range dvecs {
				s[d] = dot(qv[0], v)
			}
			dnRuns[q] = topK(s, 100)
		}
		toRun := func(f func(q string) []scored) map[string][]string {
			run := map[string][]string{}
			for q := range set.train {
				for _, s := range f(q) {
					run[q] = append(run[q], set.docs[s.doc].ID)
				}
			}
			return run
		}
		t.Logf("%-14s fit %5.1fs vector %s", c.name, fit.Seconds(), evaluate(toRun(func(q string) []scored { return dnRuns[q] }), set.train))
		for _, w := range []float64{0.2, 0.3} {
			t.Logf("%-14s minmax w=%.1f %s", c.name, w, evaluate(toRun(func(q string) []scored {
				return fuseMinMax(kwRuns[q], dnRuns[q], w)
			}), set.train))
		}
	}
}
