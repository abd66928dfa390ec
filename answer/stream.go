package answer

import (
	"context"
	"strconv"
	"strings"

	"github.com/docent-hq/docent"
)

// StreamGenerator is a Generator that can hand out its text while it is
// being written (llmstage.Generator over Gemini's streamGenerateContent or an
// OpenAI-compatible stream). The Pipeline streams only through
// AnswerStream; Answer calls Generate.
type StreamGenerator interface {
	Generator
	// GenerateStream is Generate, calling onText with each new piece of
	// text, in order, as it arrives. The pieces need not add up to the
	// result's Text (a generator may hold back a reply it will report as
	// NotFound); the result is what counts.
	GenerateStream(ctx context.Context, req GenerateRequest, onText func(string)) (GenerateResult, error)
}

// AnswerStream answers q like Answer and, while a streaming generator
// writes the answer, calls onDelta with each new piece of its text, so a
// chat adapter can show the answer growing:
//
//	a, err := p.AnswerStream(ctx, q, func(delta string) { msg.Append(delta) })
//	// then: msg.Replace(answer.Format(a)) — the verified answer
//
// Citation markers in the pieces are already renumbered in order of
// first use, and markers that name no given source are left out, so the
// streamed text reads like the final one. Deltas are provisional: the
// returned Answer is the verified one (citations checked on the final
// text), and the adapter replaces what it showed with it when AnswerStream
// returns. Its Status may still be not_found or uncertain (the model
// declined, no valid citation, an outage) after text was streamed. No
// delta is sent when the answer is decided before generation (not found,
// uncertain) or when the Generator does not implement StreamGenerator.
// onDelta is called from the calling goroutine's call tree, never
// concurrently.
func (p *Pipeline) AnswerStream(ctx context.Context, q docent.Question, onDelta func(delta string)) (docent.Answer, error) {
	if onDelta == nil {
		onDelta = func(string) {}
	}
	return p.answer(ctx, q, onDelta)
}

// liveCitations renumbers citation markers in streamed text the way the
// Citations verifier will on the whole text: by first use, markers naming
// no given source dropped, grouped markers split. A "[" that may still
// become a marker is held back until the next piece says what it is.
type liveCitations struct {
	valid   map[int]bool
	newN    map[int]int
	pending string
	emit    func(string)
}

func newLiveCitations(sources []Source, emit func(string)) *liveCitations {
	valid := make(map[int]bool, len(sources))
	for _, s := range sources {
		valid[s.N] = true
	}
	return &liveCitations{valid: valid, newN: map[int]int{}, emit: emit}
}

// maxMarker bounds a held-back partial marker, in bytes.
const maxMarker = 24

// write renumbers the markers in piece (with what was held back) and
// emits the text that is settled.
func (l *liveCitations) write(piece string) {
	s := l.pending + piece
	l.pending = ""
	var out strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '[' {
			out.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			if rest := s[i+1:]; len(rest) < maxMarker && markerBody(rest, true) {
				l.pending = s[i:]
				break
			}
			out.WriteByte('[')
			i++
			continue
		}
		if body := s[i+1 : i+end]; markerBody(body, false) {
			out.WriteString(l.renumber(body))
			i += end + 1
			continue
		}
		out.WriteByte('[')
		i++
	}
	if out.Len() > 0 {
		l.emit(out.String())
	}
}

// renumber returns the markers of a marker body ("3", "1, 3", "2-4")
// renumbered, those naming no source dropped.
func (l *liveCitations) renumber(body string) string {
	return markerRE.ReplaceAllStringFunc(expandGroups("["+body+"]"), func(m string) string {
		n, _ := strconv.Atoi(m[1 : len(m)-1])
		if !l.valid[n] {
			return ""
		}
		k, ok := l.newN[n]
		if !ok {
			k = len(l.newN) + 1
			l.newN[n] = k
		}
		return "[" + strconv.Itoa(k) + "]"
	})
}

// markerBody reports whether s can be (partial: may become) the inside of
// a citation marker: digits, spaces, commas, semicolons and dashes,
// starting with a digit (or empty, when partial).
func markerBody(s string, partial bool) bool {
	t := strings.TrimLeft(s, " ")
	if t == "" {
		return partial
	}
	if t[0] < '0' || t[0] > '9' {
		return false
	}
	for _, r := range t {
		if !(r >= '0' && r <= '9' || r == ' ' || r == ',' || r == ';' || r == '-' || r == '–') {
			return false
		}
	}
	return true
}
