package answer

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/docent-hq/docent"
)

// Identity is a Rewriter that makes the question the query; Standalone
// is the default.
type Identity struct{}

var _ Rewriter = Identity{}

// Rewrite returns the question unchanged.
func (Identity) Rewrite(_ context.Context, req RewriteRequest) (Rewrite, error) {
	return Rewrite{Query: req.Question}, nil
}

// FusedOrder is a Reranker that keeps the retrieval (fused) order, which
// measured better on SciFact than every offline passage reranker tried;
// PageOrder, the default, reorders by page-level evidence only.
type FusedOrder struct{}

var _ Reranker = FusedOrder{}

// Rerank returns the hits as given.
func (FusedOrder) Rerank(_ context.Context, req RerankRequest) (Reranked, error) {
	return Reranked{Hits: req.Hits}, nil
}

func docKey(c docent.Chunk) string {
	if c.DocID != "" {
		return c.DocID
	}
	return c.ID
}

// Citations is the offline Verifier: markers that name no given source
// are dropped, the rest renumbered in order of first use.
type Citations struct{}

var _ Verifier = Citations{}

var markerRE = regexp.MustCompile(`\[(\d+)\]`)

// Verify renumbers the answer's citations and counts what it removed.
func (Citations) Verify(_ context.Context, req VerifyRequest) (Verified, error) {
	byN := make(map[int]Source, len(req.Sources))
	for _, s := range req.Sources {
		byN[s.N] = s
	}
	var v Verified
	newN := map[int]int{}
	out := markerRE.ReplaceAllStringFunc(req.Text, func(m string) string {
		n, err := strconv.Atoi(m[1 : len(m)-1])
		s, ok := byN[n]
		if err != nil || !ok {
			v.Removed++
			return ""
		}
		k, ok := newN[n]
		if !ok {
			k = len(v.Citations) + 1
			newN[n] = k
			v.Citations = append(v.Citations, citation(k, s.Hit.Chunk))
		}
		return "[" + strconv.Itoa(k) + "]"
	})
	v.Text = cleanSpaces(out)
	return v, nil
}

// cleanSpaces collapses runs of spaces inside lines and trims the text,
// keeping line breaks.
func cleanSpaces(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		for _, p := range []string{".", ",", ";", ":", "!", "?"} {
			l = strings.ReplaceAll(l, " "+p, p)
		}
		lines[i] = l
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func citation(n int, c docent.Chunk) docent.Citation {
	return docent.Citation{
		N: n, DocID: c.DocID, ChunkID: c.ID, Title: c.Title,
		Section: strings.Join(c.Section, " › "), URL: c.URL, UpdatedAt: c.UpdatedAt,
	}
}

func round4(f float64) float64 {
	return float64(int64(f*10000+0.5)) / 10000
}
