package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/crypto/bcrypt"

	"github.com/docent-hq/docent"
	offlineans "github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/connectors"
	docentmcp "github.com/docent-hq/docent/mcp"
	"github.com/docent-hq/docent/mcp/mcptest"
	"github.com/docent-hq/docent/search"
)

// vpnQuestion is the question of the MCP acceptance tests; the bundled
// handbook answers it from its VPN page.
const (
	vpnQuestion = "How do I reset my VPN token?"
	vpnDoc      = "handbook:it/vpn.md"
)

// checkHandbookVPN drives a client through initialize, tools/list and a
// call of each tool for the VPN question, as an agent would, and checks
// each comes back with the handbook's VPN page. It returns the answer.
func checkHandbookVPN(t *testing.T, cs *sdk.ClientSession) docentmcp.AskOutput {
	t.Helper()
	if init := cs.InitializeResult(); init == nil || init.ServerInfo.Name != "docent" || init.Capabilities.Tools == nil {
		t.Fatalf("initialize = %+v", init)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s: input schema %v, output schema %v, description %q", tool.Name, tool.InputSchema != nil, tool.OutputSchema != nil, tool.Description)
		}
		names[tool.Name] = true
	}
	if len(tools.Tools) != 3 || !names["search_docs"] || !names["ask_docs"] || !names["get_document"] {
		t.Fatalf("tools = %v, want search_docs, ask_docs and get_document", names)
	}

	var found docentmcp.SearchOutput
	res := mcptest.Call(t, cs, "search_docs", map[string]any{"query": vpnQuestion}, &found)
	if res.IsError || len(found.Passages) == 0 || found.Passages[0].DocID != vpnDoc ||
		!strings.Contains(found.Passages[0].URL, "/docs/handbook/it/vpn.md") || !strings.Contains(found.Passages[0].Text, "reset-token") {
		t.Fatalf("search_docs = %+v (%s)", found, mcptest.Text(res))
	}

	var answer docentmcp.AskOutput
	res = mcptest.Call(t, cs, "ask_docs", map[string]any{"question": vpnQuestion}, &answer)
	if res.IsError || answer.Status != "answered" || !citeMarker.MatchString(answer.Answer) || len(answer.Sources) == 0 {
		t.Fatalf("ask_docs = %+v (%s)", answer, mcptest.Text(res))
	}
	if src := answer.Sources[0]; src.DocID != vpnDoc || !strings.Contains(src.URL, "/docs/handbook/it/vpn.md") || src.Title == "" {
		t.Errorf("the answer cites %+v, want the VPN page with its link", src)
	}
	if text := mcptest.Text(res); !strings.Contains(text, "Sources:") || !strings.Contains(text, "/docs/handbook/it/vpn.md") {
		t.Errorf("ask_docs text has no source list with the link: %q", text)
	}

	for _, args := range []map[string]any{{"doc_id": vpnDoc}, {"url": answer.Sources[0].URL}} {
		var doc docentmcp.DocumentOutput
		res = mcptest.Call(t, cs, "get_document", args, &doc)
		if res.IsError || doc.DocID != vpnDoc || !strings.HasPrefix(doc.Markdown, "# "+doc.Title+"\n") ||
			!strings.Contains(doc.Markdown, "kestrelconnect reset-token") || doc.Source != "handbook" || len(doc.Labels) == 0 {
			t.Fatalf("get_document %v = %+v (%s)", args, doc, mcptest.Text(res))
		}
	}
	res2, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: docentmcp.DocumentURI + vpnDoc})
	if err != nil || len(res2.Contents) != 1 || !strings.Contains(res2.Contents[0].Text, "kestrelconnect reset-token") {
		t.Errorf("resources/read of the VPN page = %+v, %v", res2, err)
	}
	return answer
}

// TestMCPInMemory: the SDK's client over in-memory transports, against
// the MCP server wired over the indexed handbook.
func TestMCPInMemory(t *testing.T) {
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)})}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	srv, err := m.mcpServer(docentmcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	answer := checkHandbookVPN(t, mcptest.MustConnect(t, srv))
	turn, err := m.Store.Turn(context.Background(), answer.TurnID)
	if err != nil || turn.Question.Platform != "mcp" || turn.Question.Text != vpnQuestion || len(turn.Answer.Trace.Candidates) == 0 {
		t.Errorf("stored turn = %+v, %v; want the ask with its trace, platform mcp", turn.Question, err)
	}
}

// TestMCPOverHTTP: the SDK's client over streamable HTTP at /mcp of a
// running docent serve; each ask is a turn the console lists.
func TestMCPOverHTTP(t *testing.T) {
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)})}
	base, stop := MustServeMain(t, m)
	defer stop()
	waitReady(t, base)
	answer := checkHandbookVPN(t, mcptest.MustConnectHTTP(t, base+"/mcp", ""))
	turn, err := m.Store.Turn(context.Background(), answer.TurnID)
	if err != nil || turn.Question.Platform != "mcp" || turn.Question.Text != vpnQuestion {
		t.Errorf("stored turn = %+v, %v; want the question, platform mcp", turn.Question, err)
	}
}

// mustMCPStdio runs `docent mcp` (Main.MCP) with args over pipes and
// connects the SDK's client to its stdin and stdout. stop closes the
// client (stdin ends) and returns what MCP returned.
func mustMCPStdio(t *testing.T, m *Main, args ...string) (*sdk.ClientSession, func() error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m.Stdin, m.Stdout = inR, outW
	done := make(chan error, 1)
	go func() {
		err := m.MCP(context.Background(), args)
		outW.Close()
		m.Close()
		done <- err
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "docent-test", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect to docent mcp: %v", err)
	}
	var stopped bool
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cs.Close()
		inW.Close()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return errors.New("docent mcp did not stop when stdin closed")
		}
	}
	t.Cleanup(func() { _ = stop() })
	return cs, stop
}

// TestMCPStdio: `docent mcp` speaks MCP on stdin and stdout over the
// indexed handbook, alone on its data dir; logs stay on stderr.
func TestMCPStdio(t *testing.T) {
	var logs syncBuffer
	m := &Main{Stderr: &logs, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)})}
	cs, stop := mustMCPStdio(t, m)
	answer := checkHandbookVPN(t, cs)
	if err := stop(); err != nil {
		t.Fatalf("docent mcp: %v\n%s", err, logs.String())
	}
	db := mustOpenStore(t, m.Config.DataDir)
	turn, err := db.Turn(context.Background(), answer.TurnID)
	if err != nil || turn.Question.Platform != "mcp" || turn.Question.Text != vpnQuestion {
		t.Errorf("stored turn = %+v, %v; want the question, platform mcp", turn.Question, err)
	}
	if !strings.Contains(logs.String(), "no other docent on this data dir; syncing") {
		t.Errorf("alone on its data dir, docent mcp did not sync:\n%s", logs.String())
	}
	// The lock was let go: a sync can run after it.
	unlock, err := lockDataDir(m.Config.DataDir)
	if err != nil {
		t.Fatalf("docent mcp kept the data dir's lock: %v", err)
	}
	unlock()
}

// TestMCPStdioFollowsServe: `docent mcp` beside a running serve on the
// same data dir neither takes the sync lock nor stops serve's syncs, and
// after serve re-syncs (a page changed, one added, one removed) it
// answers from the new index: new passages found, the removed page
// unknown.
func TestMCPStdioFollowsServe(t *testing.T) {
	dir := t.TempDir()
	cfg := MustDocsConfig(t, dir, tinyDocs, "")
	server := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}
	base, stop := MustServeMain(t, server)
	defer stop()
	waitReady(t, base)

	var logs syncBuffer
	m := &Main{ConfigPath: cfg, Stderr: &logs, Getenv: envOf(nil)}
	cs, stopMCP := mustMCPStdio(t, m, "--follow-every", "0")
	defer stopMCP()
	search := func(query string) []docentmcp.Passage {
		t.Helper()
		var out docentmcp.SearchOutput
		res := mcptest.Call(t, cs, "search_docs", map[string]any{"query": query, "limit": 20}, &out)
		if res.IsError {
			t.Fatalf("search_docs %q: %s", query, mcptest.Text(res))
		}
		return out.Passages
	}
	if got := search("parking basement"); len(got) == 0 || got[0].DocID != "local:office.md" {
		t.Fatalf("before the re-sync: %+v", got)
	}

	root := filepath.Join(dir, "docs")
	if err := os.WriteFile(filepath.Join(root, "lunch.md"), []byte("# Lunch\n\nLunch is served in the canteen on floor three at noon.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "office.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := server.SyncSources(context.Background(), server.Sources, nil); err != nil {
		t.Fatal(err)
	}
	// docent mcp reloads in the background, answering from what it has
	// until the reload is in: the first search starts it, a later one
	// sees the new index.
	deadline := time.Now().Add(30 * time.Second)
	var got []docentmcp.Passage
	for {
		got = search("canteen lunch")
		if len(got) > 0 && got[0].DocID == "local:lunch.md" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) == 0 || got[0].DocID != "local:lunch.md" || !strings.Contains(got[0].Text, "floor three") {
		t.Errorf("after the re-sync, the new page: %+v", got)
	}
	for _, p := range search("parking basement office") {
		if p.DocID == "local:office.md" {
			t.Errorf("after the re-sync, the removed page is still found: %+v", p)
		}
	}
	res := mcptest.Call(t, cs, "get_document", map[string]any{"doc_id": "local:office.md"}, nil)
	if !res.IsError || !strings.Contains(mcptest.Text(res), "unknown document") {
		t.Errorf("get_document of the removed page = %s", mcptest.Text(res))
	}
	if !strings.Contains(logs.String(), "another docent syncs this data dir") {
		t.Errorf("docent mcp did not leave the sync to serve:\n%s", logs.String())
	}
	if err := stopMCP(); err != nil {
		t.Fatalf("docent mcp: %v", err)
	}
	// serve still holds the lock it took; mcp never took or broke it.
	if _, err := lockDataDir(server.Config.DataDir); !errors.Is(err, errDataDirBusy) {
		t.Errorf("lock beside serve = %v, want busy", err)
	}
}

// TestMCPTokensAndScope: served beyond localhost, /mcp needs a token
// (401 without one); a token whose scope the console's token page set to
// one source never gets a passage, answer or document of the other, over
// MCP or /api/ask; its tool calls count against its rate; its asks are
// turns that name it.
func TestMCPTokensAndScope(t *testing.T) {
	dir := t.TempDir()
	cfg := MustDocsConfig(t, dir, tinyDocs, "  - name: handbook\n    type: bundled\n")
	hash, err := bcrypt.GenerateFromPassword([]byte("a long admin password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("auth:\n  admins:\n    - user: ops@example.com\n      password_hash: \"" + string(hash) + "\"\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The handbook comes indexed; only the folder is synced here.
	copyHandbook(t, filepath.Join(dir, "data"))
	pre := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}
	if err := pre.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := pre.lockForWrites(); err != nil {
		t.Fatal(err)
	}
	local, err := pre.source("local")
	if err == nil {
		_, err = pre.SyncSources(context.Background(), []connectors.Source{local}, nil)
	}
	if err := errors.Join(err, pre.Close()); err != nil {
		t.Fatal(err)
	}
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}
	listen, stop := MustServeMain(t, m, "--addr", "0.0.0.0:0") // beyond localhost: tokens required
	defer stop()
	u, err := url.Parse(listen)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(u.Host)
	base := "http://127.0.0.1:" + port
	waitReady(t, base)

	// No token: 401, before any MCP is spoken.
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "token_required") {
		t.Fatalf("/mcp without a token = %d %s, want 401", resp.StatusCode, body)
	}
	if _, err := mcptest.ConnectHTTP(base+"/mcp", "dct_not-a-token"); err == nil {
		t.Fatal("a client with an unknown token connected")
	}

	// Tokens made on the console's token page: one scoped to the local
	// folder (rate 8 a minute), one unscoped.
	c := newConsoleClient(t, base)
	c.login("ops@example.com", "a long admin password")
	_, doc := c.post("/tokens", url.Values{"csrf": {c.csrf()}, "name": {"community-bot"}, "source": {"local"}, "rate": {"8"}})
	scoped := strings.TrimSpace(doc.Find(`[data-testid=new-token]`).Text())
	_, doc = c.post("/tokens", url.Values{"csrf": {c.csrf()}, "name": {"staff"}})
	staff := strings.TrimSpace(doc.Find(`[data-testid=new-token]`).Text())
	_, list := c.get("/tokens")
	if scoped == "" || staff == "" || !strings.Contains(list.Find(`[data-testid=tokens]`).Text(), "sources: local") {
		t.Fatalf("tokens %q %q; list shows %q", scoped, staff, list.Find(`[data-testid=tokens]`).Text())
	}

	cs := mcptest.MustConnectHTTP(t, base+"/mcp", scoped)
	var found docentmcp.SearchOutput
	mcptest.Call(t, cs, "search_docs", map[string]any{"query": vpnQuestion, "limit": 20}, &found)
	if len(found.Passages) == 0 {
		t.Fatal("the scoped token finds nothing")
	}
	for _, p := range found.Passages {
		if p.Source != "local" {
			t.Errorf("the scoped token got a passage of %s: %+v", p.Source, p)
		}
	}
	var answer docentmcp.AskOutput
	res := mcptest.Call(t, cs, "ask_docs", map[string]any{"question": vpnQuestion}, &answer)
	if res.IsError || answer.Status != "answered" || len(answer.Sources) == 0 {
		t.Fatalf("scoped ask_docs = %+v (%s)", answer, mcptest.Text(res))
	}
	for _, s := range answer.Sources {
		if !strings.HasPrefix(s.DocID, "local:") {
			t.Errorf("the scoped token's answer cites %+v", s)
		}
	}
	if strings.Contains(mcptest.Text(res), "KestrelConnect") {
		t.Errorf("the scoped answer quotes the handbook: %s", mcptest.Text(res))
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"get_document", map[string]any{"doc_id": vpnDoc}},
		{"get_document", map[string]any{"url": "http://localhost:8080/docs/handbook/it/vpn.md"}},
		{"search_docs", map[string]any{"query": vpnQuestion, "source": "handbook"}},
		{"ask_docs", map[string]any{"question": vpnQuestion, "source": "handbook"}},
	} {
		res := mcptest.Call(t, cs, call.tool, call.args, nil)
		if !res.IsError || strings.Contains(mcptest.Text(res), "KestrelConnect") {
			t.Errorf("scoped %s %v = %s, want a tool error", call.tool, call.args, mcptest.Text(res))
		}
	}
	turn, err := m.Store.Turn(context.Background(), answer.TurnID)
	if err != nil || turn.Question.Platform != "mcp" || turn.Question.User != "community-bot" || len(turn.Question.Filter.Sources) != 1 {
		t.Errorf("stored turn = %+v, %v; want platform mcp, user community-bot, filter local", turn.Question, err)
	}
	for _, h := range turn.Answer.Trace.Candidates {
		if h.Chunk.Source != "local" {
			t.Errorf("the scoped turn retrieved a candidate of %s", h.Chunk.Source)
		}
	}

	// /api/ask applies the same scope to the token.
	apiAsk := func(token, body string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/ask", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	status, b := apiAsk(scoped, `{"question":"`+vpnQuestion+`"}`)
	var api struct {
		Citations []docent.Citation `json:"citations"`
	}
	if err := json.Unmarshal(b, &api); status != http.StatusOK || err != nil || len(api.Citations) == 0 {
		t.Fatalf("/api/ask with the scoped token = %d %s", status, b)
	}
	for _, cit := range api.Citations {
		if !strings.HasPrefix(cit.DocID, "local:") {
			t.Errorf("/api/ask with the scoped token cites %+v", cit)
		}
	}
	if status, b := apiAsk(scoped, `{"question":"`+vpnQuestion+`","filter":{"sources":["handbook"]}}`); status != http.StatusForbidden {
		t.Errorf("/api/ask for another source with the scoped token = %d %s, want 403", status, b)
	}

	// The unscoped token reads the handbook.
	everyone := mcptest.MustConnectHTTP(t, base+"/mcp", staff)
	mcptest.Call(t, everyone, "search_docs", map[string]any{"query": vpnQuestion}, &found)
	if len(found.Passages) == 0 || found.Passages[0].DocID != vpnDoc {
		t.Errorf("the unscoped token's search = %+v", found)
	}

	// The scoped token's rate is 8 a minute, and /mcp and /api/ draw on
	// one bucket: it made 6 tool calls and 2 API requests, so the next
	// call is over.
	res = mcptest.Call(t, cs, "get_document", map[string]any{"doc_id": "local:vpn.md"}, nil)
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "over rate: this token may make 8 requests a minute") {
		t.Errorf("over the token's rate = %q, want an over rate tool error", text)
	}
}

// nodeClientDir is the pinned TypeScript SDK client (package.json and
// package-lock.json); .ci/run installs its node_modules with npm ci.
var nodeClientDir = filepath.Join("..", "..", "mcp", "mcptest", "node")

// tsResult is what mcp/mcptest/node/client.mjs prints.
type tsResult struct {
	Server struct {
		Name string `json:"name"`
	} `json:"server"`
	Tools []struct {
		Name          string   `json:"name"`
		Description   string   `json:"description"`
		InputType     string   `json:"inputType"`
		InputRequired []string `json:"inputRequired"`
		OutputType    string   `json:"outputType"`
	} `json:"tools"`
	Search struct {
		IsError    bool                   `json:"isError"`
		Structured docentmcp.SearchOutput `json:"structured"`
	} `json:"search"`
	Ask struct {
		IsError    bool                `json:"isError"`
		Structured docentmcp.AskOutput `json:"structured"`
		Text       string              `json:"text"`
	} `json:"ask"`
	Document struct {
		IsError    bool                     `json:"isError"`
		Structured docentmcp.DocumentOutput `json:"structured"`
	} `json:"document"`
}

// TestMCPTypeScriptClient: the MCP TypeScript SDK's client, a client
// written apart from docent and its Go SDK, drives the real binary:
// `docent mcp` over stdio (it launches it, as Claude Desktop does) and
// `docent serve`'s /mcp over streamable HTTP. It checks each result's
// structured content against the tool's output schema itself.
func TestMCPTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	sdkDir := filepath.Join(nodeClientDir, "node_modules", "@modelcontextprotocol", "sdk")
	if _, serr := os.Stat(sdkDir); err != nil || serr != nil {
		msg := "the TypeScript MCP client is not installed: run npm ci --prefix mcp/mcptest/node (node " + strconv.Quote(node) + ")"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + "; .ci/run installs it")
		}
		t.Skip(msg)
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "docent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	client := func(t *testing.T, env []string, args ...string) tsResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs"}, args...)...)
		cmd.Dir = nodeClientDir
		cmd.Env = append(os.Environ(), env...)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node client.mjs %v: %v\n%s", args, err, tail(stderr.String(), 3000))
		}
		var res tsResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("client output %s: %v", out, err)
		}
		return res
	}
	check := func(t *testing.T, res tsResult) {
		t.Helper()
		if res.Server.Name != "docent" || len(res.Tools) != 3 {
			t.Fatalf("server %+v, tools %+v", res.Server, res.Tools)
		}
		for _, tool := range res.Tools {
			if tool.InputType != "object" || tool.OutputType != "object" || tool.Description == "" {
				t.Errorf("tool %+v: want object input and output schemas and a description", tool)
			}
		}
		if p := res.Search.Structured.Passages; res.Search.IsError || len(p) == 0 || p[0].DocID != vpnDoc {
			t.Errorf("search_docs = %+v", res.Search)
		}
		a := res.Ask.Structured
		if res.Ask.IsError || a.Status != "answered" || !citeMarker.MatchString(a.Answer) || len(a.Sources) == 0 ||
			a.Sources[0].DocID != vpnDoc || !strings.Contains(a.Sources[0].URL, "/docs/handbook/it/vpn.md") {
			t.Errorf("ask_docs = %+v", res.Ask)
		}
		if d := res.Document.Structured; res.Document.IsError || d.DocID != vpnDoc || !strings.Contains(d.Markdown, "kestrelconnect reset-token") {
			t.Errorf("get_document = %+v", res.Document)
		}
	}

	t.Run("stdio", func(t *testing.T) {
		data := handbookData(t)
		check(t, client(t, []string{"DOCENT_DATA=" + data, "DOCENT_CONFIG="}, "stdio", bin, "mcp"))
	})
	t.Run("http", func(t *testing.T) {
		data := handbookData(t)
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "DOCENT_DATA="+data, "DOCENT_CONFIG=")
		var stderr syncBuffer
		cmd.Stderr, cmd.Stdout = &stderr, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
		}()
		var addr []string
		deadline := time.Now().Add(60 * time.Second)
		for addr == nil && time.Now().Before(deadline) {
			addr = regexp.MustCompile(`msg=serving addr=(\S+)`).FindStringSubmatch(stderr.String())
			if addr == nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if addr == nil {
			t.Fatalf("docent serve did not say where it serves:\n%s", stderr.String())
		}
		base := "http://" + addr[1]
		waitReady(t, base)
		check(t, client(t, nil, "http", base+"/mcp"))
	})
}

// topicDocs makes n markdown pages about one topic, from its words.
func topicDocs(prefix string, n int, words []string) map[string]string {
	docs := map[string]string{}
	for i := range n {
		var b strings.Builder
		b.WriteString("# " + prefix + " page " + strconv.Itoa(i) + "\n\n")
		for j := range 40 {
			b.WriteString(words[(i*7+j*3)%len(words)] + " ")
			if j%8 == 7 {
				b.WriteString(". ")
			}
		}
		docs[prefix+strconv.Itoa(i)+".md"] = b.String() + "\n"
	}
	return docs
}

// TestMCPFollowsARetrain: when the process that syncs retrains the
// offline model (the corpus drifted) and re-embeds, `docent mcp`'s
// follower takes the new model with the new vectors, so its query
// vectors are the writer's; before it follows, it keeps the old pair.
func TestMCPFollowsARetrain(t *testing.T) {
	dir := t.TempDir()
	space := []string{"rocket", "orbit", "launch", "satellite", "astronaut", "spacecraft", "gravity", "moon", "thrust", "planet",
		"booster", "capsule", "payload", "telemetry", "trajectory", "module"}
	cfg := MustDocsConfig(t, dir, topicDocs("space", 40, space), "")
	ctx := context.Background()
	writer := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}
	if err := writer.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if err := writer.lockForWrites(); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.SyncSources(ctx, writer.Sources, nil); err != nil {
		t.Fatal(err)
	}
	reader := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}
	if err := reader.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	follow := &indexFollower{m: reader, now: time.Now}
	before := reader.Embedder.Name()
	if before != writer.Embedder.Name() || !strings.HasPrefix(before, "offline-ppmi-svd") {
		t.Fatalf("reader %q, writer %q: want the same trained model", before, writer.Embedder.Name())
	}

	bank := []string{"bank", "loan", "money", "interest", "credit", "mortgage", "deposit", "savings", "account", "payment",
		"ledger", "invoice", "budget", "audit", "refund", "expense"}
	for name, text := range topicDocs("bank", 60, bank) {
		if err := os.WriteFile(filepath.Join(dir, "docs", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writer.SyncSources(ctx, writer.Sources, nil); err != nil {
		t.Fatal(err)
	}
	if writer.Embedder.Name() == before {
		t.Fatal("the drifted corpus did not retrain the model: the test checks nothing")
	}
	if reader.Embedder.Name() != before {
		t.Fatal("the reader changed model before following")
	}
	if err := follow.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if reader.Embedder.Name() != writer.Embedder.Name() {
		t.Fatalf("after following, the reader embeds with %q, the index holds %q", reader.Embedder.Name(), writer.Embedder.Name())
	}
	q := "mortgage interest on a savings account"
	rv, _ := reader.Embedder.EmbedQuery(ctx, q)
	wv, _ := writer.Embedder.EmbedQuery(ctx, q)
	if !slices.Equal(rv, wv) {
		t.Error("the reader's query vector differs from the writer's")
	}
	res, err := reader.Retriever.Retrieve(ctx, search.Request{Text: q, K: 3, Mode: search.ModeVector})
	if err != nil || len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Chunk.DocID, "bank") {
		t.Errorf("the reader's vector search after the retrain = %+v, %v; want a bank page", res.Hits, err)
	}
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// countingIndex is an index another process writes: each Refresh reloads,
// taking delay on the clock, counted.
type countingIndex struct {
	search.Index
	clock   *fakeClock
	delay   time.Duration
	reloads atomic.Int32
	release chan struct{}
}

func (c *countingIndex) Refresh(context.Context) (bool, error) {
	c.reloads.Add(1)
	if c.release != nil {
		<-c.release
	}
	c.clock.Add(c.delay)
	return true, nil
}

// TestIndexFollowerGap: a check runs in the background, one at a time;
// the next waits for the gap, which a slow reload stretches to ten times
// its length.
func TestIndexFollowerGap(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	idx := &countingIndex{clock: clock, delay: 50 * time.Millisecond, release: make(chan struct{})}
	m := &Main{App: App{Index: idx, Corpus: offlineans.NewCorpusStats(nil), Log: slog.New(slog.DiscardHandler)}}
	f := &indexFollower{m: m, minGap: time.Second, now: clock.Now}
	ctx := context.Background()
	reloadsAfter := func(d time.Duration) int32 {
		t.Helper()
		clock.Add(d)
		f.refresh(ctx)
		f.wait()
		return idx.reloads.Load()
	}
	f.refresh(ctx)
	f.refresh(ctx) // the first reload is held: no second one starts
	close(idx.release)
	f.wait()
	if n := idx.reloads.Load(); n != 1 {
		t.Fatalf("%d reloads, want 1", n)
	}
	// The first started at 0 and took 50ms: the gap is the 1s minimum.
	if n := reloadsAfter(900 * time.Millisecond); n != 1 {
		t.Fatalf("%d reloads within the gap, want 1", n)
	}
	if n := reloadsAfter(100 * time.Millisecond); n != 2 {
		t.Fatalf("%d reloads after the gap, want 2", n)
	}
	// A reload that takes 300ms stretches the gap to 3s.
	idx.delay = 300 * time.Millisecond
	if n := reloadsAfter(time.Second); n != 3 {
		t.Fatalf("%d reloads, want 3", n)
	}
	if n := reloadsAfter(2600 * time.Millisecond); n != 3 { // 2.9s after it started
		t.Fatalf("%d reloads 2.9s after a 300ms reload began, want 3 (the gap is 3s)", n)
	}
	if n := reloadsAfter(200 * time.Millisecond); n != 4 {
		t.Fatalf("%d reloads 3.1s after a 300ms reload began, want 4", n)
	}
}
