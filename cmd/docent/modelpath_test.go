package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/llm/llmtest"
)

// TestModelPathReachesTheModel drives the OpenAI-compatible answerer (the
// real client against llmtest's recording server, the scripted model
// citing what it is given) over the handbook sets: nearly every
// answerable question reaches the model (only a question with no
// plausible evidence at all is refused before it), and the expected page
// is among the sources it sees. The figures are floors on asked.yaml (as
// the acceptance names it) and on the untouched heldout-test
// half; a model that says NOT_FOUND gives not_found with the handoff.
func TestModelPathReachesTheModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	servers := modelServers(t)
	m := openLLM(t, "openai", "offline", servers, "")
	for _, tc := range []struct {
		set           string
		asked, recall float64
	}{
		{"../../examples/handbook/asked.yaml", 0.95, 0.90},
		{"../../examples/handbook/heldout-test.yaml", 0.95, 0.90},
	} {
		g, err := eval.LoadGolden(tc.set)
		if err != nil {
			t.Fatal(err)
		}
		before := len(servers["openai"].CallsTo("chat/completions"))
		rep, err := eval.RunGolden(ctx, g, m.Pipeline)
		if err != nil {
			t.Fatal(err)
		}
		calls := len(servers["openai"].CallsTo("chat/completions")) - before
		t.Logf("%s: model asked %.3f of answerable, context recall page %.3f section %.3f, %.1f sources and %.0f prompt tokens a question, %d model calls",
			filepath.Base(tc.set), rep.ModelAskedRate, rep.ContextPageRate, rep.ContextSectionRate,
			rep.SourcesPerQuestion, rep.PromptTokensPerQuestion, calls)
		if rep.ModelAskedRate < tc.asked || rep.ContextPageRate < tc.recall || rep.Errors > 0 {
			t.Errorf("%s: model asked %.3f (want >= %.2f), expected page among its sources %.3f (want >= %.2f), %d errors",
				tc.set, rep.ModelAskedRate, tc.asked, rep.ContextPageRate, tc.recall, rep.Errors)
		}
		if calls < int(rep.ModelAskedRate*float64(rep.Answerable)) {
			t.Errorf("%d chat calls recorded for %.0f questions said to reach the model", calls, rep.ModelAskedRate*float64(rep.Answerable))
		}
	}

	// The model's NOT_FOUND is the not-found path, with the handoff offer;
	// the trace says the model was asked.
	a, err := m.Pipeline.Answer(ctx, docent.Question{Text: "What is the airspeed velocity of an unladen swallow in the handbook?"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != docent.StatusNotFound || a.Text != answer.NotFoundText || a.Trace.Decision == nil || !a.Trace.Decision.ModelAsked {
		t.Errorf("model said NOT_FOUND: status %s, text %q, decision %+v; want not_found with the handoff, the model asked", a.Status, a.Text, a.Trace.Decision)
	}
	// Small talk never reaches the model.
	before := len(servers["openai"].CallsTo("chat/completions"))
	a, err = m.Pipeline.Answer(ctx, docent.Question{Text: "thanks!"})
	if err != nil || a.Status != docent.StatusSmallTalk || len(a.Citations) != 0 {
		t.Errorf("thanks!: %s %q %v, want small talk citing nothing", a.Status, a.Text, err)
	}
	if after := len(servers["openai"].CallsTo("chat/completions")); after != before {
		t.Errorf("small talk made %d model calls", after-before)
	}
}

// TestModelPathRealDocs is TestModelPathReachesTheModel on the realdocs-dev
// set's untouched (even) half, when ../shared is beside the clone.
func TestModelPathRealDocs(t *testing.T) {
	t.Parallel()
	dir := realDocsDir(t)
	ctx := context.Background()
	servers := modelServers(t)
	cfg := strings.ReplaceAll(`sources:
  - name: traefik
    type: dir
    schedule: "off"
    dir:
      path: DIR/corpus
      include: ["**/*.md"]
      web_url: "https://example.invalid/{path}"
`, "DIR", dir)
	m := openLLMConfig(t, "openai", "offline", servers, cfg)
	g, err := eval.LoadGolden(filepath.Join(dir, "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if g, err = g.Half("even"); err != nil {
		t.Fatal(err)
	}
	rep, err := eval.RunGolden(ctx, g, m.Pipeline)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("realdocs-dev even half: model asked %.3f, context recall page %.3f section %.3f, %.1f sources, %.0f prompt tokens",
		rep.ModelAskedRate, rep.ContextPageRate, rep.ContextSectionRate, rep.SourcesPerQuestion, rep.PromptTokensPerQuestion)
	if rep.ModelAskedRate < 0.95 || rep.ContextPageRate < 0.80 {
		t.Errorf("model asked %.3f (want >= 0.95), expected page among its sources %.3f (want >= 0.80)", rep.ModelAskedRate, rep.ContextPageRate)
	}
}

// realDocsDir returns ../shared/eval/realdocs-dev beside the clone, or
// skips.
func realDocsDir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{"../../../shared/eval/realdocs-dev", "../../../../shared/eval/realdocs-dev"} {
		if _, err := os.Stat(filepath.Join(d, "questions.yaml")); err == nil {
			abs, err := filepath.Abs(d)
			if err != nil {
				t.Fatal(err)
			}
			return abs
		}
	}
	t.Skip("../shared/eval/realdocs-dev not beside the clone")
	return ""
}

var _ = llmtest.Blocks
