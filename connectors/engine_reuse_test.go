package connectors_test

import (
	"testing"

	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
)

// TestSyncReusesStoredVectors: a changed document's chunks that the index
// holds under the same ID keep their vectors, with a plain and with a
// Trainable embedder whose model the change leaves as it was; a changed
// embedder re-embeds everything. Each step checks what reached the
// embedder, what the run recorded, and that the stores converged with
// every vector its text's.
func TestSyncReusesStoredVectors(t *testing.T) {
	type step struct {
		name        string
		change      func(e *env)
		embedded    int // texts the embedder got for documents
		runEmbedded int // RunResult.Content.Embedded
		reused      int // RunResult.Content.Reused
	}
	put := func(e *env) {
		e.src.Put(doc("a.md", "Alpha one.\n\nAlpha two.\n\nAlpha three."), doc("b.md", "Bravo."))
	}
	edit := func(e *env) { e.src.Put(doc("a.md", "Alpha one.\n\nAlpha 2.\n\nAlpha three.")) }
	cases := []struct {
		name  string
		emb   func() search.Embedder
		steps []step
	}{
		{"plain", func() search.Embedder { return connectorstest.NewEmbedder("v1") }, []step{
			{"first", put, 4, 4, 0},
			{"unchanged", func(*env) {}, 0, 0, 0},
			{"one paragraph edited", edit, 1, 1, 2},
			{"metadata only", func(e *env) {
				d := doc("b.md", "Bravo.")
				d.Labels = []string{"new-label"}
				e.src.Put(d)
			}, 0, 0, 1},
			{"embedder changed", func(e *env) { e.emb = connectorstest.NewEmbedder("v2") }, 4, 0, 0},
		}},
		{"trainable", func() search.Embedder { return &connectorstest.Trainable{} }, []step{
			{"first", put, 4, 4, 0},
			// "2" is a new word: the fake retrains, every vector is remade.
			{"edit with a new word", edit, 4, 3, 0},
			// Only known words: the model stays, so do the vectors of
			// the paragraphs left as they were.
			{"edit with known words", func(e *env) {
				e.src.Put(doc("a.md", "Alpha one.\n\nAlpha 2.\n\nAlpha three. Alpha"))
			}, 1, 1, 2},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.emb())
			for _, st := range tc.steps {
				st.change(e)
				before := texts(e.emb)
				res := e.sync()
				if got := texts(e.emb) - before; got != st.embedded {
					t.Errorf("%s: the embedder got %d texts, want %d", st.name, got, st.embedded)
				}
				if res.Content.Embedded != st.runEmbedded || res.Content.Reused != st.reused {
					t.Errorf("%s: run recorded %d embedded, %d reused; want %d, %d",
						st.name, res.Content.Embedded, res.Content.Reused, st.runEmbedded, st.reused)
				}
				e.converged(e.src.Docs())
			}
		})
	}
}

// texts is how many document texts emb has embedded so far.
func texts(emb search.Embedder) int {
	switch x := emb.(type) {
	case *connectorstest.Embedder:
		_, n := x.Calls()
		return n
	case *connectorstest.Trainable:
		_, n := x.Calls()
		return n
	}
	return 0
}
