package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/internal/synthetic"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

// Bench measures the local backend: index throughput, query latency for
// retrieval alone and for the full offline answer, and peak RSS, on a BEIR
// set (SciFact) and on a deterministic synthetic corpus.
func (m *Main) Bench(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	fl.SetOutput(m.Stderr)
	scifact := fl.String("scifact", "", "BEIR data set to index and query (skipped when absent)")
	synthetic := fl.Int("synthetic", 0, "size of the synthetic corpus in chunks (0 skips it)")
	queries := fl.Int("queries", 300, "synthetic queries to time")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("bench: cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench: cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := m.LoadConfig(); err != nil {
		return err
	}
	if *scifact != "" {
		if _, err := os.Stat(filepath.Join(*scifact, "corpus.jsonl")); err != nil {
			fmt.Fprintf(m.Stdout, "BEIR set %s not found: skipped\n\n", *scifact)
		} else if err := m.benchBEIR(ctx, *scifact); err != nil {
			return err
		}
	}
	if *synthetic > 0 {
		return m.benchSynthetic(ctx, *synthetic, *queries)
	}
	return nil
}

func (m *Main) benchBEIR(ctx context.Context, dir string) error {
	tmp, err := os.MkdirTemp("", "docent-bench-")
	if err != nil {
		return err
	}
	b, err := eval.LoadBEIR(dir, "test")
	if err != nil {
		return err
	}
	m.Config.Sources = nil
	defer func() {
		m.Close()
		os.RemoveAll(tmp)
	}()
	if err := m.open(ctx, tmp); err != nil {
		return err
	}
	_ = eval.ResetPeakRSS()
	start := time.Now()
	res, err := m.Engine.Sync(ctx, &staticSource{name: eval.BEIRSource, docs: b.Corpus}, newProgressPrinter(m.Stderr))
	if err != nil {
		return fmt.Errorf("bench: index %s: %w", b.Name, err)
	}
	indexTime := time.Since(start)
	chunks, _ := m.Index.Count(ctx)

	retrieve := make([]time.Duration, 0, len(b.Queries))
	for _, q := range b.Queries {
		t0 := time.Now()
		if _, err := m.searcher("default").Search(ctx, q.Text, 10); err != nil {
			return err
		}
		retrieve = append(retrieve, time.Since(t0))
	}
	answer := make([]time.Duration, 0, len(b.Queries))
	for _, q := range b.Queries {
		t0 := time.Now()
		if _, err := m.Pipeline.Answer(ctx, docent.Question{Text: q.Text, Platform: "bench"}); err != nil {
			return err
		}
		answer = append(answer, time.Since(t0))
	}
	rss, _ := eval.PeakRSS()
	w := m.Stdout
	fmt.Fprintf(w, "== %s (%s): %d documents, %d chunks, embedder %s\n", b.Name, dir, res.Added+res.Updated+res.Unchanged, chunks, m.Embedder.Name())
	fmt.Fprintf(w, "index (chunk + train + embed + write): %s, %.0f docs/s\n", indexTime.Round(time.Millisecond), float64(len(b.Corpus))/indexTime.Seconds())
	fmt.Fprintf(w, "retrieval only (embed + default retrieval, k=10), %d queries: %s\n", len(retrieve), eval.Summarize(retrieve))
	fmt.Fprintf(w, "full offline answer, %d queries:                 %s\n", len(answer), eval.Summarize(answer))
	fmt.Fprintf(w, "peak RSS: %s\n\n", mib(rss))
	return m.Close()
}

func (m *Main) benchSynthetic(ctx context.Context, n, nq int) error {
	tmp, err := os.MkdirTemp("", "docent-bench-")
	if err != nil {
		return err
	}
	const dim = 256
	w := m.Stdout
	_ = eval.ResetPeakRSS()
	chunks := synthetic.Chunks(n, dim, 1)
	ix, err := local.Open(ctx, filepath.Join(tmp, "index.db"), local.Options{})
	if err != nil {
		return err
	}
	defer func() {
		ix.Close() // the reopened index, below
		os.RemoveAll(tmp)
	}()
	start := time.Now()
	const batch = 2000
	for i := 0; i < len(chunks); i += batch {
		if err := ix.Upsert(ctx, chunks[i:min(i+batch, len(chunks))]); err != nil {
			return err
		}
		if f, ok := m.Stderr.(*os.File); ok && newProgressPrinter(f) != nil {
			fmt.Fprintf(m.Stderr, "\r\033[Ksynthetic: %d/%d chunks", min(i+batch, len(chunks)), len(chunks))
		}
	}
	fmt.Fprint(m.Stderr, "\r\033[K")
	upsert := time.Since(start)
	// Reopen, as a restart would: vectors load from the file, nothing is re-embedded.
	if err := ix.Close(); err != nil {
		return err
	}
	start = time.Now()
	ix, err = local.Open(ctx, filepath.Join(tmp, "index.db"), local.Options{})
	if err != nil {
		return err
	}
	reopen := time.Since(start)

	qv := synthetic.Queries(chunks, nq, 2)
	retriever, err := search.NewRetriever(ix, nil, search.RetrieverOptions{FeedbackDocs: -1})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(3))
	var vecLat, kwLat, hybLat []time.Duration
	var recall float64
	for i, v := range qv {
		t0 := time.Now()
		hits, err := ix.VectorSearch(ctx, search.VectorQuery{Vector: v, K: 10})
		if err != nil {
			return err
		}
		vecLat = append(vecLat, time.Since(t0))
		recall += overlap(hits, exactTop(chunks, v, 10))

		words := strings.Fields(chunks[rng.Intn(len(chunks))].Title)
		text := words[0] + " " + synthetic.Word(100+rng.Intn(4900)) + " " + synthetic.Word(100+rng.Intn(4900))
		t0 = time.Now()
		if _, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: text, K: 10}); err != nil {
			return err
		}
		kwLat = append(kwLat, time.Since(t0))
		t0 = time.Now()
		if _, err := retriever.Retrieve(ctx, search.Request{Text: text, Vector: qv[(i+1)%len(qv)], K: 10, Mode: search.ModeHybrid}); err != nil {
			return err
		}
		hybLat = append(hybLat, time.Since(t0))
	}
	rss, _ := eval.PeakRSS()
	fmt.Fprintf(w, "== synthetic: %d chunks, %d-d clustered vectors, %d queries\n", n, dim, len(qv))
	fmt.Fprintf(w, "upsert: %s, %.0f chunks/s; reopen (load vectors, build ANN): %s\n", upsert.Round(time.Millisecond), float64(n)/upsert.Seconds(), reopen.Round(time.Millisecond))
	fmt.Fprintf(w, "vector (ANN above %d chunks), k=10: %s; recall@10 vs exact %.3f\n", 20000, eval.Summarize(vecLat), recall/float64(len(qv)))
	fmt.Fprintf(w, "keyword (FTS5 BM25), k=10:         %s\n", eval.Summarize(kwLat))
	fmt.Fprintf(w, "hybrid, k=10:                      %s\n", eval.Summarize(hybLat))
	fmt.Fprintf(w, "peak RSS: %s\n", mib(rss))
	return nil
}

// exactTop returns the IDs of the k chunks most similar to v by brute force.
func exactTop(chunks []docent.Chunk, v []float32, k int) []string {
	type scored struct {
		id string
		s  float32
	}
	top := make([]scored, 0, k+1)
	for _, c := range chunks {
		var s float32
		for i, x := range c.Vector {
			s += x * v[i]
		}
		if len(top) == k && s <= top[k-1].s {
			continue
		}
		top = append(top, scored{c.ID, s})
		slices.SortFunc(top, func(a, b scored) int {
			if a.s > b.s {
				return -1
			}
			if a.s < b.s {
				return 1
			}
			return strings.Compare(a.id, b.id)
		})
		if len(top) > k {
			top = top[:k]
		}
	}
	ids := make([]string, len(top))
	for i, t := range top {
		ids[i] = t.id
	}
	return ids
}

// overlap is the share of want found among hits.
func overlap(hits []docent.Hit, want []string) float64 {
	if len(want) == 0 {
		return 1
	}
	n := 0
	for _, h := range hits {
		if slices.Contains(want, h.Chunk.ID) {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
