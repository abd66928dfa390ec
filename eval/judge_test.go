package eval

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

func TestOfflineJudge(t *testing.T) {
	srcs := []docent.JudgeSource{
		{N: 1, Title: "Paid Time Off › Vacation allowance", Text: "Employees in Germany get 30 vacation days per year. Unused days carry over until 31 March."},
		{N: 2, Title: "Expense Policy › Hotels", Text: "Hotel stays are reimbursed up to $250 per night."},
	}
	tests := []struct {
		name      string
		answer    string
		claims    int
		supported int
		unsupp    string
	}{
		{"every claim supported by its source", "Employees in Germany get 30 vacation days per year [1]. Hotels are reimbursed up to $250 per night [2].", 2, 2, ""},
		{"claim cited to the wrong source", "Employees in Germany get 30 vacation days per year [2].", 1, 0, "Germany"},
		{"uncited claim unsupported", "Unused vacation days carry over until 31 March. Hotels cost $250 per night [2].", 2, 1, "carry over"},
		{"marker after the period counts", "Employees in Germany get 30 vacation days. [1]", 1, 1, ""},
		{"made-up claim", "Employees may also take a paid sabbatical after five years [1].", 1, 0, "sabbatical"},
		{"fragments are not claims", "Yes [1].", 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := OfflineJudge{}.Judge(context.Background(), docent.JudgeRequest{Question: "How many vacation days do I get in Germany?", Answer: tt.answer, Sources: srcs})
			if err != nil {
				t.Fatal(err)
			}
			if j.Claims != tt.claims || j.Supported != tt.supported {
				t.Errorf("claims %d supported %d, want %d and %d (unsupported %q)", j.Claims, j.Supported, tt.claims, tt.supported, j.Unsupported)
			}
			if tt.unsupp != "" && (len(j.Unsupported) == 0 || !strings.Contains(j.Unsupported[0], tt.unsupp)) {
				t.Errorf("unsupported %q, want one with %q", j.Unsupported, tt.unsupp)
			}
		})
	}
	j, _ := OfflineJudge{}.Judge(context.Background(), docent.JudgeRequest{Question: "Vacation days in Germany?",
		Answer: "Employees in Germany get 30 vacation days per year [1].", Sources: srcs})
	if j.Relevance != 1 || j.Faithfulness() != 1 {
		t.Errorf("relevance %v faithfulness %v", j.Relevance, j.Faithfulness())
	}
}

// countingJudge rates every answer as two claims, one supported, and
// fails for one question.
type countingJudge struct{ seen []docent.JudgeRequest }

func (c *countingJudge) Name() string { return "test judge" }
func (c *countingJudge) Judge(_ context.Context, req docent.JudgeRequest) (docent.Judgment, error) {
	c.seen = append(c.seen, req)
	if strings.Contains(req.Question, "fail") {
		return docent.Judgment{}, errors.New("judge down")
	}
	return docent.Judgment{Claims: 2, Supported: 1, Unsupported: []string{"x"}, Relevance: 0.5}, nil
}

func TestRunGoldenWithJudge(t *testing.T) {
	g := &Golden{Questions: []docent.GoldenQuestion{
		{ID: "a", Question: "vacation days", Kind: docent.KindExact, Expect: []docent.GoldenExpect{{Doc: "pto.md"}}},
		{ID: "b", Question: "please fail", Kind: docent.KindExact, Expect: []docent.GoldenExpect{{Doc: "pto.md"}}},
		{ID: "c", Question: "dogs?", Kind: docent.KindUnanswerable},
	}}
	chunk := docent.Chunk{ID: "c1", DocID: "h:pto.md", Title: "PTO", Section: []string{"Vacation"}, Text: "PTO > Vacation\n\n25 days."}
	a := AnswererFunc(func(_ context.Context, q docent.Question) (docent.Answer, error) {
		if q.Text == "dogs?" {
			return docent.Answer{Status: docent.StatusNotFound, Trace: docent.Trace{TopScore: 0.2}}, nil
		}
		return docent.Answer{Status: docent.StatusAnswered, Text: "25 days [1].",
			Citations: []docent.Citation{{N: 1, ChunkID: "c1", DocID: "h:pto.md", Title: "PTO", Section: "Vacation"}},
			Trace:     docent.Trace{TopScore: 0.7, Candidates: []docent.Hit{{Chunk: chunk}}}}, nil
	})
	judge := &countingJudge{}
	rep, err := RunGoldenOptions(context.Background(), g, a, GoldenOptions{Judge: judge})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Judge != "test judge" || rep.Judged != 1 || rep.JudgeErrors != 1 || rep.Faithfulness != 0.5 ||
		rep.AnswerRelevance != 0.5 || rep.UnsupportedClaims != 1 {
		t.Errorf("report judge figures %+v", rep)
	}
	if len(judge.seen) != 2 || judge.seen[0].Sources[0].Title != "PTO › Vacation" || judge.seen[0].Sources[0].Text != chunk.Text {
		t.Errorf("judge saw %+v", judge.seen)
	}
	if r := rep.Rows[0]; !r.Judged || r.Faithfulness != 0.5 || r.TopScore != 0.7 || rep.Rows[2].Judged || rep.Rows[2].TopScore != 0.2 {
		t.Errorf("rows %+v", rep.Rows)
	}
}
