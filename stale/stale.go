// Package stale derives, in the sync, the state of each document an
// admin should fix before users complain, and stores it with the
// document's record: when it turns older than its source's age policy,
// its conflicts with near-duplicates (alike sections of a newer document
// that state other amounts, or that carry another date, across sources
// and versions), and, for a document gone from its source, the golden
// questions that still expect it.
//
// A Checker is a search.Deriver: the sync engine's corpus pass, after
// each run that changed the index, feeds it every chunk, and it writes
// the derived state to the registry when the pass completes. Chat (the
// bot's StaleChecker, the API's flags) reads that state for the cited
// documents only; the console's report reads it for every document and
// adds what the answers' feedback says (cited in answers rated not
// helpful), ranked by impact: how many answers each document grounded
// in the window times how stale it is. Nothing here scans the index on
// read.
package stale

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

// Store is the registry the checker derives from and writes to, and the
// records the console's report adds; *store.DB implements it.
type Store interface {
	// ListDocuments lists registry records (with their stored state).
	ListDocuments(ctx context.Context, f store.DocFilter) ([]docent.DocRecord, error)
	// DocumentsByID returns the records of the given IDs it holds.
	DocumentsByID(ctx context.Context, ids []string) (map[string]docent.DocRecord, error)
	// SetStaleStates stores the derived state of the documents named.
	SetStaleStates(ctx context.Context, states map[string]docent.StaleState) error
	// DocCitations counts, by document, the answers in [since, until)
	// that cited it and those of them rated not helpful.
	DocCitations(ctx context.Context, since, until time.Time, exclude string) (cited, notHelpful map[string]int, err error)
	// StaleAcks returns the acknowledgements in force at now.
	StaleAcks(ctx context.Context, now time.Time) (map[string]docent.StaleAck, error)
	// ListGolden returns the golden set.
	ListGolden(ctx context.Context) ([]docent.GoldenQuestion, error)
}

// Kinds of findings (docent.StaleFinding.Kind).
const (
	// Old: not updated at its source for longer than its source's policy.
	Old = "old"
	// NotHelpful: cited in answers people rated not helpful (the
	// console's report only: it follows feedback, not the sync).
	NotHelpful = "not_helpful"
	// Conflict: a near-duplicate of a newer document that states other
	// numbers, or carries another date.
	Conflict = "conflict"
	// Gone: deleted at its source while golden questions expect it.
	Gone = "gone"
)

// Label says what a kind of finding means, in a few words.
func Label(kind string) string {
	switch kind {
	case Old:
		return "older than its source's policy"
	case NotHelpful:
		return "cited in answers rated not helpful"
	case Conflict:
		return "conflicts with a newer page"
	case Gone:
		return "gone from its source"
	}
	return kind
}

// Finding is one reason a document is flagged.
type Finding = docent.StaleFinding

// Item is one flagged document.
type Item struct {
	// Doc is the registry record.
	Doc docent.DocRecord
	// AgeDays is how long ago it last changed at its source; MaxAgeDays
	// its source's policy.
	AgeDays, MaxAgeDays int
	// Findings are why it is flagged.
	Findings []Finding
	// Cited counts the answers in the window that cited it; NotHelpful
	// those of them rated not helpful.
	Cited, NotHelpful int
	// Staleness is AgeDays / MaxAgeDays (at least 1 for a flagged document).
	Staleness float64
	// Impact is Cited × Staleness: what ranks the list.
	Impact float64
	// Golden are the golden questions that expect the document.
	Golden []string
	// Ack is the acknowledgement in force, nil when there is none.
	Ack *docent.StaleAck
}

// Has reports whether the item has a finding of kind k.
func (it Item) Has(k string) bool {
	return slices.ContainsFunc(it.Findings, func(f Finding) bool { return f.Kind == k })
}

// Report is every flagged document, highest impact first.
type Report struct {
	// Items are the flagged documents, acknowledged ones included.
	Items []Item
	// Window is how far back citations were counted; Generated when.
	Window    time.Duration
	Generated time.Time
}

// Options tune a Checker. Zero values take the defaults.
type Options struct {
	// MaxAgeDays returns the policy of a source (days); default 365.
	MaxAgeDays func(source string) int
	// Window is how far back answers count in the report; default 30 days.
	Window time.Duration
	// ExcludePlatform leaves the turns of this platform out of the counts.
	ExcludePlatform string
	// WriteTimeout bounds the derivation at the end of a corpus pass,
	// which the pass gives no context; default 5 minutes.
	WriteTimeout time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Log receives the derivations that failed; default discards.
	Log *slog.Logger
}

// Checker derives and stores each document's state, and reads it back.
// It is safe for concurrent use.
type Checker struct {
	st   Store
	opts Options
	// mu serialises derivations (a pass's end, Refresh).
	mu sync.Mutex
}

var _ search.Deriver = (*Checker)(nil)

// New returns a Checker over the registry st.
func New(st Store, opts Options) *Checker {
	if opts.Window <= 0 {
		opts.Window = 30 * 24 * time.Hour
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 5 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxAgeDays == nil {
		opts.MaxAgeDays = func(string) int { return 365 }
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Checker{st: st, opts: opts}
}

// BeginPass implements search.Deriver: the sync engine's corpus pass,
// after each run that changed the index, gathers the chunks; when it
// completes, the conflicts between near-duplicate sections are found and
// every document's state is derived and stored with its record. A pass
// cut short leaves the stored state as it was.
func (c *Checker) BeginPass() (func(docent.Chunk), func(error)) {
	var cf conflictFinder
	return cf.add, func(err error) {
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.WriteTimeout)
		defer cancel()
		if err := c.derive(ctx, cf.find()); err != nil {
			c.opts.Log.Error("stale: derive document state", slog.Any("error", err))
		}
	}
}

// Refresh derives every document's state again from the registry, the
// golden set and the conflicts the last pass stored, without the index:
// after the golden set changed (which documents gone from their source
// are still expected) or the age policy did.
func (c *Checker) Refresh(ctx context.Context) error {
	return c.derive(ctx, nil)
}

// derive computes each document's state and stores those that changed.
// conflicts are the last pass's, by older document; nil keeps the
// conflicts stored.
func (c *Checker) derive(ctx context.Context, conflicts map[string][]Finding) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	docs, err := c.st.ListDocuments(ctx, store.DocFilter{State: store.DocAny, Limit: 1 << 30})
	if err != nil {
		return fmt.Errorf("stale: %w", err)
	}
	golden, err := c.st.ListGolden(ctx)
	if err != nil {
		return fmt.Errorf("stale: %w", err)
	}
	expected := expectedBy(golden)
	changed := map[string]docent.StaleState{}
	for _, d := range docs {
		policy := max(c.opts.MaxAgeDays(d.Source), 1)
		st := docent.StaleState{MaxAgeDays: policy}
		if !d.UpdatedAt.IsZero() {
			// Flagged once a whole day past the policy, as the age in
			// whole days says.
			st.After = d.UpdatedAt.Add(time.Duration(policy+1) * 24 * time.Hour).UTC()
		}
		if d.DeletedAt.IsZero() {
			if conflicts != nil {
				st.Findings = conflicts[d.ID]
			} else {
				for _, f := range d.Stale.Findings {
					if f.Kind == Conflict {
						st.Findings = append(st.Findings, f)
					}
				}
			}
		} else if qs := goldenOf(expected, d); len(qs) > 0 {
			st.Findings = append(st.Findings, Finding{Kind: Gone,
				Detail: fmt.Sprintf("gone from %s since %s, still expected by golden question(s) %s",
					d.Source, d.DeletedAt.Format("2006-01-02"), strings.Join(qs, ", "))})
		}
		if !sameState(st, d.Stale) {
			changed[d.ID] = st
		}
	}
	if err := c.st.SetStaleStates(ctx, changed); err != nil {
		return fmt.Errorf("stale: %w", err)
	}
	return nil
}

func sameState(a, b docent.StaleState) bool {
	return a.After.Equal(b.After) && a.MaxAgeDays == b.MaxAgeDays &&
		(len(a.Findings) == 0 && len(b.Findings) == 0 || reflect.DeepEqual(a.Findings, b.Findings))
}

// expectedBy maps a document path or ID to the golden questions that
// expect it.
func expectedBy(golden []docent.GoldenQuestion) map[string][]string {
	byPath := map[string][]string{}
	for _, q := range golden {
		for _, e := range q.Expect {
			byPath[e.Doc] = append(byPath[e.Doc], q.ID)
		}
	}
	return byPath
}

func goldenOf(expected map[string][]string, d docent.DocRecord) []string {
	return slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(expected[d.Path]), expected[d.ID]...))))
}

// findings are the stored reasons d is flagged at now: old against the
// stored policy (while live), and the sync's conflicts (live) or gone
// finding (deleted).
func findings(d docent.DocRecord, now time.Time) []Finding {
	var out []Finding
	live := d.DeletedAt.IsZero()
	if st := d.Stale; live && !st.After.IsZero() && !now.Before(st.After) {
		out = append(out, Finding{Kind: Old,
			Detail: fmt.Sprintf("last updated %s, %d days ago; the policy of %s is %d days",
				d.UpdatedAt.Format("2006-01-02"), ageDays(d, now), d.Source, st.MaxAgeDays)})
	}
	for _, f := range d.Stale.Findings {
		if (f.Kind == Gone) != live {
			out = append(out, f)
		}
	}
	return out
}

func ageDays(d docent.DocRecord, now time.Time) int {
	if d.UpdatedAt.IsZero() {
		return 0
	}
	return int(now.Sub(d.UpdatedAt).Hours() / 24)
}

// Stale implements bot.StaleChecker: the IDs among docIDs whose stored
// state flags them and that are not acknowledged. It reads those
// documents' records and the acknowledgements, never the index.
func (c *Checker) Stale(ctx context.Context, docIDs []string) (map[string]bool, error) {
	flagged, err := c.Flagged(ctx, docIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(flagged))
	for id := range flagged {
		out[id] = true
	}
	return out, nil
}

// Flagged returns, for the IDs among docIDs whose stored state flags
// them and that are not acknowledged, what they are flagged for ("older
// than its source's policy; conflicts with a newer page"): what an
// answer citing them says next to the source.
func (c *Checker) Flagged(ctx context.Context, docIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(docIDs) == 0 {
		return out, nil
	}
	now := c.opts.Now()
	docs, err := c.st.DocumentsByID(ctx, slices.Compact(slices.Sorted(slices.Values(docIDs))))
	if err != nil {
		return nil, fmt.Errorf("stale: %w", err)
	}
	var acks map[string]docent.StaleAck
	for _, id := range slices.Sorted(maps.Keys(docs)) {
		fs := findings(docs[id], now)
		if len(fs) == 0 {
			continue
		}
		if acks == nil {
			if acks, err = c.st.StaleAcks(ctx, now); err != nil {
				return nil, fmt.Errorf("stale: %w", err)
			}
		}
		if _, ok := acks[id]; ok {
			continue
		}
		var kinds []string
		for _, f := range fs {
			if l := Label(f.Kind); !slices.Contains(kinds, l) {
				kinds = append(kinds, l)
			}
		}
		out[id] = strings.Join(kinds, "; ")
	}
	return out, nil
}

// Report returns every flagged document, highest impact first: the
// stored state of every document, the answers' citations and feedback
// in the window, the acknowledgements, and the golden questions that
// expect a document no source ever had.
func (c *Checker) Report(ctx context.Context) (Report, error) {
	now := c.opts.Now()
	docs, err := c.st.ListDocuments(ctx, store.DocFilter{State: store.DocAny, Limit: 1 << 30})
	if err != nil {
		return Report{}, fmt.Errorf("stale: %w", err)
	}
	cited, notHelpful, err := c.st.DocCitations(ctx, now.Add(-c.opts.Window), now.Add(time.Second), c.opts.ExcludePlatform)
	if err != nil {
		return Report{}, fmt.Errorf("stale: %w", err)
	}
	acks, err := c.st.StaleAcks(ctx, now)
	if err != nil {
		return Report{}, fmt.Errorf("stale: %w", err)
	}
	golden, err := c.st.ListGolden(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("stale: %w", err)
	}
	expected := expectedBy(golden)

	var items []Item
	known := map[string]bool{}
	for _, d := range docs {
		known[d.Path], known[d.ID] = true, true
		it := Item{Doc: d, AgeDays: ageDays(d, now), MaxAgeDays: max(d.Stale.MaxAgeDays, 1),
			Cited: cited[d.ID], NotHelpful: notHelpful[d.ID], Golden: goldenOf(expected, d)}
		if d.Stale.MaxAgeDays == 0 { // not derived yet: the policy as configured
			it.MaxAgeDays = max(c.opts.MaxAgeDays(d.Source), 1)
		}
		it.Staleness = max(float64(it.AgeDays)/float64(it.MaxAgeDays), 1)
		it.Findings = findings(d, now)
		if d.DeletedAt.IsZero() && it.NotHelpful > 0 {
			i := 0
			if len(it.Findings) > 0 && it.Findings[0].Kind == Old {
				i = 1
			}
			it.Findings = slices.Insert(it.Findings, i, Finding{Kind: NotHelpful,
				Detail: fmt.Sprintf("cited in %d answer(s) rated not helpful", it.NotHelpful)})
		}
		if len(it.Findings) == 0 {
			continue
		}
		if a, ok := acks[d.ID]; ok {
			it.Ack = &a
		}
		it.Impact = float64(it.Cited) * it.Staleness
		items = append(items, it)
	}
	// Golden questions that expect a document the registry never had.
	for _, path := range slices.Sorted(maps.Keys(expected)) {
		if known[path] {
			continue
		}
		items = append(items, Item{Doc: docent.DocRecord{ID: path, Path: path, Title: path}, Staleness: 1,
			Golden: expected[path], Findings: []Finding{{Kind: Gone,
				Detail: "not in any source, still expected by golden question(s) " + strings.Join(expected[path], ", ")}}})
	}
	slices.SortStableFunc(items, func(a, b Item) int {
		return cmp.Or(cmp.Compare(b.Impact, a.Impact), cmp.Compare(b.Staleness, a.Staleness),
			cmp.Compare(len(b.Findings), len(a.Findings)), cmp.Compare(a.Doc.ID, b.Doc.ID))
	})
	return Report{Items: items, Window: c.opts.Window, Generated: now}, nil
}
