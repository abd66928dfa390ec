package searchtest

import (
	"context"
	"slices"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// testFoldedCopies: chunks of several documents with the same body,
// source, space and labels are stored (each document lists its chunk) but
// searched once, under the first stored, which lists the others as its
// copies; a chunk of another source with the same body is its own. When
// the first goes, its copy takes its place; after a reopen the same holds.
// The Retriever names the copies' documents on the hit it keeps.
func (s *suite) testFoldedCopies(t *testing.T) {
	ctx := context.Background()
	name := s.name(t)
	ix := s.openNamed(t, name)
	folder, ok := ix.Index.(search.Folder)
	if !ok {
		t.Fatal("FoldsCopies set, but the index does not implement search.Folder")
	}
	shared := "The sourceRange option sets the allowed IPs, or ranges of allowed IPs, in CIDR notation."
	other := chunk("other", 0, shared, Vec(0, 1, 0.3))
	other.Source = "git-handbook"
	later := chunk("whitelist", 0, shared, Vec(0, 1, 0.2))
	later.UpdatedAt = day0.AddDate(0, 0, 30)
	mustUpsert(t, ix,
		chunk("allowlist", 0, shared, Vec(0, 1, 0.1)),
		later,
		other,
		chunk("unrelated", 0, "Rate limiting caps the requests per period from one client.", Vec(3, 4, 0)),
	)
	searched := func(t *testing.T, ix search.Index, want ...string) {
		t.Helper()
		kw := sortedIDs(mustKeyword(t, ix, search.KeywordQuery{Text: "sourceRange allowed IPs CIDR", K: 10}))
		if !slices.Equal(kw, want) {
			t.Errorf("keyword search finds %v, want %v", kw, want)
		}
		vec := sortedIDs(mustVector(t, ix, search.VectorQuery{Vector: Vec(0, 1, 0.2), K: 10}))
		if wantVec := append(slices.Clone(want), "unrelated#0"); !slices.Equal(vec, slices.Sorted(slices.Values(wantVec))) {
			t.Errorf("vector search finds %v, want %v and unrelated#0", vec, want)
		}
	}
	copies := func(t *testing.T, ix search.Folder, id string, want ...string) {
		t.Helper()
		got, err := ix.Copies(ctx, []string{id, "unrelated#0", "missing#0"})
		if err != nil {
			t.Fatalf("Copies: %v", err)
		}
		wantMap := map[string][]string{}
		if len(want) > 0 {
			wantMap[id] = want
		}
		if !equalMaps(got, wantMap) {
			t.Errorf("Copies = %v, want %v", got, wantMap)
		}
	}
	searched(t, ix, "allowlist#0", "other#0")
	copies(t, folder, "allowlist#0", "whitelist#0")
	if n := mustCount(t, ix); n != 4 {
		t.Errorf("Count = %d, want 4: a copy is still stored", n)
	}
	if got := mustChunkIDs(t, ix, "wiki"); len(got["whitelist"]) != 1 {
		t.Errorf("ChunkIDs(wiki) = %v, want whitelist to keep its chunk", got)
	}
	if cs, err := ix.Chunks(ctx, []string{"whitelist#0"}); err != nil || len(cs) != 1 {
		t.Errorf("Chunks(whitelist#0) = %v, %v; want the stored copy", cs, err)
	}
	f, err := ix.Facets(ctx, docent.Filter{})
	if err != nil {
		t.Fatalf("Facets: %v", err)
	}
	if i := slices.IndexFunc(f.Sources, func(v search.Facet) bool { return v.Value == "wiki" }); i < 0 || f.Sources[i].Count != 3 {
		t.Errorf("source facets %+v, want wiki counting its 3 documents, the copy's too", f.Sources)
	}
	hits := retrieve(t, ix, search.Request{Text: "sourceRange allowed IPs CIDR", Vector: Vec(0, 1, 0.1), K: 10,
		Filter: docent.Filter{Sources: []string{"wiki"}}})
	if len(hits) == 0 || hits[0].Chunk.ID != "allowlist#0" || len(hits[0].Duplicates) != 1 ||
		hits[0].Duplicates[0].DocID != "whitelist" || hits[0].Duplicates[0].URL == "" {
		t.Errorf("retrieve: %+v, want allowlist#0 first, naming whitelist's copy", hits)
	}

	// A date filter that only the copy passes finds the copy.
	recent := docent.Filter{UpdatedAfter: later.UpdatedAt}
	for _, mode := range []search.Mode{search.ModeKeyword, search.ModeVector} {
		if got := ids(search1(t, ix, mode, "sourceRange allowed IPs CIDR", Vec(0, 1, 0.1), recent, 10)); !slices.Equal(got, []string{"whitelist#0"}) {
			t.Errorf("%s search updated after the copy's date finds %v, want [whitelist#0]", mode, got)
		}
	}

	// The first goes: its copy is searched in its place.
	if err := ix.DeleteDocs(ctx, "allowlist"); err != nil {
		t.Fatalf("DeleteDocs: %v", err)
	}
	searched(t, ix, "other#0", "whitelist#0")
	copies(t, folder, "whitelist#0")
	// Stored again, it is now the copy.
	mustUpsert(t, ix, chunk("allowlist", 0, shared, Vec(0, 1, 0.1)))
	searched(t, ix, "other#0", "whitelist#0")
	copies(t, folder, "whitelist#0", "allowlist#0")
	// A changed body is its own again.
	mustUpsert(t, ix, chunk("whitelist", 0, shared+" Deprecated: use the allow list.", Vec(0, 1, 0.2)))
	searched(t, ix, "allowlist#0", "other#0", "whitelist#0")
	copies(t, folder, "allowlist#0")
	mustUpsert(t, ix, chunk("whitelist", 0, shared, Vec(0, 1, 0.2)))
	ix.close(t)

	re := s.openNamed(t, name)
	searched(t, re, "allowlist#0", "other#0")
	copies(t, re, "allowlist#0", "whitelist#0")
}
