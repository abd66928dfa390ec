package offline

import (
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
)

// answerFrom runs the gate and the Extractive generator on a question, as
// the pipeline does when the rule answers.
func answerFrom(t testing.TB, g *Gate, question string, hits []docent.Hit) (string, answer.Evidence) {
	t.Helper()
	ev := mustGate(t, g, question, hits)
	return generate(t, question, ev), ev
}

// TestExtractiveLeadFirst: the passage the decision was made on opens
// the answer even when the sentences quoted around it come before it on
// the page.
func TestExtractiveLeadFirst(t *testing.T) {
	c := wikiPage("lead-first", "shop/inductions.md", "Safety inductions", []string{"Who runs them"}, "", 0,
		"Inductions take place every Tuesday in the wood shop. Priya Natarajan, the shop steward, runs every induction.")
	text, ev := answerFrom(t, testGate(wikiCorpus(c)), "who runs the safety inductions", ranked(c))
	if ev.Pages[0].Passage != "Priya Natarajan, the shop steward, runs every induction." {
		t.Fatalf("decided passage %q", ev.Pages[0].Passage)
	}
	want := "Priya Natarajan, the shop steward, runs every induction [1]. Inductions take place every Tuesday in the wood shop [1]."
	if text != want {
		t.Errorf("answer %q, want %q", text, want)
	}
}
