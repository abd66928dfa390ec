package connectors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"
)

// DateCursor is the cursor of a source that lists by modification date
// (a wiki): the scope the listing covered and the newest modification it
// saw. A cursor made for another scope (other spaces, roots or filters)
// is not valid for the source: an incremental listing from it would miss
// the unchanged pages that came into scope.
type DateCursor struct {
	// Scope fingerprints the settings that decide what the source lists
	// (see Fingerprint).
	Scope string
	// Since is the newest modification the listing saw.
	Since time.Time
}

// String encodes the cursor for Listed.Cursor.
func (c DateCursor) String() string {
	return "v1;scope=" + c.Scope + ";since=" + c.Since.UTC().Format(time.RFC3339Nano)
}

// ParseDateCursor decodes a cursor String made, and reports whether s was
// one.
func ParseDateCursor(s string) (DateCursor, bool) {
	parts := strings.Split(s, ";")
	if len(parts) != 3 || parts[0] != "v1" || !strings.HasPrefix(parts[1], "scope=") || !strings.HasPrefix(parts[2], "since=") {
		return DateCursor{}, false
	}
	since, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(parts[2], "since="))
	if err != nil {
		return DateCursor{}, false
	}
	return DateCursor{Scope: strings.TrimPrefix(parts[1], "scope="), Since: since}, true
}

// Fingerprint returns a short hash of settings: each list is taken in any
// order (its items sorted), the lists and values in the order given.
func Fingerprint(values []string, lists ...[]string) string {
	h := sha256.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	for _, l := range lists {
		sorted := slices.Clone(l)
		slices.Sort(sorted)
		h.Write([]byte(strings.Join(sorted, "\x01")))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Presenter gathers the IDs a source names with Listing.Present and hands
// them over in batches.
type Presenter struct {
	l   Listing
	ids []string
}

// presentBatch is how many IDs go to one Listing.Present call.
const presentBatch = 500

// NewPresenter returns a Presenter that names IDs to l.
func NewPresenter(l Listing) *Presenter { return &Presenter{l: l} }

// Add names id, handing a batch over when it is full; it returns
// Listing.Present's error.
func (p *Presenter) Add(ctx context.Context, id string) error {
	p.ids = append(p.ids, id)
	if len(p.ids) < presentBatch {
		return nil
	}
	return p.Flush(ctx)
}

// Flush hands over the IDs gathered so far.
func (p *Presenter) Flush(ctx context.Context) error {
	if len(p.ids) == 0 {
		return nil
	}
	err := p.l.Present(ctx, p.ids...)
	p.ids = p.ids[:0]
	return err
}
