// Package question holds the one reading of whether a message is a
// question, which the chat core (auto-answer, follow-ups) and the
// offline answerer (where a multi-part question's asks begin) share,
// and of whether it is small talk (SmallTalk), which the pipeline and
// the chat core share.
package question

import (
	"regexp"
	"strings"
)

// The words that open an ask, as regexp alternations: a wh-word, or an
// auxiliary verb.
const (
	WhWords  = `what|whats|what's|when|where|wheres|where's|who|whos|who's|whom|which|why|how|hows|how's`
	AuxWords = `do|does|did|can|could|should|shall|will|would|is|are|am|was|were|have|has`
)

// chatOpeners open a question in chat without being one of the above
// ("anyone know ...", "may I ...").
const chatOpeners = `any|anyone|anybody|may`

var opensRE = regexp.MustCompile(`(?i)^(?:` + WhWords + `|` + AuxWords + `|` + chatOpeners + `)$`)

// Looks reports whether text reads as a question: it ends in "?" or its
// first word opens an ask (a wh-word, an auxiliary verb, or a chat opener
// such as "anyone").
func Looks(text string) bool {
	text = strings.TrimSpace(text)
	if strings.HasSuffix(text, "?") {
		return true
	}
	first, _, _ := strings.Cut(text, " ")
	return opensRE.MatchString(strings.Trim(first, ",.:;!"))
}
