package connectors_test

import (
	"context"
	"slices"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
)

// chunkSet is a search.Deriver that keeps the chunk IDs of its last
// completed pass.
type chunkSet struct {
	passes int
	ids    []string
}

func (d *chunkSet) BeginPass() (func(docent.Chunk), func(error)) {
	var ids []string
	return func(c docent.Chunk) { ids = append(ids, c.ID) }, func(err error) {
		if err == nil {
			slices.Sort(ids)
			d.ids, d.passes = ids, d.passes+1
		}
	}
}

// TestSyncCorpusPass: a run that changes the index ends with one pass
// over it that feeds every deriver the chunks the index then holds; with
// a Trainable embedder that pass is the scan that gathers the fit corpus
// (one scan per run, not two); a run that changes nothing makes none.
func TestSyncCorpusPass(t *testing.T) {
	type step struct {
		name   string
		change func(s *connectorstest.Source)
		scans  [2]int32 // full scans of the index by the run: plain, trainable
		passes int      // completed passes so far
	}
	steps := []step{
		{"first", func(s *connectorstest.Source) {
			s.Put(doc("a.md", "Alpha one.\n\nAlpha two."), doc("b.md", "Bravo."))
		}, [2]int32{1, 2}, 1}, // trainable: the model is new, the (empty) index re-embedded
		{"unchanged", func(*connectorstest.Source) {}, [2]int32{0, 0}, 1},
		{"edit and delete", func(s *connectorstest.Source) {
			s.Put(doc("a.md", "Alpha one.\n\nAlpha three."))
			s.Delete("hb:b.md")
		}, [2]int32{1, 2}, 2}, // trainable: new words, a new model re-embeds the index
		{"edit with known words", func(s *connectorstest.Source) {
			s.Put(doc("a.md", "Alpha one.\n\nAlpha three. Alpha"))
		}, [2]int32{1, 1}, 3}, // trainable: the fit corpus's scan is the pass
	}
	for ei, emb := range []string{"plain", "trainable"} {
		t.Run(emb, func(t *testing.T) {
			t.Parallel()
			var e search.Embedder = connectorstest.NewEmbedder("v1")
			if emb == "trainable" {
				e = &connectorstest.Trainable{}
			}
			env := newEnv(t, e)
			idx := &connectorstest.ScanCounter{Index: env.idx}
			d := &chunkSet{}
			eng := connectors.NewEngine(env.db, idx, env.emb, env.ch, nil, env.opts)
			eng.Derive(d)
			for _, st := range steps {
				st.change(env.src)
				before := idx.Scans()
				if _, err := eng.Sync(context.Background(), env.src, nil); err != nil {
					t.Fatal(err)
				}
				scans := idx.Scans() - before
				var want []string
				if err := env.idx.Scan(context.Background(), func(c docent.Chunk) error {
					want = append(want, c.ID)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				slices.Sort(want)
				if scans != st.scans[ei] || d.passes != st.passes || !slices.Equal(d.ids, want) {
					t.Errorf("%s: %d scans, %d passes, deriver holds %v; want %d, %d, %v",
						st.name, scans, d.passes, d.ids, st.scans[ei], st.passes, want)
				}
			}
			// A process that opens an index it did not sync passes once.
			if err := eng.Pass(context.Background()); err != nil || d.passes != steps[len(steps)-1].passes+1 {
				t.Errorf("Pass: %v, %d passes", err, d.passes)
			}
		})
	}
}

// fitWatcher is a Trainable embedder that records, at each Fit, how many
// chunks the watched deriver's pass under way had been given.
type fitWatcher struct {
	*connectorstest.Trainable
	d     *countingDeriver
	atFit []int
}

func (f *fitWatcher) Fit(ctx context.Context, corpus []string) (bool, error) {
	f.atFit = append(f.atFit, f.d.adding)
	return f.Trainable.Fit(ctx, corpus)
}

// countingDeriver counts the chunks of the pass under way (adding) and of
// the last completed one (last).
type countingDeriver struct{ adding, last int }

func (d *countingDeriver) BeginPass() (func(docent.Chunk), func(error)) {
	d.adding = 0
	return func(docent.Chunk) { d.adding++ }, func(err error) {
		if err == nil {
			d.last = d.adding
		}
	}
}

// TestPassTakesStagedChunksAfterFit: with a Trainable embedder the
// changed documents' chunks reach the derivers as they are read back to be
// embedded, after the fit, so that the derivers' state is not held beside
// the training; the stored chunks of the documents the run keeps are in
// the pass by the fit (the fit corpus's scan), and the completed pass
// holds every chunk once.
func TestPassTakesStagedChunksAfterFit(t *testing.T) {
	env := newEnv(t, nil)
	d := &countingDeriver{}
	emb := &fitWatcher{Trainable: &connectorstest.Trainable{}, d: d}
	env.emb = emb
	eng := connectors.NewEngine(env.db, env.idx, emb, env.ch, nil, env.opts)
	eng.Derive(d)
	env.src.Put(doc("a.md", "Alpha one.\n\nAlpha two."), doc("b.md", "Bravo."))
	if _, err := eng.Sync(context.Background(), env.src, nil); err != nil {
		t.Fatal(err)
	}
	stored := len(env.chunkIDs()["hb:a.md"]) + len(env.chunkIDs()["hb:b.md"])
	env.src.Put(doc("a.md", "Alpha one.\n\nAlpha three. Alpha")) // b.md kept
	if _, err := eng.Sync(context.Background(), env.src, nil); err != nil {
		t.Fatal(err)
	}
	kept := len(env.chunkIDs()["hb:b.md"])
	total := len(env.chunkIDs()["hb:a.md"]) + kept
	if want := []int{0, kept}; !slices.Equal(emb.atFit, want) {
		t.Errorf("chunks in the pass at each fit = %v, want %v (none staged before the fit)", emb.atFit, want)
	}
	if d.last != total || stored == 0 {
		t.Errorf("completed pass had %d chunks, want %d", d.last, total)
	}
}
