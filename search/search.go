// Package search holds the retrieval contracts (Index, Embedder), the
// structure-aware markdown chunker, and the Retriever: the one place that
// embeds a query, runs the keyword and vector retrievers of any Index,
// fuses their rankings and applies vector feedback.
//
// Backends (search/local, search/typesense, the reference index in
// search/searchtest) implement only retrieval primitives; everything a
// caller sees of ranking happens here, the same for every backend.
package search

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/injection"
)

// Sentinel errors every backend returns (wrapped) for the same conditions.
var (
	// ErrDimension is returned when a vector's length differs from the
	// index's dimension (an upserted chunk, or a vector query), or an
	// upserted chunk has no vector.
	ErrDimension = errors.New("search: vector dimension mismatch")
	// ErrNoVector is returned by VectorSearch for a query without a vector,
	// and by the Retriever for a mode that needs one when it has no embedder.
	ErrNoVector = errors.New("search: query needs a vector")
	// ErrEmptyID is returned by Upsert for a chunk without an ID or DocID.
	ErrEmptyID = errors.New("search: chunk without id")
)

// Mode selects which retrievers a Retriever request runs.
type Mode string

// Retrieval modes.
const (
	// ModeDefault is the full pipeline: hybrid search with vector
	// feedback (see Retriever). The empty Mode means ModeDefault.
	ModeDefault Mode = "default"
	// ModeHybrid runs keyword and vector search and fuses the rankings,
	// without the feedback pass.
	ModeHybrid Mode = "hybrid"
	// ModeKeyword runs BM25 only.
	ModeKeyword Mode = "bm25"
	// ModeVector runs vector search only.
	ModeVector Mode = "vector"
)

// ParseMode returns the Mode named s, or an error naming the valid modes.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeDefault, ModeHybrid, ModeKeyword, ModeVector:
		return Mode(s), nil
	case "":
		return ModeDefault, nil
	case "keyword":
		return ModeKeyword, nil
	}
	return "", fmt.Errorf("search: unknown mode %q (want bm25, vector, hybrid or default)", s)
}

// KeywordQuery is one BM25 request to an Index.
type KeywordQuery struct {
	// Text is free text; backends drop their query syntax from it, so no
	// operator in the text changes the query.
	Text string
	// Filter restricts the ranking before it is cut to K.
	Filter docent.Filter
	// K is how many hits to return; at most K come back.
	K int
}

// VectorQuery is one nearest-neighbour request to an Index.
type VectorQuery struct {
	// Vector is the query embedding; it need not be normalized.
	Vector []float32
	// Filter restricts the ranking before it is cut to K.
	Filter docent.Filter
	// K is how many hits to return; at most K come back.
	K int
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

// Deriver is state derived from every chunk the index holds (the
// answerer's corpus statistics, stale detection's conflicts), computed in
// the one pass over the index the sync engine makes after a run that
// changed it, not on read.
type Deriver interface {
	// BeginPass starts a pass: add is called with every stored chunk
	// (without vector), then done once, with nil when every chunk was
	// added (the deriver then replaces its state) or with the error that
	// cut the pass short (it keeps its previous state). add and done are
	// called from one goroutine.
	BeginPass() (add func(docent.Chunk), done func(error))
}

// Index stores chunks and serves the two retrieval primitives. It neither
// embeds nor fuses: the Retriever does both, once, for every backend. The
// local (SQLite) and Typesense backends and the in-memory reference index
// implement it and run one contract suite (search/searchtest).
type Index interface {
	// Upsert replaces every chunk of the documents named by the chunks'
	// DocIDs with the given chunks, atomically per call. A chunk ID stored
	// under another document moves to the new one. Every chunk must carry
	// a vector of the index's dimension (the first upsert into an empty
	// index sets it): otherwise Upsert returns ErrDimension and changes
	// nothing. A chunk without ID or DocID is ErrEmptyID. A backend that
	// cannot write atomically returns *PartialError when only some
	// documents landed.
	Upsert(ctx context.Context, chunks []docent.Chunk) error
	// DeleteDocs removes every chunk of the given documents. Unknown IDs
	// are not an error.
	DeleteDocs(ctx context.Context, docIDs ...string) error
	// KeywordSearch ranks chunks by BM25 over title, section and text and
	// returns at most q.K hits, best first, ties by chunk ID. Each hit
	// carries Chunk.ID, Chunk.DocID, KeywordScore (the raw score, higher
	// is better) and KeywordRank (1-based); the other Chunk fields may be
	// empty (Chunks loads them). Text with no searchable term gives no hits.
	KeywordSearch(ctx context.Context, q KeywordQuery) ([]docent.Hit, error)
	// VectorSearch ranks chunks by cosine similarity to q.Vector and
	// returns at most q.K hits, best first, each with Chunk.ID,
	// Chunk.DocID, VectorScore (the cosine) and VectorRank (1-based). It
	// returns ErrNoVector for an empty vector and ErrDimension for a
	// vector of another length than the stored ones. Results may be
	// approximate on large indexes.
	VectorSearch(ctx context.Context, q VectorQuery) ([]docent.Hit, error)
	// Chunks returns the stored chunks with the given IDs (Vector empty),
	// in the order asked; unknown IDs are left out. Each carries the
	// Injection derived from its Text when it was upserted (InjectionOf),
	// whatever the chunk handed to Upsert said; Scan's chunks too.
	Chunks(ctx context.Context, ids []string) ([]docent.Chunk, error)
	// Vectors returns the stored vectors of the given chunk IDs; unknown
	// IDs are left out. The caller must not modify the returned slices.
	Vectors(ctx context.Context, ids []string) (map[string][]float32, error)
	// Facets counts documents by source and label under the filter.
	Facets(ctx context.Context, f docent.Filter) (Facets, error)
	// ChunkIDs returns, for every document of source, the IDs of its
	// stored chunks in Ord order: what the sync engine reconciles the
	// registry against after a crash.
	ChunkIDs(ctx context.Context, source string) (map[string][]string, error)
	// Count returns the number of chunks stored.
	Count(ctx context.Context) (int, error)
	// Scan calls fn for every stored chunk, without vectors, in DocID and
	// Ord order; it stops at the first error fn returns and returns it.
	// fn must not write to the index.
	Scan(ctx context.Context, fn func(docent.Chunk) error) error
	// EmbedderName is the Embedder.Name the stored vectors were made with,
	// "" when the index is empty or a re-embedding did not finish.
	EmbedderName(ctx context.Context) (string, error)
	// SetEmbedderName records the embedder of the stored vectors.
	SetEmbedderName(ctx context.Context, name string) error
	// Close releases the index.
	Close() error
}

// InjectionOf is the Injection an index stores with c: the passage of its
// Text that addresses an AI assistant (internal/injection), or "". Every
// backend derives it on Upsert, once per chunk, so that searches read a
// stored flag instead of scanning every hit's text.
func InjectionOf(c docent.Chunk) string { return injection.Find(c.Text) }

// PartialError is returned by Upsert on a backend that writes in
// batches without a transaction (Typesense's JSONL import): the chunks of
// the documents named in Failed did not all land, while every other
// document of the call was replaced completely. A failed document may hold
// a mix of its old and new chunks until it is upserted again; callers must
// not record it as synced (the sync engine reports it and retries it next
// run). Local backends stay all or nothing and never return it.
type PartialError struct {
	// Failed maps each document ID whose chunks did not all land to why;
	// the error names the chunk that failed.
	Failed map[string]error
}

// Error names the failed document (or how many failed, and the first).
func (e *PartialError) Error() string {
	ids := make([]string, 0, len(e.Failed))
	for id := range e.Failed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) == 1 {
		return fmt.Sprintf("search: upsert: document %s failed: %v", ids[0], e.Failed[ids[0]])
	}
	return fmt.Sprintf("search: upsert: %d documents failed, first %s: %v", len(ids), ids[0], e.Failed[ids[0]])
}

// Folder is an Index that indexes exact copies once: of the chunks whose
// bodies (docent.Chunk.Body) are the same text, with the same source,
// space and labels, it stores every one (its document still lists it) but
// searches only the first, and lists the others as its copies. The
// Retriever names the copies' documents on the hit it returns
// (Hit.Duplicates), so every page that holds the text can be cited.
type Folder interface {
	// Copies returns, for each given chunk ID that is searched and has
	// copies, the IDs of its copies; other IDs are left out.
	Copies(ctx context.Context, ids []string) (map[string][]string, error)
}

// HealthChecker is an Index that can tell whether it can serve queries
// now (a remote cluster with a leader and its collection in place).
// Readiness probes (/readyz) consult it when the backend offers it.
type HealthChecker interface {
	// Health returns nil when the index can serve queries, and otherwise
	// an error saying why not (safe to show: no secrets).
	Health(ctx context.Context) error
}

// BothSearcher is an Index that can serve a keyword and a vector query in
// one round trip (Typesense's multi_search). The Retriever uses it when the
// backend offers it; the results must equal the two separate calls'.
type BothSearcher interface {
	SearchBoth(ctx context.Context, kq KeywordQuery, vq VectorQuery) (keyword, vector []docent.Hit, err error)
}

// Rebuilder is an Index that can build a complete new version of itself
// beside the one it serves and switch to it in one step (Typesense: a new
// collection behind the alias). The sync engine re-embeds into a new
// version when the embedder changes, so searches see the previous
// version whole until the new one is, never a mix of two embedders'
// vectors. Reindex creates the version for vectors of length dim, calls
// fill, which writes every chunk through write, then switches to it and
// records embedder as the vectors' embedder; when fill or a write fails,
// the new version is dropped and the served one is left as it was.
type Rebuilder interface {
	Reindex(ctx context.Context, dim int, embedder string, fill func(write func([]docent.Chunk) error) error) error
}

// Embedder turns text into vectors. Queries and documents are embedded
// by separate calls because many models (Gemini's task types, instruction-
// tuned open models) embed them differently.
type Embedder interface {
	// Name identifies the model and its version. Vectors made under one
	// name are never compared with vectors made under another.
	Name() string
	// Dim is the vector length.
	Dim() int
	// EmbedDocuments returns one L2-normalized vector per text, in order.
	// It returns an error when the provider fails; a text it cannot embed
	// is an error for the whole call.
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery returns the L2-normalized vector of a search query.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
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
