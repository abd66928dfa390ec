package connectorstest

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/store"
)

// Change is one edit of the store behind a source, made at once (one
// commit in a git repository). Keys name documents within the source:
// paths for git and folders, page keys for a wiki backend.
type Change struct {
	// Write creates or replaces documents: key -> markdown ("# Title",
	// a blank line, then text).
	Write map[string]string
	// Remove deletes documents.
	Remove []string
	// Rename moves documents with their content: old key -> new key.
	Rename map[string]string
	// Break writes documents the source cannot convert, a content problem
	// (binary bytes in a markdown file, a page of a type the source does
	// not read) that lasts until the document is written again.
	Break []string
}

// Backend is the store behind one source under test: a git repository, a
// folder, or a local HTTP server standing in for a wiki. The suite edits it
// and checks what the source lists.
type Backend interface {
	// Source returns the source under test, named as Harness.New was told.
	// It may return the same value every time; it must see every change
	// applied before the call.
	Source() connectors.Source
	// ID returns the document ID the source gives the document at key now:
	// "<name>:<key>" for git and folders. A wiki maps a key to its page,
	// whose ID a rename keeps.
	ID(key string) string
	// Apply makes one change. It fails the test if the backend cannot.
	Apply(t testing.TB, c Change)
}

// Unreadable is a Backend that can make a document fail to read for a
// transient reason (a timeout, a refused request) and heal it, without
// changing the document. Backends declaring TransientFailures implement it.
type Unreadable interface {
	// SetUnreadable makes reading the document at key fail (on) or succeed
	// again (off).
	SetUnreadable(t testing.TB, key string, on bool)
}

// Capabilities say what a source does beyond what every source does.
type Capabilities struct {
	// Incremental sources list, from a cursor, only what changed since it
	// (git, a wiki by last-modified date). Others list everything every
	// time (a folder).
	Incremental bool
	// ListsAllIDs sources name every existing document in every listing
	// (with its content, or by ID with Listing.Present) and report it
	// Complete, so that a deletion is seen within one run (a wiki's cheap
	// ID listing; a folder, whose every listing is complete).
	ListsAllIDs bool
	// TransientFailures backends implement Unreadable.
	TransientFailures bool
}

// Harness runs the Source contract suite for one kind of source.
type Harness struct {
	// New returns an empty backend whose source is named name.
	New func(t *testing.T, name string) Backend
	// Capabilities are what the source does beyond the contract.
	Capabilities
}

// suiteName is the source name the suite gives every backend.
const suiteName = "suite"

// page is a document as the suite writes it: a title and one paragraph.
type page struct{ title, text string }

func (p page) markdown() string { return "# " + p.title + "\n\n" + p.text + "\n" }

var (
	alpha   = page{"Alpha", "Alpha explains the travel policy."}
	alpha2  = page{"Alpha", "Alpha explains the revised travel policy."}
	bravo   = page{"Bravo", "Bravo covers laptops and their care."}
	charlie = page{"Charlie", "Charlie is the on-call guide."}
	delta   = page{"Delta", "Delta lists the office hours."}
	echo    = page{"Echo", "Echo answers questions about payroll."}
)

// seed is what every case starts from: documents at the top and in a folder.
var seed = map[string]page{"a.md": alpha, "b.md": bravo, "guide/c.md": charlie}

// RunSourceSuite checks that a source meets the connectors.Source
// contract: complete listings from an empty or unknown cursor, listings
// from a cursor that report every change since it (edits, additions,
// deletions, renames) and stay valid after later listings, documents that
// fail without failing the listing, cancellation, a listing that stops
// when the engine says so, and syncs through the real engine, SQLite
// registry and local index that converge on the source. Cases that need a
// capability run only with it.
func RunSourceSuite(t *testing.T, h Harness) {
	if h.TransientFailures {
		if _, ok := h.New(t, suiteName).(Unreadable); !ok {
			t.Fatal("connectorstest: Capabilities.TransientFailures is set but the backend does not implement Unreadable")
		}
	}
	t.Run("complete listing from an empty cursor", func(t *testing.T) {
		s := newSuite(t, h)
		col := s.list("")
		if len(col.Docs) != len(seed) || len(col.Failed) != 0 || len(col.Deleted) != 0 {
			t.Errorf("listing has %d documents, %d failed, %d deleted; want %d, 0, 0",
				len(col.Docs), len(col.Failed), len(col.Deleted), len(seed))
		}
		if col.Cursor == "" {
			t.Error("empty cursor after a listing")
		}
		s.replica.apply(col)
		s.check("first listing")
	})

	t.Run("changes since the cursor", func(t *testing.T) {
		s, first := newListedSuite(t, h)
		atFirst := maps.Clone(s.replica)
		cursor := first.Cursor
		steps := []struct {
			name   string
			change Change
			// written are the keys whose documents an incremental listing
			// hands over with their content.
			written []string
		}{
			{"edit", Change{Write: map[string]string{"a.md": alpha2.markdown()}}, []string{"a.md"}},
			{"add", Change{Write: map[string]string{"guide/d.md": delta.markdown()}}, []string{"guide/d.md"}},
			{"remove", Change{Remove: []string{"b.md"}}, nil},
			{"rename", Change{Rename: map[string]string{"guide/c.md": "guide/renamed.md"}}, []string{"guide/renamed.md"}},
			{"nothing", Change{}, nil},
		}
		for _, st := range steps {
			s.apply(st.change)
			col := s.list(cursor)
			var wantHanded []string
			if h.Incremental {
				for _, key := range st.written {
					wantHanded = append(wantHanded, s.b.ID(key))
				}
			} else {
				for key := range s.want {
					wantHanded = append(wantHanded, s.b.ID(key))
				}
			}
			if got := docIDs(col.Docs); !sameSet(got, wantHanded) {
				t.Errorf("%s: listing handed over %v, want %v", st.name, got, wantHanded)
			}
			if !h.Incremental && !col.Complete {
				t.Errorf("%s: a source without incremental listings made an incomplete one", st.name)
			}
			if h.Incremental && st.name == "nothing" && (len(col.Failed) > 0 || len(col.Deleted) > 0) {
				t.Errorf("%s: listing after no change failed %v, deleted %v", st.name, col.Failed, col.Deleted)
			}
			s.replica.apply(col)
			s.check(st.name)
			cursor = col.Cursor
		}

		// A cursor stays valid after later listings: listing from the
		// first one reports every change since.
		replay := s.list(first.Cursor)
		s.replica = atFirst
		s.replica.apply(replay)
		s.check("listing again from the first cursor")

		// A cursor the source does not recognise gives a complete listing.
		s.replica = replica{}
		unknown := s.list("not-a-cursor-" + strings.Repeat("z", 40))
		if !unknown.Complete {
			t.Error("a listing from an unknown cursor is not complete")
		}
		s.replica.apply(unknown)
		s.check("listing from an unknown cursor")
	})

	t.Run("documents that fail to convert", func(t *testing.T) {
		s, first := newListedSuite(t, h)
		// b.md turns bad; new.md arrives bad; d.md arrives fine.
		s.apply(Change{Break: []string{"b.md", "new.md"}, Write: map[string]string{"d.md": delta.markdown()}})
		col := s.list(first.Cursor)
		failed := map[string]docent.DocError{}
		for _, f := range col.Failed {
			failed[f.ID] = f
		}
		for _, key := range []string{"b.md", "new.md"} {
			f, ok := failed[s.b.ID(key)]
			switch {
			case !ok:
				t.Errorf("%s is not reported as failed: %v", key, col.Failed)
			case f.Err == "":
				t.Errorf("%s failed without a reason", key)
			case f.Retry:
				t.Errorf("%s: a content problem is reported as transient: %q", key, f.Err)
			}
		}
		if !slices.Contains(docIDs(col.Docs), s.b.ID("d.md")) {
			t.Errorf("the good document d.md was not handed over with the bad ones: %v", docIDs(col.Docs))
		}
		s.replica.apply(col)
		s.check("after documents broke") // b.md keeps its old version

		s.apply(Change{Write: map[string]string{"b.md": bravo.markdown(), "new.md": echo.markdown()}})
		fixed := s.list(col.Cursor)
		for _, key := range []string{"b.md", "new.md"} {
			if !slices.Contains(docIDs(fixed.Docs), s.b.ID(key)) {
				t.Errorf("fixed %s was not handed over: %v", key, docIDs(fixed.Docs))
			}
		}
		s.replica.apply(fixed)
		s.check("after the documents were fixed")
	})

	t.Run("transient failures", func(t *testing.T) {
		if !h.TransientFailures {
			t.Skip("the backend cannot make a document fail transiently")
		}
		s, first := newListedSuite(t, h)
		s.apply(Change{Write: map[string]string{"a.md": alpha2.markdown()}})
		un := s.b.(Unreadable)
		un.SetUnreadable(t, "a.md", true)
		col := s.list(first.Cursor)
		if i := slices.IndexFunc(col.Failed, func(f docent.DocError) bool { return f.ID == s.b.ID("a.md") }); i < 0 || !col.Failed[i].Retry {
			t.Errorf("unreadable a.md: failed %v, want it reported as transient", col.Failed)
		}
		// The engine keeps the first cursor; the healed document comes
		// through from it.
		un.SetUnreadable(t, "a.md", false)
		again := s.list(first.Cursor)
		s.replica.apply(again)
		s.check("after the document healed")
	})

	t.Run("cancelled context", func(t *testing.T) {
		s := newSuite(t, h)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Collect(ctx, s.b.Source(), ""); !errors.Is(err, context.Canceled) {
			t.Errorf("List with a cancelled context = %v, want context.Canceled", err)
		}
	})

	t.Run("listing stops when the engine says so", func(t *testing.T) {
		s := newSuite(t, h)
		errStop := errors.New("connectorstest: engine stopped")
		l := &stopper{err: errStop}
		_, err := s.b.Source().List(context.Background(), "", l)
		if !errors.Is(err, errStop) {
			t.Errorf("List = %v, want the listing's error", err)
		}
		if l.calls != 1 {
			t.Errorf("the source made %d listing calls, want 1: it must stop at the first error", l.calls)
		}
	})

	t.Run("syncs through the engine converge", func(t *testing.T) {
		s := newSuite(t, h)
		ctx := context.Background()
		reg, idx := OpenStores(t)
		emb, ch := NewEmbedder("v1"), Chunker{}
		eng := connectors.NewEngine(reg, idx, emb, ch, nil, connectors.EngineOptions{BatchSize: 2})
		for _, st := range []struct {
			name   string
			change Change
		}{
			{"seed", Change{}},
			{"edit and add", Change{Write: map[string]string{"a.md": alpha2.markdown(), "guide/d.md": delta.markdown()}}},
			{"remove and rename", Change{Remove: []string{"b.md"}, Rename: map[string]string{"guide/c.md": "c.md"}}},
			{"a new bad document", Change{Break: []string{"bad.md"}}},
		} {
			s.apply(st.change)
			res, err := eng.Sync(ctx, s.b.Source(), nil)
			if err != nil {
				t.Fatalf("%s: sync: %v", st.name, err)
			}
			if bad := slices.ContainsFunc(res.Errors, func(de docent.DocError) bool { return de.ID == s.b.ID("bad.md") }); bad != (st.name == "a new bad document") {
				t.Errorf("%s: run errors %v", st.name, res.Errors)
			}
			want := s.list("")
			AssertConverged(t, idx, reg, ch, emb, suiteName, want.Docs)
			if t.Failed() {
				t.Fatalf("%s: did not converge", st.name)
			}
		}
	})
}

// OpenStores opens a real SQLite registry and a real local index in a
// temporary directory, closed when the test ends.
func OpenStores(tb testing.TB) (*store.DB, *local.Index) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	reg, err := store.Open(ctx, filepath.Join(dir, "docent.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { reg.Close() })
	idx, err := local.Open(ctx, filepath.Join(dir, "index.db"), local.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { idx.Close() })
	return reg, idx
}

// suite is one case's backend, what it should hold, and a replica: the
// documents a consumer holds after applying every listing so far.
type suite struct {
	t       *testing.T
	h       Harness
	b       Backend
	want    map[string]page // key -> the content the replica must hold
	replica replica
}

// newSuite makes a backend holding the seed documents.
func newSuite(t *testing.T, h Harness) *suite {
	s := &suite{t: t, h: h, b: h.New(t, suiteName), want: map[string]page{}, replica: replica{}}
	c := Change{Write: map[string]string{}}
	for key, p := range seed {
		c.Write[key] = p.markdown()
	}
	s.apply(c)
	return s
}

// newListedSuite makes a backend holding the seed documents and applies a
// first, complete listing to the replica.
func newListedSuite(t *testing.T, h Harness) (*suite, Collected) {
	s := newSuite(t, h)
	first := s.list("")
	s.replica.apply(first)
	return s, first
}

// apply changes the backend and what the replica must hold. A document
// that breaks keeps its last good version in the replica (a consumer
// keeps what it had); a new broken one is not in it.
func (s *suite) apply(c Change) {
	s.t.Helper()
	if c.Write == nil && c.Remove == nil && c.Rename == nil && c.Break == nil {
		return
	}
	s.b.Apply(s.t, c)
	for from, to := range c.Rename {
		s.want[to] = s.want[from]
		delete(s.want, from)
	}
	for _, key := range c.Remove {
		delete(s.want, key)
	}
	for key, md := range c.Write {
		title, text, _ := strings.Cut(strings.TrimPrefix(md, "# "), "\n\n")
		s.want[key] = page{title, strings.TrimSpace(text)}
	}
}

// list collects a listing and checks what holds for every listing.
func (s *suite) list(cursor string) Collected {
	s.t.Helper()
	col, err := Collect(context.Background(), s.b.Source(), cursor)
	if err != nil {
		s.t.Fatalf("List(%q): %v", cursor, err)
	}
	prefix := suiteName + ":"
	handed := map[string]bool{}
	for _, d := range col.Docs {
		if handed[d.ID] {
			s.t.Errorf("List(%q) handed over %s twice", cursor, d.ID)
		}
		handed[d.ID] = true
		if !strings.HasPrefix(d.ID, prefix) || d.ID == prefix {
			s.t.Errorf("document ID %q does not start with %q", d.ID, prefix)
		}
		if d.Source != "" && d.Source != suiteName {
			s.t.Errorf("%s: Source = %q, want %q or empty", d.ID, d.Source, suiteName)
		}
		if d.Title == "" || d.UpdatedAt.IsZero() {
			s.t.Errorf("%s: title %q, updated %v; want both set", d.ID, d.Title, d.UpdatedAt)
		}
	}
	for _, f := range col.Failed {
		if handed[f.ID] {
			s.t.Errorf("List(%q) handed over %s and reported it failed", cursor, f.ID)
		}
		handed[f.ID] = true
	}
	for _, id := range slices.Concat(col.FailedIDs(), col.Deleted, col.Present) {
		if !strings.HasPrefix(id, prefix) {
			s.t.Errorf("List(%q) named %q, which does not start with %q", cursor, id, prefix)
		}
	}
	if cursor == "" && !col.Complete {
		s.t.Errorf("List(\"\") is not a complete listing")
	}
	if s.h.ListsAllIDs && !col.Complete {
		s.t.Errorf("List(%q) is not complete, though the source lists every ID", cursor)
	}
	return col
}

// check compares the replica with what it must hold.
func (s *suite) check(step string) {
	s.t.Helper()
	wantIDs := map[string]bool{}
	for key, p := range s.want {
		id := s.b.ID(key)
		wantIDs[id] = true
		d, ok := s.replica[id]
		switch {
		case !ok:
			s.t.Errorf("%s: %s (%s) is missing", step, id, key)
		case d.Title != p.title || !strings.Contains(d.Body, p.text):
			s.t.Errorf("%s: %s has title %q and body %q, want %q and %q", step, id, d.Title, d.Body, p.title, p.text)
		}
	}
	for id := range s.replica {
		if !wantIDs[id] {
			s.t.Errorf("%s: %s is still held, but the source no longer has it", step, id)
		}
	}
}

// replica is what a consumer of listings holds: documents by ID.
type replica map[string]docent.Document

// apply applies one listing the way the engine does: documents handed
// over replace what was held; a failed document keeps its old version;
// deletions remove, except documents also handed over; a complete listing
// removes every document it did not name.
func (r replica) apply(c Collected) {
	named := map[string]bool{}
	for _, id := range slices.Concat(docIDs(c.Docs), c.FailedIDs(), c.Present) {
		named[id] = true
	}
	if c.Complete {
		maps.DeleteFunc(r, func(id string, _ docent.Document) bool { return !named[id] })
	}
	for _, id := range c.Deleted {
		if !named[id] {
			delete(r, id)
		}
	}
	for _, d := range c.Docs {
		r[d.ID] = d
	}
}

// stopper is a Listing that fails every call with err and counts them.
type stopper struct {
	err   error
	calls int
}

func (s *stopper) Document(context.Context, docent.Document) error { s.calls++; return s.err }
func (s *stopper) Failed(context.Context, string, error) error     { s.calls++; return s.err }
func (s *stopper) Deleted(context.Context, ...string) error        { s.calls++; return s.err }
func (s *stopper) Present(context.Context, ...string) error        { s.calls++; return s.err }

func docIDs(docs []docent.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Synced is a source synced through the real engine into a real SQLite
// registry and local index, with a fake embedder and the real chunker:
// what a source's acceptance tests check against.
type Synced struct {
	T testing.TB
	// Src is the source each Sync lists (tests may replace it).
	Src connectors.Source
	Reg *store.DB
	Idx *local.Index
	Emb *Embedder
	Ch  search.Chunker
	Eng *connectors.Engine
}

// NewSynced opens the stores and the engine for src.
func NewSynced(t testing.TB, src connectors.Source) *Synced {
	t.Helper()
	s := &Synced{T: t, Src: src, Emb: NewEmbedder("v1")}
	s.Reg, s.Idx = OpenStores(t)
	s.Eng = connectors.NewEngine(s.Reg, s.Idx, s.Emb, s.Ch, nil, connectors.EngineOptions{})
	return s
}

// Sync runs the engine over Src and fails the test on a run-level error.
func (s *Synced) Sync() docent.RunResult {
	s.T.Helper()
	res, err := s.Eng.Sync(context.Background(), s.Src, nil)
	if err != nil {
		s.T.Fatalf("sync: %v", err)
	}
	return res
}

// Docs returns the registry's live documents of Src by ID.
func (s *Synced) Docs() map[string]docent.DocRecord {
	s.T.Helper()
	recs, err := s.Reg.Documents(context.Background(), s.Src.Name())
	if err != nil {
		s.T.Fatal(err)
	}
	return recs
}

// Indexed returns the index's chunk IDs of Src's documents by document.
func (s *Synced) Indexed() map[string][]string {
	s.T.Helper()
	m, err := s.Idx.ChunkIDs(context.Background(), s.Src.Name())
	if err != nil {
		s.T.Fatal(err)
	}
	return m
}

// Converged checks that the index and the registry hold what a complete
// listing of Src holds now (AssertConverged).
func (s *Synced) Converged() {
	s.T.Helper()
	want, err := Collect(context.Background(), s.Src, "")
	if err != nil {
		s.T.Fatal(err)
	}
	AssertConverged(s.T, s.Idx, s.Reg, s.Ch, s.Emb, s.Src.Name(), want.Docs)
}
