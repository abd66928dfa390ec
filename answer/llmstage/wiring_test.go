package llmstage_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/answer/llmstage"
	"github.com/docent-hq/docent/llm"
)

// nameOnly is a model the test never calls.
type nameOnly struct{ llm.Model }

func (nameOnly) Name() string { return "m" }

// TestModelAnswererUsesNoOfflineRules: the model answerer's wiring
// (this package, NewStages) does not import the offline answerer, and
// its gate and rule are answer.Plausible, so no offline rule decides a
// question a model could answer.
func TestModelAnswererUsesNoOfflineRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/docent-hq/docent/answer/offline" {
			t.Fatal("answer/llmstage imports answer/offline")
		}
	}
	st := llmstage.NewStages(nameOnly{}, nil, llmstage.StagesOptions{})
	if _, ok := st.Gate.(answer.Plausible); !ok {
		t.Errorf("model gate is %T, want answer.Plausible", st.Gate)
	}
	if _, ok := st.Rule.(answer.Plausible); !ok {
		t.Errorf("model rule is %T, want answer.Plausible", st.Rule)
	}
}
