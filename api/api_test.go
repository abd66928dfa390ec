package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/admission"
	"github.com/docent-hq/docent/answer"
)

// askerFunc is a function-field fake of Asker.
type askerFunc func(ctx context.Context, q docent.Question) (docent.Turn, error)

func (f askerFunc) Ask(ctx context.Context, q docent.Question) (docent.Turn, error) { return f(ctx, q) }

func format(a docent.Answer) string { return a.Text + "\n\nSources: " + a.Citations[0].Title }

// newTestServer serves a ready Server over asker and docs.
func newTestServer(t *testing.T, asker Asker, docs *Docs) *httptest.Server {
	t.Helper()
	s := New(asker, format, prometheus.NewRegistry(), docs, slog.New(slog.DiscardHandler), Options{})
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func TestAsk(t *testing.T) {
	var got docent.Question
	asker := askerFunc(func(ctx context.Context, q docent.Question) (docent.Turn, error) {
		got = q
		switch q.Text {
		case "":
			return docent.Turn{}, docent.ErrEmptyQuestion
		case "boom":
			return docent.Turn{}, errors.New("store: disk full at /secret/path")
		case "provider down":
			return docent.Turn{ID: 9, Answer: docent.Answer{Status: docent.StatusError,
					Trace: docent.Trace{Error: "answer: generate: POST https://api.example/v1: 503"}}},
				&answer.StageError{Stage: "generate", Err: errors.New("POST https://api.example/v1: 503 key=sk-123")}
		}
		if _, ok := ctx.Deadline(); !ok {
			t.Error("ask runs without a deadline")
		}
		return docent.Turn{ID: 7, Question: q, Answer: docent.Answer{
			Text: "Yes [1].", Status: docent.StatusAnswered,
			Citations: []docent.Citation{{N: 1, Title: "Policy", URL: "https://x/p"}},
			Trace:     docent.Trace{Query: q.Text},
		}}, nil
	})
	ts := newTestServer(t, asker, nil)
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantBody   []string
		notBody    []string
	}{
		{"answered", `{"question":"may I?","filter":{"sources":["hb"]}}`, 200,
			[]string{`"turn_id": 7`, `"answer": "Yes [1]."`, `"title": "Policy"`, `Sources: Policy`}, []string{`"trace"`}},
		{"trace on request", `{"question":"may I?","trace":true}`, 200, []string{`"trace"`, `"query": "may I?"`}, nil},
		{"empty question", `{"question":""}`, 400, []string{`"error": "empty_question"`, "question is empty"}, nil},
		{"unknown field", `{"question":"x","k":3}`, 400, []string{`"error": "unknown_field"`, "unknown field"}, nil},
		{"too large", `{"question":"` + strings.Repeat("a", maxAskBody) + `"}`, 413, []string{`"error": "body_too_large"`}, nil},
		{"internal error hides detail", `{"question":"boom"}`, 500, []string{`"error": "answer_failed"`, "could not be made"}, []string{"disk full", "/secret"}},
		{"failed stage is named, internals are not", `{"question":"provider down"}`, 500,
			[]string{`"error": "answer_failed"`, `"stage": "generate"`, `"turn_id": 9`, "The generate step failed", "recorded with turn 9"},
			[]string{"api.example", "503", "sk-123"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(ts.URL+"/api/ask", "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, b)
			}
			for _, w := range tt.wantBody {
				if !strings.Contains(string(b), w) {
					t.Errorf("body lacks %q:\n%s", w, b)
				}
			}
			for _, w := range tt.notBody {
				if strings.Contains(string(b), w) {
					t.Errorf("body has %q:\n%s", w, b)
				}
			}
		})
	}
	if got.Platform != "api" {
		t.Errorf("platform = %q, want api", got.Platform)
	}
}

func TestAskFilterAndPlatformPassed(t *testing.T) {
	var got docent.Question
	ts := newTestServer(t, askerFunc(func(_ context.Context, q docent.Question) (docent.Turn, error) {
		got = q
		return docent.Turn{Answer: docent.Answer{Status: docent.StatusNotFound, Citations: []docent.Citation{{}}}}, nil
	}), nil)
	resp, err := http.Post(ts.URL+"/api/ask", "application/json",
		strings.NewReader(`{"question":"q","filter":{"sources":["hb"],"labels":["it"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Platform != "api" || len(got.Filter.Sources) != 1 || got.Filter.Sources[0] != "hb" || got.Filter.Labels[0] != "it" {
		t.Errorf("question = %+v", got)
	}
}

// readiness is a Readiness the test moves: loaded, and what Check says.
type readiness struct {
	loaded atomic.Bool
	err    atomic.Value // error
}

func (r *readiness) Loaded() bool { return r.loaded.Load() }
func (r *readiness) Check(context.Context) error {
	if e, _ := r.err.Load().(error); e != nil {
		return e
	}
	return nil
}

// TestReadyz: /readyz is 503 until the sync side reports the index loaded,
// then as its check says.
func TestReadyz(t *testing.T) {
	r := &readiness{}
	s := New(nil, format, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler), Options{Ready: r})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	check := func(want int) {
		t.Helper()
		resp, err := http.Get(ts.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/readyz = %d, want %d", resp.StatusCode, want)
		}
	}
	check(http.StatusServiceUnavailable)
	r.loaded.Store(true)
	check(http.StatusOK)
	r.err.Store(errors.New("typesense: no leader"))
	check(http.StatusServiceUnavailable)
}

func TestDocsServesOnlyLiveDocuments(t *testing.T) {
	fsys := fstest.MapFS{
		"it/vpn.md":      {Data: []byte("---\ntitle: VPN\nupdated: 2026-01-02\n---\n# VPN\n\nUse <script>alert(1)</script> KestrelConnect.\n")},
		"it/draft.md":    {Data: []byte("# Draft\n\nnot indexed\n")},
		".env":           {Data: []byte("TOKEN=s3cr3t\n")},
		"notes/todo.txt": {Data: []byte("plain & simple")},
	}
	live := map[string]bool{"hb:it/vpn.md": true, "hb:notes/todo.txt": true, "hb:.env": false}
	docs := NewDocs(map[string]fs.FS{"hb": fsys}, func(_ context.Context, id string) (bool, error) { return live[id], nil }, DocsOptions{})
	ts := newTestServer(t, nil, docs)
	tests := []struct {
		path       string
		wantStatus int
		want       []string
		not        []string
	}{
		{"/docs/hb/it/vpn.md", 200, []string{"<h1", "VPN", "updated 2026-01-02", "KestrelConnect"}, []string{"<script>", "title: VPN"}},
		{"/docs/hb/notes/todo.txt", 200, []string{"<pre>plain &amp; simple</pre>"}, nil},
		{"/docs/hb/it/draft.md", 404, nil, []string{"not indexed"}},
		{"/docs/hb/.env", 404, nil, []string{"s3cr3t"}},
		{"/docs/hb/../../etc/passwd", 404, nil, nil},
		{"/docs/other/it/vpn.md", 404, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := http.Get(ts.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("page lacks %q:\n%s", w, b)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(string(b), w) {
					t.Errorf("page has %q", w)
				}
			}
		})
	}
}

func TestNewAskResponseNeverNullCitations(t *testing.T) {
	b, _ := json.Marshal(NewAskResponse(docent.Turn{Answer: docent.Answer{Status: docent.StatusNotFound, Text: "no"}},
		func(a docent.Answer) string { return a.Text }, false))
	if !strings.Contains(string(b), `"citations":[]`) {
		t.Errorf("citations should be [] not null: %s", b)
	}
}

// TestAskScopedToken: a token's scope narrows the filter the question is
// retrieved with and names the token in the turn; a filter outside the
// scope is refused with 403 before any answer is made.
func TestAskScopedToken(t *testing.T) {
	var got []docent.Question
	asker := askerFunc(func(ctx context.Context, q docent.Question) (docent.Turn, error) {
		got = append(got, q)
		return docent.Turn{ID: 1, Question: q, Answer: docent.Answer{Text: "Yes [1].", Status: docent.StatusAnswered,
			Citations: []docent.Citation{{N: 1, Title: "Policy", URL: "https://x/p"}}}}, nil
	})
	s := New(asker, format, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler), Options{})
	caller := docent.Caller{Name: "community-bot", TokenID: 3, Scope: docent.Scope{Sources: []string{"public"}, Labels: []string{"faq"}}}
	withCaller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Handler().ServeHTTP(w, r.WithContext(docent.NewContextWithCaller(r.Context(), caller)))
	})
	ts := httptest.NewServer(withCaller)
	defer ts.Close()
	for _, tc := range []struct {
		name        string
		body        string
		wantStatus  int
		wantSources []string
	}{
		{"no filter takes the scope", `{"question":"may I?"}`, 200, []string{"public"}},
		{"a source inside", `{"question":"may I?","filter":{"sources":["public"],"labels":["faq"]}}`, 200, []string{"public"}},
		{"a source outside", `{"question":"may I?","filter":{"sources":["internal"]}}`, 403, nil},
		{"a label outside", `{"question":"may I?","filter":{"labels":["secret"]}}`, 403, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			resp, b := mustDo(t, http.MethodPost, ts.URL+"/api/ask", "application/json", tc.body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.wantStatus, b)
			}
			if tc.wantStatus != 200 {
				mustErrorBody(t, resp, b, CodeOutOfScope)
				if len(got) != 0 {
					t.Errorf("a refused ask reached the answerer: %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("asked %d times", len(got))
			}
			q := got[0]
			if !slices.Equal(q.Filter.Sources, tc.wantSources) || !slices.Equal(q.Filter.Labels, []string{"faq"}) || q.User != "community-bot" || q.Platform != "api" {
				t.Errorf("question = %+v, want sources %v, labels [faq], user community-bot", q, tc.wantSources)
			}
		})
	}
}

// TestSharedAdmission: a server given the shared admission control
// admits through it, so another entrance holding every slot makes
// /api/ask refuse at once; LastAsk follows every entrance's asks.
func TestSharedAdmission(t *testing.T) {
	adm := admission.New(admission.Options{Slots: 1, MaxQueue: 1, MaxWait: time.Millisecond})
	s := New(answered(new(atomic.Int64)), format, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler), Options{Admission: adm})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	release, err := adm.Acquire(context.Background(), "slack", "C1")
	if err != nil {
		t.Fatal(err)
	}
	resp, b := mustDo(t, http.MethodPost, ts.URL+"/api/ask", "application/json", `{"question":"q"}`)
	mustErrorBody(t, resp, b, CodeOverloaded)
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	release()
	if s.LastAsk().IsZero() {
		t.Error("LastAsk is zero after a release")
	}
	if resp, b := mustDo(t, http.MethodPost, ts.URL+"/api/ask", "application/json", `{"question":"q"}`); resp.StatusCode != 200 {
		t.Errorf("after the release: %d %s", resp.StatusCode, b)
	}
}

// TestAskFlagsStaleSources: an answer citing a document flagged stale
// says so in the response (Flagged, and a line in Text); unflagged
// citations and a failing flag lookup leave the answer as it was.
func TestAskFlagsStaleSources(t *testing.T) {
	asker := askerFunc(func(ctx context.Context, q docent.Question) (docent.Turn, error) {
		return docent.Turn{ID: 3, Question: q, Answer: docent.Answer{
			Text: "It is $25 [1] or $50 [2].", Status: docent.StatusAnswered,
			Citations: []docent.Citation{{N: 1, DocID: "hb:new.md", Title: "Expenses"}, {N: 2, DocID: "hb:old.md", Title: "Expenses 2021"}},
		}}, nil
	})
	tests := []struct {
		name        string
		flags       FlagFunc
		wantFlagged []FlaggedSource
		wantNote    bool
	}{
		{"flagged citation", func(ctx context.Context, ids []string) (map[string]string, error) {
			if !slices.Equal(ids, []string{"hb:new.md", "hb:old.md"}) {
				t.Errorf("flags asked for %v, want the cited documents", ids)
			}
			return map[string]string{"hb:old.md": "conflicts with a newer page"}, nil
		}, []FlaggedSource{{N: 2, DocID: "hb:old.md", Title: "Expenses 2021", Why: "conflicts with a newer page"}}, true},
		{"nothing flagged", func(context.Context, []string) (map[string]string, error) { return map[string]string{}, nil }, nil, false},
		{"lookup fails", func(context.Context, []string) (map[string]string, error) { return nil, errors.New("store down") }, nil, false},
		{"no flags wired", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(asker, format, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler), Options{Flags: tt.flags})
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()
			resp, err := http.Post(ts.URL+"/api/ask", "application/json", strings.NewReader(`{"question":"how much?"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var got AskResponse
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Flagged, tt.wantFlagged) {
				t.Errorf("flagged = %+v, want %+v", got.Flagged, tt.wantFlagged)
			}
			note := "Note: [2] Expenses 2021 may be out of date (conflicts with a newer page)."
			if strings.Contains(got.Text, note) != tt.wantNote {
				t.Errorf("text = %q, want the note %v", got.Text, tt.wantNote)
			}
		})
	}
}
