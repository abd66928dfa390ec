package answer

import (
	"strconv"
	"strings"

	"github.com/docent-hq/docent"
)

// Format renders an answer as plain text for terminals and the API: the
// answer text, a blank line, then "Sources:" and one line per citation,
// "[n] Title › Section — updated 2006-01-02 — URL" (parts that are unknown
// are left out). A not-found answer renders the not-found message only.
func Format(a docent.Answer) string {
	var b strings.Builder
	text := strings.TrimSpace(a.Text)
	if a.Status == docent.StatusNotFound && text == "" {
		text = NotFoundText
	}
	if a.Status == docent.StatusError && text == "" {
		text = "Sorry, something went wrong while answering. Please try again later."
	}
	b.WriteString(text)
	b.WriteString("\n")
	if a.Status == docent.StatusNotFound || len(a.Citations) == 0 {
		return b.String()
	}
	b.WriteString("\nSources:\n")
	for _, c := range a.Citations {
		parts := []string{c.Title}
		if c.Section != "" {
			parts[0] += " › " + c.Section
		}
		if !c.UpdatedAt.IsZero() {
			parts = append(parts, "updated "+c.UpdatedAt.Format("2006-01-02"))
		}
		if c.URL != "" {
			parts = append(parts, c.URL)
		}
		b.WriteString("[" + strconv.Itoa(c.N) + "] " + strings.Join(parts, " — ") + "\n")
	}
	return b.String()
}
