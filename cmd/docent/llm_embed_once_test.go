package main

import (
	"context"
	"testing"

	"github.com/docent-hq/docent"
)

// TestLLMAskEmbedsQuestionOnce: through the real wiring (Gemini embedder
// and answerer over the genai client, model rewrite, rerank, gate,
// generation), one ask embeds the question exactly once, as a query, and
// embeds no document text (feedback reads the stored vectors).
func TestLLMAskEmbedsQuestionOnce(t *testing.T) {
	t.Parallel()
	servers := modelServers(t)
	m := openLLM(t, "gemini", "gemini", servers, "")
	s := servers["gemini"]
	before := len(s.Calls())
	q := "how many vacation days do employees get?"
	a, err := m.Pipeline.Answer(context.Background(), docent.Question{Text: q})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != docent.StatusAnswered || a.Trace.Model == "" {
		t.Fatalf("answer %s %q by %q", a.Status, a.Text, a.Trace.Model)
	}
	queries, docs, chats := 0, 0, 0
	for _, c := range s.Calls()[before:] {
		switch {
		case c.TaskType == "RETRIEVAL_QUERY":
			queries += len(c.Texts)
			if len(c.Texts) != 1 || c.Texts[0] != q {
				t.Errorf("query embedding of %q, want the question", c.Texts)
			}
		case len(c.Texts) > 0:
			docs += len(c.Texts)
		default:
			chats++
		}
	}
	if queries != 1 || docs != 0 {
		t.Errorf("one ask embedded %d query texts and %d document texts; want the question once and no documents", queries, docs)
	}
	if chats == 0 {
		t.Error("the answer model was not called")
	}
}
