// Package connectors holds the Source contract, the sync engine that turns
// source changes into index updates (content-hash diff against the document
// registry, deletions, run records), and the cron scheduler that runs it.
// Each source lives in its own package below: git, confluence, notion, files.
package connectors

import (
	"context"

	"github.com/docent-hq/docent"
)

// Source is one configured documentation source.
type Source interface {
	// Name is the configured source name; it prefixes document IDs.
	Name() string
	// Changes lists what changed since cursor, the value a previous call
	// returned in Changes.Cursor ("" on the first run, or to force a full
	// listing). A source that cannot be reached returns an error and the
	// engine records the run as failed, leaving the index as it was.
	Changes(ctx context.Context, cursor string) (Changes, error)
}

// Changes is what a source reports for one sync.
type Changes struct {
	// Full is true when Docs is the complete set of documents: the engine
	// deletes any document of this source that is not in Docs (or Failed).
	Full bool
	// Docs are new or changed documents with full content (all documents
	// when Full).
	Docs []docent.Document
	// Deleted are IDs of documents gone from the source (incremental only).
	Deleted []string
	// Failed are documents that could not be read or converted: binary,
	// oversized, malformed. They are skipped and reported; a document that
	// failed keeps its previous indexed version.
	Failed []docent.DocError
	// Cursor is what to pass to the next Changes call once this sync has
	// been applied completely.
	Cursor string
}
