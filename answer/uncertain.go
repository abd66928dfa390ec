package answer

import (
	"strconv"
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
// links the closest pages as [1], [2], … each with a one-line passage,
// and offers a person. passages[i] belongs to closest[i]; "" leaves it
// out.
//
//	I couldn't confirm this in the docs: they don't mention Tokyo (they
//	list United States, Germany). The closest pages: [1] Expense policy ›
//	Meals: "Meal per diem: United States: $75 per day"; [2] Booking travel
//	› Flights. Want me to bring in a person?
func UncertainText(missing []string, covered string, closest []docent.Citation, passages []string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(UncertainLead, "."))
	if len(missing) > 0 {
		b.WriteString(": they don't mention " + joinAnd(missing))
		if covered != "" {
			b.WriteString(" (they list " + covered + ")")
		}
	}
	if len(closest) == 1 {
		b.WriteString(". The closest page is ")
	} else {
		b.WriteString(". The closest pages: ")
	}
	for i, c := range closest {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString("[" + strconv.Itoa(c.N) + "] " + c.Title)
		if c.Section != "" {
			b.WriteString(" › " + c.Section)
		}
		if i < len(passages) && passages[i] != "" {
			b.WriteString(`: "` + oneLine(passages[i]) + `"`)
		}
	}
	b.WriteString(". " + HandoffOffer)
	return b.String()
}

// oneLine cuts a passage to maxExcerpt characters at a word boundary,
// without final punctuation or double quotes.
func oneLine(text string) string {
	text = strings.TrimRight(strings.Join(strings.Fields(text), " "), ".!?:;,")
	if len(text) > maxExcerpt {
		cut := strings.LastIndex(text[:maxExcerpt], " ")
		if cut <= 0 {
			cut = maxExcerpt
		}
		text = strings.TrimRight(text[:cut], " ,;:") + "…"
	}
	return strings.ReplaceAll(text, `"`, "'")
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
