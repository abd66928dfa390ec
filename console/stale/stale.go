// Package stale finds the documents an admin should fix before users
// complain: older than their source's policy, cited in answers rated not
// helpful, conflicting with a near-duplicate (alike sections that state
// other numbers, or that carry other dates), or gone from their source
// while golden questions still expect them. Findings are ranked by
// impact: how many answers each document grounded in the window times how
// stale it is.
//
// Checker implements bot.StaleChecker, so that chat answers can say so
// next to a flagged source.
package stale

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

// Store is what the checker reads; *store.DB implements it.
type Store interface {
	ListDocuments(ctx context.Context, f store.DocFilter) ([]docent.DocRecord, error)
	DocCitations(ctx context.Context, since, until time.Time, exclude string) (cited, notHelpful map[string]int, err error)
	StaleAcks(ctx context.Context, now time.Time) (map[string]docent.StaleAck, error)
	ListGolden(ctx context.Context) ([]docent.GoldenQuestion, error)
}

// Chunks lists every indexed chunk; search.Index implements it.
type Chunks interface {
	Scan(ctx context.Context, fn func(docent.Chunk) error) error
}

// Kind names a reason a document is flagged.
type Kind string

// Kinds of findings.
const (
	// Old: not updated at its source for longer than its source's policy.
	Old Kind = "old"
	// NotHelpful: cited in answers people rated not helpful.
	NotHelpful Kind = "not_helpful"
	// Conflict: a near-duplicate of a newer document that states other
	// numbers, or carries another date.
	Conflict Kind = "conflict"
	// Gone: deleted at its source while golden questions expect it.
	Gone Kind = "gone"
)

// Label says what a kind of finding means, in a few words.
func (k Kind) Label() string {
	switch k {
	case Old:
		return "older than its source's policy"
	case NotHelpful:
		return "cited in answers rated not helpful"
	case Conflict:
		return "conflicts with a newer page"
	case Gone:
		return "gone from its source"
	}
	return string(k)
}

// Finding is one reason a document is flagged.
type Finding struct {
	// Kind is the reason.
	Kind Kind
	// Detail says it in words for the admin.
	Detail string
	// Other is the newer document of a conflict ("" otherwise).
	Other string
}

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
func (it Item) Has(k Kind) bool {
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
	// MaxAgeDays returns the policy of a source (days); required.
	MaxAgeDays func(source string) int
	// Window is how far back answers count; default 30 days.
	Window time.Duration
	// ExcludePlatform leaves the turns of this platform out of the counts.
	ExcludePlatform string
	// TTL is how long a report is reused; default one minute.
	TTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Checker builds and caches the report. It is safe for concurrent use.
type Checker struct {
	st     Store
	chunks Chunks
	opts   Options

	mu     sync.Mutex
	cached *Report
	// found are the conflicts the last corpus pass found (BeginPass), by
	// older document; passed is set once a pass completed.
	found  map[string][]Finding
	passed bool
}

var (
	_ bot.StaleChecker = (*Checker)(nil)
	_ search.Deriver   = (*Checker)(nil)
)

// New returns a Checker over the store and the index's chunks.
func New(st Store, chunks Chunks, opts Options) *Checker {
	if opts.Window <= 0 {
		opts.Window = 30 * 24 * time.Hour
	}
	if opts.TTL <= 0 {
		opts.TTL = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxAgeDays == nil {
		opts.MaxAgeDays = func(string) int { return 365 }
	}
	return &Checker{st: st, chunks: chunks, opts: opts}
}

// Invalidate drops the cached report (after an acknowledgement, a sync).
func (c *Checker) Invalidate() {
	c.mu.Lock()
	c.cached = nil
	c.mu.Unlock()
}

// BeginPass implements search.Deriver: the sync engine's corpus pass,
// after each run that changed the index, finds the conflicts between
// near-duplicate sections; the next report is built with them, so flags
// follow a scheduled sync with no console visit, and no reader scans the
// index.
func (c *Checker) BeginPass() (func(docent.Chunk), func(error)) {
	var cf conflictFinder
	return cf.add, func(err error) {
		if err != nil {
			return
		}
		found := cf.find()
		c.mu.Lock()
		c.found, c.passed, c.cached = found, true, nil
		c.mu.Unlock()
	}
}

// Stale implements bot.StaleChecker: the IDs among docIDs that are
// flagged and not acknowledged. It reads the conflicts of the last
// corpus pass and never scans the index (before the first pass it knows
// of no conflict).
func (c *Checker) Stale(ctx context.Context, docIDs []string) (map[string]bool, error) {
	rep, err := c.report(ctx, false)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(docIDs))
	for _, id := range docIDs {
		want[id] = true
	}
	out := map[string]bool{}
	for _, it := range rep.Items {
		if want[it.Doc.ID] && it.Ack == nil {
			out[it.Doc.ID] = true
		}
	}
	return out, nil
}

// Flagged returns, for the IDs among docIDs that are flagged and not
// acknowledged, what they are flagged for ("older than its source's
// policy; conflicts with a newer page"): what an answer citing them says
// next to the source.
func (c *Checker) Flagged(ctx context.Context, docIDs []string) (map[string]string, error) {
	rep, err := c.Report(ctx)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(docIDs))
	for _, id := range docIDs {
		want[id] = true
	}
	out := map[string]string{}
	for _, it := range rep.Items {
		if !want[it.Doc.ID] || it.Ack != nil {
			continue
		}
		var kinds []string
		for _, f := range it.Findings {
			if l := f.Kind.Label(); !slices.Contains(kinds, l) {
				kinds = append(kinds, l)
			}
		}
		out[it.Doc.ID] = strings.Join(kinds, "; ")
	}
	return out, nil
}

// Report returns the current report, built at most once per TTL (and
// after each corpus pass) from the registry, the answers' citations, the
// acknowledgements, the golden set and the last pass's conflicts. Before
// any pass it scans the index once itself (a console opened on an index
// this process has not synced).
func (c *Checker) Report(ctx context.Context) (Report, error) { return c.report(ctx, true) }

func (c *Checker) report(ctx context.Context, scan bool) (Report, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Now()
	if c.cached != nil && now.Sub(c.cached.Generated) < c.opts.TTL {
		return *c.cached, nil
	}
	if !c.passed && scan && c.chunks != nil {
		var cf conflictFinder
		if err := c.chunks.Scan(ctx, func(ch docent.Chunk) error {
			cf.add(ch)
			return nil
		}); err != nil {
			return Report{}, fmt.Errorf("stale: scan chunks: %w", err)
		}
		c.found, c.passed = cf.find(), true
	}
	rep, err := c.build(ctx, now)
	if err != nil {
		return Report{}, err
	}
	c.cached = &rep
	return rep, nil
}

func (c *Checker) build(ctx context.Context, now time.Time) (Report, error) {
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
	byPath := map[string][]string{} // document path -> golden question IDs
	for _, q := range golden {
		for _, e := range q.Expect {
			byPath[e.Doc] = append(byPath[e.Doc], q.ID)
		}
	}
	conflicts := c.found

	var items []Item
	for _, d := range docs {
		it := Item{Doc: d, MaxAgeDays: max(c.opts.MaxAgeDays(d.Source), 1), Cited: cited[d.ID], NotHelpful: notHelpful[d.ID]}
		it.Golden = slices.Compact(slices.Sorted(slices.Values(append(byPath[d.Path], byPath[d.ID]...))))
		live := d.DeletedAt.IsZero()
		if !d.UpdatedAt.IsZero() {
			it.AgeDays = int(now.Sub(d.UpdatedAt).Hours() / 24)
		}
		it.Staleness = max(float64(it.AgeDays)/float64(it.MaxAgeDays), 1)
		if live && it.AgeDays > it.MaxAgeDays {
			it.Findings = append(it.Findings, Finding{Kind: Old,
				Detail: fmt.Sprintf("last updated %s, %d days ago; the policy of %s is %d days",
					d.UpdatedAt.Format("2006-01-02"), it.AgeDays, d.Source, it.MaxAgeDays)})
		}
		if live && it.NotHelpful > 0 {
			it.Findings = append(it.Findings, Finding{Kind: NotHelpful,
				Detail: fmt.Sprintf("cited in %d answer(s) rated not helpful", it.NotHelpful)})
		}
		if live {
			it.Findings = append(it.Findings, conflicts[d.ID]...)
		}
		if !live && len(it.Golden) > 0 {
			it.Findings = append(it.Findings, Finding{Kind: Gone,
				Detail: fmt.Sprintf("gone from %s since %s, still expected by golden question(s) %s",
					d.Source, d.DeletedAt.Format("2006-01-02"), strings.Join(it.Golden, ", "))})
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
	known := map[string]bool{}
	for _, d := range docs {
		known[d.Path], known[d.ID] = true, true
	}
	for _, path := range slices.Sorted(maps.Keys(byPath)) {
		if known[path] {
			continue
		}
		items = append(items, Item{Doc: docent.DocRecord{ID: path, Path: path, Title: path}, Staleness: 1,
			Golden: byPath[path], Findings: []Finding{{Kind: Gone,
				Detail: "not in any source, still expected by golden question(s) " + strings.Join(byPath[path], ", ")}}})
	}
	slices.SortStableFunc(items, func(a, b Item) int {
		return cmp.Or(cmp.Compare(b.Impact, a.Impact), cmp.Compare(b.Staleness, a.Staleness),
			cmp.Compare(len(b.Findings), len(a.Findings)), cmp.Compare(a.Doc.ID, b.Doc.ID))
	})
	return Report{Items: items, Window: c.opts.Window, Generated: now}, nil
}

// maxTermChunks skips heading words shared by more chunks than this when
// pairing candidates, so that pairing stays near linear on large corpora.
const maxTermChunks = 64

// minTextSimilarity is how alike (Jaccard of their words) two sections
// with alike headings must be to count as near-duplicates by text alone.
const minTextSimilarity = 0.5

// conflictFinder gathers the indexed chunks of one corpus pass and pairs
// those of different documents whose headings are alike and that either
// state other amounts or, nearly the same text, carry other dates. The
// older document of each pair gets a finding. Every indexed chunk is of a
// live document (the sync deletes a gone document's chunks before the
// pass); the report checks liveness again against the registry.
type conflictFinder struct {
	chunks []docent.Chunk
	heads  []map[string]bool
	byTerm map[string][]int
}

func (f *conflictFinder) add(ch docent.Chunk) {
	if f.byTerm == nil {
		f.byTerm = map[string][]int{}
	}
	ch.Vector = nil
	h := offline.HeadingTerms(ch)
	for t := range h {
		f.byTerm[t] = append(f.byTerm[t], len(f.chunks))
	}
	f.chunks = append(f.chunks, ch)
	f.heads = append(f.heads, h)
}

// find returns the conflicts, by older document.
func (f *conflictFinder) find() map[string][]Finding {
	chunks, heads, byTerm := f.chunks, f.heads, f.byTerm
	type pair struct{ older, newer string }
	seen := map[pair]bool{}
	out := map[string][]Finding{}
	words := map[int]map[string]bool{}
	textOf := func(i int) map[string]bool {
		if w, ok := words[i]; ok {
			return w
		}
		w := map[string]bool{}
		search.AnalyzeFunc(chunks[i].Text, func(t string) { w[t] = true })
		words[i] = w
		return w
	}
	for i := range chunks {
		cands := map[int]bool{}
		for t := range heads[i] {
			if js := byTerm[t]; len(js) <= maxTermChunks {
				for _, j := range js {
					if j > i {
						cands[j] = true
					}
				}
			}
		}
		for _, j := range slices.Sorted(maps.Keys(cands)) {
			a, b := chunks[i], chunks[j]
			if a.DocID == b.DocID {
				continue
			}
			similar, onlyA, onlyB := offline.Versions(a, b)
			if !similar {
				continue
			}
			onlyA, onlyB = sameKind(onlyA, onlyB)
			numbers := len(onlyA) > 0 && len(onlyB) > 0
			dates := !a.UpdatedAt.Equal(b.UpdatedAt) && search.Jaccard(textOf(i), textOf(j)) >= minTextSimilarity
			if !numbers && !dates {
				continue
			}
			if a.UpdatedAt.After(b.UpdatedAt) {
				a, b, onlyA, onlyB = b, a, onlyB, onlyA
			}
			p := pair{a.DocID, b.DocID}
			if seen[p] {
				continue
			}
			seen[p] = true
			section := strings.Join(a.Section, " › ")
			if section == "" {
				section = a.Title
			}
			db := docent.DocRecord{ID: b.DocID, Title: b.Title, UpdatedAt: b.UpdatedAt}
			detail := fmt.Sprintf("“%s” is a near-duplicate of %s (updated %s)", section, db.Title, dateOf(db))
			if numbers {
				detail = fmt.Sprintf("“%s” says %s where the newer %s (updated %s) says %s",
					section, strings.Join(onlyA, ", "), db.Title, dateOf(db), strings.Join(onlyB, ", "))
			}
			out[a.DocID] = append(out[a.DocID], Finding{Kind: Conflict, Detail: detail, Other: db.ID})
		}
	}
	return out
}

func dateOf(d docent.DocRecord) string {
	if d.UpdatedAt.IsZero() {
		return "date unknown"
	}
	return d.UpdatedAt.Format("2006-01-02")
}

// sameKind keeps the amounts of the kinds both sides state ("$" amounts
// against "$" amounts, days against days): "says 1 where the newer says
// $25" compares nothing.
func sameKind(a, b []string) (ka, kb []string) {
	kinds := func(s []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[amountKind(x)] = true
		}
		return m
	}
	inA, inB := kinds(a), kinds(b)
	for _, x := range a {
		if inB[amountKind(x)] {
			ka = append(ka, x)
		}
	}
	for _, x := range b {
		if inA[amountKind(x)] {
			kb = append(kb, x)
		}
	}
	return ka, kb
}

// amountKind is an amount without its number: its currency sign and its
// unit ("$", " day", "%"; "" for a bare number).
func amountKind(a string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == '.' {
			return -1
		}
		return r
	}, a)
}
