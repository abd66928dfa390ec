package connectors_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
)

// heapPeak records the largest live heap seen at its samples.
type heapPeak struct {
	every int // sample at every every-th call of maybe
	calls int
	peak  uint64
}

// sample collects garbage and records the live heap.
func (h *heapPeak) sample() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapAlloc)
}

// maybe samples at every every-th call.
func (h *heapPeak) maybe() {
	if h.calls++; h.calls%h.every == 0 {
		h.sample()
	}
}

// bigSource is a complete listing of n generated documents of size bytes,
// each body made as it is handed over: the source itself never holds more
// than one. rev changes every body. It samples the heap as it lists.
type bigSource struct {
	n, size, rev int
	heap         *heapPeak
}

func (s *bigSource) Name() string { return "big" }

func (s *bigSource) List(ctx context.Context, _ string, l connectors.Listing) (connectors.Listed, error) {
	for i := range s.n {
		para := fmt.Sprintf("Page %d revision %d explains the policy in full detail. ", i, s.rev)
		body := "# Page " + strconv.Itoa(i) + "\n\n" + strings.Repeat(para, s.size/len(para)+1)[:s.size]
		d := connectorstest.Doc("big", fmt.Sprintf("p%05d.md", i), body)
		if err := l.Document(ctx, d); err != nil {
			return connectors.Listed{}, err
		}
		s.heap.maybe()
	}
	return connectors.Listed{Cursor: strconv.Itoa(s.rev), Complete: true}, nil
}

// headChunker makes one chunk of a document's title and first bytes: the
// engine still receives every large body, while the index and the
// embedder get little work, so the measurement is the engine's.
type headChunker struct{ bytes int }

func (c headChunker) Chunk(doc docent.Document) ([]docent.Chunk, error) {
	text := doc.Title + "\n" + doc.Body[:min(len(doc.Body), c.bytes)]
	sum := sha256.Sum256([]byte(doc.ID + "\x00" + text))
	return []docent.Chunk{{ID: hex.EncodeToString(sum[:8]), DocID: doc.ID, Source: doc.Source,
		Title: doc.Title, URL: doc.URL, UpdatedAt: doc.UpdatedAt, Text: text}}, nil
}

// syncPeak syncs n documents of size bytes into a fresh index twice (all
// added, then all updated) and returns the largest live heap seen while
// the source listed and the embedder ran, above the live heap before the
// first sync.
func syncPeak(tb testing.TB, trainable bool, n, size int) uint64 {
	tb.Helper()
	heap := &heapPeak{every: max(1, n/8)}
	fake := connectorstest.NewEmbedder("v1")
	var emb search.Embedder = fake
	if trainable {
		tr := &connectorstest.Trainable{}
		tr.OnEmbed(heap.maybe)
		emb = tr
	} else {
		fake.OnEmbed(heap.maybe)
	}
	e := newEnv(tb, emb)
	eng := connectors.NewEngine(e.db, e.idx, emb, headChunker{bytes: 200}, nil,
		connectors.EngineOptions{MaxDocBytes: size + 1024, StageDir: tb.TempDir()})
	heap.sample()
	base := heap.peak
	heap.peak = 0
	for rev, want := range []counts{{added: n}, {updated: n}} {
		res, err := eng.Sync(context.Background(), &bigSource{n: n, size: size, rev: rev, heap: heap}, nil)
		if err != nil {
			tb.Fatal(err)
		}
		if got := countsOf(res); got != want || res.Seen != n {
			tb.Fatalf("run %d: counts %+v, seen %d; want %+v, seen %d", rev+1, got, res.Seen, want, n)
		}
	}
	if heap.peak < base {
		return 0
	}
	return heap.peak - base
}

// TestSyncMemoryDoesNotGrowWithDocuments syncs a small and a four times
// larger source of large documents and checks that the engine's peak live
// heap grows by far less than the bodies listed: it holds IDs and hashes
// per document, never the listing's bodies. A Trainable embedder stages
// changed documents on disk until it is fitted, so it holds no more.
func TestSyncMemoryDoesNotGrowWithDocuments(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 40 MB of documents")
	}
	const size, small, large = 256 << 10, 8, 32
	bodies := uint64((large - small) * size)
	for _, trainable := range []bool{false, true} {
		t.Run(fmt.Sprintf("trainable=%v", trainable), func(t *testing.T) {
			s := syncPeak(t, trainable, small, size)
			l := syncPeak(t, trainable, large, size)
			t.Logf("peak live heap above baseline: %d documents %.1f MiB, %d documents %.1f MiB (%.0f MiB more bodies listed)",
				small, mib(s), large, mib(l), mib(bodies))
			if l > s && l-s > bodies/4 {
				t.Errorf("peak heap grew by %.1f MiB for %.0f MiB more of listed bodies: the engine holds documents",
					mib(l-s), mib(bodies))
			}
		})
	}
}

// BenchmarkSyncMemory reports the engine's peak live heap (above the
// heap before the sync) syncing sources of 64 KiB pages, twice (all added,
// then all updated):
//
//	go test ./connectors -run '^$' -bench SyncMemory -benchtime 1x
func BenchmarkSyncMemory(b *testing.B) {
	for _, n := range []int{1000, 5000, 20000} {
		for _, trainable := range []bool{false, true} {
			b.Run(fmt.Sprintf("pages=%d/trainable=%v", n, trainable), func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					peak = syncPeak(b, trainable, n, 64<<10)
				}
				b.ReportMetric(mib(peak), "peak-heap-MiB")
				b.ReportMetric(mib(uint64(n)*64<<10), "bodies-MiB")
			})
		}
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
