// Package search holds the retrieval contracts (Index, Embedder), the
// structure-aware markdown chunker, and rank/score fusion shared by the
// index backends in search/local and search/typesense.
package search

import (
	"context"
	"errors"

	"github.com/docent-hq/docent"
)

// Mode selects which retrievers a query runs.
type Mode string

// Retrieval modes.
const (
	// ModeHybrid runs keyword and vector search and fuses the rankings.
	ModeHybrid Mode = "hybrid"
	// ModeKeyword runs BM25 only.
	ModeKeyword Mode = "bm25"
	// ModeVector runs vector search only.
	ModeVector Mode = "vector"
)

// ParseMode returns the Mode named s, or an error naming the valid modes.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeHybrid, ModeKeyword, ModeVector:
		return Mode(s), nil
	case "keyword":
		return ModeKeyword, nil
	}
	return "", errors.New(`search: unknown mode "` + s + `" (want bm25, vector or hybrid)`)
}

// Query is one retrieval request.
type Query struct {
	// Text is the keyword query.
	Text string
	// Vector is the embedded query; required for vector and hybrid modes.
	Vector []float32
	// Filter restricts both retrievers before ranking.
	Filter docent.Filter
	// K is how many fused hits to return.
	K int
	// Mode picks the retrievers; empty means hybrid.
	Mode Mode
}

// Facet is a value and how many documents carry it.
type Facet struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// Facets are document counts by source and by label, under a filter.
type Facets struct {
	Sources []Facet `json:"sources"`
	Labels  []Facet `json:"labels"`
}

// Index stores chunks and answers hybrid queries. The local (SQLite) and
// Typesense backends implement it and share one contract test suite.
type Index interface {
	// Upsert replaces every chunk of the documents named by the chunks'
	// DocIDs with the given chunks, atomically per call. Chunks must carry
	// vectors of the index's dimension.
	Upsert(ctx context.Context, chunks []docent.Chunk) error
	// DeleteDocs removes every chunk of the given documents. Unknown IDs
	// are not an error.
	DeleteDocs(ctx context.Context, docIDs ...string) error
	// Search runs the query and returns at most q.K hits in fused order.
	// It returns an error when the mode needs a vector and q.Vector is empty.
	Search(ctx context.Context, q Query) ([]docent.Hit, error)
	// Facets counts documents by source and label under the filter.
	Facets(ctx context.Context, f docent.Filter) (Facets, error)
	// DocChunkIDs returns the chunk IDs stored per document, for
	// reconciling the index with the registry after a crash.
	DocChunkIDs(ctx context.Context) (map[string][]string, error)
	// Count returns the number of chunks stored.
	Count(ctx context.Context) (int, error)
	// Scan calls fn for every stored chunk, without vectors, in DocID and
	// Ord order; it stops at the first error fn returns.
	Scan(ctx context.Context, fn func(docent.Chunk) error) error
	// EmbedderName is the Embedder.Name the stored vectors were made with,
	// "" when the index is empty or a re-embedding did not finish.
	EmbedderName(ctx context.Context) (string, error)
	// SetEmbedderName records the embedder of the stored vectors.
	SetEmbedderName(ctx context.Context, name string) error
	// Close releases the index.
	Close() error
}

// Embedder turns text into vectors.
type Embedder interface {
	// Name identifies the model and its version. Vectors made under one
	// name are never compared with vectors made under another.
	Name() string
	// Dim is the vector length.
	Dim() int
	// Embed returns one L2-normalized vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Trainable is an Embedder that learns from the indexed corpus itself (the
// offline embedder). The sync engine calls Fit with every chunk text the
// index will hold after a run; when Fit reports a change, Name changes too
// and the engine re-embeds every chunk. A model persists itself, so a
// restart re-embeds nothing.
type Trainable interface {
	Embedder
	// Fit retrains when the corpus has drifted from the one the current
	// model learned (or there is no model yet) and reports whether the
	// model changed. It is deterministic: the same corpus gives the same model.
	Fit(ctx context.Context, corpus []string) (changed bool, err error)
}
