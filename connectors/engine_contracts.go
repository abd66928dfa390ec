package connectors

import (
	"context"

	"github.com/docent-hq/docent"
)

// Registry is the engine's memory of what it indexed: documents with their
// content hashes, per-source cursors and run records. store.DB implements it.
type Registry interface {
	// Documents returns the live (not deleted) documents of source by ID.
	Documents(ctx context.Context, source string) (map[string]docent.DocRecord, error)
	// PutDocuments inserts or replaces document records and marks them
	// live, in one write: all of them or, on error, none.
	PutDocuments(ctx context.Context, recs []docent.DocRecord) error
	// MarkDeleted marks documents as gone from their source. Unknown IDs
	// are not an error.
	MarkDeleted(ctx context.Context, ids []string) error
	// Cursor returns the cursor stored for source, "" if none.
	Cursor(ctx context.Context, source string) (string, error)
	// SetCursor stores the cursor to pass to the source's next List call.
	SetCursor(ctx context.Context, source, cursor string) error
	// StartRun records that a sync of source started and returns the run ID.
	StartRun(ctx context.Context, source string) (int64, error)
	// FinishRun records the outcome of run id: failed when r.Err is set.
	FinishRun(ctx context.Context, id int64, r docent.RunResult) error
}

// Chunker splits a document into chunks; search.Chunker implements it.
type Chunker interface {
	// Chunk returns the document's chunks in order, with DocID set to
	// doc.ID. It returns an error for a document it cannot split.
	Chunk(doc docent.Document) ([]docent.Chunk, error)
}

// LimitedChunker is a Chunker that can stop at a number of chunks, so
// that the engine's cap on chunks per document bounds the work and the
// memory, not only what is kept; search.Chunker implements it. The
// engine truncates the output of a Chunker that is not one.
type LimitedChunker interface {
	Chunker
	// ChunkAtMost is Chunk making at most limit chunks; rest is how many
	// more it would have made at least (0 when the document fit).
	ChunkAtMost(doc docent.Document, limit int) (chunks []docent.Chunk, rest int, err error)
}
