package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/docent-hq/docent/mcp/mcptest"
)

// docBlocks returns the fenced blocks of one language in a section of a
// docs/ page (from its "## " heading to the next).
func docBlocks(t *testing.T, page, section, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	at := strings.Index(text, "\n"+section+"\n")
	if at < 0 {
		t.Fatalf("docs/%s has no %q", page, section)
	}
	text = text[at+1:]
	if next := strings.Index(text, "\n## "); next >= 0 {
		text = text[:next]
	}
	var out []string
	for {
		start := strings.Index(text, "```"+lang+"\n")
		if start < 0 {
			return out
		}
		text = text[start+len("```"+lang+"\n"):]
		end := strings.Index(text, "```")
		if end < 0 {
			t.Fatalf("unterminated %s block in docs/%s", lang, page)
		}
		out = append(out, text[:end])
		text = text[end:]
	}
}

// mcpEntry is a client's entry for docent in its MCP config.
type mcpEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// TestDocsMCPClientConfig runs every client snippet of docs/mcp.md: each
// stdio entry's command line is run as `docent mcp` (with a real config
// for /path/to/docent.yaml) and listed by the SDK's client; each HTTP
// entry's URL path and Authorization header, its variable filled with a
// token made on the console, reach /mcp of a docent serve that requires
// tokens.
func TestDocsMCPClientConfig(t *testing.T) {
	const section = "## Client configuration"
	var stdio [][]string
	var remote []mcpEntry
	inputs := map[string]bool{}
	for _, block := range docBlocks(t, "mcp.md", section, "json") {
		var cfg struct {
			MCPServers map[string]mcpEntry `json:"mcpServers"`
			Servers    map[string]mcpEntry `json:"servers"`
			Inputs     []struct {
				ID string `json:"id"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal([]byte(block), &cfg); err != nil {
			t.Fatalf("snippet is not JSON: %v\n%s", err, block)
		}
		for _, in := range cfg.Inputs {
			inputs[in.ID] = true
		}
		entries := cfg.MCPServers
		if entries == nil {
			entries = cfg.Servers
		}
		e, ok := entries["docent"]
		if !ok || len(entries) != 1 {
			t.Fatalf("snippet has no docent entry:\n%s", block)
		}
		switch {
		case e.Command != "":
			if e.Command != "docent" || e.URL != "" {
				t.Errorf("stdio entry %+v", e)
			}
			stdio = append(stdio, e.Args)
		case e.URL != "":
			remote = append(remote, e)
		default:
			t.Errorf("entry with neither command nor url: %+v", e)
		}
	}
	for _, line := range docBlocks(t, "mcp.md", section, "sh") {
		line = strings.TrimSpace(line)
		if cmd, ok := strings.CutPrefix(line, "claude mcp add docent -- docent "); ok {
			stdio = append(stdio, strings.Fields(cmd))
			continue
		}
		m := regexp.MustCompile(`^claude mcp add --transport http docent (\S+) --header "Authorization: (Bearer \$DOCENT_TOKEN)"$`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unrecognised shell snippet %q", line)
		}
		remote = append(remote, mcpEntry{URL: m[1], Headers: map[string]string{"Authorization": m[2]}})
	}
	if len(stdio) != 4 || len(remote) != 4 {
		t.Fatalf("%d stdio and %d HTTP snippets, want 4 each (Claude Desktop, Claude Code, Cursor, VS Code)", len(stdio), len(remote))
	}

	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	copyHandbook(t, data)
	hash, err := bcrypt.GenerateFromPassword([]byte("a long admin password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConsoleConfig(t, dir, "data_dir: "+data+"\nauth:\n  api_tokens: required\n  admins:\n    - user: ops@example.com\n"+
		"      password_hash: \""+string(hash)+"\"\n")

	for _, args := range stdio {
		t.Run("stdio "+strings.Join(args, " "), func(t *testing.T) {
			for i, a := range args {
				if a == "/path/to/docent.yaml" {
					args[i] = cfg
				}
			}
			global := flag.NewFlagSet("docent", flag.ContinueOnError) // as run parses them
			configPath := global.String("config", "", "")
			if err := global.Parse(args); err != nil || global.NArg() == 0 || global.Arg(0) != "mcp" {
				t.Fatalf("args %q are not `docent [--config FILE] mcp`: %v", args, err)
			}
			m := &Main{ConfigPath: *configPath, Stderr: io.Discard, Getenv: envOf(nil)}
			cs, _ := mustMCPStdio(t, m, global.Args()[1:]...)
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) != 3 {
				t.Fatalf("tools/list = %v, %v", tools, err)
			}
		})
	}

	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)}
	base, stop := MustServeMain(t, m)
	defer stop()
	waitReady(t, base)
	c := newConsoleClient(t, base)
	c.login("ops@example.com", "a long admin password")
	_, doc := c.post("/tokens", url.Values{"csrf": {c.csrf()}, "name": {"editor"}})
	token := strings.TrimSpace(doc.Find(`[data-testid=new-token]`).Text())
	variable := regexp.MustCompile(`\$\{(?:env:|input:)?([A-Za-z_-]+)\}|\$([A-Z_]+)`)
	for _, e := range remote {
		t.Run("http "+e.URL, func(t *testing.T) {
			u, err := url.Parse(e.URL)
			if err != nil || u.Path != "/mcp" || u.Scheme != "https" {
				t.Fatalf("URL %q: want https://…/mcp", e.URL)
			}
			if e.Type != "" && e.Type != "http" {
				t.Errorf("type %q, want http", e.Type)
			}
			authz := e.Headers["Authorization"]
			vars := variable.FindStringSubmatch(authz)
			if !strings.HasPrefix(authz, "Bearer ") || vars == nil {
				t.Fatalf("Authorization %q: want Bearer and a variable for the token", authz)
			}
			if strings.Contains(authz, "${input:") && !inputs[vars[1]] {
				t.Errorf("%q names an input no snippet declares", authz)
			}
			sent := strings.TrimPrefix(variable.ReplaceAllString(authz, token), "Bearer ")
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
			cs := mcptest.MustConnectHTTP(t, "http://127.0.0.1:"+port+u.Path, sent)
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) != 3 {
				t.Fatalf("tools/list = %v, %v", tools, err)
			}
		})
	}
	// The same endpoint without the header is refused: the snippets' header is what lets them in.
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without a token = %d, want 401", resp.StatusCode)
	}
}
