// Package gaps groups the questions docent could not answer well (not
// found, uncertain, rated not helpful, handed off) into coverage gaps:
// topics, each with its size, example questions, the closest pages and
// a suggested action. It needs no model: questions join a topic when
// the embedder puts them close or when they share a salient term (a
// word that is rare among the period's misses), and the closest pages
// are the index's nearest chunks to the topic's centroid.
package gaps

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Miss is one question of the period that docent missed.
type Miss struct {
	// TurnID and Question identify it.
	TurnID   int64
	Question string
	// Status is the answer's outcome; NotHelpful whether someone rated
	// the answer not helpful; Handoff whether a person was asked for.
	Status     docent.Status
	NotHelpful bool
	Handoff    bool
}

// Page is a document close to a gap.
type Page struct {
	// DocID, Title and URL name it; Section is the closest chunk's.
	DocID, Title, URL, Section string
	// Similarity is the cosine of its closest chunk to the gap's centroid.
	Similarity float64
	// Missing are the gap's terms the closest chunk does not contain.
	Missing []string
	// Flagged says why the document is flagged stale, "" when it is not.
	Flagged string
}

// Action is what to do about a gap.
type Action string

// The suggested actions.
const (
	// ActionWrite: no page covers the topic; write one.
	ActionWrite Action = "write"
	// ActionSynonym: a page covers it in other words; add a synonym.
	ActionSynonym Action = "synonym"
	// ActionRefresh: the closest page is flagged stale; fix or refresh it.
	ActionRefresh Action = "refresh"
	// ActionFix: answers were given and rated not helpful; fix the page.
	ActionFix Action = "fix"
	// ActionGolden: a page covers it in the same words; add a golden
	// question so the retrieval or the decision is measured and fixed.
	ActionGolden Action = "golden"
)

// Gap is one topic of missed questions.
type Gap struct {
	// Terms are the words the topic's questions share, commonest first.
	Terms []string
	// Misses are its questions, newest first (as given).
	Misses []Miss
	// Pages are the closest documents, closest first.
	Pages []Page
	// Action is the suggested action; Advice says it in words.
	Action Action
	Advice string
}

// Size is the number of missed questions in the gap.
func (g Gap) Size() int { return len(g.Misses) }

// Embedder embeds a question; search.Embedder implements it.
type Embedder interface {
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Index finds the chunks nearest a vector and reads chunks by ID; the
// search backends implement it.
type Index interface {
	VectorSearch(ctx context.Context, q search.VectorQuery) ([]docent.Hit, error)
	// Chunks returns the stored chunks of ids (a backend's hits may carry
	// only the IDs and scores).
	Chunks(ctx context.Context, ids []string) ([]docent.Chunk, error)
}

// FlagFunc says, of docIDs, which are flagged stale and why; nil flags none.
type FlagFunc func(ctx context.Context, docIDs []string) (map[string]string, error)

// Options tune Group. Zero fields take the defaults.
type Options struct {
	// Join is the cosine at or above which two questions are one topic
	// on their vectors alone; default 0.6.
	Join float64
	// Covered is the cosine at or above which the closest page is taken
	// to be about the topic; default 0.35. Synonym is the cosine at or
	// above which a close page that lacks the questions' words is taken
	// to say the same in other words; default 0.6.
	Covered, Synonym float64
	// Pages is how many closest documents a gap lists; default 3.
	Pages int
	// Flags says which documents are flagged stale.
	Flags FlagFunc
}

func (o Options) withDefaults() Options {
	if o.Join == 0 {
		o.Join = 0.6
	}
	if o.Covered == 0 {
		o.Covered = 0.35
	}
	if o.Synonym == 0 {
		o.Synonym = 0.6
	}
	if o.Pages == 0 {
		o.Pages = 3
	}
	return o
}

// Group groups misses into gaps, largest first (ties: the newest first
// miss). A question that joins no other is a gap of one.
func Group(ctx context.Context, misses []Miss, emb Embedder, idx Index, opts Options) ([]Gap, error) {
	opts = opts.withDefaults()
	n := len(misses)
	if n == 0 {
		return nil, nil
	}
	vecs := make([][]float32, n)
	terms := make([]map[string]bool, n)
	df := map[string]int{}
	words := map[string]map[string]int{} // stem -> word -> count, to show a word, not a stem
	for i, m := range misses {
		v, err := emb.EmbedQuery(ctx, m.Question)
		if err != nil {
			return nil, fmt.Errorf("gaps: embed %q: %w", m.Question, err)
		}
		vecs[i] = normalize(v)
		terms[i] = map[string]bool{}
		search.Words(m.Question, func(w string) {
			for _, stem := range search.Analyze(w) {
				if words[stem] == nil {
					words[stem] = map[string]int{}
				}
				words[stem][w]++
				terms[i][stem] = true
			}
		})
		for t := range terms[i] {
			df[t]++
		}
	}
	// A salient term is shared by some misses but not by a large part of
	// them: "parking" among questions about parking and expenses, not the
	// product's name that a third of all questions say.
	salient := func(t string) bool { return df[t] >= 2 && df[t] <= max(3, n/3) && len([]rune(t)) > 2 }

	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if cosine(vecs[i], vecs[j]) >= opts.Join || sharesSalient(terms[i], terms[j], salient) {
				parent[find(i)] = find(j)
			}
		}
	}
	members := map[int][]int{}
	var roots []int
	for i := 0; i < n; i++ {
		r := find(i)
		if members[r] == nil {
			roots = append(roots, r)
		}
		members[r] = append(members[r], i)
	}

	gaps := make([]Gap, 0, len(roots))
	for _, r := range roots {
		idxs := members[r]
		g := Gap{}
		centroid := make([]float32, len(vecs[idxs[0]]))
		count := map[string]int{}
		for _, i := range idxs {
			g.Misses = append(g.Misses, misses[i])
			for k, x := range vecs[i] {
				centroid[k] += x
			}
			for t := range terms[i] {
				count[t]++
			}
		}
		g.Terms = topTerms(count, words, len(idxs))
		pages, err := closest(ctx, idx, centroid, g.Terms, opts)
		if err != nil {
			return nil, err
		}
		g.Pages = pages
		g.Action, g.Advice = suggest(g, opts)
		gaps = append(gaps, g)
	}
	if opts.Flags != nil {
		var ids []string
		for _, g := range gaps {
			for _, p := range g.Pages {
				ids = append(ids, p.DocID)
			}
		}
		if flags, err := opts.Flags(ctx, ids); err == nil {
			for gi := range gaps {
				for pi := range gaps[gi].Pages {
					gaps[gi].Pages[pi].Flagged = flags[gaps[gi].Pages[pi].DocID]
				}
				gaps[gi].Action, gaps[gi].Advice = suggest(gaps[gi], opts)
			}
		}
	}
	sort.SliceStable(gaps, func(a, b int) bool { return gaps[a].Size() > gaps[b].Size() })
	return gaps, nil
}

func sharesSalient(a, b map[string]bool, salient func(string) bool) bool {
	for t := range a {
		if b[t] && salient(t) {
			return true
		}
	}
	return false
}

// topTerms are the terms at least half of a gap's questions use (the
// commonest first, at most 4), in the words people wrote.
func topTerms(count map[string]int, words map[string]map[string]int, size int) []string {
	type tc struct {
		t string
		c int
	}
	var all []tc
	for t, c := range count {
		if 2*c >= size && len([]rune(t)) > 2 {
			all = append(all, tc{t, c})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].c != all[j].c {
			return all[i].c > all[j].c
		}
		return all[i].t < all[j].t
	})
	var out []string
	for _, x := range all {
		if len(out) == 4 || (size > 1 && x.c < 2) {
			break
		}
		best, bc := x.t, 0
		for w, c := range words[x.t] {
			if c > bc || c == bc && w < best {
				best, bc = w, c
			}
		}
		out = append(out, best)
	}
	return out
}

// closest lists the documents of the chunks nearest the centroid, one
// entry per document.
func closest(ctx context.Context, idx Index, centroid []float32, terms []string, opts Options) ([]Page, error) {
	if idx == nil {
		return nil, nil
	}
	hits, err := idx.VectorSearch(ctx, search.VectorQuery{Vector: centroid, K: 4 * opts.Pages})
	if err != nil {
		return nil, fmt.Errorf("gaps: closest pages: %w", err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Chunk.ID
	}
	chunks, err := idx.Chunks(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("gaps: closest pages: %w", err)
	}
	byID := make(map[string]docent.Chunk, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c
	}
	var out []Page
	for _, h := range hits {
		c := h.Chunk
		if full, ok := byID[c.ID]; ok {
			c = full
		}
		if slices.ContainsFunc(out, func(p Page) bool { return p.DocID == c.DocID }) {
			continue
		}
		p := Page{DocID: c.DocID, Title: c.Title, URL: c.URL, Section: strings.Join(c.Section, " › "), Similarity: h.VectorScore}
		text := map[string]bool{}
		search.AnalyzeFunc(c.Title+" "+strings.Join(c.Section, " ")+" "+c.Text, func(t string) { text[t] = true })
		for _, w := range terms {
			for _, stem := range search.Analyze(w) {
				if !text[stem] {
					p.Missing = append(p.Missing, w)
				}
			}
		}
		out = append(out, p)
		if len(out) == opts.Pages {
			break
		}
	}
	return out, nil
}

// suggest picks the action for a gap from its closest page and its misses.
func suggest(g Gap, opts Options) (Action, string) {
	topic := strings.Join(g.Terms, ", ")
	if topic == "" && len(g.Misses) > 0 {
		topic = fmt.Sprintf("%q", g.Misses[0].Question)
	}
	if len(g.Pages) == 0 || g.Pages[0].Similarity < opts.Covered {
		return ActionWrite, "Write a page about " + topic + ": no page is close."
	}
	p := g.Pages[0]
	wrong := 0 // answers given and rated not helpful
	for _, m := range g.Misses {
		if m.NotHelpful && m.Status == docent.StatusAnswered {
			wrong++
		}
	}
	switch {
	case p.Flagged != "":
		return ActionRefresh, fmt.Sprintf("Fix or refresh %q: it is the closest page and it is flagged (%s).", p.Title, p.Flagged)
	case 2*wrong > len(g.Misses):
		return ActionFix, fmt.Sprintf("Fix %q: answers from it were rated not helpful.", p.Title)
	case len(p.Missing) > 0 && p.Similarity < opts.Synonym:
		return ActionWrite, fmt.Sprintf("Write a page about %s: the closest, %q, does not say %s.", topic, p.Title, quoteAll(p.Missing))
	case len(p.Missing) > 0:
		return ActionSynonym, fmt.Sprintf("Add a synonym: people say %s where %q uses other words.", quoteAll(p.Missing), p.Title)
	}
	return ActionGolden, fmt.Sprintf("Add a golden question expecting %q: it uses the questions' words, so the retrieval or the decision missed it.", p.Title)
}

func quoteAll(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = fmt.Sprintf("%q", w)
	}
	return strings.Join(q, ", ")
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	out := make([]float32, len(v))
	inv := float32(1 / math.Sqrt(s))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
