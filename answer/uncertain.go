package answer

import (
	"strings"

	"github.com/docent-hq/docent"
)

// UncertainLead opens every uncertain reply.
const UncertainLead = "I couldn't confirm this in the docs."

// HandoffOffer closes the uncertain and not-found replies.
const HandoffOffer = "Want me to bring in a person?"

// maxExcerpt bounds the excerpt of the closest page, in characters.
const maxExcerpt = 200

// UncertainText is the reply when the docs seem to be about a question
// but do not confirm an answer. It asserts nothing as the answer: it says
// so, names any asked detail the docs lack (and what they list instead),
// links the closest page as [1] with a one-line excerpt, and offers a
// person.
//
//	I couldn't confirm this in the docs: they don't mention Tokyo (they
//	list United States, Germany). The closest page is [1] Expense policy ›
//	Meals: "Meal per diem: United States: $75 per day." Want me to bring
//	in a person?
func UncertainText(missing []string, covered string, closest docent.Citation, excerpt string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(UncertainLead, "."))
	if len(missing) > 0 {
		b.WriteString(": they don't mention " + joinAnd(missing))
		if covered != "" {
			b.WriteString(" (they list " + covered + ")")
		}
	}
	b.WriteString(". The closest page is [1] " + closest.Title)
	if closest.Section != "" {
		b.WriteString(" › " + closest.Section)
	}
	if excerpt != "" {
		b.WriteString(`: "` + excerpt + `"`)
	}
	b.WriteString(". " + HandoffOffer)
	return b.String()
}

// joinAnd joins words as "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// excerpt is the chunk's sentence that best covers the question's terms
// (a list item or table row only when the chunk has no sentence: a row
// answers for one entry, which an uncertain reply must not assert), or
// its first unit, cut to maxExcerpt characters at a word boundary; final
// punctuation is dropped.
func excerpt(c docent.Chunk, terms map[string]float64) string {
	units := unitsOf(c)
	if len(units) == 0 {
		return ""
	}
	sc := &scorer{idf: terms}
	for t, w := range terms {
		sc.terms = append(sc.terms, t)
		sc.total += w
	}
	best, bestCov := units[0], -1.0
	for _, u := range units {
		cov := sc.unitCoverage(u)
		if u.Kind == kindSentence {
			cov += 1 // any sentence before any row or item
		}
		if cov > bestCov {
			best, bestCov = u, cov
		}
	}
	text := trimEnd(plainMarkers(best.Text))
	if len(text) > maxExcerpt {
		cut := strings.LastIndex(text[:maxExcerpt], " ")
		if cut <= 0 {
			cut = maxExcerpt
		}
		text = strings.TrimRight(text[:cut], " ,;:") + "…"
	}
	return strings.ReplaceAll(text, `"`, "'")
}
