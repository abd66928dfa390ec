package eval

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Judge rates a written answer: faithfulness (is each claim supported by
// the source it cites?) and relevance (does it answer the question?).
// answer/llmstage's Judge asks the configured model; OfflineJudge is a
// word-overlap proxy for runs without a provider. The request and the
// verdict are domain types (docent.JudgeRequest, docent.Judgment), so a
// judge needs nothing of this package.
type Judge interface {
	// Name says who judges, for the report ("model gemini-flash-latest",
	// "offline proxy: …").
	Name() string
	// Judge rates one answer. An error is counted and the run goes on.
	Judge(ctx context.Context, req docent.JudgeRequest) (docent.Judgment, error)
}

// JudgeInput builds the request for a: the cited chunks are taken from the
// trace's candidates. It returns false for an answer without citations.
func JudgeInput(question string, a docent.Answer) (docent.JudgeRequest, bool) {
	if len(a.Citations) == 0 {
		return docent.JudgeRequest{}, false
	}
	byID := make(map[string]docent.Chunk, len(a.Trace.Candidates))
	for _, h := range a.Trace.Candidates {
		byID[h.Chunk.ID] = h.Chunk
	}
	req := docent.JudgeRequest{Question: question, Answer: a.Text}
	for _, c := range a.Citations {
		title := c.Title
		if c.Section != "" {
			title += " › " + c.Section
		}
		req.Sources = append(req.Sources, docent.JudgeSource{N: c.N, Title: title, Text: byID[c.ChunkID].Text})
	}
	return req, true
}

// OfflineJudge is the proxy used without a model: a sentence of the answer
// is a claim when it has at least three content words, and is supported
// when one source it cites holds at least 60% of them (search.Analyze
// terms: stemmed, stopwords removed). Relevance is the share of the
// question's content terms the answer uses. It measures word overlap, not
// meaning: a paraphrase that is faithful can score low, a quote out of
// context high.
type OfflineJudge struct{}

var _ Judge = OfflineJudge{}

// Name labels the proxy in reports.
func (OfflineJudge) Name() string {
	return "offline proxy (each answer sentence's words found in its cited chunk; not a model judgment)"
}

var judgeMarkerRE = regexp.MustCompile(`\[(\d+)\]`)

// Judge rates req by word overlap.
func (OfflineJudge) Judge(_ context.Context, req docent.JudgeRequest) (docent.Judgment, error) {
	src := make(map[int]map[string]bool, len(req.Sources))
	for _, s := range req.Sources {
		set := map[string]bool{}
		for _, t := range search.Analyze(s.Title + " " + s.Text) {
			set[t] = true
		}
		src[s.N] = set
	}
	var j docent.Judgment
	units := splitClaims(req.Answer)
	for i, u := range units {
		terms := search.Analyze(judgeMarkerRE.ReplaceAllString(u, ""))
		if len(terms) < 3 {
			continue
		}
		j.Claims++
		marks := judgeMarkerRE.FindAllStringSubmatch(u, -1)
		if len(marks) == 0 && i+1 < len(units) {
			// "… per night. [1]": markers opening the next sentence cite this one.
			marks = judgeMarkerRE.FindAllStringSubmatch(leadingMarkers(units[i+1]), -1)
		}
		ok := false
		for _, m := range marks {
			n, _ := strconv.Atoi(m[1])
			hit := 0
			for _, t := range terms {
				if src[n][t] {
					hit++
				}
			}
			if src[n] != nil && 10*hit >= 6*len(terms) {
				ok = true
			}
		}
		if ok {
			j.Supported++
		} else {
			j.Unsupported = append(j.Unsupported, strings.TrimSpace(u))
		}
	}
	q := search.Analyze(req.Question)
	answer := map[string]bool{}
	for _, t := range search.Analyze(req.Answer) {
		answer[t] = true
	}
	hit := 0
	for _, t := range q {
		if answer[t] {
			hit++
		}
	}
	if len(q) > 0 {
		j.Relevance = float64(hit) / float64(len(q))
	}
	return j, nil
}

// splitClaims splits an answer into sentences and list items.
func splitClaims(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimLeft(strings.TrimSpace(line), "-*•0123456789.) ")
		if line == "" {
			continue
		}
		out = append(out, search.SplitSentences(line)...)
	}
	return out
}

// leadingMarkers returns the markers that open s.
func leadingMarkers(s string) string {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) {
		m := judgeMarkerRE.FindStringIndex(s[end:])
		if m == nil || m[0] != 0 {
			break
		}
		end += m[1]
		for end < len(s) && s[end] == ' ' {
			end++
		}
	}
	return s[:end]
}
