package connectors_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/examples/handbook"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/typesense"
	"github.com/docent-hq/docent/search/typesense/typesensetest"
	"github.com/docent-hq/docent/store"
)

// hooked is a Trainable embedder with a hook run before each
// EmbedDocuments call (to look at the served index mid-run, or to make
// the provider fail).
type hooked struct {
	search.Trainable
	mu     sync.Mutex
	before func() error
}

func (h *hooked) setBefore(fn func() error) {
	h.mu.Lock()
	h.before = fn
	h.mu.Unlock()
}

func (h *hooked) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	before := h.before
	h.mu.Unlock()
	if before != nil {
		if err := before(); err != nil {
			return nil, err
		}
	}
	return h.Trainable.EmbedDocuments(ctx, texts)
}

var _ search.Trainable = (*hooked)(nil)

// handbookDocs returns n of the handbook's Markdown pages as documents
// of source "hb", sorted by path (a part keeps the tests quick: checking
// that every chunk holds the right vector is a vector query per chunk).
func handbookDocs(t *testing.T, n int) []docent.Document {
	t.Helper()
	var docs []docent.Document
	err := handbook.Pages(func(path, text string) error {
		docs = append(docs, connectorstest.Doc("hb", path, text))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < n {
		t.Fatalf("handbook has %d pages, want %d", len(docs), n)
	}
	return docs[:n]
}

// servedState is what the alias serves: its embedder and every chunk's vector.
type servedState struct {
	name    string
	vectors map[string][]float32
}

func readServed(t *testing.T, ix *typesense.Index) (servedState, error) {
	ctx := context.Background()
	name, err := ix.EmbedderName(ctx)
	if err != nil {
		return servedState{}, err
	}
	var ids []string
	if err := ix.Scan(ctx, func(c docent.Chunk) error { ids = append(ids, c.ID); return nil }); err != nil {
		return servedState{}, err
	}
	vs, err := ix.Vectors(ctx, ids)
	if err != nil {
		return servedState{}, err
	}
	return servedState{name: name, vectors: vs}, nil
}

func sameVectors(a, b map[string][]float32) bool {
	return maps.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
}

// typesenseEnv is a sync engine over a real SQLite registry and the
// Typesense backend against the in-repo server, with a Trainable embedder.
type typesenseEnv struct {
	c     *typesensetest.Cluster
	ix    *typesense.Index
	probe *typesense.Index // another process's view of the alias
	db    *store.DB
	emb   *hooked
	src   *connectorstest.Source
}

func newTypesenseEnv(t *testing.T, tr search.Trainable) *typesenseEnv {
	t.Helper()
	ctx := context.Background()
	c, err := typesensetest.New(1, typesensetest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	open := func() *typesense.Index {
		ix, err := typesense.Open(ctx, typesense.Options{Nodes: c.URLs(), APIKey: c.APIKey(), Alias: "docent_chunks"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	db, _ := connectorstest.OpenStores(t)
	emb := &hooked{Trainable: tr}
	return &typesenseEnv{c: c, ix: open(), probe: open(), db: db, emb: emb, src: connectorstest.NewSource("hb")}
}

func (e *typesenseEnv) sync() (docent.RunResult, error) {
	eng := connectors.NewEngine(e.db, e.ix, e.emb, connectorstest.Chunker{}, nil, connectors.EngineOptions{BatchSize: 8})
	return eng.Sync(context.Background(), e.src, nil)
}

// refitSetup syncs a part of the handbook (the model learns it), then
// changes the source enough that the next run refits the model: the rest
// of the handbook added, one page edited, one deleted. It returns the
// documents the source then holds and the served state after the first run.
func refitSetup(t *testing.T, e *typesenseEnv) ([]docent.Document, servedState) {
	t.Helper()
	docs := handbookDocs(t, 14)
	half := len(docs) / 2
	e.src.Put(docs[:half]...)
	if _, err := e.sync(); err != nil {
		t.Fatal(err)
	}
	old, err := readServed(t, e.probe)
	if err != nil || old.name != e.emb.Name() || len(old.vectors) == 0 {
		t.Fatalf("first sync: served %q with %d chunks, %v; want the trained model %q", old.name, len(old.vectors), err, e.emb.Name())
	}
	edited := docs[1]
	edited.Body += "\n\nAddendum: expense reports are due on the fifth working day.\n"
	e.src.Put(edited)
	e.src.Delete(docs[2].ID)
	e.src.Put(docs[half:]...)
	want := slices.Clone(docs)
	want[1] = edited
	want = slices.Delete(want, 2, 3)
	return want, old
}

// TestSyncTrainableRefitTypesenseNewVersion: with the Typesense backend
// and the offline embedder, a run whose corpus drifts enough to refit the
// model re-embeds the unchanged stored chunks and the run's changed
// documents into one new collection version, and moves the alias once:
// while the run embeds, the alias serves the previous model's index whole
// (checked at every embedding call and by queries in a loop), and
// afterwards every chunk holds the new model's vector.
func TestSyncTrainableRefitTypesenseNewVersion(t *testing.T) {
	e := newTypesenseEnv(t, offline.NewEmbedder(offline.Options{Dim: 32}))
	want, old := refitSetup(t, e)
	if !strings.HasPrefix(old.name, "offline-ppmi-svd-32@") {
		t.Fatalf("first sync: served %q, want a trained offline model", old.name)
	}
	before := e.c.Collections()

	// At every embedding call of the refit run, the served index is the
	// previous version whole.
	var checks atomic.Int32
	var midErr atomic.Value
	e.emb.setBefore(func() error {
		got, err := readServed(t, e.probe)
		if err == nil && (got.name != old.name || !sameVectors(got.vectors, old.vectors)) {
			err = fmt.Errorf("mid-run the alias serves %q with %d chunks, not the previous version whole (%q, %d chunks)",
				got.name, len(got.vectors), old.name, len(old.vectors))
		}
		if err != nil {
			midErr.CompareAndSwap(nil, err)
		}
		checks.Add(1)
		return nil
	})

	// Meanwhile another process queries in a loop: every answer comes
	// from one version, whole.
	r, err := search.NewRetriever(e.probe, nil, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var oldIDs []string
	for id := range old.vectors {
		oldIDs = append(oldIDs, id)
	}
	slices.Sort(oldIDs)
	ctx, cancel := context.WithCancel(context.Background())
	var queries, failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			id := oldIDs[i%len(oldIDs)]
			res, err := r.Retrieve(context.Background(), search.Request{
				Text: "expense policy", Vector: old.vectors[id], K: 5, Mode: search.ModeDefault})
			if err == nil && len(res.Hits) == 0 {
				err = errors.New("empty answer")
			}
			if err == nil {
				// The vectors of the hits all come from one model.
				var ids []string
				for _, h := range res.Hits {
					ids = append(ids, h.Chunk.ID)
				}
				var vs map[string][]float32
				if vs, err = e.probe.Vectors(context.Background(), ids); err == nil {
					nOld := 0
					for id, v := range vs {
						if slices.Equal(v, old.vectors[id]) {
							nOld++
						}
					}
					if nOld != 0 && nOld != len(vs) {
						err = fmt.Errorf("query %d: %d of %d hits hold the previous model's vectors: a mixed index", i, nOld, len(vs))
					}
				}
			}
			queries.Add(1)
			if err != nil {
				failures.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
			time.Sleep(time.Millisecond)
		}
	})

	res, err := e.sync()
	cancel()
	wg.Wait()
	e.emb.setBefore(nil)
	if err != nil || res.Failed > 0 {
		t.Fatalf("refit sync: %v, %+v", err, res.Errors)
	}
	if res.Added == 0 || res.Updated != 1 || res.Deleted != 1 || res.Added+res.Updated+res.Unchanged != len(want) {
		t.Errorf("refit sync: added %d, updated %d, unchanged %d, deleted %d; want %d documents, 1 updated, 1 deleted",
			res.Added, res.Updated, res.Unchanged, res.Deleted, len(want))
	}
	if err, _ := midErr.Load().(error); err != nil {
		t.Error(err)
	}
	if checks.Load() == 0 {
		t.Error("no embedding call during the refit run")
	}
	if f := failures.Load(); f > 0 || queries.Load() == 0 {
		t.Errorf("%d of %d queries failed during the refit run; first: %v", f, queries.Load(), firstErr.Load())
	}

	after := e.c.Collections()
	if slices.Equal(before, after) || len(after) != len(before) {
		t.Errorf("collections before %v, after %v: want the old version replaced by one new version", before, after)
	}
	if e.emb.Name() == old.name {
		t.Fatalf("the model was not refitted (still %q)", old.name)
	}
	// Every chunk, stored or changed, holds the new model's vector, and
	// the registry agrees with the index.
	connectorstest.AssertConverged(t, e.probe, e.db, connectorstest.Chunker{}, e.emb, "hb", want)
	if v := e.c.Violations(); len(v) > 0 {
		t.Errorf("refused requests: %v", v)
	}
}

// TestSyncTrainableRefitTypesenseFailureKeepsVersion: a refit run that
// fails part way, because the embedding provider or the index fails,
// leaves the previous version serving unchanged, drops the new one, and
// leaves the registry as it was; the next healthy run converges. (The
// connectorstest stand-in for the offline embedder keeps it fast: the
// failure paths do not depend on what the model learns.)
func TestSyncTrainableRefitTypesenseFailureKeepsVersion(t *testing.T) {
	for _, fault := range []string{"provider", "index"} {
		t.Run(fault, func(t *testing.T) {
			ctx := context.Background()
			e := newTypesenseEnv(t, &connectorstest.Trainable{})
			want, old := refitSetup(t, e)
			before := e.c.Collections()
			recs, err := e.db.Documents(ctx, "hb")
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			switch fault {
			case "provider": // down after two calls
				e.emb.setBefore(func() error {
					if calls.Add(1) > 2 {
						return errors.New("embedding provider: 503 Service Unavailable")
					}
					return nil
				})
			case "index": // refuses every document of the new version
				e.c.RejectDocuments(func(map[string]any) string { return "disk full" })
			}
			if _, err := e.sync(); err == nil {
				t.Fatal("refit sync with a failure part way succeeded")
			}
			e.emb.setBefore(nil)
			e.c.RejectDocuments(nil)

			got, err := readServed(t, e.probe)
			if err != nil {
				t.Fatal(err)
			}
			if got.name != old.name || !sameVectors(got.vectors, old.vectors) {
				t.Errorf("after the failed run the alias serves %q with %d chunks, want the previous version whole (%q, %d)",
					got.name, len(got.vectors), old.name, len(old.vectors))
			}
			if after := e.c.Collections(); !slices.Equal(before, after) {
				t.Errorf("collections before %v, after the failed run %v", before, after)
			}
			recsAfter, err := e.db.Documents(ctx, "hb")
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(recs, recsAfter, func(a, b docent.DocRecord) bool {
				return a.ContentHash == b.ContentHash && slices.Equal(a.ChunkIDs, b.ChunkIDs)
			}) {
				t.Errorf("the failed run changed the registry: %d records before, %d after", len(recs), len(recsAfter))
			}

			if res, err := e.sync(); err != nil || res.Failed > 0 {
				t.Fatalf("healthy sync: %v, %+v", err, res.Errors)
			}
			connectorstest.AssertConverged(t, e.probe, e.db, connectorstest.Chunker{}, e.emb, "hb", want)
			if after := e.c.Collections(); slices.Equal(before, after) || len(after) != len(before) {
				t.Errorf("collections before %v, after the healthy run %v: want one new version", before, after)
			}
		})
	}
}

// TestSyncTrainableRefitTypesenseRefusedDocument: when the new version
// refuses a changed document's chunk, the refit still completes (the
// other documents move to the new version) but that document's registry
// record stays as it was, so the next run retries it and converges.
func TestSyncTrainableRefitTypesenseRefusedDocument(t *testing.T) {
	ctx := context.Background()
	e := newTypesenseEnv(t, &connectorstest.Trainable{})
	want, old := refitSetup(t, e)
	before := e.c.Collections()
	edited := want[1]
	recs, err := e.db.Documents(ctx, "hb")
	if err != nil {
		t.Fatal(err)
	}
	e.c.RejectDocuments(func(doc map[string]any) string {
		if text, _ := doc["text"].(string); strings.Contains(text, "Addendum") {
			return "refused"
		}
		return ""
	})
	res, err := e.sync()
	e.c.RejectDocuments(nil)
	if err != nil {
		t.Fatalf("refit sync: %v", err)
	}
	if len(res.Errors) != 1 || res.Errors[0].ID != edited.ID || !res.Errors[0].Retry {
		t.Fatalf("refit sync errors %+v, want %s refused and retried", res.Errors, edited.ID)
	}
	if name, _ := e.probe.EmbedderName(ctx); name == old.name || name != e.emb.Name() {
		t.Errorf("after the refit the alias serves %q, want the new model %q", name, e.emb.Name())
	}
	if after := e.c.Collections(); slices.Equal(before, after) || len(after) != len(before) {
		t.Errorf("collections before %v, after %v: want one new version", before, after)
	}
	recsAfter, err := e.db.Documents(ctx, "hb")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := recs[edited.ID], recsAfter[edited.ID]; a.ContentHash != b.ContentHash || !slices.Equal(a.ChunkIDs, b.ChunkIDs) {
		t.Errorf("the refused document's registry record changed: %+v, was %+v", b, a)
	}
	if res, err := e.sync(); err != nil || res.Failed > 0 {
		t.Fatalf("next sync: %v, %+v", err, res.Errors)
	}
	connectorstest.AssertConverged(t, e.probe, e.db, connectorstest.Chunker{}, e.emb, "hb", want)
}
