package connectors

import (
	"context"
	"time"

	"github.com/docent-hq/docent"
)

// DocRecord is what the registry remembers of one indexed document: its
// metadata, the content hash the engine diffs against, and the IDs of the
// chunks the index holds for it.
type DocRecord struct {
	// ID is the document ID ("<source>:<path>").
	ID string `json:"id"`
	// Source is the configured source name.
	Source string `json:"source"`
	// Path, URL, Title, Space, Labels, Owner and Author are copied from the document.
	Path   string   `json:"path"`
	URL    string   `json:"url"`
	Title  string   `json:"title"`
	Space  string   `json:"space,omitempty"`
	Labels []string `json:"labels,omitempty"`
	Owner  string   `json:"owner,omitempty"`
	Author string   `json:"author,omitempty"`
	// ContentHash is the engine's hash of the indexed content and metadata;
	// "" forces the next sync to re-index the document.
	ContentHash string `json:"content_hash"`
	// UpdatedAt is when the document last changed at the source.
	UpdatedAt time.Time `json:"updated_at"`
	// FirstSeen is when the registry first recorded the document; set by the registry.
	FirstSeen time.Time `json:"first_seen"`
	// LastSeen is when a sync last wrote the document; set by the registry.
	LastSeen time.Time `json:"last_seen"`
	// DeletedAt is when the document was found gone from its source; zero while live.
	DeletedAt time.Time `json:"deleted_at,omitempty"`
	// ChunkIDs are the IDs of the document's chunks in the index, in order.
	ChunkIDs []string `json:"chunk_ids"`
}

// Registry is the engine's memory of what it indexed: documents with their
// content hashes, per-source cursors and run records. store.DB implements it.
type Registry interface {
	// Documents returns the live (not deleted) documents of source by ID.
	Documents(ctx context.Context, source string) (map[string]DocRecord, error)
	// PutDocument inserts or replaces a document record and marks it live.
	PutDocument(ctx context.Context, rec DocRecord) error
	// MarkDeleted marks documents as gone from their source. Unknown IDs
	// are not an error.
	MarkDeleted(ctx context.Context, ids []string) error
	// Cursor returns the cursor stored for source, "" if none.
	Cursor(ctx context.Context, source string) (string, error)
	// SetCursor stores the cursor to pass to the source's next Changes call.
	SetCursor(ctx context.Context, source, cursor string) error
	// StartRun records that a sync of source started and returns the run ID.
	StartRun(ctx context.Context, source string) (int64, error)
	// FinishRun records the outcome of run id: failed when r.Err is set.
	FinishRun(ctx context.Context, id int64, r RunResult) error
}

// Chunker splits a document into chunks; search.Chunker implements it.
type Chunker interface {
	// Chunk returns the document's chunks in order, with DocID set to
	// doc.ID. It returns an error for a document it cannot split.
	Chunk(doc docent.Document) ([]docent.Chunk, error)
}

// RunResult is the outcome of one sync of one source.
type RunResult struct {
	// Source is the source name.
	Source string `json:"source"`
	// Started and Finished bound the run.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Added, Updated, Unchanged and Deleted count documents by what the run did.
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Deleted   int `json:"deleted"`
	// Failed counts documents skipped with an error; Errors says why.
	Failed int        `json:"failed"`
	Errors []DocError `json:"errors,omitempty"`
	// Err is the run-level failure ("" when the run completed).
	Err string `json:"error,omitempty"`
}

// Duration is how long the run took.
func (r RunResult) Duration() time.Duration { return r.Finished.Sub(r.Started) }
