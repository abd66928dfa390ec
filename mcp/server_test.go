package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docent-hq/docent"
	docentmcp "github.com/docent-hq/docent/mcp"
	"github.com/docent-hq/docent/mcp/mcptest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

// The fakes below stand in for the inner layers (retriever, registry,
// answerer); cmd/docent runs the same tools over the real ones.

// corpus is two sources: a public FAQ and an internal runbook.
var corpus = []docent.Chunk{
	{ID: "p1", DocID: "public:vpn.md", Source: "public", Labels: []string{"faq"}, Title: "VPN", Section: []string{"Reset"},
		URL: "https://docs.example/vpn#reset", Text: "VPN > Reset\n\nReset your VPN token in the portal.", UpdatedAt: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)},
	{ID: "i1", DocID: "internal:vpn-admin.md", Source: "internal", Title: "VPN admin", URL: "https://wiki.example/vpn-admin",
		Text: "VPN admin\n\nReset a user's VPN token from the admin console with the break-glass key."},
}

var registry = map[string]docent.DocRecord{
	"public:vpn.md":         {ID: "public:vpn.md", Source: "public", Labels: []string{"faq"}, Title: "VPN", URL: "https://docs.example/vpn", ChunkIDs: []string{"p1"}},
	"internal:vpn-admin.md": {ID: "internal:vpn-admin.md", Source: "internal", Title: "VPN admin", URL: "https://wiki.example/vpn-admin", ChunkIDs: []string{"i1"}},
}

// fakeRetriever ranks the corpus chunks that pass the filter and share a
// word with the query.
type fakeRetriever struct{}

func (fakeRetriever) Retrieve(_ context.Context, req search.Request) (search.Result, error) {
	var res search.Result
	for _, c := range corpus {
		if req.Filter.Match(c) && strings.Contains(strings.ToLower(c.Text), strings.ToLower(strings.Fields(req.Text)[0])) {
			res.Hits = append(res.Hits, docent.Hit{Chunk: c, Score: 1 / float64(len(res.Hits)+1)})
		}
	}
	return res, nil
}

type fakeDocs struct{}

func (fakeDocs) Document(_ context.Context, id string) (docent.DocRecord, error) {
	if r, ok := registry[id]; ok {
		return r, nil
	}
	return docent.DocRecord{}, fmt.Errorf("fake: %w", store.ErrNotFound)
}

func (fakeDocs) DocumentByURL(_ context.Context, u string) (docent.DocRecord, error) {
	u, _, _ = strings.Cut(u, "#")
	for _, r := range registry {
		if r.URL == u {
			return r, nil
		}
	}
	return docent.DocRecord{}, fmt.Errorf("fake: %w", store.ErrNotFound)
}

func (fakeDocs) ListDocuments(_ context.Context, f store.DocFilter) ([]docent.DocRecord, error) {
	var out []docent.DocRecord
	for _, id := range slices.Sorted(maps.Keys(registry)) {
		if r := registry[id]; f.Source == "" || r.Source == f.Source {
			out = append(out, r)
		}
	}
	return out[min(f.Offset, len(out)):min(f.Offset+f.Limit, len(out))], nil
}

type fakeChunks struct{}

func (fakeChunks) Chunks(_ context.Context, ids []string) ([]docent.Chunk, error) {
	var out []docent.Chunk
	for _, id := range ids {
		for _, c := range corpus {
			if c.ID == id {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// fakeAsker answers from the first chunk the filter lets through, citing
// it, and records each question; cite, when set, overrides the citation
// (a misbehaving answerer).
type fakeAsker struct {
	mu   sync.Mutex
	asks []docent.Question
	cite string
}

func (a *fakeAsker) Ask(_ context.Context, q docent.Question) (docent.Turn, error) {
	a.mu.Lock()
	a.asks = append(a.asks, q)
	cite := a.cite
	a.mu.Unlock()
	for _, c := range corpus {
		if !q.Filter.Match(c) {
			continue
		}
		if cite != "" {
			c.DocID = cite
		}
		return docent.Turn{ID: 42, Question: q, Answer: docent.Answer{Status: docent.StatusAnswered, Text: "Use the portal [1].",
			Citations: []docent.Citation{{N: 1, DocID: c.DocID, ChunkID: c.ID, Title: c.Title, URL: c.URL}}}}, nil
	}
	return docent.Turn{ID: 43, Question: q, Answer: docent.Answer{Status: docent.StatusNotFound}}, nil
}

func (a *fakeAsker) last() docent.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asks[len(a.asks)-1]
}

func newServer(t *testing.T, tweak func(*docentmcp.Options)) (*docentmcp.Server, *fakeAsker) {
	t.Helper()
	asker := &fakeAsker{}
	opts := docentmcp.Options{Asker: asker, Retriever: fakeRetriever{}, Documents: fakeDocs{}, Chunks: fakeChunks{},
		Sources: []string{"public", "internal"}}
	if tweak != nil {
		tweak(&opts)
	}
	s, err := docentmcp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, asker
}

// serveAs serves s over HTTP with every request made by caller (standing
// in for the token guard, which cmd/docent puts in front: it hands on the
// caller of a bearer token it verified, so clients send one).
func serveAs(t *testing.T, s *docentmcp.Server, caller *docent.Caller) string {
	t.Helper()
	h := s.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if caller != nil {
			r = r.WithContext(docent.NewContextWithCaller(r.Context(), *caller))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestToolsList: three tools, each described, with an object input
// schema and an object output schema; ask_docs' status is an enum.
func TestToolsList(t *testing.T) {
	s, _ := newServer(t, nil)
	cs := mcptest.MustConnect(t, s)
	if init := cs.InitializeResult(); init.ServerInfo.Name != "docent" || init.Instructions == "" || init.Capabilities.Tools == nil {
		t.Fatalf("initialize = %+v", init)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{ // tool -> required input properties
		docentmcp.ToolSearch: {"query"}, docentmcp.ToolAsk: {"question"}, docentmcp.ToolGetDocument: nil,
	}
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		required, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		var in, out struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		mustSchema(t, tool.InputSchema, &in)
		mustSchema(t, tool.OutputSchema, &out)
		if in.Type != "object" || !slices.Equal(in.Required, required) || out.Type != "object" || len(out.Properties) == 0 {
			t.Errorf("%s: input %+v, output %+v", tool.Name, in, out)
		}
		for _, sch := range []any{tool.InputSchema, tool.OutputSchema} {
			if b, _ := json.Marshal(sch); strings.Contains(string(b), `"type":[`) {
				t.Errorf("%s: a property has a list of types (some clients take one): %s", tool.Name, b)
			}
		}
		if len(tool.Description) < 200 {
			t.Errorf("%s: description too short for a model to choose by: %q", tool.Name, tool.Description)
		}
		for name, p := range in.Properties {
			if !strings.Contains(string(p), `"description"`) {
				t.Errorf("%s: argument %s has no description", tool.Name, name)
			}
		}
		if tool.Name == docentmcp.ToolAsk && !strings.Contains(string(out.Properties["status"]), `"enum":["answered","uncertain","not_found"]`) {
			t.Errorf("ask_docs status schema = %s", out.Properties["status"])
		}
	}
}

func mustSchema(t *testing.T, schema any, into any) {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

// TestToolsInMemory: each tool answers with structured content and text.
func TestToolsInMemory(t *testing.T) {
	s, asker := newServer(t, nil)
	cs := mcptest.MustConnect(t, s)

	var found docentmcp.SearchOutput
	res := mcptest.Call(t, cs, docentmcp.ToolSearch, map[string]any{"query": "reset my VPN token"}, &found)
	if res.IsError || len(found.Passages) != 2 || found.Passages[0].DocID != "public:vpn.md" || found.Passages[0].Section != "Reset" ||
		found.Passages[0].Text != "Reset your VPN token in the portal." || found.Passages[0].UpdatedAt != "2025-03-01T00:00:00Z" {
		t.Fatalf("search_docs = %+v (%s)", found, mcptest.Text(res))
	}
	if text := mcptest.Text(res); !strings.Contains(text, "[1] VPN › Reset") || !strings.Contains(text, "https://docs.example/vpn#reset") {
		t.Errorf("search_docs text = %q", text)
	}

	var answer docentmcp.AskOutput
	res = mcptest.Call(t, cs, docentmcp.ToolAsk, map[string]any{"question": "How do I reset my VPN token?"}, &answer)
	if res.IsError || answer.Status != "answered" || answer.TurnID != 42 || len(answer.Sources) != 1 || answer.Sources[0].URL == "" {
		t.Fatalf("ask_docs = %+v (%s)", answer, mcptest.Text(res))
	}
	if q := asker.last(); q.Platform != "mcp" || q.User != "" {
		t.Errorf("asked %+v, want platform mcp, no token", q)
	}

	var doc docentmcp.DocumentOutput
	res = mcptest.Call(t, cs, docentmcp.ToolGetDocument, map[string]any{"url": "https://docs.example/vpn#reset"}, &doc)
	if res.IsError || doc.DocID != "public:vpn.md" || doc.Markdown != "# VPN\n\n## Reset\n\nReset your VPN token in the portal.\n" {
		t.Fatalf("get_document = %+v (%s)", doc, mcptest.Text(res))
	}
}

// TestScopedCaller: a caller scoped to the public source never gets a
// passage, an answer or a document of the internal one, whatever it
// asks for; an unscoped caller gets both.
func TestScopedCaller(t *testing.T) {
	s, asker := newServer(t, nil)
	community := &docent.Caller{Name: "community", TokenID: 1, Scope: docent.Scope{Sources: []string{"public"}}}
	cs := mcptest.MustConnectHTTP(t, serveAs(t, s, community)+"/mcp", "dct_community")

	var found docentmcp.SearchOutput
	mcptest.Call(t, cs, docentmcp.ToolSearch, map[string]any{"query": "reset", "limit": 20}, &found)
	if len(found.Passages) != 1 || found.Passages[0].Source != "public" {
		t.Fatalf("scoped search = %+v", found)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{docentmcp.ToolSearch, map[string]any{"query": "reset", "source": "internal"}, "outside the caller's scope"},
		{docentmcp.ToolAsk, map[string]any{"question": "How do I reset a VPN token?", "source": "internal"}, "outside the caller's scope"},
		{docentmcp.ToolGetDocument, map[string]any{"doc_id": "internal:vpn-admin.md"}, "unknown document"},
		{docentmcp.ToolGetDocument, map[string]any{"url": "https://wiki.example/vpn-admin"}, "unknown document"},
		{docentmcp.ToolSearch, map[string]any{"query": "reset", "source": "nope"}, `may not read source "nope": outside the caller's scope; it may read: public`},
	} {
		res := mcptest.Call(t, cs, tc.tool, tc.args, nil)
		if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, tc.want) || strings.Contains(text, "break-glass") {
			t.Errorf("%s %v = error %v %q, want a tool error saying %q", tc.tool, tc.args, res.IsError, text, tc.want)
		}
	}
	var answer docentmcp.AskOutput
	mcptest.Call(t, cs, docentmcp.ToolAsk, map[string]any{"question": "How do I reset my VPN token?"}, &answer)
	if q := asker.last(); !slices.Equal(q.Filter.Sources, []string{"public"}) || q.User != "community" {
		t.Errorf("scoped ask = %+v", q)
	}
	if len(answer.Sources) != 1 || answer.Sources[0].DocID != "public:vpn.md" {
		t.Errorf("scoped answer = %+v", answer)
	}
	// An answer that cites outside the scope (the index changed under the
	// answer) is withheld.
	asker.mu.Lock()
	asker.cite = "internal:vpn-admin.md"
	asker.mu.Unlock()
	res := mcptest.Call(t, cs, docentmcp.ToolAsk, map[string]any{"question": "How do I reset my VPN token?"}, nil)
	if text := mcptest.Text(res); !res.IsError || strings.Contains(text, "wiki.example") {
		t.Errorf("an out-of-scope citation reached the caller: %q", text)
	}

	everyone := mcptest.MustConnectHTTP(t, serveAs(t, s, &docent.Caller{Name: "staff", TokenID: 2})+"/mcp", "dct_staff")
	mcptest.Call(t, everyone, docentmcp.ToolSearch, map[string]any{"query": "reset", "limit": 20}, &found)
	if len(found.Passages) != 2 {
		t.Errorf("unscoped search = %+v", found)
	}
}

// fakeRate refuses every call after the first n.
type fakeRate struct {
	mu    sync.Mutex
	left  int
	calls []docent.Caller
}

func (r *fakeRate) Allow(c docent.Caller) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	r.left--
	return 12 * time.Second, r.left >= 0
}

type refuse struct{}

func (refuse) Acquire(context.Context, string, string) (func(), error) {
	return nil, errors.New("too busy")
}

// TestToolErrors: every failure is a tool error (isError) with a message
// a model can act on, never a protocol error.
func TestToolErrors(t *testing.T) {
	var mu sync.Mutex
	shed := map[string]int{}
	onShed := func(reason string) { mu.Lock(); shed[reason]++; mu.Unlock() }
	notReady, _ := newServer(t, func(o *docentmcp.Options) { o.Ready = func() bool { return false }; o.OnShed = onShed })
	busy, _ := newServer(t, func(o *docentmcp.Options) { o.Admission = refuse{}; o.OnShed = onShed })
	rate := &fakeRate{left: 1}
	limited, _ := newServer(t, func(o *docentmcp.Options) { o.Rate = rate })
	broken, _ := newServer(t, func(o *docentmcp.Options) {
		o.Refresh = func(context.Context) error { return errors.New("disk gone at /secret") }
	})
	plain, _ := newServer(t, nil)
	limitedHTTP := mcptest.MustConnectHTTP(t, serveAs(t, limited, &docent.Caller{Name: "bot", TokenID: 9, RatePerMinute: 5})+"/mcp", "dct_bot")

	for _, tc := range []struct {
		name string
		cs   *sdk.ClientSession
		tool string
		args map[string]any
		want string
	}{
		{"not ready", mcptest.MustConnect(t, notReady), docentmcp.ToolAsk, map[string]any{"question": "q"}, "still indexing"},
		{"busy", mcptest.MustConnect(t, busy), docentmcp.ToolAsk, map[string]any{"question": "q"}, "too many questions at once"},
		{"busy search", mcptest.MustConnect(t, busy), docentmcp.ToolSearch, map[string]any{"query": "q"}, "too many questions at once"},
		{"within the rate", limitedHTTP, docentmcp.ToolSearch, map[string]any{"query": "vpn"}, ""},
		{"over the rate", limitedHTTP, docentmcp.ToolSearch, map[string]any{"query": "vpn"}, "over rate: this token may make 5 requests a minute; try again in 12s"},
		{"index unreadable", mcptest.MustConnect(t, broken), docentmcp.ToolSearch, map[string]any{"query": "vpn"}, "docent failed"},
		{"unknown document", mcptest.MustConnect(t, plain), docentmcp.ToolGetDocument, map[string]any{"doc_id": "nope"}, `unknown document: no document has doc_id "nope"`},
		{"no document named", mcptest.MustConnect(t, plain), docentmcp.ToolGetDocument, map[string]any{}, "give doc_id or url"},
		{"empty question", mcptest.MustConnect(t, plain), docentmcp.ToolAsk, map[string]any{"question": ""}, "question"},
		{"limit too high", mcptest.MustConnect(t, plain), docentmcp.ToolSearch, map[string]any{"query": "vpn", "limit": 500}, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error: %v", err)
			}
			text := mcptest.Text(res)
			if tc.want == "" {
				if res.IsError {
					t.Fatalf("tool error %q", text)
				}
				return
			}
			if !res.IsError || !strings.Contains(text, tc.want) || strings.Contains(text, "/secret") {
				t.Errorf("result error=%v %q, want a tool error saying %q", res.IsError, text, tc.want)
			}
		})
	}
	if shed["not_ready"] != 1 || shed["overloaded"] != 1 {
		t.Errorf("shed %v, want one ask not ready and one overloaded", shed)
	}
	if len(rate.calls) != 2 || rate.calls[0].Name != "bot" {
		t.Errorf("rate charged %+v, want the bot twice", rate.calls)
	}
}

// TestRebinding: a loopback listener refuses a foreign Host (a DNS
// rebinding page) but takes localhost and the public URL's host (a proxy).
func TestRebinding(t *testing.T) {
	s, _ := newServer(t, func(o *docentmcp.Options) { o.PublicURL = "https://docs.example.com" })
	base := serveAs(t, s, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for host, want := range map[string]int{"evil.example": http.StatusForbidden, "docs.example.com": http.StatusOK, "localhost:8080": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestDocumentResources: each document in the caller's scope is listed
// and read as a markdown resource; one outside it is neither listed nor
// read.
func TestDocumentResources(t *testing.T) {
	s, _ := newServer(t, nil)
	for _, tc := range []struct {
		name   string
		caller *docent.Caller
		want   []string
	}{
		{"unscoped", &docent.Caller{Name: "staff", TokenID: 1}, []string{"internal:vpn-admin.md", "public:vpn.md"}},
		{"scoped", &docent.Caller{Name: "community", TokenID: 2, Scope: docent.Scope{Sources: []string{"public"}}}, []string{"public:vpn.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := mcptest.MustConnectHTTP(t, serveAs(t, s, tc.caller)+"/mcp", "dct_x")
			list, err := cs.ListResources(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range list.Resources {
				got = append(got, strings.TrimPrefix(r.URI, docentmcp.DocumentURI))
				if r.MIMEType != "text/markdown" || r.Title == "" {
					t.Errorf("resource %+v", r)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("listed %v, want %v", got, tc.want)
			}
			res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: docentmcp.DocumentURI + "public:vpn.md"})
			if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "Reset your VPN token in the portal.") {
				t.Fatalf("read the public page = %+v, %v", res, err)
			}
			res, err = cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: docentmcp.DocumentURI + "internal:vpn-admin.md"})
			if tc.caller.Scope.IsZero() {
				if err != nil || !strings.Contains(res.Contents[0].Text, "break-glass") {
					t.Errorf("unscoped read of the internal page = %+v, %v", res, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("scoped read of the internal page = %+v, %v; want resource not found", res, err)
			}
		})
	}
}
