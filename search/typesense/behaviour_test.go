package typesense_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/backoff/backofftest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
	"github.com/docent-hq/docent/search/typesense"
	"github.com/docent-hq/docent/search/typesense/typesensetest"
)

var day = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

// corpus returns n one-chunk documents "doc0000".."docN", each with a
// word of its own ("wordI") and the shared word "handbook".
func corpus(n int) []docent.Chunk {
	out := make([]docent.Chunk, n)
	for i := range n {
		out[i] = docent.Chunk{
			ID: fmt.Sprintf("doc%04d#0", i), DocID: fmt.Sprintf("doc%04d", i), Source: "wiki", Space: "eng",
			Labels: []string{"l" + fmt.Sprint(i%3)}, UpdatedAt: day, Title: fmt.Sprintf("Page %d", i),
			URL: fmt.Sprintf("https://wiki/%d", i), Text: fmt.Sprintf("handbook page word%d", i),
			Vector: searchtest.Vec(i, i+1, float64(i%5)/10),
		}
	}
	return out
}

func mustUpsert(t *testing.T, ix search.Index, chunks []docent.Chunk) {
	t.Helper()
	if err := ix.Upsert(context.Background(), chunks); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
}

// TestZeroDowntimeReindex runs queries in a loop while a full reindex
// builds a new collection and moves the alias: no query fails or comes
// back empty, and afterwards only the new collection exists.
func TestZeroDowntimeReindex(t *testing.T) {
	c := MustCluster(t, 3)
	ix := MustOpen(t, c, "docs")
	chunks := corpus(300)
	mustUpsert(t, ix, chunks)
	if err := ix.SetEmbedderName(context.Background(), "emb-v1"); err != nil {
		t.Fatal(err)
	}
	before := c.Collections()
	// A second process's view of the same alias: it learns of the move
	// only through the cluster.
	reader := MustOpen(t, c, "docs")
	r, err := search.NewRetriever(reader, nil, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var queries, failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				n := (i*7 + w) % len(chunks)
				res, err := r.Retrieve(context.Background(), search.Request{
					Text: fmt.Sprintf("word%d handbook", n), Vector: chunks[n].Vector, K: 5, Mode: search.ModeDefault})
				queries.Add(1)
				if err == nil && len(res.Hits) == 0 {
					err = fmt.Errorf("query %d came back empty", n)
				}
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	// waitQueries blocks until n more queries have finished.
	waitQueries := func(n int64) {
		for target := queries.Load() + n; queries.Load() < target && failures.Load() == 0; {
			time.Sleep(time.Millisecond)
		}
	}
	waitQueries(10)
	err = ix.Reindex(context.Background(), searchtest.Dim, "emb-v2", func(write func([]docent.Chunk) error) error {
		for start := 0; start < len(chunks); start += 50 {
			part := slices.Clone(chunks[start : start+50])
			for i := range part {
				part[i].Text += " rebuilt"
			}
			if err := write(part); err != nil {
				return err
			}
			waitQueries(3) // queries run against the old collection while the new one fills
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Reindex: %v", err)
	}
	waitQueries(10) // and against the new one after the move
	cancel()
	wg.Wait()
	if queries.Load() < 38 {
		t.Fatalf("only %d queries ran during the reindex; the test proves little", queries.Load())
	}
	if f := failures.Load(); f > 0 {
		t.Fatalf("%d of %d queries failed or came back empty during the reindex; first: %v", f, queries.Load(), firstErr.Load())
	}
	after := c.Collections()
	if slices.Equal(before, after) || len(after) != 2 { // the new version and the meta collection
		t.Errorf("collections before %v, after %v: want the old version replaced", before, after)
	}
	hits, err := reader.KeywordSearch(context.Background(), search.KeywordQuery{Text: "rebuilt word7", K: 3})
	if err != nil || len(hits) == 0 || hits[0].Chunk.ID != "doc0007#0" {
		t.Errorf("after reindex: hits %v, %v; want the rebuilt doc0007#0", hits, err)
	}
	if name, err := reader.EmbedderName(context.Background()); err != nil || name != "emb-v2" {
		t.Errorf("EmbedderName = %q, %v; want emb-v2", name, err)
	}
	if v := c.Violations(); len(v) > 0 {
		t.Errorf("refused requests: %v", v)
	}
}

// TestReindexFailureKeepsAlias: a reindex whose fill fails leaves the
// alias on the old collection and drops the unfinished one.
func TestReindexFailureKeepsAlias(t *testing.T) {
	c := MustCluster(t, 1)
	ix := MustOpen(t, c, "docs")
	mustUpsert(t, ix, corpus(10))
	before := c.Collections()
	boom := errors.New("source went away")
	err := ix.Reindex(context.Background(), searchtest.Dim, "emb", func(write func([]docent.Chunk) error) error {
		if err := write(corpus(5)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Reindex error = %v, want %v", err, boom)
	}
	if after := c.Collections(); !slices.Equal(before, after) {
		t.Errorf("collections %v after a failed reindex, want %v", after, before)
	}
	if n, err := ix.Count(context.Background()); err != nil || n != 10 {
		t.Errorf("Count = %d, %v; want the 10 old chunks", n, err)
	}
}

// TestImportFailure: one chunk the server refuses in a batch of 500 is
// reported by its document and chunk ID; the other 499 land and are
// searchable; the refused document keeps its old chunks (so a caller that
// did not record it retries it) and lands once the server takes it.
func TestImportFailure(t *testing.T) {
	c := MustCluster(t, 1)
	ix := MustOpen(t, c, "docs", func(o *typesense.Options) { o.BatchSize = 200 })
	ctx := context.Background()
	chunks := corpus(500)
	bad := chunks[321]
	old := bad
	old.ID, old.Text = "doc0321#old", "previous version oldword"
	mustUpsert(t, ix, []docent.Chunk{old})

	c.RejectDocuments(func(doc map[string]any) string {
		if doc["chunk_id"] == bad.ID {
			return "simulated: document refused"
		}
		return ""
	})
	err := ix.Upsert(ctx, chunks)
	var pe *search.PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("Upsert error = %v, want *search.PartialError", err)
	}
	if len(pe.Failed) != 1 || pe.Failed[bad.DocID] == nil || !strings.Contains(pe.Failed[bad.DocID].Error(), bad.ID) {
		t.Fatalf("Failed = %v, want only %s naming chunk %s", pe.Failed, bad.DocID, bad.ID)
	}
	if n, _ := ix.Count(ctx); n != 500 { // 499 new + the refused document's old chunk
		t.Errorf("Count = %d, want 500", n)
	}
	for _, i := range []int{0, 320, 322, 499} {
		hits, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: fmt.Sprintf("word%d", i), K: 2})
		if err != nil || len(hits) != 1 || hits[0].Chunk.ID != chunks[i].ID {
			t.Errorf("word%d: %v, %v; want %s", i, hits, err, chunks[i].ID)
		}
	}
	ids, _ := ix.ChunkIDs(ctx, "wiki")
	if got := ids[bad.DocID]; !slices.Equal(got, []string{old.ID}) {
		t.Errorf("refused document holds %v, want its old chunk %s", got, old.ID)
	}

	c.RejectDocuments(nil)
	if err := ix.Upsert(ctx, []docent.Chunk{bad}); err != nil {
		t.Fatalf("retry: %v", err)
	}
	ids, _ = ix.ChunkIDs(ctx, "wiki")
	if got := ids[bad.DocID]; !slices.Equal(got, []string{bad.ID}) {
		t.Errorf("after the retry the document holds %v, want %s", got, bad.ID)
	}
}

// TestNodeFailure: with one node answering 503 and another hanging up
// after reading each request, upserts (POST bodies), deletes and searches
// still succeed through the third, and every node was tried.
func TestNodeFailure(t *testing.T) {
	c := MustCluster(t, 3)
	ix := MustOpen(t, c, "docs")
	ctx := context.Background()
	mustUpsert(t, ix, corpus(20))

	c.SetFault(0, typesensetest.Unavailable)
	c.SetFault(1, typesensetest.Hangup)
	chunks := corpus(60)
	for round := range 3 {
		for i := range chunks {
			chunks[i].Text = fmt.Sprintf("handbook round%d word%d", round, i)
		}
		mustUpsert(t, ix, chunks)
		hits, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: fmt.Sprintf("round%d word42", round), K: 3})
		if err != nil || len(hits) == 0 || hits[0].Chunk.ID != chunks[42].ID {
			t.Fatalf("round %d keyword: %v, %v", round, hits, err)
		}
		vs, err := ix.VectorSearch(ctx, search.VectorQuery{Vector: chunks[7].Vector, K: 3})
		if err != nil || len(vs) == 0 || vs[0].Chunk.ID != chunks[7].ID {
			t.Fatalf("round %d vector: %v, %v", round, vs, err)
		}
	}
	if err := ix.DeleteDocs(ctx, chunks[0].DocID); err != nil {
		t.Fatalf("DeleteDocs: %v", err)
	}
	if n, err := ix.Count(ctx); err != nil || n != 59 {
		t.Errorf("Count = %d, %v; want 59", n, err)
	}
	for i := range 3 {
		if c.Served(i) == 0 {
			t.Errorf("node %d never tried", i)
		}
	}
	if err := ix.Health(ctx); err != nil {
		t.Errorf("Health with one node up: %v", err)
	}
	if v := c.Violations(); len(v) > 0 {
		t.Errorf("refused requests (an empty body would be one): %v", v)
	}
	// Every node down: the error says so, without the key.
	c.SetFault(2, typesensetest.Unavailable)
	_, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: "handbook", K: 3})
	if err == nil {
		t.Fatal("search with every node down succeeded")
	}
	if strings.Contains(err.Error(), c.APIKey()) {
		t.Errorf("error leaks the API key: %v", err)
	}
}

// TestHealth: not ready without a leader or without the alias; ready
// otherwise. Neither the error nor the logs carry the API key.
func TestHealth(t *testing.T) {
	c := MustCluster(t, 2)
	ctx := context.Background()
	var logs bytes.Buffer
	ix := MustOpen(t, c, "docs", func(o *typesense.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	err := ix.Health(ctx)
	if err == nil || !strings.Contains(err.Error(), "alias docs is missing") {
		t.Errorf("Health without the alias = %v, want missing alias", err)
	}
	mustUpsert(t, ix, corpus(3))
	if err := ix.Health(ctx); err != nil {
		t.Errorf("Health = %v, want nil", err)
	}
	c.SetLeader(false)
	if err := ix.Health(ctx); err == nil || !strings.Contains(err.Error(), "leader") {
		t.Errorf("Health without a leader = %v", err)
	} else if strings.Contains(err.Error(), c.APIKey()) {
		t.Errorf("error leaks the API key: %v", err)
	}
	c.SetLeader(true)
	if err := ix.Health(ctx); err != nil {
		t.Errorf("Health with the leader back = %v", err)
	}
	if !strings.Contains(logs.String(), "node failed") {
		t.Errorf("expected the retries to be logged; logs:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), c.APIKey()) {
		t.Errorf("logs leak the API key:\n%s", logs.String())
	}
}

// TestOpenWithDim creates the collection and alias up front, so a fresh
// cluster is ready before the first sync.
func TestOpenWithDim(t *testing.T) {
	c := MustCluster(t, 1)
	ix := MustOpen(t, c, "docs", func(o *typesense.Options) { o.Dim = 16 })
	if err := ix.Health(context.Background()); err != nil {
		t.Fatalf("Health = %v", err)
	}
	if got := c.Collections(); !slices.Equal(got, []string{"docs_v1"}) {
		t.Errorf("collections = %v, want [docs_v1]", got)
	}
	// The first upsert with another length replaces the empty collection.
	mustUpsert(t, ix, corpus(2))
	if got := c.Collections(); !slices.Equal(got, []string{"docs_v2"}) {
		t.Errorf("collections = %v, want [docs_v2]", got)
	}
}

// TestSearchBothOneRoundTrip: the Retriever's hybrid first pass is one
// multi_search, and equals the two separate calls.
func TestSearchBothOneRoundTrip(t *testing.T) {
	c := MustCluster(t, 1)
	ix := MustOpen(t, c, "docs")
	ctx := context.Background()
	chunks := corpus(40)
	mustUpsert(t, ix, chunks)
	kq := search.KeywordQuery{Text: "handbook word3", Filter: docent.Filter{Labels: []string{"l0"}}, K: 10}
	vq := search.VectorQuery{Vector: chunks[3].Vector, Filter: kq.Filter, K: 10}
	c.ResetStats()
	kw, vs, err := ix.SearchBoth(ctx, kq, vq)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Requests != 1 || s.ByOp["POST /multi_search"] != 1 {
		t.Errorf("SearchBoth made %d requests (%v), want one multi_search", s.Requests, s.ByOp)
	}
	kw2, _ := ix.KeywordSearch(ctx, kq)
	vs2, _ := ix.VectorSearch(ctx, vq)
	if !slices.EqualFunc(kw, kw2, sameHit) || !slices.EqualFunc(vs, vs2, sameHit) {
		t.Errorf("SearchBoth = %v / %v, separate calls %v / %v", kw, vs, kw2, vs2)
	}
	if len(kw) == 0 || kw[0].Chunk.ID != chunks[3].ID || len(vs) == 0 || vs[0].Chunk.ID != chunks[3].ID ||
		math.Abs(vs[0].VectorScore-1) > 1e-4 {
		t.Errorf("SearchBoth = %v / %v, want doc0003 first in both", kw, vs)
	}
}

func sameHit(a, b docent.Hit) bool {
	return a.Chunk.ID == b.Chunk.ID && a.KeywordRank == b.KeywordRank && a.VectorRank == b.VectorRank &&
		a.KeywordScore == b.KeywordScore && a.VectorScore == b.VectorScore
}

// TestNearestNode: with a nearest node configured, every request goes to
// it while it is healthy; when it fails, upserts (POST bodies) and
// searches go to the other nodes.
func TestNearestNode(t *testing.T) {
	c := MustCluster(t, 3)
	urls := c.URLs()
	ix := MustOpen(t, c, "docs", func(o *typesense.Options) { o.Nodes, o.NearestNode = urls[:2], urls[2] })
	ctx := context.Background()
	chunks := corpus(30)
	mustUpsert(t, ix, chunks)
	if hits, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: "word12", K: 1}); err != nil || len(hits) != 1 || hits[0].Chunk.ID != chunks[12].ID {
		t.Fatalf("keyword through the nearest node: %v, %v", hits, err)
	}
	if c.Served(0) != 0 || c.Served(1) != 0 || c.Served(2) == 0 {
		t.Errorf("served %d, %d, %d; want every request on the nearest node (2)", c.Served(0), c.Served(1), c.Served(2))
	}

	c.SetFault(2, typesensetest.Unavailable)
	for i := range chunks {
		chunks[i].Text += " moved"
	}
	mustUpsert(t, ix, chunks)
	hits, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: "moved word12", K: 1})
	if err != nil || len(hits) != 1 || hits[0].Chunk.ID != chunks[12].ID {
		t.Fatalf("keyword with the nearest node down: %v, %v", hits, err)
	}
	if c.Served(0)+c.Served(1) == 0 {
		t.Error("the other nodes never served a request while the nearest node was down")
	}
	if v := c.Violations(); len(v) > 0 {
		t.Errorf("refused requests (an empty body would be one): %v", v)
	}
}

// TestRateLimitedNodeRetryAfter: a node that answers 429 with Retry-After
// is asked again after exactly that wait, on the index's clock, and is not
// marked down (the next request goes to it again).
func TestRateLimitedNodeRetryAfter(t *testing.T) {
	c := MustCluster(t, 3)
	urls := c.URLs()
	clk := backofftest.NewClock(time.Now())
	ix := MustOpen(t, c, "docs", func(o *typesense.Options) { o.Nodes, o.NearestNode, o.Clock = urls[:2], urls[2], clk })
	ctx := context.Background()
	chunks := corpus(10)
	mustUpsert(t, ix, chunks)
	before := c.Served(2)
	c.RateLimitNext(2, 2*time.Second)
	hits, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: "word3", K: 1})
	if err != nil || len(hits) != 1 || hits[0].Chunk.ID != chunks[3].ID {
		t.Fatalf("keyword after a 429: %v, %v", hits, err)
	}
	if got := clk.Sleeps(); len(got) != 1 || got[0] != 2*time.Second {
		t.Errorf("waits %v, want one of Retry-After (2s)", got)
	}
	if n := c.Served(2) - before; n != 2 || c.Served(0)+c.Served(1) != 0 {
		t.Errorf("the nearest node served %d requests (want the refused one and its retry), the others %d",
			n, c.Served(0)+c.Served(1))
	}
}
