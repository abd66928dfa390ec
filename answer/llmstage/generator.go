package llmstage

import (
	"context"
	"regexp"
	"strings"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/llm"
)

// Generator writes grounded answers with a Model: it sends the
// GroundedPrompt and returns the reply for the Verifier to check. A reply
// that says the sources do not hold the answer (NotFoundMark, or an
// uncited "the sources don't say …") comes back as NotFound. It
// implements answer.Generator and answer.StreamGenerator.
type Generator struct {
	m llm.Model
}

var (
	_ answer.Generator       = (*Generator)(nil)
	_ answer.StreamGenerator = (*Generator)(nil)
)

// NewGenerator returns a Generator over m.
func NewGenerator(m llm.Model) *Generator { return &Generator{m: m} }

// Generate asks the model for the whole answer.
func (g *Generator) Generate(ctx context.Context, req answer.GenerateRequest) (answer.GenerateResult, error) {
	p := GroundedPrompt(req)
	resp, err := g.m.Complete(ctx, llm.Request{System: p.System, Prompt: p.User})
	return g.result(p, resp), err
}

// GenerateStream asks the model for the answer as a stream and hands its
// text to onText as it arrives. The opening of the reply is held back
// until it is clear it is not NotFoundMark, so a "not found" reply never
// reaches the asker as text.
func (g *Generator) GenerateStream(ctx context.Context, req answer.GenerateRequest, onText func(string)) (answer.GenerateResult, error) {
	p := GroundedPrompt(req)
	var held strings.Builder
	open := false
	resp, err := g.m.Stream(ctx, llm.Request{System: p.System, Prompt: p.User}, func(piece string) {
		if open {
			onText(piece)
			return
		}
		held.WriteString(piece)
		lead := strings.TrimLeft(held.String(), " \t\r\n*_#>")
		switch {
		case len(lead) < len(NotFoundMark) && strings.HasPrefix(NotFoundMark, strings.ToUpper(lead)):
			// could still become the mark: wait
		case strings.HasPrefix(strings.ToUpper(lead), NotFoundMark):
			// a not-found reply: never shown
		default:
			open = true
			onText(held.String())
		}
	})
	return g.result(p, resp), err
}

func (g *Generator) result(p Prompt, resp llm.Response) answer.GenerateResult {
	model := resp.Model
	if model == "" {
		model = g.m.Name()
	}
	return answer.GenerateResult{
		Text: strings.TrimSpace(resp.Text), NotFound: Declines(resp.Text),
		Model: model, Prompt: p.String(), Usage: usage(resp.Usage),
	}
}

var (
	citeRE    = regexp.MustCompile(`\[\s*\d+(\s*[,;–-]\s*\d+)*\s*\]`)
	declineRE = regexp.MustCompile(`(?i)(\b(sources?|documents?|docs|documentation|context|pages?|handbook|provided (information|text))\b[^.?!]{0,60}\b(do(es)?\s*n[o']?t|do(es)? not)\s+(say|mention|contain|cover|include|specify|provide|state|address|answer|describe)|\bi (could|can)\s*(n['’]?t|not) find\b|\bno information (about|on|regarding)\b|\bnot (mentioned|covered|specified|stated|addressed|described) in the (sources|documents|docs|documentation|context)\b)`)
)

// Declines reports whether a model reply says the sources do not hold the
// answer: it opens with NotFoundMark (after any markdown emphasis), or it
// cites nothing and says so in words ("The sources don't mention …", "I
// couldn't find …"). A reply that cites a source is an answer, even if
// it also says some part is not covered.
func Declines(text string) bool {
	lead := strings.TrimLeft(text, " \t\r\n*_#>")
	if strings.HasPrefix(strings.ToUpper(lead), NotFoundMark) {
		return true
	}
	return !citeRE.MatchString(text) && declineRE.MatchString(text)
}
