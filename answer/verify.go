package answer

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Citations is the Verifier every answer goes through, offline or
// model-written. It
//
//   - reads grouped markers as single ones ("[1, 3]", "[2-3]" become
//     "[1][3]", "[2][3]"),
//   - removes markers that name no source given to the generator (a model
//     citing [7] of five sources) and logs them,
//   - renumbers the rest 1, 2, … in order of first appearance and returns
//     the cited sources in that order,
//   - counts the sentences and list items that state something without
//     any citation (Verified.Uncited).
//
// An answer left without a valid citation has no Citations: the Pipeline
// then answers not found (or uncertain; see Options.Uncited).
type Citations struct {
	// Log receives a warning for every answer with removed markers; nil
	// discards it.
	Log *slog.Logger
}

var _ Verifier = Citations{}

var (
	markerRE = regexp.MustCompile(`\[(\d+)\]`)
	// groupRE is a marker naming several sources: [1, 2], [1;2], [1-3].
	groupRE = regexp.MustCompile(`\[\s*\d+\s*(?:[,;–-]\s*\d+\s*)+\]`)
	// leadMarkersRE is a sentence that opens with markers: they belong to
	// the sentence before it ("… per night. [1] Book …").
	leadMarkersRE = regexp.MustCompile(`^(\s*\[\d+\])+`)
)

// maxRange bounds how many sources one range marker ("[1-4]") may name.
const maxRange = 10

// Verify renumbers the answer's citations and counts what it removed and
// what is uncited.
func (c Citations) Verify(ctx context.Context, req VerifyRequest) (Verified, error) {
	byN := make(map[int]Source, len(req.Sources))
	for _, s := range req.Sources {
		byN[s.N] = s
	}
	var v Verified
	var removed []int
	newN := map[int]int{}
	out := markerRE.ReplaceAllStringFunc(expandGroups(req.Text), func(m string) string {
		n, err := strconv.Atoi(m[1 : len(m)-1])
		s, ok := byN[n]
		if err != nil || !ok {
			v.Removed++
			removed = append(removed, n)
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
	v.Uncited = countUncited(v.Text)
	if v.Removed > 0 && c.Log != nil {
		c.Log.WarnContext(ctx, "removed citations of sources not given",
			slog.Any("markers", removed), slog.Int("sources", len(req.Sources)))
	}
	return v, nil
}

// expandGroups rewrites grouped markers as runs of single ones.
func expandGroups(s string) string {
	return groupRE.ReplaceAllStringFunc(s, func(g string) string {
		var b strings.Builder
		parts := strings.FieldsFunc(g[1:len(g)-1], func(r rune) bool { return r == ',' || r == ';' })
		for _, p := range parts {
			lo, hi, isRange := strings.Cut(p, "-")
			if !isRange {
				lo, hi, isRange = strings.Cut(p, "–")
			}
			a, errA := strconv.Atoi(strings.TrimSpace(lo))
			if errA != nil {
				continue
			}
			z := a
			if isRange {
				if bz, err := strconv.Atoi(strings.TrimSpace(hi)); err == nil && bz >= a && bz-a < maxRange {
					z = bz
				}
			}
			for n := a; n <= z; n++ {
				b.WriteString("[" + strconv.Itoa(n) + "]")
			}
		}
		return b.String()
	})
}

// countUncited counts the sentences and list items of text that state
// something but carry no marker. A sentence that opens with markers lends
// them to the one before it. Questions, lines ending in ":" (a lead-in to
// a list), headings, code and fragments of fewer than four words are not
// claims.
func countUncited(text string) int {
	var units []string
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inCode = !inCode
			continue
		}
		if inCode || t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") {
			continue
		}
		t = strings.TrimLeft(t, "-*•0123456789.) ")
		units = append(units, search.SplitSentences(t)...)
	}
	n := 0
	for i, u := range units {
		u = strings.TrimSpace(u)
		if markerRE.MatchString(u) {
			continue
		}
		if i+1 < len(units) && leadMarkersRE.MatchString(units[i+1]) {
			continue
		}
		if isClaim(u) {
			n++
		}
	}
	return n
}

// isClaim reports whether a sentence asserts something worth a source.
func isClaim(s string) bool {
	s = strings.TrimSpace(strings.Trim(s, "*_"))
	if strings.HasSuffix(s, "?") || strings.HasSuffix(s, ":") {
		return false
	}
	words := 0
	for _, w := range strings.Fields(s) {
		if strings.IndexFunc(w, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' }) >= 0 {
			words++
		}
	}
	return words >= 4
}

// cleanSpaces collapses runs of spaces inside lines (outside ``` code
// blocks) and drops spaces before punctuation, left where a marker was
// removed, then trims the text; line breaks are kept.
func cleanSpaces(s string) string {
	lines := strings.Split(s, "\n")
	inCode := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
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
