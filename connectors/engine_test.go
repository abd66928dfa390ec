package connectors_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/store"
)

// env is a sync engine over a real SQLite store and a real local index,
// both files under a temp dir.
type env struct {
	t    testing.TB
	db   *store.DB
	idx  *local.Index
	emb  search.Embedder
	ch   connectorstest.Chunker
	src  *connectorstest.Source
	opts connectors.EngineOptions
}

func newEnv(t testing.TB, emb search.Embedder) *env {
	t.Helper()
	db, idx := connectorstest.OpenStores(t)
	return &env{t: t, db: db, idx: idx, emb: emb, src: connectorstest.NewSource("hb")}
}

func (e *env) engine() *connectors.Engine {
	return connectors.NewEngine(e.db, e.idx, e.emb, e.ch, nil, e.opts)
}

// sync runs a healthy sync and fails the test on a run-level error.
func (e *env) sync() docent.RunResult {
	e.t.Helper()
	res, err := e.engine().Sync(context.Background(), e.src, nil)
	if err != nil {
		e.t.Fatalf("sync: %v", err)
	}
	return res
}

func (e *env) converged(want []docent.Document) {
	e.t.Helper()
	connectorstest.AssertConverged(e.t, e.idx, e.db, e.ch, e.emb, e.src.Name(), want)
}

func (e *env) chunkIDs() map[string][]string {
	e.t.Helper()
	m, err := e.idx.ChunkIDs(context.Background(), e.src.Name())
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

type counts struct{ added, updated, unchanged, deleted, failed int }

func countsOf(r docent.RunResult) counts {
	return counts{r.Added, r.Updated, r.Unchanged, r.Deleted, r.Failed}
}

func doc(path, body string) docent.Document { return connectorstest.Doc("hb", path, body) }

func TestSyncCounts(t *testing.T) {
	type step struct {
		name       string
		change     func(s *connectorstest.Source)
		full, incr counts // expected for a full listing and for an incremental one
		wantCursor string
	}
	steps := []step{
		{"initial", func(s *connectorstest.Source) {
			s.Put(doc("a.md", "Alpha one.\n\nAlpha two."), doc("b.md", "Bravo."), doc("c.md", "Charlie."))
		}, counts{added: 3}, counts{added: 3}, "1"},
		{"nothing changed", func(*connectorstest.Source) {}, counts{unchanged: 3}, counts{}, "1"},
		{"edit add delete", func(s *connectorstest.Source) {
			s.Put(doc("a.md", "Alpha one.\n\nAlpha three."), doc("d.md", "Delta."))
			s.Delete("hb:c.md")
		}, counts{added: 1, updated: 1, unchanged: 1, deleted: 1}, counts{added: 1, updated: 1, deleted: 1}, "3"},
		{"metadata only", func(s *connectorstest.Source) {
			d := doc("b.md", "Bravo.")
			d.Labels = []string{"test", "new-label"}
			s.Put(d)
		}, counts{updated: 1, unchanged: 2}, counts{updated: 1}, "4"},
		{"relisted unchanged", func(s *connectorstest.Source) {
			s.Put(doc("d.md", "Delta."))
		}, counts{unchanged: 3}, counts{unchanged: 1}, "5"},
		{"emptied document", func(s *connectorstest.Source) {
			s.Put(doc("d.md", "   "))
		}, counts{updated: 1, unchanged: 2}, counts{updated: 1}, "6"},
	}
	// "ids" is incremental with every existing ID named in each listing
	// (Listing.Present): deletions are found by absence, as a wiki source
	// finds them.
	for _, mode := range []string{"full", "incremental", "ids"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, connectorstest.NewEmbedder("v1"))
			e.src.SetIncremental(mode != "full")
			e.src.SetIDListing(mode == "ids")
			for _, s := range steps {
				s.change(e.src)
				res := e.sync()
				want := s.full
				if mode != "full" {
					want = s.incr
				}
				if got := countsOf(res); got != want {
					t.Errorf("%s: counts = %+v, want %+v (errors %v)", s.name, got, want, res.Errors)
				}
				// Seen: every document when the listing names them all,
				// else those handed over.
				wantSeen := len(e.src.Docs())
				if mode == "incremental" {
					wantSeen = want.added + want.updated + want.unchanged + want.failed
				}
				if res.Seen != wantSeen {
					t.Errorf("%s: seen = %d, want %d", s.name, res.Seen, wantSeen)
				}
				e.converged(e.src.Docs())
				run, err := e.db.LastRun(ctx, "hb")
				if err != nil {
					t.Fatal(err)
				}
				if run.Status != docent.RunOK || countsOf(run.RunResult) != want || run.Seen != res.Seen {
					t.Errorf("%s: recorded run = %+v", s.name, run)
				}
				if c, _ := e.db.Cursor(ctx, "hb"); c != s.wantCursor {
					t.Errorf("%s: cursor = %q, want %q", s.name, c, s.wantCursor)
				}
			}
			if ids := e.chunkIDs()["hb:d.md"]; len(ids) != 0 {
				t.Errorf("emptied document still has chunks %v", ids)
			}
			wantCursors := []string{"", "1", "1", "3", "4", "5"}
			if mode != "full" && !slices.Equal(e.src.Cursors(), wantCursors) {
				t.Errorf("cursors passed = %q, want %q", e.src.Cursors(), wantCursors)
			}
			deleted, err := e.db.Document(ctx, "hb:c.md")
			if err != nil || deleted.DeletedAt.IsZero() {
				t.Errorf("hb:c.md record = %+v, %v; want deleted", deleted, err)
			}
		})
	}
}

func TestSyncSkipsBadDocuments(t *testing.T) {
	ctx := context.Background()
	emb := connectorstest.NewEmbedder("v1")
	emb.FailOn = "unembeddable"
	e := newEnv(t, emb)
	e.ch.FailOn = "unchunkable"
	e.opts.MaxDocBytes = 200
	good := []docent.Document{doc("good1.md", "Fine text."), doc("good2.md", "More fine text.\n\nSecond part.")}
	wrongSource := doc("x.md", "Some text.")
	wrongSource.ID = "other:x.md"
	e.src.Put(good...)
	e.src.Put(
		doc("binary.md", "PNG\x00\x01\x02"),
		doc("latin1.md", "caf\xe9"),
		doc("big.md", strings.Repeat("word ", 100)),
		doc("chunk.md", "this is unchunkable"),
		doc("embed.md", "this is unembeddable"),
		wrongSource,
	)
	e.src.Fail("hb:unreadable.md", errors.New("permission denied"))

	res := e.sync()
	if got, want := countsOf(res), (counts{added: 2, failed: 7}); got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
	var failedIDs []string
	for _, de := range res.Errors {
		failedIDs = append(failedIDs, de.ID)
		if de.Err == "" {
			t.Errorf("error for %s has no message", de.ID)
		}
	}
	slices.Sort(failedIDs)
	wantFailed := []string{"hb:big.md", "hb:binary.md", "hb:chunk.md", "hb:embed.md", "hb:latin1.md", "hb:unreadable.md", "other:x.md"}
	if !slices.Equal(failedIDs, wantFailed) {
		t.Errorf("failed IDs = %v, want %v", failedIDs, wantFailed)
	}
	e.converged(good)
	run, _ := e.db.LastRun(ctx, "hb")
	if run.Status != docent.RunOK || len(run.Errors) != 7 {
		t.Errorf("recorded run = %+v", run)
	}

	// A document that turns bad keeps its indexed version and is not deleted.
	before := e.chunkIDs()["hb:good1.md"]
	e.src.Put(doc("good1.md", "now binary \x00"))
	res = e.sync()
	if res.Failed != 8 || res.Deleted != 0 || res.Unchanged != 1 {
		t.Errorf("second run = %+v", countsOf(res))
	}
	if after := e.chunkIDs()["hb:good1.md"]; !slices.Equal(before, after) {
		t.Errorf("chunks of the failed document changed: %v -> %v", before, after)
	}
	if _, err := e.db.Document(ctx, "hb:good1.md"); err != nil {
		t.Errorf("failed document lost from the registry: %v", err)
	}
}

// A document that fails to chunk or embed during an incremental sync must
// be listed again by the next run: the cursor is not advanced past it.
func TestSyncRetriesEngineFailuresIncrementally(t *testing.T) {
	tests := []struct {
		name string
		// breakRun sets up a failure of hb:a.md's new version for one run
		// and returns the function that heals it.
		breakRun   func(e *env) (heal func())
		wantFailed string // the error prefix recorded for hb:a.md
		wantCursor string // cursor stored after the broken run
	}{
		{"embed fails for one run", func(e *env) func() {
			emb := e.emb.(*connectorstest.Embedder)
			emb.FailOn = "flaky"
			return func() { emb.FailOn = "" }
		}, "embed: ", "1"},
		{"chunk fails for one run", func(e *env) func() {
			e.ch.FailOn = "flaky"
			return func() { e.ch.FailOn = "" }
		}, "chunk: ", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, connectorstest.NewEmbedder("v1"))
			e.src.SetIncremental(true)
			e.src.Put(doc("a.md", "Alpha old."), doc("b.md", "Bravo old."))
			e.sync() // cursor "1"

			e.src.Put(doc("a.md", "Alpha new and flaky."), doc("b.md", "Bravo new."))
			heal := tt.breakRun(e)
			res := e.sync()
			if got, want := countsOf(res), (counts{updated: 1, failed: 1}); got != want {
				t.Fatalf("broken run counts = %+v, want %+v (errors %v)", got, want, res.Errors)
			}
			if res.Errors[0].ID != "hb:a.md" || !strings.HasPrefix(res.Errors[0].Err, tt.wantFailed) {
				t.Errorf("broken run errors = %+v, want hb:a.md %q...", res.Errors, tt.wantFailed)
			}
			if c, _ := e.db.Cursor(ctx, "hb"); c != tt.wantCursor {
				t.Errorf("cursor after the broken run = %q, want %q (not advanced)", c, tt.wantCursor)
			}

			heal()
			res = e.sync() // nothing changed in the source since the broken run
			if got, want := countsOf(res), (counts{updated: 1, unchanged: 1}); got != want {
				t.Errorf("healthy run counts = %+v, want %+v (errors %v)", got, want, res.Errors)
			}
			if c, _ := e.db.Cursor(ctx, "hb"); c != "2" {
				t.Errorf("cursor after the healthy run = %q, want %q", c, "2")
			}
			if got, want := e.src.Cursors(), []string{"", "1", "1"}; !slices.Equal(got, want) {
				t.Errorf("cursors passed = %q, want %q", got, want)
			}
			e.converged(e.src.Docs()) // hb:a.md holds its new content
		})
	}

	// Failures the source reports are permanent content problems: they do
	// not hold the cursor back.
	t.Run("source-reported failure advances the cursor", func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, connectorstest.NewEmbedder("v1"))
		e.src.SetIncremental(true)
		e.src.Put(doc("a.md", "Alpha."))
		e.sync()
		e.src.Put(doc("b.md", "Bravo."))
		e.src.Fail("hb:image.md", fmt.Errorf("%w: image.md", connectors.ErrBinary))
		res := e.sync()
		if got, want := countsOf(res), (counts{added: 1, failed: 1}); got != want {
			t.Errorf("counts = %+v, want %+v", got, want)
		}
		if res.Errors[0].Retry {
			t.Errorf("a binary file is marked for retry: %+v", res.Errors[0])
		}
		if c, _ := e.db.Cursor(ctx, "hb"); c != "3" {
			t.Errorf("cursor = %q, want %q", c, "3")
		}
	})
}

func TestSyncSourceErrorLeavesIndexUntouched(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	e.src.SetIncremental(true)
	e.src.Put(doc("a.md", "Alpha."), doc("b.md", "Bravo."))
	e.sync()
	before := e.chunkIDs()
	docs := e.src.Docs()

	e.src.Put(doc("a.md", "Alpha changed."))
	e.src.Delete("hb:b.md")
	e.src.SetErr(errors.New("503 from wiki"))
	res, err := e.engine().Sync(ctx, e.src, nil)
	if err == nil || !strings.Contains(err.Error(), "503 from wiki") {
		t.Fatalf("Sync error = %v, want the source's error", err)
	}
	if !strings.Contains(res.Err, "503 from wiki") {
		t.Errorf("docent.RunResult.Err = %q", res.Err)
	}
	if after := e.chunkIDs(); !mapsEqual(before, after) {
		t.Errorf("index changed after a source error: %v -> %v", before, after)
	}
	e.converged(docs)
	run, _ := e.db.LastRun(ctx, "hb")
	if run.Status != docent.RunFailed || !strings.Contains(run.Err, "503 from wiki") {
		t.Errorf("recorded run = %+v", run)
	}
	if c, _ := e.db.Cursor(ctx, "hb"); c != "1" {
		t.Errorf("cursor advanced to %q after a failed run", c)
	}

	e.src.SetErr(nil)
	res = e.sync()
	if got, want := countsOf(res), (counts{updated: 1, deleted: 1}); got != want {
		t.Errorf("recovery run counts = %+v, want %+v", got, want)
	}
	e.converged(e.src.Docs())
}

// A source that fails part way through a listing keeps what it handed over
// indexed, but the run deletes nothing (the listing did not name every
// document) and keeps the old cursor; the next run converges.
func TestSyncSourceFailsPartWay(t *testing.T) {
	for _, mode := range []string{"full", "incremental", "ids"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, connectorstest.NewEmbedder("v1"))
			e.opts.BatchSize = 1 // a.md is written when b.md arrives
			e.src.SetIncremental(mode != "full")
			e.src.SetIDListing(mode == "ids")
			e.src.Put(doc("a.md", "Alpha."), doc("b.md", "Bravo."), doc("c.md", "Charlie."), doc("z.md", "Zulu."))
			e.sync()

			e.src.Put(doc("a.md", "Alpha revised."), doc("b.md", "Bravo revised."), doc("c.md", "Charlie revised."))
			e.src.Delete("hb:z.md")
			e.src.SetErrAfter(2, errors.New("page 2 of the listing: 502 from wiki"))
			res, err := e.engine().Sync(ctx, e.src, nil)
			if err == nil || !strings.Contains(err.Error(), "502 from wiki") {
				t.Fatalf("Sync error = %v, want the source's", err)
			}
			if res.Updated != 1 || res.Deleted != 0 {
				t.Errorf("failed run = %+v, want a.md updated and nothing deleted", countsOf(res))
			}
			recs, err := e.db.Documents(ctx, "hb")
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := recs["hb:z.md"]; !ok || len(e.chunkIDs()["hb:z.md"]) == 0 {
				t.Error("z.md was deleted by a listing that failed")
			}
			if c, _ := e.db.Cursor(ctx, "hb"); c != "1" {
				t.Errorf("cursor = %q after a failed listing, want %q", c, "1")
			}
			if run, _ := e.db.LastRun(ctx, "hb"); run.Status != docent.RunFailed {
				t.Errorf("recorded run = %+v", run)
			}

			e.src.SetErr(nil)
			res = e.sync()
			// a.md was written by the failed run: it is listed again, unchanged.
			want := counts{updated: 2, unchanged: 1, deleted: 1}
			if got := countsOf(res); got != want {
				t.Errorf("recovery counts = %+v, want %+v", got, want)
			}
			e.converged(e.src.Docs())
		})
	}
}

// A document the source cannot read for a transient reason (a timeout) is
// skipped and marked for retry; the cursor stays, so the next run lists it
// again even though it did not change since.
func TestSyncRetriesTransientSourceFailures(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	e.src.SetIncremental(true)
	e.src.Put(doc("a.md", "Alpha old."), doc("b.md", "Bravo old."))
	e.sync() // cursor "1"

	e.src.Put(doc("a.md", "Alpha new."), doc("b.md", "Bravo new.")) // version 2
	e.src.Unreadable("hb:a.md", fmt.Errorf("fetch page: %w", context.DeadlineExceeded))
	res := e.sync()
	if got, want := countsOf(res), (counts{updated: 1, failed: 1}); got != want {
		t.Fatalf("counts = %+v, want %+v (errors %v)", got, want, res.Errors)
	}
	if de := res.Errors[0]; de.ID != "hb:a.md" || !de.Retry || !strings.Contains(de.Err, "deadline exceeded") {
		t.Errorf("error = %+v, want hb:a.md marked for retry", de)
	}
	if c, _ := e.db.Cursor(ctx, "hb"); c != "1" {
		t.Errorf("cursor = %q, want %q (held for the retry)", c, "1")
	}
	if run, _ := e.db.LastRun(ctx, "hb"); run.Status != docent.RunOK || len(run.Errors) != 1 || !run.Errors[0].Retry {
		t.Errorf("recorded run = %+v", run)
	}

	e.src.Unreadable("hb:a.md", nil) // the page answers again, unchanged
	res = e.sync()
	if got, want := countsOf(res), (counts{updated: 1, unchanged: 1}); got != want {
		t.Errorf("retry counts = %+v, want %+v (errors %v)", got, want, res.Errors)
	}
	if got, want := e.src.Cursors(), []string{"", "1", "1"}; !slices.Equal(got, want) {
		t.Errorf("cursors passed = %q, want %q", got, want)
	}
	if c, _ := e.db.Cursor(ctx, "hb"); c != "2" {
		t.Errorf("cursor = %q after the retry, want %q", c, "2")
	}
	e.converged(e.src.Docs())
}

// listFunc is a Source whose listing is a function.
type listFunc func(ctx context.Context, l connectors.Listing) error

func (listFunc) Name() string { return "hb" }

func (f listFunc) List(ctx context.Context, _ string, l connectors.Listing) (connectors.Listed, error) {
	return connectors.Listed{Cursor: "c", Complete: true}, f(ctx, l)
}

// A source that hands a document twice, or names another source's
// document, has the extra entries skipped and reported; the first version
// handed over stands.
func TestSyncListingMistakes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	first, second := doc("a.md", "Alpha first."), doc("a.md", "Alpha second.")
	foreign := doc("x.md", "Other.")
	foreign.ID = "other:x.md"
	src := listFunc(func(ctx context.Context, l connectors.Listing) error {
		for _, d := range []docent.Document{first, second, foreign} {
			if err := l.Document(ctx, d); err != nil {
				return err
			}
		}
		return l.Failed(ctx, "hb:a.md", errors.New("unreadable"))
	})
	res, err := e.engine().Sync(ctx, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, de := range res.Errors {
		got = append(got, de.ID+": "+de.Err)
	}
	want := []string{"hb:a.md: listed twice", `other:x.md: document ID must start with "hb:"`, "hb:a.md: listed twice"}
	if !slices.Equal(got, want) || res.Added != 1 || res.Seen != 2 {
		t.Errorf("errors = %q, added %d, seen %d; want %q, 1 added, 2 seen", got, res.Added, res.Seen, want)
	}
	connectorstest.AssertConverged(t, e.idx, e.db, e.ch, e.emb, "hb", []docent.Document{first})
}

// A source that goes on listing after the engine failed gets the same
// error back from every call, and the run fails with the engine's error.
func TestSyncEngineFailureStopsListing(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	e.opts.BatchSize = 1
	e.src.Put(doc("a.md", "Alpha."))
	e.sync()                                     // the index has its embedder: the next run's first write is a document's
	faults := connectorstest.NewFaults(0, false) // every write fails
	eng := connectors.NewEngine(connectorstest.FaultRegistry{Registry: e.db, Faults: faults},
		connectorstest.FaultIndex{Index: e.idx, Faults: faults}, e.emb, e.ch, nil, e.opts)
	var errs []error
	src := listFunc(func(ctx context.Context, l connectors.Listing) error {
		for i := range 4 { // ignores the errors, as a buggy source would
			errs = append(errs, l.Document(ctx, doc(fmt.Sprintf("d%d.md", i), "Text.")))
		}
		return nil
	})
	_, err := eng.Sync(ctx, src, nil)
	if !errors.Is(err, connectorstest.ErrCrash) {
		t.Fatalf("Sync error = %v, want the failed write's", err)
	}
	// d0 waits in the batch; d1's arrival writes d0, which fails: from
	// then on every call returns the failure.
	if len(errs) != 4 || errs[0] != nil {
		t.Fatalf("Document calls returned %v, want 4 calls, the first accepted", errs)
	}
	for i, got := range errs[1:] {
		if !errors.Is(got, connectorstest.ErrCrash) {
			t.Errorf("Document call %d returned %v, want the engine's failure", i+2, got)
		}
	}
	if faults.Writes() != 1 {
		t.Errorf("%d writes attempted, want 1: nothing is written after a failure", faults.Writes())
	}
}

func mapsEqual(a, b map[string][]string) bool {
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

func TestSyncInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	emb := connectorstest.NewEmbedder("v1")
	e := newEnv(t, emb)
	e.opts.BatchSize = 1
	e.src.SetIncremental(true)
	e.src.Put(doc("a.md", "Alpha."))
	e.sync()

	for i := range 6 {
		e.src.Put(doc(fmt.Sprintf("n%d.md", i), fmt.Sprintf("New document %d.", i)))
	}
	calls := 0
	emb.OnEmbed(func() {
		calls++
		if calls == 3 {
			cancel()
		}
	})
	var last connectors.Progress
	res, err := e.engine().Sync(ctx, e.src, func(p connectors.Progress) { last = p })
	if !errors.Is(err, connectors.ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Sync error = %v, want ErrInterrupted and context.Canceled", err)
	}
	if res.Err != "interrupted" || res.Added != 2 {
		t.Errorf("result = %+v, want interrupted after 2 documents", res)
	}
	if last.Done != 2 || !last.Listing || last.Total != 0 {
		t.Errorf("last progress = %+v, want 2 done while listing", last)
	}
	run, _ := e.db.LastRun(context.Background(), "hb")
	if run.Status != docent.RunFailed || run.Err != "interrupted" {
		t.Errorf("recorded run = %+v", run)
	}
	if c, _ := e.db.Cursor(context.Background(), "hb"); c != "1" {
		t.Errorf("cursor advanced to %q by an interrupted run", c)
	}

	emb.OnEmbed(nil)
	res = e.sync()
	if got, want := countsOf(res), (counts{added: 4, unchanged: 2}); got != want {
		t.Errorf("resumed run counts = %+v, want %+v", got, want)
	}
	e.converged(e.src.Docs())
}

// TestSyncCrashAtEveryWrite stops a run at each of its writes in turn (a
// panic standing for kill -9, or an error from the failing store), then
// runs again with healthy stores and checks the index, the registry and
// the source agree.
func TestSyncCrashAtEveryWrite(t *testing.T) {
	for _, c := range []struct {
		trainable, incremental, panics bool
		batch                          int // chunks per embedding call; 1 writes while the source lists
	}{
		// (incremental, panic, batch 1) is TestSyncSurvivesKill's case, with a real kill.
		{false, false, true, 0},
		{false, false, true, 1},
		{true, false, true, 0},
		{true, true, true, 1},
		{false, true, false, 0}, // the failing write returns an error instead
		{false, true, false, 1},
	} {
		name := fmt.Sprintf("trainable=%v/incremental=%v/panic=%v/batch=%d", c.trainable, c.incremental, c.panics, c.batch)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			crashAtEveryWrite(t, c.trainable, c.incremental, c.panics, c.batch)
		})
	}
}

func crashAtEveryWrite(t *testing.T, trainable, incremental, panics bool, batch int) {
	ctx := context.Background()
	for n := 0; ; n++ {
		var emb search.Embedder = connectorstest.NewEmbedder("v1")
		if trainable {
			emb = &connectorstest.Trainable{}
		}
		e := newEnv(t, emb)
		e.opts.BatchSize = batch
		e.src.SetIncremental(incremental)
		e.src.Put(doc("a.md", "Alpha one.\n\nAlpha two."), doc("b.md", "Bravo."), doc("c.md", "Charlie."))
		e.sync()
		// The next run updates, adds and deletes (and retrains the model).
		e.src.Put(doc("a.md", "Alpha one.\n\nAlpha revised."), doc("d.md", "Delta words."))
		e.src.Delete("hb:c.md")

		faults := connectorstest.NewFaults(n, panics)
		eng := connectors.NewEngine(connectorstest.FaultRegistry{Registry: e.db, Faults: faults},
			connectorstest.FaultIndex{Index: e.idx, Faults: faults}, e.emb, e.ch, nil, e.opts)
		crashed := func() (crashed bool) {
			defer func() {
				if r := recover(); r != nil {
					if r != connectorstest.ErrCrash {
						panic(r)
					}
					crashed = true
				}
			}()
			_, err := eng.Sync(ctx, e.src, nil)
			if err != nil && !errors.Is(err, connectorstest.ErrCrash) {
				t.Fatalf("crash at write %d: unexpected error %v", n+1, err)
			}
			if err != nil {
				run, _ := e.db.LastRun(ctx, "hb")
				if run.Status != docent.RunFailed {
					t.Errorf("crash at write %d: run recorded as %q", n+1, run.Status)
				}
			}
			return err != nil
		}()
		if !crashed {
			if faults.Writes() > n {
				t.Fatalf("write %d failed but the run succeeded", n+1)
			}
			if n < 4 {
				t.Fatalf("a run with only %d writes: the test does not exercise crashes", n)
			}
			t.Logf("converged after a crash at each of the run's %d writes", n)
			return // n is past the run's last write
		}
		res := e.sync()
		if res.Failed != 0 {
			t.Errorf("crash at write %d: recovery run failed documents: %v", n+1, res.Errors)
		}
		e.converged(e.src.Docs())
		if t.Failed() {
			t.Fatalf("did not converge after a crash at write %d", n+1)
		}
	}
}

func TestSyncReconcilesIndexWithRegistry(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	e.src.SetIncremental(true)
	e.src.Put(doc("a.md", "Alpha."), doc("b.md", "Bravo."))
	e.sync()

	// An orphan in the index (written before a crash, never registered)
	// and a registered document missing from the index.
	vec, _ := e.emb.EmbedDocuments(ctx, []string{"ghost"})
	if err := e.idx.Upsert(ctx, []docent.Chunk{{ID: "ghost1", DocID: "hb:ghost.md", Source: "hb", Text: "ghost", Vector: vec[0]}}); err != nil {
		t.Fatal(err)
	}
	if err := e.idx.DeleteDocs(ctx, "hb:b.md"); err != nil {
		t.Fatal(err)
	}
	res := e.sync()
	if got, want := countsOf(res), (counts{updated: 1, unchanged: 1}); got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
	if cs := e.src.Cursors(); cs[len(cs)-1] != "" {
		t.Errorf("cursor passed = %q, want a full listing after finding the index out of step", cs[len(cs)-1])
	}
	e.converged(e.src.Docs())
}

func TestSyncBatchesEmbeddings(t *testing.T) {
	emb := connectorstest.NewEmbedder("v1")
	e := newEnv(t, emb)
	e.opts.BatchSize = 4
	for i := range 10 {
		e.src.Put(doc(fmt.Sprintf("d%02d.md", i), fmt.Sprintf("Document number %d.", i)))
	}
	var seen []connectors.Progress
	res, err := e.engine().Sync(context.Background(), e.src, func(p connectors.Progress) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 10 {
		t.Fatalf("added = %d", res.Added)
	}
	if calls, texts := emb.Calls(); calls != 3 || texts != 10 {
		t.Errorf("embed calls = %d for %d texts, want 3 for 10", calls, texts)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].Done < seen[i-1].Done {
			t.Errorf("progress went backwards: %+v", seen)
		}
	}
	if last := seen[len(seen)-1]; last.Done != 10 || last.Total != 10 || last.Source != "hb" || last.Listing {
		t.Errorf("last progress = %+v", last)
	}
	// Documents are written while the source lists: the first two batches
	// are done before the listing ends.
	if first := seen[0]; !first.Listing || first.Total != 0 {
		t.Errorf("first progress = %+v, want one reported while listing", first)
	}
	if i := slices.IndexFunc(seen, func(p connectors.Progress) bool { return !p.Listing }); i < 0 || seen[i-1].Done != 8 {
		t.Errorf("progress = %+v, want 8 documents written while listing", seen)
	}
	e.converged(e.src.Docs())
}

func TestSyncTrainableReembedsEverything(t *testing.T) {
	ctx := context.Background()
	tr := &connectorstest.Trainable{}
	e := newEnv(t, tr)
	e.opts.StageDir = t.TempDir()
	defer func() {
		if left, err := os.ReadDir(e.opts.StageDir); err != nil || len(left) > 0 {
			t.Errorf("stage directory holds %v after the syncs (%v)", left, err)
		}
	}()
	other := connectorstest.NewSource("wiki")
	other.Put(connectorstest.Doc("wiki", "w.md", "Wiki page about expenses."))
	eng := e.engine()
	if _, err := eng.Sync(ctx, other, nil); err != nil {
		t.Fatal(err)
	}
	e.src.Put(doc("a.md", "Alpha policy."), doc("b.md", "Bravo policy."))
	e.sync()
	name1 := tr.Name()
	e.converged(e.src.Docs())
	connectorstest.AssertConverged(t, e.idx, e.db, e.ch, tr, "wiki", other.Docs())

	// Nothing changed: no fitting, no embedding.
	fits := tr.Fits()
	_, texts := tr.Calls()
	if res := e.sync(); res.Unchanged != 2 {
		t.Fatalf("unchanged = %d", res.Unchanged)
	}
	if _, texts2 := tr.Calls(); tr.Fits() != fits || texts2 != texts {
		t.Errorf("an unchanged run fitted %d times and embedded %d texts", tr.Fits()-fits, texts2-texts)
	}

	// New vocabulary retrains the model: every chunk of every source is re-embedded.
	e.src.Put(doc("c.md", "Charlie brand new vocabulary."))
	e.sync()
	if tr.Name() == name1 {
		t.Fatal("model did not change")
	}
	total, _ := e.idx.Count(ctx)
	if _, texts3 := tr.Calls(); texts3-texts != total {
		t.Errorf("embedded %d texts, want every one of the %d chunks once", texts3-texts, total)
	}
	e.converged(e.src.Docs())
	connectorstest.AssertConverged(t, e.idx, e.db, e.ch, tr, "wiki", other.Docs())
}

// When a run retrains the model and a changed document then fails to
// embed, its stored chunks (old-model vectors) leave the index; the next
// run finds it out of step with the registry and indexes it.
func TestSyncTrainableDropsStaleVectorsOfFailedDocument(t *testing.T) {
	ctx := context.Background()
	tr := &connectorstest.Trainable{}
	e := newEnv(t, tr)
	e.src.SetIncremental(true)
	e.src.Put(doc("a.md", "Alpha policy."), doc("b.md", "Bravo policy."))
	e.sync()

	tr.FailOn = "unembeddable"
	e.src.Put(doc("a.md", "Alpha unembeddable wording."), doc("c.md", "Charlie brand new vocabulary."))
	res := e.sync()
	if got, want := countsOf(res), (counts{added: 1, failed: 1}); got != want || !res.Errors[0].Retry {
		t.Fatalf("counts = %+v, want %+v with a retry (errors %v)", got, want, res.Errors)
	}
	if ids := e.chunkIDs()["hb:a.md"]; len(ids) != 0 {
		t.Errorf("a.md keeps chunks %v with the old model's vectors", ids)
	}
	if name, _ := e.idx.EmbedderName(ctx); name != tr.Name() {
		t.Errorf("index embedder = %q, want the new model %q", name, tr.Name())
	}

	tr.FailOn = ""
	res = e.sync()
	if res.Updated != 1 || res.Failed != 0 {
		t.Errorf("recovery = %+v, want a.md updated (errors %v)", countsOf(res), res.Errors)
	}
	e.converged(e.src.Docs())
}

func TestSyncPlainEmbedderSwitchReembeds(t *testing.T) {
	for _, c := range []struct {
		name string
		next *connectorstest.Embedder
	}{
		{"same dimension", connectorstest.NewEmbedder("v2")},
		{"new dimension", connectorstest.NewEmbedderDim("v3", 8)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, connectorstest.NewEmbedder("v1"))
			e.src.Put(doc("a.md", "Alpha.\n\nMore alpha."), doc("b.md", "Bravo."))
			e.sync()
			if name, _ := e.idx.EmbedderName(ctx); name != e.emb.Name() {
				t.Fatalf("embedder name = %q, want %q", name, e.emb.Name())
			}

			e.emb = c.next
			e.src.Put(doc("c.md", "Charlie."))
			res := e.sync()
			if got, want := countsOf(res), (counts{added: 1, unchanged: 2}); got != want {
				t.Errorf("counts = %+v, want %+v", got, want)
			}
			if _, texts := c.next.Calls(); texts != 4 {
				t.Errorf("embedded %d texts, want all 4 chunks once", texts)
			}
			e.converged(e.src.Docs())
		})
	}
}

// TestSyncWithSearchChunker runs the engine with the real structure-aware
// chunker.
func TestSyncWithSearchChunker(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	ch := search.Chunker{TargetTokens: 40}
	eng := connectors.NewEngine(e.db, e.idx, e.emb, ch, nil, connectors.EngineOptions{})
	long := strings.Repeat("Employees accrue paid leave every month of service. ", 12)
	e.src.Put(
		doc("leave.md", "# Leave\n\n## Parental\n\nSixteen weeks.\n\n## Annual\n\n"+long),
		doc("faq.md", "# FAQ\n\n## How do I expense?\n\nUse the portal.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"),
	)
	if _, err := eng.Sync(ctx, e.src, nil); err != nil {
		t.Fatal(err)
	}
	connectorstest.AssertConverged(t, e.idx, e.db, ch, e.emb, "hb", e.src.Docs())
	if ids := e.chunkIDs()["hb:leave.md"]; len(ids) < 3 {
		t.Errorf("leave.md has %d chunks, want the long section split", len(ids))
	}

	e.src.Put(doc("leave.md", "# Leave\n\n## Parental\n\nTwenty weeks.\n\n## Annual\n\n"+long))
	res, err := eng.Sync(ctx, e.src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := countsOf(res), (counts{updated: 1, unchanged: 1}); got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
	connectorstest.AssertConverged(t, e.idx, e.db, ch, e.emb, "hb", e.src.Docs())
}

var _ connectors.Chunker = search.Chunker{}

// benchDocs returns n markdown documents of a few paragraphs each.
func benchDocs(n int) []docent.Document {
	docs := make([]docent.Document, n)
	for i := range docs {
		var b strings.Builder
		fmt.Fprintf(&b, "# Page %d\n\n", i)
		for s := range 4 {
			fmt.Fprintf(&b, "## Section %d\n\nPolicy %d-%d explains how requests are filed, approved and audited by the team.\n\n", s, i, s)
		}
		docs[i] = doc(fmt.Sprintf("p%05d.md", i), b.String())
	}
	return docs
}

// BenchmarkSync measures a first sync of 1000 documents (chunk, embed with
// the fake embedder, write the local index and the registry) and a re-sync
// in which nothing changed.
func BenchmarkSync(b *testing.B) {
	docs := benchDocs(1000)
	b.Run("initial-1000", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			e := newEnv(b, connectorstest.NewEmbedder("v1"))
			e.src.Put(docs...)
			eng := connectors.NewEngine(e.db, e.idx, e.emb, search.Chunker{}, nil, connectors.EngineOptions{})
			b.StartTimer()
			if _, err := eng.Sync(context.Background(), e.src, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unchanged-1000", func(b *testing.B) {
		e := newEnv(b, connectorstest.NewEmbedder("v1"))
		e.src.Put(docs...)
		eng := connectors.NewEngine(e.db, e.idx, e.emb, search.Chunker{}, nil, connectors.EngineOptions{})
		if _, err := eng.Sync(context.Background(), e.src, nil); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := eng.Sync(context.Background(), e.src, nil)
			if err != nil || res.Unchanged != len(docs) {
				b.Fatalf("%+v %v", res, err)
			}
		}
	})
}

// TestSyncOnChange: the engine tells OnChange about each run that changed
// the index (added, updated or deleted documents), and only those.
func TestSyncOnChange(t *testing.T) {
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	changes := 0
	e.opts.OnChange = func() { changes++ }
	for _, step := range []struct {
		name   string
		change func()
		want   int
	}{
		{"added", func() { e.src.Put(doc("a.md", "# A\n\nAlpha.\n"), doc("b.md", "# B\n\nBeta.\n")) }, 1},
		{"unchanged", func() {}, 1},
		{"updated", func() { e.src.Put(doc("a.md", "# A\n\nAlpha, changed.\n")) }, 2},
		{"deleted", func() { e.src.Delete("hb:b.md") }, 3},
	} {
		step.change()
		e.sync()
		if changes != step.want {
			t.Errorf("after the %s run: OnChange called %d times in all, want %d", step.name, changes, step.want)
		}
	}
}

// The registry records each embedding batch's documents in one write, not
// one write a document: 20 one-chunk documents in batches of 8 are three
// record writes (and the cursor), and the run converges.
func TestSyncRecordsEachBatchInOneWrite(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	e.opts.BatchSize = 8
	var docs []docent.Document
	for i := range 20 {
		d := doc(fmt.Sprintf("d%02d.md", i), fmt.Sprintf("Page %d says one thing.", i))
		e.src.Put(d)
		docs = append(docs, d)
	}
	regWrites := connectorstest.NewFaults(-1, false)
	eng := connectors.NewEngine(connectorstest.FaultRegistry{Registry: e.db, Faults: regWrites}, e.idx, e.emb, e.ch, nil, e.opts)
	res, err := eng.Sync(ctx, e.src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 20 {
		t.Fatalf("added %d, want 20", res.Added)
	}
	if got := regWrites.Writes(); got != 3+1 {
		t.Errorf("%d registry writes, want 4: one per batch of 8 documents, then the cursor", got)
	}
	e.converged(docs)
}
