package typesense_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

// The benchmarks measure what the backend costs on the wire and how
// query latency through the in-repo test server compares with the local
// backend on the same corpus. The test server is not Typesense (an exact
// scan under one lock, over loopback HTTP): its latency shows the client
// and protocol overhead, not a real cluster's speed.
//
//	go test ./search/typesense -run '^$' -bench . -benchtime 1x

const benchChunks = 10000

// benchCorpus is 10,000 synthetic chunks (4 per document) of dim dimensions.
func benchCorpus(dim int) []docent.Chunk {
	chunks := local.GenerateSynthetic(benchChunks, dim, 7)
	for i := range chunks {
		chunks[i].DocID = fmt.Sprintf("bench:doc%05d", i/4)
		chunks[i].Ord = i % 4
	}
	return chunks
}

// BenchmarkUpsert10k upserts 10,000 chunks in one call and reports the
// requests and bytes it took.
func BenchmarkUpsert10k(b *testing.B) {
	for _, dim := range []int{256, 768} {
		b.Run(fmt.Sprintf("dim%d", dim), func(b *testing.B) {
			chunks := benchCorpus(dim)
			c := MustCluster(b, 3)
			var s struct{ req, in, out float64 }
			var elapsed time.Duration
			for i := range b.N {
				ix := MustOpen(b, c, fmt.Sprintf("bench%d", i))
				c.ResetStats()
				start := time.Now()
				if err := ix.Upsert(context.Background(), chunks); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				st := c.Stats()
				s.req += float64(st.Requests)
				s.in += float64(st.BytesIn)
				s.out += float64(st.BytesOut)
				if i == 0 {
					b.Logf("dim %d: %d requests %v, %.1f MB sent, %.1f kB received, %v",
						dim, st.Requests, st.ByOp, float64(st.BytesIn)/1e6, float64(st.BytesOut)/1e3, time.Since(start).Round(time.Millisecond))
				}
			}
			n := float64(b.N)
			b.ReportMetric(s.req/n, "requests/op")
			b.ReportMetric(s.in/n/1e6, "MB-sent/op")
			b.ReportMetric(s.out/n/1e3, "kB-received/op")
			b.ReportMetric(float64(benchChunks)/elapsed.Seconds()*n, "chunks/s")
		})
	}
}

// BenchmarkQueryLatency runs the same 200 queries (keyword, vector and the
// default hybrid pipeline, k=10) against the local backend and against
// the Typesense backend through the test server, over one corpus, and
// reports p50 and p95 latency of each.
func BenchmarkQueryLatency(b *testing.B) {
	const dim, nq = 256, 200
	chunks := benchCorpus(dim)
	queries := local.SyntheticQueries(chunks, nq, 11)
	// Three words of a chunk, as a short question names a few terms.
	texts := make([]string, nq)
	for i := range nq {
		words := strings.Fields(chunks[(i*37)%len(chunks)].Text)
		texts[i] = strings.Join(words[4:7], " ")
	}
	ctx := context.Background()
	loc, err := local.Open(ctx, filepath.Join(b.TempDir(), "index.db"), local.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer loc.Close()
	c := MustCluster(b, 3)
	ts := MustOpen(b, c, "bench")
	for _, ix := range []search.Index{loc, ts} {
		if err := ix.Upsert(ctx, chunks); err != nil {
			b.Fatal(err)
		}
	}
	backends := []struct {
		name string
		ix   search.Index
	}{{"local", loc}, {"typesense", ts}}
	for _, mode := range []search.Mode{search.ModeKeyword, search.ModeVector, search.ModeDefault} {
		for _, be := range backends {
			b.Run(string(mode)+"/"+be.name, func(b *testing.B) {
				r, err := search.NewRetriever(be.ix, nil, search.RetrieverOptions{})
				if err != nil {
					b.Fatal(err)
				}
				var lat []time.Duration
				for range b.N {
					for i := range nq {
						start := time.Now()
						if _, err := r.Retrieve(ctx, search.Request{Text: texts[i], Vector: queries[i], K: 10, Mode: mode}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(start))
					}
				}
				slices.Sort(lat)
				p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
				b.ReportMetric(p(0.5), "p50-ms")
				b.ReportMetric(p(0.95), "p95-ms")
			})
		}
	}
}
