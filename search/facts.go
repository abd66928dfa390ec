package search

import (
	"context"
	"crypto/sha256"
	"slices"
	"strings"

	"github.com/docent-hq/docent"
)

// ChunkFacts are what the Retriever's last stage (refine) reads of a
// candidate chunk besides its document: enough to leave out exact copies,
// to order a page's sections and to fold near-identical ones, without its
// text.
type ChunkFacts struct {
	// Hash is the SHA-256 of the body with surrounding space trimmed
	// (docent.Chunk.Body): chunks with the same body have the same Hash.
	// It is zero for an empty body, which is a copy of nothing.
	Hash [32]byte
	// Body is the distinct terms (AnalyzeKeywords) of the body's prose
	// and of its fenced code (SplitCode: the fence lines, which name a
	// language, are in neither), sorted: the words the keyword index
	// holds for the body.
	Body []string
	// Own is Body with the terms of the section's own heading (the last
	// of Section), sorted: what the chunk's section states, as opposed to
	// the title and the headings above it, which it shares with the
	// page's other sections.
	Own []string
}

// FactsOf derives c's facts from its text and section.
func FactsOf(c docent.Chunk) ChunkFacts {
	body := c.Body()
	var f ChunkFacts
	if t := strings.TrimSpace(body); t != "" {
		f.Hash = sha256.Sum256([]byte(t))
	}
	prose, code := SplitCode(body)
	f.Body = union(sortedTerms(prose), sortedTerms(code))
	f.Own = f.Body
	if len(c.Section) > 0 {
		if leaf := sortedTerms(c.Section[len(c.Section)-1]); len(leaf) > 0 {
			f.Own = union(f.Body, leaf)
		}
	}
	return f
}

// sortedTerms returns the distinct terms of text (AnalyzeKeywords),
// sorted.
func sortedTerms(text string) []string {
	terms := []string{}
	AnalyzeKeywords(text, func(t string) { terms = append(terms, t) })
	slices.Sort(terms)
	return slices.Compact(terms)
}

// union merges two sorted lists of distinct terms.
func union(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]string, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case b[0] < a[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// SectionFacts is an Index that keeps each chunk's facts (FactsOf),
// derived when the chunk is stored, so the last stage reads them instead
// of loading and analyzing the text of every candidate it orders. Without
// it, the Retriever loads the candidates' chunks and derives their facts.
// Such an index keeps TermStats too: the stage weighs terms with them
// (without, it counts terms in the candidates' text, which it then does
// not have).
type SectionFacts interface {
	// Facts returns the facts of each of ids the index holds; IDs it does
	// not hold are left out.
	Facts(ctx context.Context, ids []string) (map[string]ChunkFacts, error)
}

// facts returns the facts of hits: from the index when it keeps them,
// else derived from each hit's chunk, which is loaded in place when it
// came back without its text (as is a hit the index no longer knows).
func (r *Retriever) facts(ctx context.Context, hits []docent.Hit) (map[string]ChunkFacts, error) {
	out := make(map[string]ChunkFacts, len(hits))
	if sf, ok := r.idx.(SectionFacts); ok {
		var ids []string
		for _, h := range hits {
			if h.Chunk.Text == "" {
				ids = append(ids, h.Chunk.ID)
			}
		}
		if len(ids) > 0 {
			got, err := sf.Facts(ctx, ids)
			if err != nil {
				return nil, err
			}
			for id, f := range got {
				out[id] = f
			}
		}
	}
	var need []docent.Hit
	var at []int
	for i, h := range hits {
		if _, ok := out[h.Chunk.ID]; !ok {
			need, at = append(need, h), append(at, i)
		}
	}
	if err := r.load(ctx, need); err != nil {
		return nil, err
	}
	for n, i := range at {
		hits[i] = need[n]
		out[need[n].Chunk.ID] = FactsOf(need[n].Chunk)
	}
	return out, nil
}
