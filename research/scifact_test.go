//go:build research

package research

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

// sciFact is the corpus chunked and embedded once, with every query set.
type sciFact struct {
	chunks []docent.Chunk // with vectors
	emb    *offline.Embedder
	sets   map[string]*eval.BEIR // "train", "test", "train/long-context", ...
}

var (
	loadOnce sync.Once
	loaded   *sciFact
	loadErr  error
)

// mustSciFact loads $DOCENT_SCIFACT, chunks it with the default chunker,
// trains the offline embedder on the chunks and embeds them, as a sync
// would; it skips the test when the data is absent.
func mustSciFact(tb testing.TB) *sciFact {
	tb.Helper()
	dir := os.Getenv("DOCENT_SCIFACT")
	if dir == "" {
		tb.Skip("set DOCENT_SCIFACT to a BEIR SciFact directory")
	}
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		tb.Skipf("no BEIR data at %s", dir)
	}
	loadOnce.Do(func() { loaded, loadErr = loadSciFact(dir) })
	if loadErr != nil {
		tb.Fatal(loadErr)
	}
	return loaded
}

func loadSciFact(dir string) (*sciFact, error) {
	ctx := context.Background()
	s := &sciFact{sets: map[string]*eval.BEIR{}}
	for _, split := range []string{"train", "test"} {
		b, err := eval.LoadBEIR(dir, split)
		if err != nil {
			return nil, err
		}
		sets, err := eval.WithLongQueries(b, 1)
		if err != nil {
			return nil, err
		}
		for _, set := range sets {
			s.sets[set.Split] = set
		}
	}
	var ch search.Chunker
	for _, d := range s.sets["test"].Corpus {
		cs, err := ch.Chunk(d)
		if err != nil {
			return nil, fmt.Errorf("chunk %s: %w", d.ID, err)
		}
		s.chunks = append(s.chunks, cs...)
	}
	// The sync engine fits the embedder on chunks in document and ord
	// order; the model depends on it.
	slices.SortStableFunc(s.chunks, func(a, b docent.Chunk) int {
		return cmp.Or(cmp.Compare(a.DocID, b.DocID), cmp.Compare(a.Ord, b.Ord))
	})
	texts := make([]string, len(s.chunks))
	for i, c := range s.chunks {
		texts[i] = c.Text
	}
	s.emb = offline.NewEmbedder(offline.Options{})
	if _, err := s.emb.Fit(ctx, texts); err != nil {
		return nil, err
	}
	vecs, err := s.emb.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i := range s.chunks {
		s.chunks[i].Vector = vecs[i]
	}
	return s, nil
}

// open indexes the chunks into a fresh local index with opts.
func (s *sciFact) open(tb testing.TB, opts local.Options) *local.Index {
	tb.Helper()
	ix, err := local.Open(context.Background(), filepath.Join(tb.TempDir(), "index.db"), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	if err := ix.Upsert(context.Background(), s.chunks); err != nil {
		tb.Fatal(err)
	}
	return ix
}

// idsOnly is an Index whose hits come back with a placeholder text, so
// that the Retriever does not load their chunks: scoring needs only
// document IDs, and loading hundreds of chunks per query dominates a run.
type idsOnly struct{ search.Index }

func (x idsOnly) KeywordSearch(ctx context.Context, q search.KeywordQuery) ([]docent.Hit, error) {
	return placeholder(x.Index.KeywordSearch(ctx, q))
}

func (x idsOnly) VectorSearch(ctx context.Context, q search.VectorQuery) ([]docent.Hit, error) {
	return placeholder(x.Index.VectorSearch(ctx, q))
}

func placeholder(hits []docent.Hit, err error) ([]docent.Hit, error) {
	for i := range hits {
		hits[i].Chunk.Text = "-"
	}
	return hits, err
}

// score runs one query set in one mode through a Retriever with opts.
func (s *sciFact) score(tb testing.TB, ix search.Index, set string, mode search.Mode, opts search.RetrieverOptions) eval.BEIRReport {
	tb.Helper()
	r, err := search.NewRetriever(idsOnly{ix}, s.emb, opts)
	if err != nil {
		tb.Fatal(err)
	}
	rep, err := eval.RunBEIR(context.Background(), s.sets[set], eval.SearcherFunc(func(ctx context.Context, q string, k int) ([]docent.Hit, error) {
		res, err := r.Retrieve(ctx, search.Request{Text: q, K: k, Mode: mode})
		return res.Hits, err
	}), eval.BEIROptions{K: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}
