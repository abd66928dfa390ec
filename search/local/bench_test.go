package local

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/synthetic"
	"github.com/docent-hq/docent/search"
)

// The benchmarks share one synthetic index of benchN chunks (default
// 200,000; DOCENT_BENCH_N overrides) with 256-dimensional clustered
// vectors, built on first use only, so `go test` without -bench never
// builds it. Run, for example:
//
//	go test ./search/local -run '^$' -bench . -benchtime 300x -timeout 60m
const benchDim = 256

var bench struct {
	once    sync.Once
	dir     string
	path    string
	chunks  []docent.Chunk
	ix      *Index
	build   time.Duration
	queries [][]float32
	texts   []string
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.ix != nil {
		bench.ix.Close()
	}
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

func benchN() int {
	if v, err := strconv.Atoi(os.Getenv("DOCENT_BENCH_N")); err == nil && v > 0 {
		return v
	}
	return 200000
}

// benchIndex returns the shared benchmark index, building it on first use.
func benchIndex(b *testing.B) *Index {
	b.Helper()
	bench.once.Do(func() {
		ctx := context.Background()
		bench.dir, bench.err = os.MkdirTemp("", "docent-bench-")
		if bench.err != nil {
			return
		}
		bench.path = filepath.Join(bench.dir, "index.db")
		bench.chunks = synthetic.Chunks(benchN(), benchDim, 1)
		bench.queries = synthetic.Queries(bench.chunks, 1000, 2)
		rng := rand.New(rand.NewSource(3))
		for range 1000 {
			// Three words: a random chunk's topic word (the first word of its
			// title) and two vocabulary words of rank 100 to 5,000 (each in
			// about 10% down to 0.3% of chunks; the top ranks play the part
			// of stopwords).
			title := strings.Fields(bench.chunks[rng.Intn(len(bench.chunks))].Title)
			bench.texts = append(bench.texts, fmt.Sprintf("%s %s %s",
				title[0], synthetic.Word(100+rng.Intn(4900)), synthetic.Word(100+rng.Intn(4900))))
		}
		var ix *Index
		ix, bench.err = Open(ctx, bench.path, Options{})
		if bench.err != nil {
			return
		}
		start := time.Now()
		for i := 0; i < len(bench.chunks); i += 1000 {
			if bench.err = ix.Upsert(ctx, bench.chunks[i:min(i+1000, len(bench.chunks))]); bench.err != nil {
				return
			}
		}
		bench.build = time.Since(start)
		bench.ix = ix
	})
	if bench.err != nil {
		b.Fatalf("build benchmark index: %v", bench.err)
	}
	b.Logf("benchmark index: %d chunks, dim %d, built in %s (%.0f chunks/s incl. ANN training)",
		len(bench.chunks), benchDim, bench.build.Round(time.Millisecond), float64(len(bench.chunks))/bench.build.Seconds())
	return bench.ix
}

// peakRSSMB reads the process's peak resident set size (VmHWM) in MiB.
func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// runQueries times b.N searches and reports latency percentiles and peak RSS.
// extra metrics are reported alongside (ReportMetric before b.Loop would
// be reset).
func runQueries(b *testing.B, q func(ctx context.Context, i int) error, extra map[string]float64) {
	b.Helper()
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if err := q(ctx, i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(peakRSSMB(), "peakRSS-MB")
	for k, v := range extra {
		b.ReportMetric(v, k)
	}
}

// recall10 measures recall@10 of the index's vector retriever against an
// exact scan over the same filter.
func recall10(ix *Index, f docent.Filter, n int) float64 {
	vs := ix.vectors
	var hit, total int
	for _, q := range bench.queries[:n] {
		cf := vs.compile(f)
		exact := vs.exact(q, 10, &cf)
		got := vs.search(q, 100, f)[:min(10, len(exact))]
		for _, g := range got {
			if slices.ContainsFunc(exact, func(e scored) bool { return e.slot == g.slot }) {
				hit++
			}
		}
		total += len(exact)
	}
	return float64(hit) / float64(total)
}

var benchFilters = []struct {
	name string
	f    docent.Filter
}{
	{"nofilter", docent.Filter{}},
	{"source25pct", docent.Filter{Sources: []string{"wiki"}}},
	{"sources50pct", docent.Filter{Sources: []string{"wiki", "notion"}}},
	{"label3pct", docent.Filter{Labels: []string{"label07"}}},
}

// BenchmarkSearchANN: vector-mode queries (K=10, 100 candidates) through the
// approximate index, with recall@10 against the exact scan.
func BenchmarkSearchANN(b *testing.B) {
	ix := benchIndex(b)
	if ix.vectors.ivf == nil {
		b.Fatalf("approximate index not built at %d chunks", ix.vectors.len())
	}
	for _, nprobe := range []int{8, 16, 24, 32} {
		for _, bf := range benchFilters {
			b.Run(fmt.Sprintf("nprobe%d/%s", nprobe, bf.name), func(b *testing.B) {
				ix.vectors.nprobe = nprobe
				defer func() { ix.vectors.nprobe = ix.opts.NProbe }()
				recall := recall10(ix, bf.f, 200)
				runQueries(b, vectorQuery(ix, bf.f), map[string]float64{"recall@10": recall})
			})
		}
	}
}

// BenchmarkSearchExact: the same queries with the approximate index
// switched off (exact scan of every vector).
func BenchmarkSearchExact(b *testing.B) {
	ix := benchIndex(b)
	saved := ix.vectors.ivf
	ix.vectors.ivf = nil
	defer func() { ix.vectors.ivf = saved }()
	for _, bf := range benchFilters {
		b.Run(bf.name, func(b *testing.B) {
			runQueries(b, vectorQuery(ix, bf.f), nil)
		})
	}
}

// BenchmarkSearchKeyword: FTS5 BM25 queries of three words at the
// benchmark corpus size.
func BenchmarkSearchKeyword(b *testing.B) {
	ix := benchIndex(b)
	for _, bf := range benchFilters {
		b.Run(bf.name, func(b *testing.B) {
			runQueries(b, func(ctx context.Context, i int) error {
				_, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: bench.texts[i%len(bench.texts)], Filter: bf.f, K: 10})
				return err
			}, nil)
		})
	}
}

// BenchmarkSearchHybrid: both retrievers fused by search.Retriever with
// the default options (plain hybrid, and the default pipeline with
// feedback from stored vectors).
func BenchmarkSearchHybrid(b *testing.B) {
	ix := benchIndex(b)
	r, err := search.NewRetriever(ix, nil, search.RetrieverOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []search.Mode{search.ModeHybrid, search.ModeDefault} {
		for _, bf := range benchFilters[:2] {
			b.Run(string(mode)+"/"+bf.name, func(b *testing.B) {
				runQueries(b, func(ctx context.Context, i int) error {
					j := i % len(bench.queries)
					_, err := r.Retrieve(ctx, search.Request{Text: bench.texts[j], Vector: bench.queries[j], Filter: bf.f, K: 10, Mode: mode})
					return err
				}, nil)
			})
		}
	}
}

// vectorQuery returns a benchmark query function for VectorSearch.
func vectorQuery(ix *Index, f docent.Filter) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		_, err := ix.VectorSearch(ctx, search.VectorQuery{Vector: bench.queries[i%len(bench.queries)], Filter: f, K: 10})
		return err
	}
}

// BenchmarkOpen: reopening the benchmark index (loading every vector and
// training the approximate index). index-heap-MB is the Go heap an opened
// index holds (vectors, metadata, inverted lists); peakRSS-MB covers the
// whole benchmark process, including the generated corpus.
func BenchmarkOpen(b *testing.B) {
	benchIndex(b)
	ctx := context.Background()
	var heap float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ix, err := Open(ctx, bench.path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if ix.vectors.len() != len(bench.chunks) {
			b.Fatalf("reopened with %d vectors, want %d", ix.vectors.len(), len(bench.chunks))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
		ix.Close()
	}
	b.ReportMetric(heap, "index-heap-MB")
	b.ReportMetric(peakRSSMB(), "peakRSS-MB")
}

// BenchmarkUpsert: upserting documents of five chunks (dim 256) into a new
// file index, one document per call and in batches of 100 documents.
func BenchmarkUpsert(b *testing.B) {
	chunks := synthetic.Chunks(50000, benchDim, 9)
	for _, docsPerCall := range []int{1, 100} {
		b.Run(fmt.Sprintf("docs%d", docsPerCall), func(b *testing.B) {
			ctx := context.Background()
			ix, err := Open(ctx, filepath.Join(b.TempDir(), "upsert.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			per := docsPerCall * synthetic.ChunksPerDoc
			n := 0
			for i := 0; b.Loop(); i++ {
				off := (i * per) % len(chunks)
				batch := chunks[off:min(off+per, len(chunks))]
				if err := ix.Upsert(ctx, batch); err != nil {
					b.Fatal(err)
				}
				n += len(batch)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// BenchmarkRefresh: a reader of the benchmark index (`docent mcp` beside
// `docent serve`) reloading it after the writer's one-document upsert:
// what following a sync costs per reload.
func BenchmarkRefresh(b *testing.B) {
	ix := benchIndex(b)
	ctx := context.Background()
	reader, err := Open(ctx, bench.path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer reader.Close()
	doc := bench.chunks[0]
	for b.Loop() {
		b.StopTimer()
		doc.Text += " more"
		doc.ID += "x"
		if err := ix.Upsert(ctx, []docent.Chunk{doc}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		changed, err := reader.Refresh(ctx)
		if err != nil || !changed {
			b.Fatalf("Refresh = %v, %v", changed, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/reload")
}

// BenchmarkChunks: loading the stored rows of 50 chunks at random, what
// the Retriever's last stage reads per query (SectionDepth).
func BenchmarkChunks(b *testing.B) {
	ix := benchIndex(b)
	rng := rand.New(rand.NewSource(1))
	sets := make([][]string, 64)
	for i := range sets {
		for range search.DefaultSectionDepth {
			sets[i] = append(sets[i], bench.chunks[rng.Intn(len(bench.chunks))].ID)
		}
	}
	runQueries(b, func(ctx context.Context, i int) error {
		got, err := ix.Chunks(ctx, sets[i%len(sets)])
		if err == nil && len(got) == 0 {
			err = fmt.Errorf("no chunks loaded")
		}
		return err
	}, nil)
}
