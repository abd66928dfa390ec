package confluence_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/confluence"
	"github.com/docent-hq/docent/connectors/confluence/confluencetest"
	"github.com/docent-hq/docent/connectors/connectorstest"
)

// TestRequestCounts syncs a 1,000-page space (10 labels spread over the
// pages) fully, then incrementally after 5 edits, and counts the
// requests the fake served. The counts are the README's; the bounds keep
// them from creeping up.
//
//	go test ./connectors/confluence -run RequestCounts -v
func TestRequestCounts(t *testing.T) {
	for _, c := range []struct {
		flavor            confluencetest.Flavor
		maxFull, maxIncre int
	}{
		// Cloud: spaces 1, cheap listing 4 (250 a page), bodies 20 (50 a
		// page), labels 1 + 10 (space labels, then each label's pages);
		// then spaces 1, cheap listing 4, bodies 1 (newest first), labels
		// a page each.
		{confluencetest.Cloud, 40, 15},
		// Data Center: spaces 1, cheap listing 4, bodies 20; then spaces
		// 1, cheap listing 4, a page each.
		{confluencetest.DataCenter, 30, 15},
	} {
		t.Run(string(c.flavor), func(t *testing.T) {
			e := newEnv(t, c.flavor, nil)
			var ids []string
			for i := range 1000 {
				e.srv.Tick(time.Hour)
				ids = append(ids, e.srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: fmt.Sprintf("Page %04d", i),
					Labels: []string{fmt.Sprintf("team-%d", i%10)}, Body: fmt.Sprintf("<p>Page %d.</p>", i)}))
			}
			e.srv.ResetCounts()
			res := e.Sync()
			full, fullRoutes := e.srv.Requests()
			if res.Added != 1000 || res.Requests != full {
				t.Fatalf("full sync %+v; server saw %d requests", res, full)
			}
			e.srv.Tick(time.Hour)
			for _, i := range []int{3, 200, 450, 700, 999} {
				e.srv.Edit(ids[i], func(p *confluencetest.Page) { p.Body += "<p>Edited.</p>" })
			}
			e.srv.ResetCounts()
			res = e.Sync()
			incr, incrRoutes := e.srv.Requests()
			if res.Updated != 5 || res.Seen != 1000 || res.Requests != incr {
				t.Fatalf("incremental sync %+v; server saw %d requests", res, incr)
			}
			t.Logf("%s, 1,000 pages: full sync %d requests %v; incremental (5 edits) %d requests %v",
				c.flavor, full, fullRoutes, incr, incrRoutes)
			if full > c.maxFull || incr > c.maxIncre {
				t.Errorf("full %d (max %d), incremental %d (max %d) requests", full, c.maxFull, incr, c.maxIncre)
			}
		})
	}
}

// headChunker makes one small chunk per document, so that a memory
// measurement is the source's and the engine's, not the index's. It calls
// sample with each document, while the source holds the page it came
// from.
type headChunker struct{ sample func() }

func (c headChunker) Chunk(doc docent.Document) ([]docent.Chunk, error) {
	c.sample()
	text := doc.Title + "\n" + doc.Body[:min(len(doc.Body), 200)]
	sum := sha256.Sum256([]byte(doc.ID + "\x00" + text))
	return []docent.Chunk{{ID: hex.EncodeToString(sum[:8]), DocID: doc.ID, Source: doc.Source,
		Title: doc.Title, URL: doc.URL, UpdatedAt: doc.UpdatedAt, Text: text}}, nil
}

// spacePeak syncs a Cloud space of n pages of size bytes through the real
// engine and returns the peak live heap above the heap before the sync,
// sampled as documents reach the embedder. The fake server makes each
// body as it answers, so the process never holds the space.
func spacePeak(tb testing.TB, n, size int) uint64 {
	tb.Helper()
	srv := confluencetest.New(tb, confluencetest.Cloud, "ENG")
	for i := range n {
		srv.Put(confluencetest.Page{SpaceKey: "ENG", Title: fmt.Sprintf("Page %05d", i), Size: size})
	}
	src := newSource(tb, "wiki", srv, func(o *confluence.Options) { o.MaxBytes = 1 << 20 })
	reg, idx := connectorstest.OpenStores(tb)
	emb := connectorstest.NewEmbedder("v1")
	var peak uint64
	calls := 0
	sample := func() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	// About 30 samples a run, wherever the listing is.
	every := func() {
		if calls++; calls%max(1, n/30) == 0 {
			sample()
		}
	}
	emb.OnEmbed(every)
	eng := connectors.NewEngine(reg, idx, emb, headChunker{sample: every}, nil, connectors.EngineOptions{MaxDocBytes: 1 << 20})
	sample()
	base := peak
	peak = 0
	res, err := eng.Sync(context.Background(), src, nil)
	if err != nil || res.Added != n {
		tb.Fatalf("sync: %+v, %v", res, err)
	}
	if peak < base {
		return 0
	}
	return peak - base
}

// TestSyncMemoryDoesNotGrowWithSpace syncs a space and one four times
// larger: the peak live heap grows by far less than the bodies listed,
// since pages reach the engine as they are listed (the source keeps a
// title and a parent per page, for breadcrumbs and roots).
func TestSyncMemoryDoesNotGrowWithSpace(t *testing.T) {
	if testing.Short() {
		t.Skip("lists 5 MB of pages")
	}
	// Sized for -race: the heap grows by well under 1 KiB a page (the
	// engine's ID and hash, the source's tree node, the fake's record),
	// against 16 KiB a page were the bodies held.
	const small, large, size = 60, 240, 16 << 10
	s, l := spacePeak(t, small, size), spacePeak(t, large, size)
	bodies := uint64(large-small) * size
	t.Logf("peak live heap above baseline: %d pages %.1f MiB, %d pages %.1f MiB (%.1f MiB more bodies listed)",
		small, float64(s)/(1<<20), large, float64(l)/(1<<20), float64(bodies)/(1<<20))
	if l > s && l-s > bodies/4 {
		t.Errorf("peak heap grew by %.1f MiB for %.0f MiB more pages: the sync holds pages",
			float64(l-s)/(1<<20), float64(bodies)/(1<<20))
	}
}

// BenchmarkSpaceMemory reports the peak live heap of syncing a Cloud
// space of 64 KiB pages through the fake server and the real engine; run
// the 20,000-page case under /usr/bin/time for the process's peak RSS:
//
//	go test -c -o /tmp/confluence.test ./connectors/confluence && cd connectors/confluence &&
//	/usr/bin/time -f 'max RSS %M KB' /tmp/confluence.test -test.run '^$' \
//	  -test.bench 'SpaceMemory/pages=20000' -test.benchtime 1x
func BenchmarkSpaceMemory(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				peak = spacePeak(b, n, 64<<10)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(uint64(n)*64<<10)/(1<<20), "bodies-MiB")
		})
	}
}
