package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
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
// retrieval alone and for the full offline answer, ranking quality and
// peak RSS, on a BEIR set (SciFact, with its long-query sets) and on a
// deterministic synthetic corpus. With --baseline it also runs a standard
// engine on the same BEIR set, alternating with docent for --rounds
// rounds, and prints both side by side with the ratios.
func (m *Main) Bench(ctx context.Context, args []string) error {
	fl := m.flagSet("bench")
	scifact := fl.String("scifact", "", "BEIR data set to index and query (skipped when absent)")
	baseline := fl.String("baseline", "", "baseline engine: an executable run as `CMD --beir DIR --json` that prints an eval.BenchReport")
	rounds := fl.Int("rounds", 1, "with --baseline: rounds of docent then the baseline; timings are the medians")
	asJSON := fl.Bool("json", false, "print docent's BEIR report as JSON")
	synthetic := fl.Int("synthetic", 0, "size of the synthetic corpus in chunks (0 skips it)")
	queries := fl.Int("queries", 300, "synthetic queries to time")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("bench takes no arguments, got %q: %w", rest, errUsage)
	}
	if *rounds < 1 {
		return fmt.Errorf("bench: --rounds must be at least 1: %w", errUsage)
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
		} else if err := m.benchBEIR(ctx, *scifact, *baseline, *rounds, *asJSON); err != nil {
			return err
		}
	}
	if *synthetic > 0 {
		return m.benchSynthetic(ctx, *synthetic, *queries)
	}
	return nil
}

// benchModes are the retrieval modes bench measures per query set.
var benchModes = map[string][]string{
	"test":           {string(search.ModeKeyword), string(search.ModeHybrid), string(search.ModeDefault)},
	eval.LongContext: {string(search.ModeKeyword), string(search.ModeDefault)},
	eval.LongNoise:   {string(search.ModeKeyword), string(search.ModeDefault)},
}

// benchBEIR measures docent on the BEIR set in dir, and the baseline
// alternately with it when one is given.
func (m *Main) benchBEIR(ctx context.Context, dir, baseline string, rounds int, asJSON bool) error {
	b, err := eval.LoadBEIR(dir, "test")
	if err != nil {
		return err
	}
	sets, err := eval.WithLongQueries(b, 1)
	if err != nil {
		return err
	}
	if baseline == "" {
		rounds = 1
	}
	var docents, bases []eval.BenchReport
	for range rounds {
		rep, err := m.benchDocent(ctx, sets)
		if err != nil {
			return err
		}
		docents = append(docents, rep)
		if baseline == "" {
			break
		}
		base, err := m.runBaseline(ctx, baseline, dir)
		if err != nil {
			return err
		}
		bases = append(bases, base)
	}
	if asJSON {
		return writeJSON(m.Stdout, eval.MedianReport(docents))
	}
	if baseline == "" {
		return eval.WriteBenchReport(m.Stdout, docents[0])
	}
	if err := eval.WriteBenchComparison(m.Stdout, eval.MedianReport(docents), eval.MedianReport(bases), rounds); err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout)
	return nil
}

// benchDocent indexes the corpus of sets[0] into a fresh data dir and
// measures every mode of benchModes on each set. Peak RSS covers indexing
// and querying, from a process that holds only the loaded data set.
func (m *Main) benchDocent(ctx context.Context, sets []*eval.BEIR) (eval.BenchReport, error) {
	b := sets[0]
	tmp, err := os.MkdirTemp("", "docent-bench-")
	if err != nil {
		return eval.BenchReport{}, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(tmp)
	defer m.Close()
	m.Config.Sources = nil
	debug.FreeOSMemory()
	_ = eval.ResetPeakRSS()
	if err := m.open(ctx, tmp); err != nil {
		return eval.BenchReport{}, err
	}
	start := time.Now()
	if _, err := m.Engine.Sync(ctx, &staticSource{name: eval.BEIRSource, docs: b.Corpus}, newProgressPrinter(m.Stderr)); err != nil {
		return eval.BenchReport{}, fmt.Errorf("bench: index %s: %w", b.Name, err)
	}
	rep := eval.BenchReport{Engine: "docent", Dataset: b.Name, Docs: len(b.Corpus), Index: time.Since(start)}
	for _, set := range sets {
		name := strings.TrimPrefix(set.Split, b.Split+"/")
		for _, mode := range benchModes[name] {
			run, err := benchRun(ctx, set, m.searcher(mode))
			if err != nil {
				return rep, fmt.Errorf("bench: %s %s: %w", name, mode, err)
			}
			run.Mode, run.Queries = mode, name
			rep.Runs = append(rep.Runs, run)
		}
	}
	answers := make([]time.Duration, 0, len(b.Queries))
	for _, q := range b.Queries {
		t0 := time.Now()
		if _, err := m.Pipeline.Answer(ctx, docent.Question{Text: q.Text, Platform: "bench"}); err != nil {
			return rep, fmt.Errorf("bench: answer: %w", err)
		}
		answers = append(answers, time.Since(t0))
	}
	rep.Runs = append(rep.Runs, eval.BenchRun{Mode: "answer", Queries: "test", Latency: eval.Summarize(answers)})
	rep.PeakRSS, _ = eval.PeakRSS()
	return rep, m.Close()
}

// benchRun times one top-10 search per query, then scores the set at
// depth 100.
func benchRun(ctx context.Context, b *eval.BEIR, s eval.Searcher) (eval.BenchRun, error) {
	lat := make([]time.Duration, 0, len(b.Queries))
	for _, q := range b.Queries {
		t0 := time.Now()
		if _, err := s.Search(ctx, q.Text, 10); err != nil {
			return eval.BenchRun{}, err
		}
		lat = append(lat, time.Since(t0))
	}
	rep, err := eval.RunBEIR(ctx, b, s, eval.BEIROptions{K: 100})
	if err != nil {
		return eval.BenchRun{}, err
	}
	return eval.BenchRun{Latency: eval.Summarize(lat), NDCG10: rep.NDCG10, Recall100: rep.Recall100}, nil
}

// runBaseline runs the baseline engine on dir and reads its report.
func (m *Main) runBaseline(ctx context.Context, cmd, dir string) (eval.BenchReport, error) {
	var stdout, stderr bytes.Buffer
	c := exec.CommandContext(ctx, cmd, "--beir", dir, "--json")
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return eval.BenchReport{}, fmt.Errorf("bench: baseline %s: %w\n%s", cmd, err, stderr.Bytes())
	}
	var rep eval.BenchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return eval.BenchReport{}, fmt.Errorf("bench: baseline %s: report: %w", cmd, err)
	}
	return rep, nil
}

func (m *Main) benchSynthetic(ctx context.Context, n, nq int) error {
	tmp, err := os.MkdirTemp("", "docent-bench-")
	if err != nil {
		return err
	}
	const dim = 256
	w := m.Stdout
	debug.FreeOSMemory()
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
	fmt.Fprintf(w, "keyword (BM25), k=10:              %s\n", eval.Summarize(kwLat))
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
