// Package connectors holds the Source contract, the sync engine that turns
// source listings into index updates (content-hash diff against the document
// registry, deletions, run records), and the cron scheduler that runs it.
// Each source lives in its own package below: git, confluence, notion, files.
package connectors

import (
	"context"
	"errors"
	"time"

	"github.com/docent-hq/docent"
)

// Source is one configured documentation source.
//
// A source streams its listing: it hands each document to the Listing as
// soon as it has read it, so memory does not grow with the size of the
// source. The engine indexes documents while the source lists, and applies
// deletions and stores the returned cursor only once List has returned
// without error.
type Source interface {
	// Name is the configured source name; document IDs are "<name>:<key>",
	// where the key (a path, a page ID) identifies the document within the
	// source.
	Name() string
	// List hands to l what changed since cursor: the value a previous call
	// returned in Listed.Cursor. A source lists from the oldest cursor the
	// engine still holds, so a cursor must stay valid after later calls:
	// List(c) after several later listings reports every change since c.
	//
	// With cursor "" (the first run, or the engine asking for a full
	// listing) or a cursor the source does not recognise, the source hands
	// over every document it holds (Listing.Document, or Listing.Failed when
	// one cannot be read) and returns Listed.Complete. With a valid cursor
	// it may hand over only what changed since: new and changed documents
	// with their content, and what is gone, either named (Listing.Deleted)
	// or found by absence from a cheap listing of every existing ID
	// (Listing.Present, with Listed.Complete).
	//
	// A listing method that returns an error (the context was cancelled, or
	// the engine failed to write) means the sync is over: List stops and
	// returns that error, wrapped. A source that cannot be reached, or fails
	// part way, returns an error: the engine records the run as failed,
	// keeps what it had already indexed, deletes nothing and keeps the old
	// cursor. A document that cannot be read or converted is not an error
	// of List: it goes to Listing.Failed and the listing goes on.
	List(ctx context.Context, cursor string, l Listing) (Listed, error)
}

// Listing receives one listing of a Source, one document at a time. The
// sync engine implements it (connectorstest.Collect gathers a listing in
// memory, for tests). Calls must not overlap: a source lists from one
// goroutine, or serializes its calls.
//
// Every method returns an error when the sync must stop: the context is
// cancelled, or the engine failed to write to the index or the registry.
// The source then stops listing and returns the error from List.
type Listing interface {
	// Document hands over a new or changed document with its full content
	// (every document, in a complete listing without Present). doc.ID must
	// be "<name>:<key>" and doc.Source empty or the source's name. A
	// document the engine cannot take (wrong ID, binary, oversized) is
	// recorded as skipped, not returned as an error. The engine may have
	// indexed doc by the time Document returns, and keeps no reference to
	// it. Handing over the same ID twice in one listing is a source bug:
	// the second one is skipped and reported. It returns an error only
	// when the sync must stop.
	Document(ctx context.Context, doc docent.Document) error
	// Failed reports a document that exists but could not be read or
	// converted; err says why and is shown to admins (it must not carry
	// secrets). The document keeps its previously indexed version and is
	// not deleted. An error that wraps ErrBinary, ErrTooLarge,
	// ErrFrontMatter, ErrUnsupported or ErrNotRegular is a content
	// problem: the document is skipped until it changes. Any other error (a timeout, a refused
	// request) is treated as transient: the engine does not store the
	// listing's cursor, so the next run lists the document again. It
	// returns an error only when the sync must stop.
	Failed(ctx context.Context, id string, err error) error
	// Deleted names documents gone from the source since the cursor (IDs
	// that the engine does not know are ignored). A document both deleted
	// and handed over in one listing (a path renamed onto another) is kept.
	// The engine deletes them once List has returned without error. It
	// returns an error only when the sync must stop.
	Deleted(ctx context.Context, ids ...string) error
	// Present names documents that exist, without their content: the cheap
	// ID listing an incremental source makes so that, with
	// Listed.Complete, the engine removes every document it did not name
	// (by Present, Document or Failed) within one run. It returns an error
	// only when the sync must stop.
	Present(ctx context.Context, ids ...string) error
}

// Listed is how a listing ended.
type Listed struct {
	// Cursor is what to pass to the next List call once this listing has
	// been applied completely.
	Cursor string
	// Complete is true when the listing named every document the source
	// holds (by Document, Failed or Present): the engine deletes any
	// document of this source that it did not name. A listing of only
	// what changed leaves it false and names deletions with Deleted.
	Complete bool
}

// ErrUnsupported is wrapped by the error a source reports (Listing.Failed)
// for content it cannot convert that a retry would not fix: an
// unsupported page type or macro, an attachment kind it does not read.
var ErrUnsupported = errors.New("connectors: unsupported content")

// Transient reports whether a document failure (Listing.Failed) may heal
// without the document changing, so that the engine lists the document
// again on the next run: every error except the content problems
// ErrBinary, ErrTooLarge, ErrFrontMatter, ErrUnsupported and
// ErrNotRegular.
func Transient(err error) bool {
	for _, permanent := range []error{ErrBinary, ErrTooLarge, ErrFrontMatter, ErrUnsupported, ErrNotRegular} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return true
}

// RequestStats count what a listing cost a remote API: the requests it
// made, how many of them were retries, how many waits the server asked
// for (429 or 503 with Retry-After), and the time spent waiting (backoff,
// Retry-After and the client's own rate limiter). A source that talks to
// an API reports them with ReportRequests; the engine adds them to the
// run's record.
type RequestStats struct {
	// Requests counts every HTTP request sent, retries included.
	Requests int
	// Retries counts requests sent again after a failure or a 429/503.
	Retries int
	// RateLimited counts responses (429, 503) that asked the client to wait.
	RateLimited int
	// Waited is the time spent waiting before requests: backoff, the
	// server's Retry-After and the client-side rate limiter.
	Waited time.Duration
}

// Add returns the sum of s and o.
func (s RequestStats) Add(o RequestStats) RequestStats {
	return RequestStats{Requests: s.Requests + o.Requests, Retries: s.Retries + o.Retries,
		RateLimited: s.RateLimited + o.RateLimited, Waited: s.Waited + o.Waited}
}

// RequestReporter is a Listing that records what a listing cost a remote
// API. The engine's listing implements it; connectorstest.Collect's does
// too.
type RequestReporter interface {
	// Requests adds s to the listing's totals. It may be called more
	// than once per listing.
	Requests(s RequestStats)
}

// ReportRequests hands s to l when l records request statistics, and
// otherwise does nothing. Sources call it once List is done, whether it
// failed or not.
func ReportRequests(l Listing, s RequestStats) {
	if r, ok := l.(RequestReporter); ok {
		r.Requests(s)
	}
}

// FragmentReporter is a Listing that counts the files a source does not
// hand over as documents because other documents of the source include
// them whole (see WholeIncludes): their text is indexed where it is
// included. The engine's listing implements it and counts them in the
// run's ContentCounts.Fragments. A fragment the engine held from an
// earlier run is deleted like any document a complete listing leaves out.
type FragmentReporter interface {
	// Fragments notes the IDs the documents would have had.
	Fragments(ids ...string)
}

// ReportFragments hands ids to l when l counts fragments, and otherwise
// does nothing.
func ReportFragments(l Listing, ids ...string) {
	if r, ok := l.(FragmentReporter); ok && len(ids) > 0 {
		r.Fragments(ids...)
	}
}

// Anchorer is a Source whose documents' web pages name their headings in
// their own way (a wiki's heading IDs are not GitHub's slugs). The engine
// asks it for the anchor of each chunk's section, so that citations
// deep-link to the heading on the source's own page.
type Anchorer interface {
	// Anchor returns the URL fragment (without "#") of the heading at the
	// end of section in doc, or "" to link to the page itself. The engine
	// calls it while the Listing.Document call that handed doc over runs.
	Anchor(doc docent.Document, section []string) string
}

// Holder is a Listing that can say whether the engine already holds a
// document. An incremental source that decides by date what to hand over
// asks it, so that a document with an old date the engine never received
// (a page moved in from another space, restored from the trash, or one
// whose earlier fetch failed) is handed over all the same. The engine's
// listing implements it.
type Holder interface {
	// Holds reports whether the engine holds the document id from an
	// earlier run.
	Holds(id string) bool
	// Held returns the IDs of every document the engine holds for the
	// source, sorted: a source whose listing may miss documents (a search
	// index) checks the ones it did not see before leaving them out.
	Held() []string
}

// Holds reports whether l says it holds the document id. A listing that
// cannot say (it does not implement Holder) is taken to hold everything:
// the source then decides by date alone.
func Holds(l Listing, id string) bool {
	if h, ok := l.(Holder); ok {
		return h.Holds(id)
	}
	return true
}

// Held returns the IDs of the documents l says the engine holds, and
// false when l cannot say.
func Held(l Listing) ([]string, bool) {
	if h, ok := l.(Holder); ok {
		return h.Held(), true
	}
	return nil, false
}
