package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/eval"
)

// fakeTuner records what the console asks of the offline answerer's tuner.
type fakeTuner struct {
	mu         sync.Mutex
	synonyms   []string
	calibrated chan *eval.Golden
	applied    []eval.Fit
}

func (f *fakeTuner) AddSynonym(_ context.Context, entry, _ string) error {
	if strings.Count(entry, "=>") != 1 {
		return errors.New("bad entry")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synonyms = append(f.synonyms, entry)
	return nil
}

func (f *fakeTuner) Calibrate(_ context.Context, g *eval.Golden) (eval.Fit, error) {
	f.calibrated <- g
	return eval.Fit{Rule: answer.Logistic{Bias: -2, Weights: map[string]float64{"coverage": 3}, AnswerAt: 0.6, NotFoundAt: 0.1},
		BySet:      []eval.Outcome{{Set: "golden set", Answerable: 4, AnsweredCorrect: 3, Unanswerable: 1, Declined: 1}},
		Separation: []eval.Separation{{Set: "golden set", Rule: 0.9, Features: map[string]float64{"coverage": 0.75}}}}, nil
}

func (f *fakeTuner) Apply(_ context.Context, fit eval.Fit, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = append(f.applied, fit)
	return nil
}

// TestConsoleTuning: a synonym added from the misses page reaches the
// tuner; "Run and calibrate" stores the fit with the run, whose page
// shows the config that sets it, and Apply puts that fit in force. A
// server without a tuner (a model answerer) shows neither control.
func TestConsoleTuning(t *testing.T) {
	tu := &fakeTuner{calibrated: make(chan *eval.Golden, 1)}
	e := newEnv(t, func(o *Options) { o.Tuner = tu })
	c := e.client()
	c.login()

	if n := c.get("/misses").doc.Find(`[data-testid=synonym-form]`).Length(); n != 1 {
		t.Fatalf("misses page has %d synonym forms, want 1", n)
	}
	if r := c.post("/synonyms", url.Values{"from": {"wfh"}, "to": {"remote work"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /synonyms: %d %s", r.StatusCode, r.body)
	}
	if r := c.post("/synonyms", url.Values{"from": {"a => b"}, "to": {"c"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("POST /synonyms with => in a side: %d, want 400", r.StatusCode)
	}
	tu.mu.Lock()
	if len(tu.synonyms) != 1 || tu.synonyms[0] != "wfh => remote work" {
		t.Errorf("tuner got synonyms %q", tu.synonyms)
	}
	tu.mu.Unlock()

	for _, q := range []url.Values{
		{"id": {"reset"}, "question": {"How do I get a new VPN token?"}, "kind": {"paraphrase"}, "expect": {"it/vpn.md | Resetting your token"}},
		{"id": {"menu"}, "question": {"What is served in the cafeteria on Fridays?"}, "kind": {"unanswerable"}},
	} {
		if r := c.post("/golden", q); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("add golden question %v: %d %s", q, r.StatusCode, r.body)
		}
	}
	if n := c.get("/golden").doc.Find(`[data-testid=golden-calibrate]`).Length(); n != 1 {
		t.Fatalf("golden page has %d calibrate buttons, want 1", n)
	}
	r := c.post("/golden/runs", url.Values{"calibrate": {"1"}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /golden/runs calibrate: %d\n%s", r.StatusCode, e.logs.String())
	}
	loc := r.Header.Get("Location")
	g := <-tu.calibrated
	if len(g.Questions) == 0 {
		t.Fatal("calibrated on an empty set")
	}
	e.console.h.runs.Wait()
	page := c.get(strings.SplitN(loc, "?", 2)[0])
	cfg := page.doc.Find(`[data-testid=calibration-config]`).Text()
	if !strings.Contains(cfg, "decision:") || !strings.Contains(cfg, "answer_at: 0.6") || !strings.Contains(cfg, "coverage: 3") {
		t.Fatalf("run page calibration config %q", cfg)
	}
	if page.doc.Find(`[data-testid=calibration-fitted]`).Length() != 1 {
		t.Error("run page shows no fitted outcome")
	}
	auc := map[string]string{}
	page.doc.Find(`[data-testid=calibration-auc]`).Each(func(_ int, s *goquery.Selection) {
		auc[s.Find("td").First().Text()] = s.Find("td").Last().Text()
	})
	if len(auc) != 1+len(answer.FeatureNames) || auc["fitted rule"] != "0.900" || auc["coverage"] != "0.750" || auc["missing"] != "0.000" {
		t.Errorf("run page evidence %v, want the rule and every measure with its AUC", auc)
	}
	action, _ := page.doc.Find(`[data-testid=calibration-apply]`).Parent().Attr("action")
	if r := c.post(action, nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("apply: %d %s", r.StatusCode, r.body)
	}
	tu.mu.Lock()
	if len(tu.applied) != 1 || tu.applied[0].Rule.AnswerAt != 0.6 {
		t.Errorf("applied %+v", tu.applied)
	}
	tu.mu.Unlock()

	plain := newEnv(t)
	pc := plain.client()
	pc.login()
	if pc.get("/misses").doc.Find(`[data-testid=synonym-form]`).Length() != 0 ||
		pc.get("/golden").doc.Find(`[data-testid=golden-calibrate]`).Length() != 0 {
		t.Error("a console without a tuner shows tuning controls")
	}
	if r := pc.post("/synonyms", url.Values{"from": {"a"}, "to": {"b"}}); r.StatusCode != http.StatusNotFound {
		t.Errorf("POST /synonyms without a tuner: %d, want 404", r.StatusCode)
	}
}
