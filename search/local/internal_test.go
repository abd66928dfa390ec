package local

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/synthetic"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
)

func TestQueryTerms(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"plain", "vacation policy", []string{"vacat", "polici"}},
		{"stopwords, case and stems", "How do I reset MY Passwords?", []string{"reset", "password"}},
		{"duplicates", "reset reset Reset resets", []string{"reset"}},
		{"query syntax is text", `title:"foo" NEAR(bar baz) -qux* AND ^x`, []string{"titl", "foo", "near", "bar", "baz", "qux"}},
		{"only stopwords", "the of and", nil},
		{"only punctuation", `"*()-:^`, nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := queryTerms(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("queryTerms(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	t.Run("capped", func(t *testing.T) {
		var b strings.Builder
		for i := range 2 * maxQueryTerms {
			fmt.Fprintf(&b, "w%d ", i)
		}
		if got, _ := queryTerms(b.String()); len(got) != maxQueryTerms || got[0] != "w0" {
			t.Errorf("%d terms starting %q, want the first %d", len(got), got[0], maxQueryTerms)
		}
	})
}

// TestIndexSuiteANN runs the contract suite with the approximate index on
// from the first chunk, probing a single list, so that every write goes
// through the inverted lists' bookkeeping.
func TestIndexSuiteANN(t *testing.T) {
	dir := t.TempDir()
	searchtest.RunIndexSuite(t, func(t *testing.T, name string) search.Index {
		ix, err := Open(context.Background(), filepath.Join(dir, name+".db"), Options{ANNThreshold: 1, NProbe: 1})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return ix
	}, searchtest.Capabilities{ExactTies: true, Stemming: true, LargeBatch: 1000, TermStats: true, FoldsCopies: true})
}

func TestMemoryIndex(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(ctx, ":memory:", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	chunks := synthetic.Chunks(50, 16, 1)
	if err := ix.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.VectorSearch(ctx, search.VectorQuery{Vector: chunks[7].Vector, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Chunk.ID != chunks[7].ID {
		t.Fatalf("hits = %v, want %s first", hits, chunks[7].ID)
	}
}

// addChunk adds c under a rowid derived from its ID.
func addChunk(s *vectorStore, c docent.Chunk) {
	h := fnv.New64a()
	h.Write([]byte(c.ID))
	s.add(c, int64(h.Sum64()>>1), factsInputOf(c).hash)
}

// checkIVF verifies the inverted lists hold every slot exactly once and
// agree with listOf/posOf.
func checkIVF(t *testing.T, s *vectorStore) {
	t.Helper()
	x := s.ivf
	if x == nil {
		t.Fatal("no approximate index")
	}
	if len(x.listOf) != s.len() || len(x.posOf) != s.len() {
		t.Fatalf("listOf/posOf lengths %d/%d, want %d", len(x.listOf), len(x.posOf), s.len())
	}
	seen := make([]bool, s.len())
	for c, l := range x.lists {
		for p, slot := range l {
			if seen[slot] {
				t.Fatalf("slot %d filed twice", slot)
			}
			seen[slot] = true
			if x.listOf[slot] != int32(c) || x.posOf[slot] != int32(p) {
				t.Fatalf("slot %d: listOf/posOf = %d/%d, filed at %d/%d", slot, x.listOf[slot], x.posOf[slot], c, p)
			}
		}
	}
	for slot, ok := range seen {
		if !ok {
			t.Fatalf("slot %d not filed", slot)
		}
		if s.slotOf[s.meta[slot].id] != slot || s.ofRow[s.meta[slot].rowid] != slot {
			t.Fatalf("slotOf[%s] = %d, ofRow = %d, want %d", s.meta[slot].id, s.slotOf[s.meta[slot].id], s.ofRow[s.meta[slot].rowid], slot)
		}
	}
}

func recallAt(t *testing.T, s *vectorStore, queries [][]float32, k int, f docent.Filter) float64 {
	t.Helper()
	var hit, total int
	for _, q := range queries {
		cf := s.compile(f)
		exact := s.exact(q, k, &cf)
		approx := s.search(q, k, f)
		if len(approx) != len(exact) {
			t.Fatalf("approximate search returned %d hits, exact %d", len(approx), len(exact))
		}
		for _, a := range approx {
			if !cf.match(&s.meta[a.slot]) {
				t.Fatalf("approximate hit %s fails the filter", s.meta[a.slot].id)
			}
			if slices.ContainsFunc(exact, func(e scored) bool { return e.slot == a.slot }) {
				hit++
			}
		}
		total += len(exact)
	}
	return float64(hit) / float64(total)
}

func TestIVFRecallAndUpdates(t *testing.T) {
	chunks := synthetic.Chunks(3000, 32, 7)
	s := newVectorStore(1000, 8)
	s.dim = 32
	for _, c := range chunks {
		addChunk(s, c)
	}
	s.reindex()
	checkIVF(t, s)
	queries := synthetic.Queries(chunks, 50, 99)

	steps := []struct {
		name   string
		mutate func()
	}{
		{"built", func() {}},
		{"deleted a third", func() {
			for i := 0; i < len(chunks); i += 3 {
				s.delete(chunks[i].ID)
			}
		}},
		{"re-added and replaced", func() {
			for i := 0; i < len(chunks); i += 3 {
				addChunk(s, chunks[i])
			}
			for i := 1; i < len(chunks); i += 5 {
				addChunk(s, chunks[i])
			}
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.mutate()
			s.reindex()
			checkIVF(t, s)
			for _, f := range []docent.Filter{{}, {Sources: []string{"wiki", "notion"}}, {Labels: []string{"label03"}}} {
				r := recallAt(t, s, queries, 10, f)
				if r < 0.9 {
					t.Errorf("filter %+v: recall@10 = %.3f, want >= 0.9", f, r)
				}
			}
		})
	}
}

func TestReindexThresholds(t *testing.T) {
	chunks := synthetic.Chunks(400, 8, 3)
	s := newVectorStore(100, 4)
	s.dim = 8
	for i, c := range chunks[:99] {
		addChunk(s, c)
		s.reindex()
		if s.ivf != nil {
			t.Fatalf("approximate index built at %d vectors, threshold 100", i+1)
		}
	}
	addChunk(s, chunks[99])
	s.reindex()
	if s.ivf == nil || s.ivf.trainedOn != 100 {
		t.Fatalf("no approximate index at the threshold")
	}
	for _, c := range chunks[100:] {
		addChunk(s, c)
		s.reindex()
	}
	if s.ivf.trainedOn <= 200 {
		t.Errorf("index trained on %d vectors after growing to %d, want retrained", s.ivf.trainedOn, s.len())
	}
	checkIVF(t, s)
	for _, c := range chunks[:350] {
		s.delete(c.ID)
	}
	s.reindex()
	if s.ivf != nil {
		t.Errorf("approximate index kept below the threshold (%d vectors)", s.len())
	}

}

func TestOpenOptions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Run("wal", func(t *testing.T) {
		ix, err := Open(ctx, filepath.Join(dir, "wal.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		var mode string
		if err := ix.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode = %q, %v; want wal", mode, err)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		got := Options{}.withDefaults()
		want := Options{ANNThreshold: 20000, NProbe: 24}
		if got != want {
			t.Errorf("withDefaults = %+v, want %+v", got, want)
		}
	})
}

func TestSearchDepth(t *testing.T) {
	ctx := context.Background()
	chunks := synthetic.Chunks(300, 16, 5)
	for i := range chunks {
		chunks[i].Text += " common"
	}
	ix, err := Open(ctx, ":memory:", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if err := ix.Upsert(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		run     func() ([]docent.Hit, error)
		wantLen int
	}{
		{"k above 100 keyword", func() ([]docent.Hit, error) {
			return ix.KeywordSearch(ctx, search.KeywordQuery{Text: "common", K: 150})
		}, 150},
		{"k above 100 vector", func() ([]docent.Hit, error) {
			return ix.VectorSearch(ctx, search.VectorQuery{Vector: chunks[0].Vector, K: 150})
		}, 150},
		{"default k", func() ([]docent.Hit, error) {
			return ix.VectorSearch(ctx, search.VectorQuery{Vector: chunks[0].Vector})
		}, DefaultK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != tt.wantLen {
				t.Errorf("got %d hits, want %d", len(hits), tt.wantLen)
			}
		})
	}
}

func TestConcurrentSearchAndWrite(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), Options{ANNThreshold: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	chunks := synthetic.Chunks(400, 16, 11)
	if err := ix.Upsert(ctx, chunks[:200]); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	go func() {
		for i := 200; i < 400; i += 20 {
			if err := ix.Upsert(ctx, chunks[i:i+20]); err != nil {
				errs <- err
				return
			}
			if err := ix.DeleteDocs(ctx, chunks[i-200].DocID); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for range 2 {
		go func() {
			for i := range 40 {
				c := chunks[i*5]
				f := docent.Filter{Sources: []string{c.Source}}
				if _, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: c.Title, K: 5, Filter: f}); err != nil {
					errs <- err
					return
				}
				if _, err := ix.VectorSearch(ctx, search.VectorQuery{Vector: c.Vector, K: 5, Filter: f}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	n, err := ix.Count(ctx)
	if err != nil || n != 400-10*synthetic.ChunksPerDoc {
		t.Errorf("Count = %d, %v; want %d", n, err, 400-10*synthetic.ChunksPerDoc)
	}
	if ix.vectors.len() != n || ix.keyword.Len() != n {
		t.Errorf("in memory: %d vectors, %d keyword documents; want %d", ix.vectors.len(), ix.keyword.Len(), n)
	}
	perDoc := map[int32]int{}
	for _, m := range ix.vectors.meta {
		perDoc[m.doc]++
	}
	if !maps.Equal(perDoc, ix.vectors.chunks) {
		t.Errorf("chunks per document %v, counted %v", ix.vectors.chunks, perDoc)
	}
	checkIVF(t, ix.vectors)
}
