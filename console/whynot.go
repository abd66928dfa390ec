package console

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/templates"
)

// maxWhyNotDepth bounds how many hits each retriever is asked for when
// looking for a document's chunks.
const maxWhyNotDepth = 1000

// whyNot re-runs a turn's query through each retriever, with the turn's
// filter and without it, and reports where every chunk of the document
// ranked, where it stood among the turn's candidates, and whether the
// filter removed it.
func (h *handler) whyNot(ctx context.Context, turn docent.Turn, docID string) (templates.WhyNot, error) {
	rec, err := h.store.Document(ctx, docID)
	if err != nil {
		return templates.WhyNot{}, err
	}
	wn := templates.WhyNot{Doc: rec, Filter: templates.FilterText(turn.Question.Filter)}
	if !rec.DeletedAt.IsZero() {
		wn.Error = "The document is gone from its source since " + templates.Day(rec.DeletedAt) + ": it has no chunks to rank."
		return wn, nil
	}
	chunks, err := h.opts.Index.Chunks(ctx, rec.ChunkIDs)
	if err != nil {
		return wn, fmt.Errorf("console: why not: %w", err)
	}
	n, err := h.opts.Index.Count(ctx)
	if err != nil {
		return wn, fmt.Errorf("console: why not: %w", err)
	}
	wn.Depth = min(max(n, 1), maxWhyNotDepth)
	query := turn.Answer.Trace.Query
	if query == "" {
		query = turn.Question.Text
	}
	filter := turn.Question.Filter
	rank := func(hits []docent.Hit) map[string]int {
		out := map[string]int{}
		for i, h := range hits {
			out[h.Chunk.ID] = i + 1
		}
		return out
	}
	keyword := func(f docent.Filter) (map[string]int, error) {
		hits, err := h.opts.Index.KeywordSearch(ctx, search.KeywordQuery{Text: query, Filter: f, K: wn.Depth})
		return rank(hits), err
	}
	kw, err := keyword(filter)
	if err != nil {
		return wn, fmt.Errorf("console: why not: keyword: %w", err)
	}
	kwAll := kw
	if !filter.IsZero() {
		if kwAll, err = keyword(docent.Filter{}); err != nil {
			return wn, fmt.Errorf("console: why not: keyword: %w", err)
		}
	}
	vec, vecAll := map[string]int{}, map[string]int{}
	qv, err := h.opts.Embedder.EmbedQuery(ctx, query)
	if err != nil {
		wn.Error = "The query could not be embedded, so vector ranks are missing: " + err.Error()
	} else {
		vector := func(f docent.Filter) (map[string]int, error) {
			hits, err := h.opts.Index.VectorSearch(ctx, search.VectorQuery{Vector: qv, Filter: f, K: wn.Depth})
			return rank(hits), err
		}
		if vec, err = vector(filter); err != nil {
			return wn, fmt.Errorf("console: why not: vector: %w", err)
		}
		vecAll = vec
		if !filter.IsZero() {
			if vecAll, err = vector(docent.Filter{}); err != nil {
				return wn, fmt.Errorf("console: why not: vector: %w", err)
			}
		}
	}
	cand := map[string]int{}
	for i, h := range turn.Answer.Trace.Candidates {
		if _, dup := cand[h.Chunk.ID]; !dup {
			cand[h.Chunk.ID] = i + 1
		}
	}
	var excluded []string
	for _, c := range chunks {
		why := filterExcludes(filter, c)
		section := strings.Join(c.Section, " › ")
		if section == "" {
			section = c.Title
		}
		wc := templates.WhyNotChunk{ID: c.ID, Section: section,
			Keyword: kw[c.ID], Vector: vec[c.ID], KeywordUnfiltered: kwAll[c.ID], VectorUnfiltered: vecAll[c.ID],
			Candidate: cand[c.ID], Excluded: why}
		fate := templates.CandidateFate(turn, c.ID)
		switch {
		case fate.Sent:
			wc.Sent = true
		case why != "":
			wc.Why = "filtered out: " + why
		case wc.Candidate == 0:
			wc.Why = notCandidate(wc, len(turn.Answer.Trace.Candidates))
		case fate.Why != "":
			wc.Why = fate.Why
		case templates.NothingSent(turn) != "":
			wc.Why = "nothing was sent: " + templates.NothingSent(turn)
		default:
			wc.Why = "not recorded (the turn is older than the record of why)"
		}
		wn.Chunks = append(wn.Chunks, wc)
		if why != "" && !slices.Contains(excluded, why) {
			excluded = append(excluded, why)
		}
	}
	if allExcluded(wn.Chunks) {
		wn.Excluded = strings.Join(excluded, "; ")
	}
	return wn, nil
}

// notCandidate says why a chunk was not among a turn's n candidates:
// neither retriever ranked it high enough to be fused into them.
func notCandidate(c templates.WhyNotChunk, n int) string {
	if c.Keyword == 0 && c.Vector == 0 {
		return "not retrieved: neither keyword nor vector search ranked it in its top hits"
	}
	best := c.Keyword
	if best == 0 || (c.Vector > 0 && c.Vector < best) {
		best = c.Vector
	}
	return fmt.Sprintf("not among the %d candidates: its best rank, %d, did not fuse into them", n, best)
}

func allExcluded(cs []templates.WhyNotChunk) bool {
	for _, c := range cs {
		if c.Excluded == "" {
			return false
		}
	}
	return len(cs) > 0
}

// filterExcludes says which clause of f removes c ("" when f keeps it),
// by the reference meaning of docent.Filter.Match.
func filterExcludes(f docent.Filter, c docent.Chunk) string {
	if f.Match(c) {
		return ""
	}
	switch {
	case len(f.Sources) > 0 && !slices.Contains(f.Sources, c.Source):
		return fmt.Sprintf("source %s is not among %s", c.Source, strings.Join(f.Sources, ", "))
	case len(f.Spaces) > 0 && !slices.Contains(f.Spaces, c.Space):
		return fmt.Sprintf("space %q is not among %s", c.Space, strings.Join(f.Spaces, ", "))
	case len(f.Labels) > 0 && !slices.ContainsFunc(c.Labels, func(l string) bool { return slices.Contains(f.Labels, l) }):
		return fmt.Sprintf("it has none of the labels %s", strings.Join(f.Labels, ", "))
	case !f.UpdatedAfter.IsZero() && c.UpdatedAt.Before(f.UpdatedAfter):
		return "updated " + templates.Day(c.UpdatedAt) + ", before " + templates.Day(f.UpdatedAfter)
	default:
		return "updated " + templates.Day(c.UpdatedAt) + ", not before " + templates.Day(f.UpdatedBefore)
	}
}
