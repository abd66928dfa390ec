// Package searchtest is the contract test suite every search.Index backend
// runs: RunIndexSuite drives an index through upserts, replacements,
// deletions, filtered and unfiltered queries in every mode, facets,
// persistence across Close and reopen, and the embedder name.
package searchtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Dim is the vector length the suite's chunks carry.
const Dim = 8

// Opener opens the index stored under name, creating it empty when it does
// not exist yet. Opening a name again after its index was closed must give
// back the same contents. The suite uses a new name for every subtest and
// closes every index it opens.
type Opener func(t *testing.T, name string) search.Index

// RunIndexSuite runs the contract tests against the backend that open opens.
func RunIndexSuite(t *testing.T, open Opener) {
	s := &suite{open: open}
	t.Run("UpsertReplaceDelete", s.testUpsertReplaceDelete)
	t.Run("UpsertRejectsBadVectors", s.testUpsertRejectsBadVectors)
	t.Run("ChunkFieldsRoundTrip", s.testChunkFieldsRoundTrip)
	t.Run("Modes", s.testModes)
	t.Run("ModeErrors", s.testModeErrors)
	t.Run("Filters", s.testFilters)
	t.Run("FilterInsideRetrievers", s.testFilterInsideRetrievers)
	t.Run("Facets", s.testFacets)
	t.Run("Persistence", s.testPersistence)
	t.Run("ScanOrder", s.testScanOrder)
	t.Run("EmbedderName", s.testEmbedderName)
}

type suite struct {
	open Opener
	mu   sync.Mutex
	n    int
}

// handle is an opened index that the suite closes once.
type handle struct {
	search.Index
	closed bool
}

func (h *handle) close(t *testing.T) {
	t.Helper()
	if h.closed {
		return
	}
	h.closed = true
	if err := h.Index.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// name returns a fresh storage name for a subtest.
func (s *suite) name(t *testing.T) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	r := strings.NewReplacer("/", "_", " ", "_")
	return fmt.Sprintf("suite%d_%s", s.n, r.Replace(strings.ToLower(t.Name())))
}

func (s *suite) openNamed(t *testing.T, name string) *handle {
	t.Helper()
	h := &handle{Index: s.open(t, name)}
	t.Cleanup(func() { h.close(t) })
	return h
}

// Vec returns a unit vector of length Dim pointing mostly along axis a,
// tilted towards axis b by tilt (0 = exactly axis a).
func Vec(a, b int, tilt float64) []float32 {
	v := make([]float32, Dim)
	v[a%Dim] = float32(math.Cos(tilt))
	v[b%Dim] += float32(math.Sin(tilt))
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

var day0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func chunk(doc string, ord int, text string, v []float32) docent.Chunk {
	return docent.Chunk{
		ID:        fmt.Sprintf("%s#%d", doc, ord),
		DocID:     doc,
		Ord:       ord,
		Source:    "wiki",
		Space:     "eng",
		UpdatedAt: day0,
		Title:     "Doc " + doc,
		URL:       "https://example.com/" + doc,
		Text:      text,
		Vector:    v,
	}
}

func mustUpsert(t *testing.T, ix search.Index, chunks ...docent.Chunk) {
	t.Helper()
	if err := ix.Upsert(context.Background(), chunks); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
}

func mustSearch(t *testing.T, ix search.Index, q search.Query) []docent.Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	for i, h := range hits {
		if len(h.Chunk.Vector) != 0 {
			t.Errorf("hit %d (%s) carries a vector", i, h.Chunk.ID)
		}
		if i > 0 && hits[i-1].Score < h.Score {
			t.Errorf("hits not sorted by score: %v before %v", hits[i-1].Score, h.Score)
		}
	}
	if q.K > 0 && len(hits) > q.K {
		t.Errorf("got %d hits, want at most K=%d", len(hits), q.K)
	}
	return hits
}

func ids(hits []docent.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Chunk.ID
	}
	return out
}

func sortedIDs(hits []docent.Hit) []string {
	out := ids(hits)
	slices.Sort(out)
	return out
}

func mustCount(t *testing.T, ix search.Index) int {
	t.Helper()
	n, err := ix.Count(context.Background())
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	return n
}

func mustDocChunkIDs(t *testing.T, ix search.Index) map[string][]string {
	t.Helper()
	m, err := ix.DocChunkIDs(context.Background())
	if err != nil {
		t.Fatalf("DocChunkIDs: %v", err)
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}

func equalMaps(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func (s *suite) testUpsertReplaceDelete(t *testing.T) {
	ctx := context.Background()
	ix := s.openNamed(t, s.name(t))
	if n := mustCount(t, ix); n != 0 {
		t.Fatalf("new index Count = %d, want 0", n)
	}
	mustUpsert(t, ix,
		chunk("a", 0, "alpha apples orchard", Vec(0, 1, 0)),
		chunk("a", 1, "alpha bananas grove", Vec(1, 2, 0)),
		chunk("a", 2, "alpha cherries farm", Vec(2, 3, 0)),
		chunk("b", 0, "bravo durian market", Vec(3, 4, 0)),
		chunk("b", 1, "bravo elderberry shop", Vec(4, 5, 0)),
	)
	steps := []struct {
		name      string
		do        func() error
		wantCount int
		wantIDs   map[string][]string
		gone      string // keyword that must no longer match
		goneVec   []float32
		goneID    string
	}{
		{
			name: "initial", do: func() error { return nil }, wantCount: 5,
			wantIDs: map[string][]string{"a": {"a#0", "a#1", "a#2"}, "b": {"b#0", "b#1"}},
		},
		{
			name: "replace doc a with one chunk",
			do: func() error {
				c := chunk("a", 0, "alpha figs rewritten", Vec(5, 6, 0))
				c.ID = "a#new"
				return ix.Upsert(ctx, []docent.Chunk{c})
			},
			wantCount: 3,
			wantIDs:   map[string][]string{"a": {"a#new"}, "b": {"b#0", "b#1"}},
			gone:      "cherries", goneVec: Vec(2, 3, 0), goneID: "a#2",
		},
		{
			name:      "delete doc b and an unknown doc",
			do:        func() error { return ix.DeleteDocs(ctx, "b", "no-such-doc") },
			wantCount: 1,
			wantIDs:   map[string][]string{"a": {"a#new"}},
			gone:      "durian", goneVec: Vec(3, 4, 0), goneID: "b#0",
		},
		{
			name:      "delete nothing",
			do:        func() error { return ix.DeleteDocs(ctx) },
			wantCount: 1,
			wantIDs:   map[string][]string{"a": {"a#new"}},
		},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if err := st.do(); err != nil {
				t.Fatalf("step: %v", err)
			}
			if n := mustCount(t, ix); n != st.wantCount {
				t.Errorf("Count = %d, want %d", n, st.wantCount)
			}
			if got := mustDocChunkIDs(t, ix); !equalMaps(got, st.wantIDs) {
				t.Errorf("DocChunkIDs = %v, want %v", got, st.wantIDs)
			}
			if st.gone != "" {
				if hits := mustSearch(t, ix, search.Query{Text: st.gone, K: 10, Mode: search.ModeKeyword}); len(hits) != 0 {
					t.Errorf("keyword %q still matches %v", st.gone, ids(hits))
				}
				hits := mustSearch(t, ix, search.Query{Vector: st.goneVec, K: 10, Mode: search.ModeVector})
				if slices.Contains(ids(hits), st.goneID) {
					t.Errorf("vector search still returns removed chunk %s", st.goneID)
				}
				if len(hits) != st.wantCount {
					t.Errorf("vector search returned %d hits, want every remaining chunk (%d)", len(hits), st.wantCount)
				}
			}
		})
	}
}

func (s *suite) testUpsertRejectsBadVectors(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	mustUpsert(t, ix, chunk("a", 0, "alpha", Vec(0, 1, 0)))
	tests := []struct {
		name   string
		chunks []docent.Chunk
	}{
		{"missing vector", []docent.Chunk{chunk("b", 0, "bravo", nil)}},
		{"wrong dimension", []docent.Chunk{chunk("b", 0, "bravo", []float32{1, 0})}},
		{"one bad chunk in a batch", []docent.Chunk{chunk("a", 0, "alpha two", Vec(1, 2, 0)), chunk("b", 0, "bravo", []float32{1})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ix.Upsert(context.Background(), tt.chunks); err == nil {
				t.Fatal("Upsert succeeded, want an error")
			}
			want := map[string][]string{"a": {"a#0"}}
			if got := mustDocChunkIDs(t, ix); !equalMaps(got, want) {
				t.Errorf("after failed Upsert DocChunkIDs = %v, want %v (unchanged)", got, want)
			}
			hits := mustSearch(t, ix, search.Query{Text: "alpha", K: 5, Mode: search.ModeKeyword})
			if len(hits) != 1 || hits[0].Chunk.Text != "alpha" {
				t.Errorf("after failed Upsert keyword hits = %+v, want the original chunk", hits)
			}
		})
	}
}

func fullChunk() docent.Chunk {
	return docent.Chunk{
		ID:        "handbook/leave.md#2",
		DocID:     "handbook/leave.md",
		Ord:       2,
		Source:    "git-handbook",
		Space:     "people",
		Labels:    []string{"hr", "policy"},
		UpdatedAt: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Title:     "Leave policy",
		Section:   []string{"Vacation", "Carry-over"},
		URL:       "https://git.example.com/handbook/leave.md#carry-over",
		Text:      "Leave policy > Vacation > Carry-over\n\nUp to five unused vacation days carry over into the next year.",
		Vector:    Vec(0, 1, 0.2),
	}
}

func sameChunk(a, b docent.Chunk) bool {
	return a.ID == b.ID && a.DocID == b.DocID && a.Ord == b.Ord && a.Source == b.Source &&
		a.Space == b.Space && slices.Equal(a.Labels, b.Labels) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		a.Title == b.Title && slices.Equal(a.Section, b.Section) && a.URL == b.URL && a.Text == b.Text
}

func (s *suite) testChunkFieldsRoundTrip(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	want := fullChunk()
	mustUpsert(t, ix, want)
	tests := []struct {
		name string
		q    search.Query
	}{
		{"keyword", search.Query{Text: "carry over vacation", K: 3, Mode: search.ModeKeyword}},
		{"vector", search.Query{Vector: want.Vector, K: 3, Mode: search.ModeVector}},
		{"hybrid", search.Query{Text: "vacation", Vector: want.Vector, K: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := mustSearch(t, ix, tt.q)
			if len(hits) != 1 {
				t.Fatalf("got %d hits, want 1", len(hits))
			}
			if !sameChunk(hits[0].Chunk, want) {
				t.Errorf("hit chunk = %+v, want %+v", hits[0].Chunk, want)
			}
		})
	}
}

// modeCorpus has chunks whose keyword and vector rankings differ.
func modeCorpus() []docent.Chunk {
	return []docent.Chunk{
		chunk("k", 0, "password reset password reset steps for the password portal", Vec(5, 6, 0)),
		chunk("v", 0, "how to recover account access when locked out", Vec(0, 1, 0)),
		chunk("b", 0, "password reset through account recovery", Vec(0, 1, 0.3)),
		chunk("n", 0, "unrelated lunch menu", Vec(3, 4, 0)),
	}
}

func (s *suite) testModes(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	mustUpsert(t, ix, modeCorpus()...)
	qv := Vec(0, 1, 0)
	tests := []struct {
		name       string
		q          search.Query
		wantFirst  string
		wantIDs    []string // sorted set of returned IDs
		checkScore func(h docent.Hit) error
	}{
		{
			name: "keyword", q: search.Query{Text: "password reset", Vector: qv, K: 10, Mode: search.ModeKeyword},
			wantFirst: "k#0", wantIDs: []string{"b#0", "k#0"},
			checkScore: func(h docent.Hit) error {
				if h.KeywordRank == 0 || h.VectorRank != 0 || h.Score != h.KeywordScore || h.KeywordScore <= 0 {
					return fmt.Errorf("keyword-only hit has ranks k=%d v=%d, score %v keyword score %v", h.KeywordRank, h.VectorRank, h.Score, h.KeywordScore)
				}
				return nil
			},
		},
		{
			name: "keyword alias", q: search.Query{Text: "password reset", K: 10, Mode: search.Mode("keyword")},
			wantFirst: "k#0", wantIDs: []string{"b#0", "k#0"},
			checkScore: func(h docent.Hit) error { return nil },
		},
		{
			name: "vector", q: search.Query{Text: "password reset", Vector: qv, K: 2, Mode: search.ModeVector},
			wantFirst: "v#0", wantIDs: []string{"b#0", "v#0"},
			checkScore: func(h docent.Hit) error {
				if h.VectorRank == 0 || h.KeywordRank != 0 || h.Score != h.VectorScore {
					return fmt.Errorf("vector-only hit has ranks k=%d v=%d, score %v vector score %v", h.KeywordRank, h.VectorRank, h.Score, h.VectorScore)
				}
				if h.Chunk.ID == "v#0" && math.Abs(h.VectorScore-1) > 1e-4 {
					return fmt.Errorf("identical vector scored %v, want 1", h.VectorScore)
				}
				return nil
			},
		},
		{
			name: "hybrid", q: search.Query{Text: "password reset", Vector: qv, K: 3},
			wantIDs: []string{"b#0", "k#0", "v#0"},
			checkScore: func(h docent.Hit) error {
				if h.Chunk.ID == "b#0" && (h.KeywordRank != 2 || h.VectorRank != 2) {
					return fmt.Errorf("b#0 ranks second in both retrievers but has ranks k=%d v=%d", h.KeywordRank, h.VectorRank)
				}
				if h.Chunk.ID == "k#0" && (h.KeywordRank != 1 || h.KeywordScore <= 0) {
					return fmt.Errorf("k#0 ranks first by keyword but has rank %d score %v", h.KeywordRank, h.KeywordScore)
				}
				if h.Chunk.ID == "v#0" && (h.VectorRank != 1 || h.KeywordRank != 0) {
					return fmt.Errorf("v#0 ranks first by vector only but has ranks k=%d v=%d", h.KeywordRank, h.VectorRank)
				}
				if h.Score <= 0 && h.Chunk.ID != "n#0" {
					return fmt.Errorf("%s has fused score %v", h.Chunk.ID, h.Score)
				}
				return nil
			},
		},
		{
			name: "stopwords only", q: search.Query{Text: "the of and", K: 5, Mode: search.ModeKeyword},
			wantIDs: []string{}, checkScore: func(h docent.Hit) error { return nil },
		},
		{
			name: "fts syntax is not interpreted", q: search.Query{Text: `password" OR NEAR( title:reset * -`, K: 5, Mode: search.ModeKeyword},
			wantFirst: "k#0", wantIDs: []string{"b#0", "k#0"},
			checkScore: func(h docent.Hit) error { return nil },
		},
		{
			name: "k limits", q: search.Query{Vector: qv, K: 1, Mode: search.ModeVector},
			wantFirst: "v#0", wantIDs: []string{"v#0"},
			checkScore: func(h docent.Hit) error { return nil },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := mustSearch(t, ix, tt.q)
			if got := sortedIDs(hits); !slices.Equal(got, tt.wantIDs) {
				t.Fatalf("hits = %v, want %v", ids(hits), tt.wantIDs)
			}
			if tt.wantFirst != "" && hits[0].Chunk.ID != tt.wantFirst {
				t.Errorf("first hit = %s, want %s (all: %v)", hits[0].Chunk.ID, tt.wantFirst, ids(hits))
			}
			for _, h := range hits {
				if err := tt.checkScore(h); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func (s *suite) testModeErrors(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	mustUpsert(t, ix, modeCorpus()...)
	tests := []struct {
		name string
		q    search.Query
	}{
		{"vector mode without vector", search.Query{Text: "password", K: 5, Mode: search.ModeVector}},
		{"hybrid without vector", search.Query{Text: "password", K: 5}},
		{"unknown mode", search.Query{Text: "password", Vector: Vec(0, 1, 0), K: 5, Mode: "fuzzy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if hits, err := ix.Search(context.Background(), tt.q); err == nil {
				t.Fatalf("Search succeeded with %v, want an error", ids(hits))
			}
		})
	}
}

// filterCorpus: four documents with distinct metadata, all matching "guide".
func filterCorpus() []docent.Chunk {
	mk := func(doc, source, space string, labels []string, day int, v []float32) []docent.Chunk {
		var out []docent.Chunk
		for ord := range 2 {
			c := chunk(doc, ord, fmt.Sprintf("onboarding guide part %d for %s", ord, doc), v)
			c.Source, c.Space, c.Labels = source, space, labels
			c.UpdatedAt = day0.AddDate(0, 0, day)
			out = append(out, c)
		}
		return out
	}
	var all []docent.Chunk
	all = append(all, mk("d1", "wiki", "eng", []string{"howto"}, 0, Vec(0, 1, 0))...)
	all = append(all, mk("d2", "wiki", "sales", []string{"howto", "faq"}, 10, Vec(0, 1, 0.1))...)
	all = append(all, mk("d3", "git", "eng", []string{"faq"}, 20, Vec(0, 1, 0.2))...)
	all = append(all, mk("d4", "notion", "hr", nil, 30, Vec(0, 1, 0.3))...)
	return all
}

func docsOf(hits []docent.Hit) []string {
	var out []string
	for _, h := range hits {
		if !slices.Contains(out, h.Chunk.DocID) {
			out = append(out, h.Chunk.DocID)
		}
	}
	slices.Sort(out)
	return out
}

func (s *suite) testFilters(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	mustUpsert(t, ix, filterCorpus()...)
	tests := []struct {
		name     string
		filter   docent.Filter
		wantDocs []string
	}{
		{"none", docent.Filter{}, []string{"d1", "d2", "d3", "d4"}},
		{"one source", docent.Filter{Sources: []string{"wiki"}}, []string{"d1", "d2"}},
		{"two sources", docent.Filter{Sources: []string{"git", "notion"}}, []string{"d3", "d4"}},
		{"unknown source", docent.Filter{Sources: []string{"jira"}}, nil},
		{"space", docent.Filter{Spaces: []string{"eng"}}, []string{"d1", "d3"}},
		{"label", docent.Filter{Labels: []string{"faq"}}, []string{"d2", "d3"}},
		{"labels any of", docent.Filter{Labels: []string{"howto", "faq"}}, []string{"d1", "d2", "d3"}},
		{"updated after is inclusive", docent.Filter{UpdatedAfter: day0.AddDate(0, 0, 10)}, []string{"d2", "d3", "d4"}},
		{"updated before is exclusive", docent.Filter{UpdatedBefore: day0.AddDate(0, 0, 20)}, []string{"d1", "d2"}},
		{"date window", docent.Filter{UpdatedAfter: day0.AddDate(0, 0, 5), UpdatedBefore: day0.AddDate(0, 0, 25)}, []string{"d2", "d3"}},
		{"combined", docent.Filter{Sources: []string{"wiki", "git"}, Spaces: []string{"eng"}, Labels: []string{"faq"}}, []string{"d3"}},
	}
	for _, tt := range tests {
		for _, mode := range []search.Mode{search.ModeKeyword, search.ModeVector, search.ModeHybrid} {
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				hits := mustSearch(t, ix, search.Query{Text: "guide", Vector: Vec(0, 1, 0), Filter: tt.filter, K: 20, Mode: mode})
				if got := docsOf(hits); !slices.Equal(got, tt.wantDocs) {
					t.Errorf("docs = %v, want %v", got, tt.wantDocs)
				}
				if want := 2 * len(tt.wantDocs); len(hits) != want {
					t.Errorf("got %d hits, want %d", len(hits), want)
				}
			})
		}
	}
}

// testFilterInsideRetrievers checks that a filter matching only a chunk that
// ranks far below the candidate depth in both retrievers still returns it.
func (s *suite) testFilterInsideRetrievers(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	const crowd = 520
	var chunks []docent.Chunk
	for i := range crowd {
		c := chunk(fmt.Sprintf("crowd%03d", i), 0, "invoice invoice invoice approval", Vec(0, 1, float64(i)*1e-4))
		chunks = append(chunks, c)
	}
	target := chunk("target", 0, "a long page about travel, expenses, receipts, per diem rates, mileage, "+
		"hotels, flights, trains and rental cars that mentions an invoice only once among many other words "+
		"about reimbursement procedures and approval chains for managers and finance", Vec(4, 5, 0))
	target.Source, target.Labels, target.Space = "finance", []string{"expenses"}, "fin"
	chunks = append(chunks, target)
	mustUpsert(t, ix, chunks...)

	q := search.Query{Text: "invoice", Vector: Vec(0, 1, 0), K: 100}
	for _, mode := range []search.Mode{search.ModeKeyword, search.ModeVector} {
		q.Mode = mode
		if slices.Contains(ids(mustSearch(t, ix, q)), target.ID) {
			t.Fatalf("%s: unfiltered top 100 already holds the target; the test proves nothing", mode)
		}
	}
	filters := []struct {
		name string
		f    docent.Filter
	}{
		{"source", docent.Filter{Sources: []string{"finance"}}},
		{"label", docent.Filter{Labels: []string{"expenses"}}},
		{"space", docent.Filter{Spaces: []string{"fin"}}},
	}
	for _, ft := range filters {
		for _, mode := range []search.Mode{search.ModeKeyword, search.ModeVector, search.ModeHybrid} {
			t.Run(ft.name+"/"+string(mode), func(t *testing.T) {
				hits := mustSearch(t, ix, search.Query{Text: "invoice", Vector: Vec(0, 1, 0), Filter: ft.f, K: 5, Mode: mode})
				if got := ids(hits); !slices.Equal(got, []string{target.ID}) {
					t.Errorf("hits = %v, want only %s", got, target.ID)
				}
			})
		}
	}
}

func (s *suite) testFacets(t *testing.T) {
	name := s.name(t)
	ix := s.openNamed(t, name)
	mustUpsert(t, ix, filterCorpus()...)
	tests := []struct {
		name        string
		filter      docent.Filter
		wantSources []search.Facet
		wantLabels  []search.Facet
	}{
		{
			name:        "all",
			wantSources: []search.Facet{{Value: "wiki", Count: 2}, {Value: "git", Count: 1}, {Value: "notion", Count: 1}},
			wantLabels:  []search.Facet{{Value: "faq", Count: 2}, {Value: "howto", Count: 2}},
		},
		{
			name:        "space eng",
			filter:      docent.Filter{Spaces: []string{"eng"}},
			wantSources: []search.Facet{{Value: "git", Count: 1}, {Value: "wiki", Count: 1}},
			wantLabels:  []search.Facet{{Value: "faq", Count: 1}, {Value: "howto", Count: 1}},
		},
		{
			name:        "label faq",
			filter:      docent.Filter{Labels: []string{"faq"}},
			wantSources: []search.Facet{{Value: "git", Count: 1}, {Value: "wiki", Count: 1}},
			wantLabels:  []search.Facet{{Value: "faq", Count: 2}, {Value: "howto", Count: 1}},
		},
		{
			name:        "updated window",
			filter:      docent.Filter{UpdatedAfter: day0.AddDate(0, 0, 10), UpdatedBefore: day0.AddDate(0, 0, 30)},
			wantSources: []search.Facet{{Value: "git", Count: 1}, {Value: "wiki", Count: 1}},
			wantLabels:  []search.Facet{{Value: "faq", Count: 2}, {Value: "howto", Count: 1}},
		},
		{
			name:        "sources and label",
			filter:      docent.Filter{Sources: []string{"wiki", "notion"}, Labels: []string{"howto"}},
			wantSources: []search.Facet{{Value: "wiki", Count: 2}},
			wantLabels:  []search.Facet{{Value: "howto", Count: 2}, {Value: "faq", Count: 1}},
		},
		{
			name:        "nothing matches",
			filter:      docent.Filter{Sources: []string{"jira"}},
			wantSources: []search.Facet{},
			wantLabels:  []search.Facet{},
		},
	}
	check := func(t *testing.T, ix *handle, filter docent.Filter, wantSources, wantLabels []search.Facet) {
		t.Helper()
		got, err := ix.Facets(context.Background(), filter)
		if err != nil {
			t.Fatalf("Facets: %v", err)
		}
		if !slices.Equal(got.Sources, wantSources) {
			t.Errorf("Sources = %v, want %v", got.Sources, wantSources)
		}
		if !slices.Equal(got.Labels, wantLabels) {
			t.Errorf("Labels = %v, want %v", got.Labels, wantLabels)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, ix, tt.filter, tt.wantSources, tt.wantLabels)
		})
	}
	t.Run("after reopen", func(t *testing.T) {
		ix.close(t)
		re := s.openNamed(t, name)
		check(t, re, tests[0].filter, tests[0].wantSources, tests[0].wantLabels)
	})
}

func (s *suite) testPersistence(t *testing.T) {
	ctx := context.Background()
	name := s.name(t)
	ix := s.openNamed(t, name)
	want := fullChunk()
	mustUpsert(t, ix, append(modeCorpus(), want)...)
	if err := ix.SetEmbedderName(ctx, "test-embedder-v1"); err != nil {
		t.Fatalf("SetEmbedderName: %v", err)
	}
	wantIDs := mustDocChunkIDs(t, ix)
	ix.close(t)

	re := s.openNamed(t, name)
	if n := mustCount(t, re); n != 5 {
		t.Errorf("Count after reopen = %d, want 5", n)
	}
	if got := mustDocChunkIDs(t, re); !equalMaps(got, wantIDs) {
		t.Errorf("DocChunkIDs after reopen = %v, want %v", got, wantIDs)
	}
	if got, err := re.EmbedderName(ctx); err != nil || got != "test-embedder-v1" {
		t.Errorf("EmbedderName after reopen = %q, %v; want test-embedder-v1", got, err)
	}
	hits := mustSearch(t, re, search.Query{Vector: want.Vector, K: 1, Mode: search.ModeVector})
	if len(hits) != 1 || hits[0].Chunk.ID != want.ID || math.Abs(hits[0].VectorScore-1) > 1e-4 {
		t.Fatalf("vector search after reopen = %+v, want %s with score 1", hits, want.ID)
	}
	if !sameChunk(hits[0].Chunk, want) {
		t.Errorf("chunk after reopen = %+v, want %+v", hits[0].Chunk, want)
	}
	hits = mustSearch(t, re, search.Query{Text: "password reset", K: 5, Mode: search.ModeKeyword})
	if got := sortedIDs(hits); !slices.Equal(got, []string{"b#0", "k#0"}) {
		t.Errorf("keyword search after reopen = %v, want [b#0 k#0]", got)
	}
	// Writes after reopen keep the vector state in sync.
	if err := re.DeleteDocs(ctx, want.DocID); err != nil {
		t.Fatalf("DeleteDocs: %v", err)
	}
	hits = mustSearch(t, re, search.Query{Vector: want.Vector, K: 10, Mode: search.ModeVector})
	if slices.Contains(ids(hits), want.ID) || len(hits) != 4 {
		t.Errorf("vector hits after delete = %v, want the 4 other chunks", ids(hits))
	}
}

func (s *suite) testScanOrder(t *testing.T) {
	ix := s.openNamed(t, s.name(t))
	in := []docent.Chunk{
		chunk("b", 1, "b one", Vec(0, 1, 0)),
		chunk("a", 2, "a two", Vec(0, 1, 0)),
		chunk("b", 0, "b zero", Vec(0, 1, 0)),
		chunk("a", 0, "a zero", Vec(0, 1, 0)),
		chunk("a", 1, "a one", Vec(0, 1, 0)),
	}
	mustUpsert(t, ix, in[:2]...)
	mustUpsert(t, ix, in...)
	var got []docent.Chunk
	err := ix.Scan(context.Background(), func(c docent.Chunk) error {
		got = append(got, c)
		return nil
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	want := []string{"a#0", "a#1", "a#2", "b#0", "b#1"}
	var gotIDs []string
	for _, c := range got {
		gotIDs = append(gotIDs, c.ID)
		if len(c.Vector) != 0 {
			t.Errorf("Scan chunk %s carries a vector", c.ID)
		}
		i := slices.IndexFunc(in, func(x docent.Chunk) bool { return x.ID == c.ID })
		if i < 0 || !sameChunk(c, in[i]) {
			t.Errorf("Scan chunk %+v differs from the upserted one", c)
		}
	}
	if !slices.Equal(gotIDs, want) {
		t.Errorf("Scan order = %v, want %v", gotIDs, want)
	}

	stop := errors.New("stop")
	var seen int
	err = ix.Scan(context.Background(), func(docent.Chunk) error {
		seen++
		if seen == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 2 {
		t.Errorf("Scan with failing fn: err = %v after %d calls, want stop after 2", err, seen)
	}
}

func (s *suite) testEmbedderName(t *testing.T) {
	ctx := context.Background()
	ix := s.openNamed(t, s.name(t))
	get := func() string {
		t.Helper()
		n, err := ix.EmbedderName(ctx)
		if err != nil {
			t.Fatalf("EmbedderName: %v", err)
		}
		return n
	}
	if n := get(); n != "" {
		t.Errorf("empty index EmbedderName = %q, want empty", n)
	}
	mustUpsert(t, ix, chunk("a", 0, "alpha", Vec(0, 1, 0)))
	steps := []struct {
		name string
		set  string
	}{{"first", "offline-v1"}, {"changed", "gemini-embedding-001"}, {"cleared", ""}}
	for _, st := range steps {
		if err := ix.SetEmbedderName(ctx, st.set); err != nil {
			t.Fatalf("%s: SetEmbedderName: %v", st.name, err)
		}
		if n := get(); n != st.set {
			t.Errorf("%s: EmbedderName = %q, want %q", st.name, n, st.set)
		}
	}
	if err := ix.SetEmbedderName(ctx, "offline-v2"); err != nil {
		t.Fatalf("SetEmbedderName: %v", err)
	}
	if err := ix.DeleteDocs(ctx, "a"); err != nil {
		t.Fatalf("DeleteDocs: %v", err)
	}
	if n := get(); n != "" {
		t.Errorf("EmbedderName after emptying the index = %q, want empty", n)
	}
}
