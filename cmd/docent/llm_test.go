package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/api"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/examples/handbook"
	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/llm/llmtest"
)

// These tests run the real wiring (config, registry, the local index over
// the bundled handbook, the offline or a model embedder, search.Retriever)
// with every model call going to a local server that speaks the Gemini or
// OpenAI-compatible REST API and answers as llmtest.Scripted: from the
// prompt it is sent, never from the test's expectations.

// fastRetry keeps outage tests quick.
var fastRetry = llm.Retry{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}

const (
	testGeminiKey = "AIza-test-secret-4242"
	testOpenAIKey = "sk-test-secret-4343"
)

// testKeys is the environment the test configs take their keys from.
var testKeys = map[string]string{"GEMINI_API_KEY": testGeminiKey, "OPENAI_API_KEY": testOpenAIKey}

// modelServers starts a Gemini and an OpenAI-compatible server, each
// requiring its key.
func modelServers(t *testing.T) map[string]*llmtest.Server {
	g := llmtest.NewGemini(t)
	g.Key = testGeminiKey
	o := llmtest.NewOpenAI(t)
	o.Key = testOpenAIKey
	return map[string]*llmtest.Server{"gemini": g, "openai": o}
}

// llmConfig writes a config file into dir that answers with provider
// (and embeds with embedder) against the local servers; extra is more
// YAML appended at the top level.
func llmConfig(t *testing.T, dir, provider, embedder string, servers map[string]*llmtest.Server, extra string) string {
	t.Helper()
	return llmConfigSources(t, dir, provider, embedder, servers, "sources:\n  - name: handbook\n    type: bundled\n", extra)
}

// llmConfigSources is llmConfig with its own sources block.
func llmConfigSources(t *testing.T, dir, provider, embedder string, servers map[string]*llmtest.Server, sources, extra string) string {
	t.Helper()
	yaml := fmt.Sprintf(`data_dir: %s
%ssync:
  schedule: "off"
embedder:
  provider: %s
answerer:
  provider: %s
llm:
  gemini:
    api_key: ${GEMINI_API_KEY}
    base_url: %s
    dimensions: 32
  openai:
    base_url: %s/v1
    api_key: ${OPENAI_API_KEY}
    model: llama3.1
    embedding_model: nomic-embed-text
    dimensions: 32
%s`, filepath.Join(dir, "data"), sources, embedder, provider, servers["gemini"].URL, servers["openai"].URL, extra)
	path := filepath.Join(dir, "docent.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// handbookFixture is a data dir holding the bundled handbook indexed with
// the offline embedder, built once per test binary: training the offline
// embedder takes most of a test's time under -race. Tests copy it.
var handbookFixture struct {
	sync.Once
	dir string
	err error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if handbookFixture.dir != "" {
		os.RemoveAll(handbookFixture.dir)
	}
	if binaryFixture.dir != "" {
		os.RemoveAll(binaryFixture.dir)
	}
	os.Exit(code)
}

// copyHandbook copies the offline-indexed handbook data dir into dst.
func copyHandbook(t *testing.T, dst string) {
	t.Helper()
	handbookFixture.Do(func() {
		dir, err := os.MkdirTemp("", "docent-handbook-")
		if err != nil {
			handbookFixture.err = err
			return
		}
		handbookFixture.dir = dir
		m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(map[string]string{"DOCENT_DATA": dir})}
		ctx := context.Background()
		if err = m.Open(ctx); err == nil {
			err = m.ensureIndexed(ctx, m.Sources)
		}
		handbookFixture.err = errors.Join(err, m.Close())
	})
	if handbookFixture.err != nil {
		t.Fatalf("handbook fixture: %v", handbookFixture.err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(handbookFixture.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(handbookFixture.dir, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// handbookData returns a fresh copy of the offline-indexed handbook.
func handbookData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyHandbook(t, dir)
	return dir
}

// openLLM opens Main over a config from llmConfig and indexes the handbook
// (a copy of the fixture when the embedder is offline).
func openLLM(t *testing.T, provider, embedder string, servers map[string]*llmtest.Server, extra string) *Main {
	t.Helper()
	dir := t.TempDir()
	if embedder == "offline" {
		copyHandbook(t, filepath.Join(dir, "data"))
	}
	m := &Main{ConfigPath: llmConfig(t, dir, provider, embedder, servers, extra), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: envOf(testKeys), Retry: fastRetry}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.ensureIndexed(ctx, m.Sources); err != nil {
		t.Fatal(err)
	}
	return m
}

// openLLMConfig is openLLM over the given sources block instead of the
// bundled handbook.
func openLLMConfig(t *testing.T, provider, embedder string, servers map[string]*llmtest.Server, sources string) *Main {
	t.Helper()
	dir := t.TempDir()
	m := &Main{ConfigPath: llmConfigSources(t, dir, provider, embedder, servers, sources, ""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: envOf(testKeys), Retry: fastRetry}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.ensureIndexed(ctx, m.Sources); err != nil {
		t.Fatal(err)
	}
	return m
}

// topDocs returns the documents of the first k candidates, with their
// sections, as "path › section".
func topDocs(a docent.Answer, k int) []string {
	var out []string
	for _, h := range a.Trace.Candidates[:min(k, len(a.Trace.Candidates))] {
		out = append(out, strings.TrimPrefix(h.Chunk.DocID, "handbook:")+" › "+strings.Join(h.Chunk.Section, " › "))
	}
	return out
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// TestLLMFollowUp: "and for contractors?" after "how many vacation days
// do employees get?" is made standalone from the thread by the model and
// retrieves (and cites) the contractor section of the handbook.
func TestLLMFollowUp(t *testing.T) {
	t.Parallel()
	servers := modelServers(t)
	for _, provider := range []string{"gemini", "openai"} {
		t.Run(provider, func(t *testing.T) {
			m := openLLM(t, provider, "offline", servers, "")
			ctx := context.Background()
			first, err := m.Pipeline.Answer(ctx, docent.Question{Text: "how many vacation days do employees get?"})
			if err != nil || first.Status != docent.StatusAnswered {
				t.Fatalf("first question: %s %q, %v", first.Status, first.Text, err)
			}
			before := len(servers[provider].Calls())
			q := docent.Question{Text: "and for contractors?",
				History: []docent.Exchange{{Question: "how many vacation days do employees get?", Answer: first.Text}}}
			a, err := m.Pipeline.Answer(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(a.Trace.Query, "vacation") || !strings.Contains(a.Trace.Query, "contractors") {
				t.Errorf("standalone query %q does not fold the thread in", a.Trace.Query)
			}
			var rewrite llmtest.Call
			for _, c := range servers[provider].Calls()[before:] {
				if strings.HasPrefix(c.System, "You turn a chat message") {
					rewrite = c
				}
			}
			if !strings.Contains(rewrite.Prompt, "User: how many vacation days do employees get?") ||
				!strings.Contains(rewrite.Prompt, "Latest question: and for contractors?") {
				t.Errorf("the rewrite call did not carry the thread:\n%s", rewrite.Prompt)
			}
			top := topDocs(a, 3)
			if !containsPrefix(top, "people/pto.md › Contractors") {
				t.Errorf("contractor section not in the top 3: %v", top)
			}
			cited := false
			for _, c := range a.Citations {
				cited = cited || c.DocID == "handbook:people/pto.md" && c.Section == "Contractors"
			}
			if a.Status != docent.StatusAnswered || !cited {
				t.Errorf("answer %s %q cites %+v; want the contractor section", a.Status, a.Text, a.Citations)
			}
			// Without the thread the follow-up is not rewritten: the rewrite
			// above came from the history.
			alone, err := m.Pipeline.Answer(ctx, docent.Question{Text: "and for contractors?"})
			if err != nil || alone.Trace.Query != "and for contractors?" {
				t.Errorf("without history: query %q, %v", alone.Trace.Query, err)
			}
		})
	}
}

// TestLLMMultiPart: a two-part handbook question is split into
// sub-queries, each retrieved; both expected documents are retrieved and
// both are cited in one answer.
func TestLLMMultiPart(t *testing.T) {
	t.Parallel()
	servers := modelServers(t)
	for _, provider := range []string{"gemini", "openai"} {
		t.Run(provider, func(t *testing.T) {
			m := openLLM(t, provider, "offline", servers, "")
			a, err := m.Pipeline.Answer(context.Background(), docent.Question{
				Text: "What does the Starter plan cost per robot, and how many API requests per minute does it allow?"})
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Trace.SubQueries) != 2 {
				t.Errorf("sub-queries %q, want 2", a.Trace.SubQueries)
			}
			top := topDocs(a, 6)
			if !containsPrefix(top, "product/pricing.md") || !containsPrefix(top, "product/api-rate-limits.md") {
				t.Errorf("top candidates %v lack a part's document", top)
			}
			docs := map[string]bool{}
			for _, c := range a.Citations {
				docs[strings.TrimPrefix(c.DocID, "handbook:")] = true
			}
			if a.Status != docent.StatusAnswered || !docs["product/pricing.md"] || !docs["product/api-rate-limits.md"] {
				t.Errorf("answer %s %q cites %v; want both documents", a.Status, a.Text, docs)
			}
			checkMarkers(t, a)
			// A plain question takes the single pass: no rewrite call.
			before := len(servers[provider].Calls())
			if _, err := m.Pipeline.Answer(context.Background(), docent.Question{Text: "What does the Starter plan cost per robot?"}); err != nil {
				t.Fatal(err)
			}
			for _, c := range servers[provider].Calls()[before:] {
				if strings.HasPrefix(c.System, "You turn a chat message") {
					t.Error("a single-part first question went through the rewriter")
				}
			}
		})
	}
}

// checkMarkers asserts every [n] names one of the answer's citations.
func checkMarkers(t *testing.T, a docent.Answer) {
	t.Helper()
	for _, mk := range citeMarker.FindAllStringSubmatch(a.Text, -1) {
		var n int
		fmt.Sscan(mk[1], &n)
		if n < 1 || n > len(a.Citations) {
			t.Errorf("marker [%d] names no citation in %q", n, a.Text)
		}
	}
}

// TestLLMGoldenScripted: with a scripted provider that answers from the
// sources it is given, the handbook golden set reaches at least the
// offline answerer's hit@5 and not-found accuracy, and no answer cites a
// source it was not given (each citation is checked against the fenced
// sources of the prompt that answer was written from).
func TestLLMGoldenScripted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, err := eval.ParseGolden("golden.yaml", handbook.Golden)
	if err != nil {
		t.Fatal(err)
	}
	off := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)})}
	if err := off.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if err := off.ensureIndexed(ctx, off.Sources); err != nil {
		t.Fatal(err)
	}
	offline, err := eval.RunGolden(ctx, g, off.Pipeline)
	if err != nil {
		t.Fatal(err)
	}

	servers := modelServers(t)
	m := openLLM(t, "gemini", "offline", servers, "")
	var answers []docent.Answer
	model, err := eval.RunGolden(ctx, g, eval.AnswererFunc(func(ctx context.Context, q docent.Question) (docent.Answer, error) {
		a, err := m.Pipeline.Answer(ctx, q)
		answers = append(answers, a)
		return a, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("offline:  hit@5 %.3f  MRR %.3f  not-found accuracy %.3f  answered correctly %.3f  citation precision %.3f",
		offline.HitAt5, offline.MRR10, offline.NotFoundAccuracy, offline.CorrectRate, offline.CitationPrecision)
	t.Logf("scripted: hit@5 %.3f  MRR %.3f  not-found accuracy %.3f  answered correctly %.3f  citation precision %.3f",
		model.HitAt5, model.MRR10, model.NotFoundAccuracy, model.CorrectRate, model.CitationPrecision)
	if model.Errors > 0 || model.HitAt5 < offline.HitAt5 || model.NotFoundAccuracy < offline.NotFoundAccuracy {
		t.Errorf("scripted provider below the offline answerer: hit@5 %.3f < %.3f or not-found accuracy %.3f < %.3f (errors %d)",
			model.HitAt5, offline.HitAt5, model.NotFoundAccuracy, offline.NotFoundAccuracy, model.Errors)
	}
	generated, bad := 0, 0
	for i, a := range answers {
		if a.Trace.Prompt == "" {
			continue // decided before generation
		}
		given := map[string]bool{}
		for _, b := range llmtest.Blocks(a.Trace.Prompt) {
			given[b.Title] = true
		}
		if a.Status == docent.StatusAnswered {
			generated++
		}
		for _, c := range a.Citations {
			key := c.Title
			if c.Section != "" {
				key += " › " + c.Section
			}
			if a.Status == docent.StatusAnswered && !given[key] {
				bad++
				t.Errorf("%s cites %q › %q, not among the sources it was given", g.Questions[i].ID, c.Title, c.Section)
			}
		}
	}
	if generated < 20 {
		t.Errorf("only %d questions were answered by the model", generated)
	}
	t.Logf("%d answers written by the model, %d citing a source not given", generated, bad)
}

// TestLLMOutage: when every call to the provider fails with 503 (the
// embedder and the answer model), the asker gets an uncertain reply with
// the best retrieved page and the offer of a person, not an error; the
// turn stores the error, and no key reaches the reply, the turn or the
// logs.
func TestLLMOutage(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"gemini", "openai"} {
		t.Run(provider, func(t *testing.T) {
			servers := modelServers(t)
			var logs syncBuffer
			m := &Main{ConfigPath: llmConfig(t, t.TempDir(), provider, provider, servers, ""), Stdout: io.Discard,
				Stderr: &logs, Getenv: envOf(testKeys), Retry: fastRetry}
			base, stop := MustServeMain(t, m)
			waitReady(t, base) // the handbook is embedded by the healthy server
			servers[provider].FailAlways(llmtest.Fault{Status: 503})
			before := len(servers[provider].Calls())

			status, body := postAsk(t, base, `{"question": "What does Gatekeeper error GK-409 mean?", "trace": true}`)
			if status != http.StatusOK {
				t.Fatalf("POST /api/ask = %d %s", status, body)
			}
			var resp api.AskResponse
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.Status != docent.StatusUncertain || !strings.HasPrefix(resp.Answer, answer.OutageLead) ||
				!strings.Contains(resp.Answer, answer.HandoffOffer) || len(resp.Citations) == 0 || len(resp.Citations) > answer.MaxPages {
				t.Fatalf("reply %s %q with %d citations; want uncertain, the outage lead, the closest pages and a person offered",
					resp.Status, resp.Answer, len(resp.Citations))
			}
			linked := false
			for _, c := range resp.Citations {
				linked = linked || (c.DocID == "handbook:it/gatekeeper-error-codes.md" && strings.Contains(c.URL, "/docs/handbook/it/gatekeeper-error-codes.md"))
			}
			if !linked {
				t.Errorf("linked %+v, want the Gatekeeper error codes page among them", resp.Citations)
			}
			calls := servers[provider].Calls()[before:]
			if len(calls) == 0 {
				t.Fatal("the provider was not called")
			}
			for _, c := range calls {
				if c.Status != 503 {
					t.Errorf("call %s answered %d", c.Endpoint, c.Status)
				}
			}
			turn, err := m.Store.Turn(context.Background(), resp.TurnID)
			if err != nil {
				t.Fatal(err)
			}
			e := turn.Answer.Trace.Error
			if !strings.Contains(e, "answer: retrieve: ") || !strings.Contains(e, "answer: generate: "+provider+": ") ||
				!strings.Contains(e, "503") {
				t.Errorf("stored error %q, want the failed retrieve and generate stages", e)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{testGeminiKey, testOpenAIKey} {
				if strings.Contains(string(body)+e+logs.String(), key) {
					t.Errorf("key %s leaked into the reply, the turn or the logs", key)
				}
			}
			if !strings.Contains(logs.String(), "model provider unavailable") {
				t.Error("the outage was not logged")
			}
		})
	}
}

// TestLLMEmbedderChangeBuildsNewIndexVersion: switching the embedder to a
// model provider, or changing its dimension, syncs everything into a new
// index file embedded by that model alone; the previous version is left as
// it was, and switching back reuses it without embedding again.
func TestLLMEmbedderChangeBuildsNewIndexVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	servers := modelServers(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	copyHandbook(t, data) // the offline version, already built
	run := func(embedder string, dims int) (name string, count int, dimsSeen map[int]int) {
		t.Helper()
		path := llmConfig(t, dir, "offline", embedder, servers, "")
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.ReplaceAll(string(b), "dimensions: 32", fmt.Sprintf("dimensions: %d", dims))), 0o644)
		m := &Main{ConfigPath: path, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(testKeys), Retry: fastRetry}
		if err := m.Open(ctx); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if _, err := m.SyncSources(ctx, m.Sources, nil); err != nil { // what `docent sync` does
			t.Fatal(err)
		}
		name, err := m.Index.EmbedderName(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		m.Index.Scan(ctx, func(c docent.Chunk) error { ids = append(ids, c.ID); return nil })
		vecs, err := m.Index.Vectors(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		dimsSeen = map[int]int{}
		for _, v := range vecs {
			dimsSeen[len(v)]++
		}
		return name, len(ids), dimsSeen
	}
	docEmbeds := func() int {
		n := 0
		for _, c := range servers["gemini"].CallsTo("batchEmbedContents") {
			if c.TaskType == "RETRIEVAL_DOCUMENT" && c.Status == 200 {
				n += len(c.Texts)
			}
		}
		return n
	}

	offName, n, offDims := run("offline", 0)
	if n == 0 || len(offDims) != 1 || !strings.HasPrefix(offName, "offline") {
		t.Fatalf("offline index: %q, %d chunks, dims %v", offName, n, offDims)
	}
	name, n32, dims := run("gemini", 32)
	if name != "gemini/gemini-embedding-001/32" || n32 != n || len(dims) != 1 || dims[32] != n {
		t.Errorf("gemini index: %q, %d chunks, dims %v; want every one of %d chunks at 32", name, n32, dims, n)
	}
	if got := docEmbeds(); got != n {
		t.Errorf("%d chunk texts embedded by gemini, want %d (a full re-embed)", got, n)
	}
	name, n48, dims := run("gemini", 48)
	if name != "gemini/gemini-embedding-001/48" || n48 != n || len(dims) != 1 || dims[48] != n {
		t.Errorf("48-d index: %q, %d chunks, dims %v", name, n48, dims)
	}
	for _, f := range []string{"index.db", "index-gemini-gemini-embedding-001-32.db", "index-gemini-gemini-embedding-001-48.db"} {
		if _, err := os.Stat(filepath.Join(data, f)); err != nil {
			t.Errorf("index version %s: %v", f, err)
		}
	}
	// Back to 32: the old version is reused as it was.
	before := docEmbeds()
	if name, _, dims := run("gemini", 32); name != "gemini/gemini-embedding-001/32" || dims[32] != n || docEmbeds() != before {
		t.Errorf("back to 32: %q, dims %v, %d more texts embedded", name, dims, docEmbeds()-before)
	}
	if name, _, dims := run("offline", 0); name != offName || len(dims) != 1 {
		t.Errorf("back to offline: %q (was %q), dims %v", name, offName, dims)
	}
}

// TestEvalCalibrateAndJudge runs `docent eval --golden --calibrate` and
// `--judge` on the handbook: offline (the proxy judge, labelled as such)
// and with the scripted Gemini provider as the judge.
func TestEvalCalibrateAndJudge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	golden := "../../examples/handbook/golden.yaml"
	var out, errs bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errs, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	err := m.Eval(ctx, []string{"--golden", golden, "--calibrate", "--json", "--index-dir", handbookData(t)})
	m.Close()
	if err != nil {
		t.Fatalf("calibrate: %v\n%s", err, errs.String())
	}
	var fit eval.Fit
	if err := json.Unmarshal(out.Bytes(), &fit); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("fitted rule %+v: %+v; in force %+v", fit.Rule, fit.All, fit.Current)
	if err := fit.Rule.Validate(); err != nil || fit.All.Answerable != 45 || fit.All.Unanswerable != 13 || !fit.Feasible ||
		fit.All.DeclinedRate() < eval.DefaultMinDeclined || len(fit.Current) != 1 || fit.All.AnsweredCorrect == 0 {
		t.Errorf("calibration %+v (rule error %v)", fit, err)
	}
	// The fitted rule, set in the config, decides as the fit says.
	cfg := filepath.Join(t.TempDir(), "docent.yaml")
	var block bytes.Buffer
	if err := fit.WriteConfig(&block); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, block.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	m = &Main{Stdout: &out, Stderr: &errs, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir(), "DOCENT_CONFIG": cfg})}
	err = m.Eval(ctx, []string{"--golden", golden, "--json", "--index-dir", handbookData(t)})
	m.Close()
	if err != nil {
		t.Fatalf("eval with the fitted rule: %v\n%s", err, errs.String())
	}
	var fitted goldenReport
	if err := json.Unmarshal(out.Bytes(), &fitted); err != nil {
		t.Fatal(err)
	}
	// A multi-part question is decided part by part, while the fit reads
	// the whole question's features: the two agree to within a few.
	if got := int(fitted.Correct*float64(fitted.Answerable) + 0.5); got < fit.All.AnsweredCorrect-3 || got > fit.All.AnsweredCorrect+5 {
		t.Errorf("with the fitted rule %d answered correctly, the fit said %d", got, fit.All.AnsweredCorrect)
	}

	out.Reset()
	m = &Main{Stdout: &out, Stderr: &errs, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	err = m.Eval(ctx, []string{"--golden", golden, "--judge", "--index-dir", handbookData(t)})
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"judge", "offline proxy", "not a model judgment", "faithfulness", "answer relevance"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("offline --judge table lacks %q", want)
		}
	}

	servers := modelServers(t)
	out.Reset()
	m = &Main{ConfigPath: llmConfig(t, t.TempDir(), "gemini", "offline", servers, ""), Stdout: &out, Stderr: &errs,
		Getenv: envOf(testKeys), Retry: fastRetry}
	err = m.Eval(ctx, []string{"--golden", golden, "--judge", "--json", "--index-dir", handbookData(t)})
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.GoldenReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("model judge: %d judged, faithfulness %.3f, relevance %.3f, %d unsupported", rep.Judged, rep.Faithfulness, rep.AnswerRelevance, rep.UnsupportedClaims)
	judged := 0
	for _, c := range servers["gemini"].CallsTo("generateContent") {
		if strings.HasPrefix(c.System, "You check an answer") {
			judged++
		}
	}
	if rep.Judge != "model gemini-flash-latest" || rep.Judged == 0 || rep.Judged != judged || rep.JudgeErrors != 0 || rep.Faithfulness <= 0 {
		t.Errorf("model judge: %q judged %d (server saw %d), errors %d, faithfulness %v", rep.Judge, rep.Judged, judged, rep.JudgeErrors, rep.Faithfulness)
	}

	if err := (&Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}).Eval(ctx, []string{"--beir", "x", "--judge"}); !errors.Is(err, errUsage) {
		t.Errorf("--judge with --beir: %v", err)
	}
}
