package offline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/search"
)

// statesAmount reports whether text states an amount with a currency or
// a unit ("$75", "14 days", "15%"); a bare number may be a code.
func statesAmount(text string) bool {
	for a := range search.Amounts(text) {
		if !search.IsNumber(a) {
			return true
		}
	}
	return false
}

// Conflicts are judged on the units that answer the question: those that
// state an amount and cover at least conflictCoverage of the question and
// keepRatio of what the chunk's best unit covers (the units an answer
// would quote).
const (
	conflictCoverage = 0.3
	// minAlike is how alike (Jaccard similarity of their words, numbers
	// left out) two units must be to state the same thing.
	minAlike = 0.4
)

// answeringUnits returns the units of c that answer the question (see
// conflictCoverage) and state an amount.
func answeringUnits(c docent.Chunk, sc *scorer) []unit {
	units := unitsOf(c)
	covs := make([]float64, len(units))
	best := 0.0
	for i, u := range units {
		covs[i] = sc.unitCoverage(u)
		best = max(best, covs[i])
	}
	var out []unit
	for i, u := range units {
		if len(search.Amounts(u.Text)) > 0 && covs[i] >= conflictCoverage && covs[i] >= keepRatio*best {
			out = append(out, u)
		}
	}
	return out
}

// wordsOnly returns a unit's terms without numbers.
func wordsOnly(u unit) map[string]bool {
	out := map[string]bool{}
	for t := range u.Terms {
		if !search.IsNumber(t) {
			out[t] = true
		}
	}
	return out
}

// conflicts reports whether a and b are versions of the same content that
// disagree on what was asked: their headings are alike, and a unit of
// each that answers the question states the same thing (alike words) with
// an amount the other does not. It returns the amounts only a's unit has
// and only b's has.
func conflicts(a, b docent.Chunk, sc *scorer) (bool, []string, []string) {
	if !search.SimilarHeadings(a, b) {
		return false, nil, nil
	}
	for _, ua := range answeringUnits(a, sc) {
		for _, ub := range answeringUnits(b, sc) {
			if jaccard(wordsOnly(ua), wordsOnly(ub)) < minAlike {
				continue
			}
			aa, ab := search.Amounts(ua.Text), search.Amounts(ub.Text)
			onlyA, onlyB := search.Minus(aa, ab), search.Minus(ab, aa)
			if len(onlyA) > 0 && len(onlyB) > 0 {
				return true, onlyA, onlyB
			}
		}
	}
	return false, nil, nil
}

// detectConflict finds the first pair of sources (in rank order) that
// conflict and returns it with a description for Trace.Conflict. One of
// the two must be a lead source (by number: the closest page's, or a
// part's first), so that two further sources that differ about
// something else ("car" mileage under a question about a laptop stolen
// from a car) make no note. The newer document is the one updated on a
// later day (search.Newer); on the same day neither is (Conflict.Dated
// unset) and the better ranked goes first.
func detectConflict(srcs []answer.Source, sc *scorer, lead map[int]bool) (*answer.Conflict, string) {
	for i := range srcs {
		for j := i + 1; j < len(srcs); j++ {
			a, b := srcs[i], srcs[j]
			if !lead[a.N] && !lead[b.N] {
				continue
			}
			ok, onlyA, onlyB := conflicts(a.Hit.Chunk, b.Hit.Chunk, sc)
			if !ok {
				continue
			}
			// Pages of one day are of one time (search.Newer): neither
			// is called the newer, and they keep their rank order.
			dated := true
			switch {
			case search.Newer(b.Hit.Chunk.UpdatedAt, a.Hit.Chunk.UpdatedAt):
				a, b = b, a
				onlyA, onlyB = onlyB, onlyA
			case !search.Newer(a.Hit.Chunk.UpdatedAt, b.Hit.Chunk.UpdatedAt):
				dated = false
			}
			var shared []string
			hb := search.HeadingTerms(b.Hit.Chunk)
			for t := range search.HeadingTerms(a.Hit.Chunk) {
				if hb[t] {
					shared = append(shared, t)
				}
			}
			sort.Strings(shared)
			format := "%s (%s) says %s; %s (%s) says %s"
			if dated {
				format = "newer %s (%s) says %s; older %s (%s) says %s"
			}
			desc := fmt.Sprintf(format,
				a.Hit.Chunk.DocID, dateOf(a.Hit.Chunk), strings.Join(onlyA, ", "),
				b.Hit.Chunk.DocID, dateOf(b.Hit.Chunk), strings.Join(onlyB, ", "))
			return &answer.Conflict{Newer: a.N, Older: b.N, Dated: dated, Terms: shared}, desc
		}
	}
	return nil, ""
}

func dateOf(c docent.Chunk) string {
	if c.UpdatedAt.IsZero() {
		return "date unknown"
	}
	return "updated " + c.UpdatedAt.Format("2006-01-02")
}
