package config

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// env returns a getenv over a fixed map.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// mustWrite writes content to name in a temp dir and returns the path.
func mustWrite(tb testing.TB, name, content string, dirs ...string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	// Folders the config names, made beside it (a dir source's path must
	// exist).
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(filepath.Dir(p), d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

func TestDefault(t *testing.T) {
	c := Default()
	if err := c.Validate(Builtin()); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"data_dir", c.DataDir, "./data"},
		{"server.addr", c.Server.Addr, "localhost:8080"},
		{"server.public_url", c.Server.PublicURL, "http://localhost:8080"},
		{"server.shutdown_timeout", c.Server.ShutdownTimeout, 10 * time.Second},
		{"sources", c.Sources, []SourceConfig{{Name: "handbook", Type: SourceBundled}}},
		{"index.backend", c.Index.Backend, "local"},
		{"index.fusion", c.Index.Fusion, "score"},
		{"index.rrf_k", c.Index.RRFK, 60},
		{"index.keyword_weight", c.Index.KeywordWeight, 1.0},
		{"index.vector_weight", c.Index.VectorWeight, 0.4},
		{"index.candidates", c.Index.Candidates, 100},
		{"index.typesense.collection", c.Index.Typesense.Collection, "docent_chunks"},
		{"llm.gemini.model", c.LLM.Gemini.Model, "gemini-flash-latest"},
		{"llm.gemini.embedding_model", c.LLM.Gemini.EmbeddingModel, "gemini-embedding-001"},
		{"llm.openai.base_url", c.LLM.OpenAI.BaseURL, "https://api.openai.com/v1"},
		{"embedder.provider", c.Embedder.Provider, "offline"},
		{"answerer.provider", c.Answerer.Provider, "offline"},
		{"answerer.max_sources", c.Answerer.MaxSources, 0},
		{"chunker.target_tokens", c.Chunker.TargetTokens, 512},
		{"chunker.overlap_tokens", c.Chunker.OverlapTokens, 40},
		{"sync.schedule", c.Sync.Schedule, "@every 1h"},
		{"sync.max_doc_bytes", c.Sync.MaxDocBytes, int64(1 << 20)},
		{"sync.max_chunks_per_doc", c.Sync.MaxChunksPerDoc, 2000},
		{"sync.workers", c.Sync.Workers, 2},
		{"auth.doc_link_ttl", c.Auth.DocLinkTTL, 24 * time.Hour},
		{"log.level", c.Log.Level, ""},
		{"log.format", c.Log.Format, "text"},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("got %#v, want %#v", tc.got, tc.want)
			}
		})
	}

	t.Run("Load with no path is the defaults", func(t *testing.T) {
		got, err := Load("", env(nil), Builtin())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, Default()) {
			t.Errorf("Load(\"\") = %+v, want Default()", got)
		}
	})
	t.Run("DOCENT_DATA overrides data_dir", func(t *testing.T) {
		got, err := Load("", env(map[string]string{"DOCENT_DATA": "/srv/docent"}), Builtin())
		if err != nil {
			t.Fatal(err)
		}
		if got.DataDir != "/srv/docent" {
			t.Errorf("DataDir = %q", got.DataDir)
		}
	})
	t.Run("empty file is the defaults", func(t *testing.T) {
		got, err := Load(mustWrite(t, "docent.yaml", "# nothing here\n"), env(nil), Builtin())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, Default()) {
			t.Errorf("got %+v, want Default()", got)
		}
	})
}

// chdirWith moves the test into a temp dir holding the folders named
// (relative dir source paths resolve against the working directory).
func chdirWith(t *testing.T, folders ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range folders {
		if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
}

func TestLoadFullFile(t *testing.T) {
	full, err := filepath.Abs("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	chdirWith(t, "notes")
	c, err := Load(full, env(map[string]string{
		"GIT_TOKEN":        "ghp_secret1",
		"TYPESENSE_KEY":    "ts'key",
		"GEMINI_API_KEY":   `gem"ini\key`,
		"CONFLUENCE_TOKEN": "atl-token", "CONFLUENCE_PAT": "dc-pat", "NOTION_TOKEN": "secret_notion",
		"SLACK_BOT_TOKEN":      "xoxb-1-secret",
		"SLACK_SIGNING_SECRET": "s1gn1ng",
		"DISCORD_TOKEN":        "MTE.discord.secret",
	}), Builtin())
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DataDir: "/var/lib/docent",
		Server:  ServerConfig{Addr: ":9090", PublicURL: "https://docent.example.com", ShutdownTimeout: 30 * time.Second},
		Sources: []SourceConfig{
			{Name: "handbook", Type: "bundled"},
			{Name: "eng-docs", Type: "git", Schedule: "*/15 * * * *", Git: &GitConfig{
				URL: "https://github.com/example/docs.git", Branch: "main", Subdir: "docs",
				Include: DefaultInclude, Exclude: []string{"drafts/**"},
				WebURL: "https://github.com/example/docs/blob/{branch}/{path}",
				Token:  "ghp_secret1", Username: "x-access-token",
			}},
			{Name: "local_notes", Type: "dir", StaleAfterDays: 90, Dir: &DirConfig{
				// Relative to the config file's folder.
				Path: filepath.Join(filepath.Dir(full), "notes"), Include: []string{"**/*.md"}, WebURL: "https://notes.example.com/{path}",
			}},
			{Name: "wiki", Type: "confluence", Schedule: "@every 15m", Confluence: &ConfluenceConfig{
				BaseURL: "https://acme.atlassian.net/wiki", Flavor: "cloud", Email: "docs-bot@acme.example", Token: "atl-token",
				Spaces: []string{"ENG", "HR"}, ExcludeLabels: []string{"draft", "archived"}, Roots: []string{"123456"},
				Overlap: 20 * time.Minute,
			}},
			{Name: "dc-wiki", Type: "confluence", Confluence: &ConfluenceConfig{
				BaseURL: "https://confluence.acme.example/confluence", Flavor: "datacenter", Token: "dc-pat", Spaces: []string{"OPS"},
			}},
			{Name: "notes", Type: "notion", Schedule: "0 * * * *", Notion: &NotionConfig{
				Token: "secret_notion", APIURL: "https://api.notion.com",
				Roots: []string{"https://www.notion.so/acme/Engineering-0123456789abcdef0123456789abcdef"},
			}},
		},
		Index: IndexConfig{
			Backend: "typesense", Fusion: "rrf", RRFK: 30, KeywordWeight: 0.7, VectorWeight: 0.5, Candidates: 50,
			Typesense: TypesenseConfig{Nodes: []string{"http://ts-1:8108", "http://ts-2:8108", "http://ts-3:8108"},
				NearestNode: "http://ts-1:8108", APIKey: "ts'key", Collection: "docent_chunks", Timeout: 3 * time.Second, Retries: 2},
		},
		LLM: LLMConfig{
			Gemini: GeminiConfig{APIKey: `gem"ini\key`, Model: "gemini-2.5-flash", EmbeddingModel: "gemini-embedding-001",
				Dimensions: 1536, Temperature: 0.2, MaxOutputTokens: 1024, Timeout: 20 * time.Second},
			OpenAI: OpenAIConfig{BaseURL: "http://ollama:11434/v1", EmbeddingModel: "nomic-embed-text", Dimensions: 768,
				Temperature: 0.2, MaxOutputTokens: 1024, Timeout: 30 * time.Second},
		},
		Embedder: EmbedderConfig{Provider: "openai"},
		Answerer: AnswererConfig{Provider: "gemini", MaxSources: 5, MinCosine: 0.25, Synonyms: filepath.Join(filepath.Dir(full), "synonyms.txt"),
			Decision: &DecisionConfig{Bias: -3.5, Weights: map[string]float64{"coverage": 4, "missing": -2}, AnswerAt: 0.5, NotFoundAt: 0.1}},
		Chunker: ChunkerConfig{TargetTokens: 400, OverlapTokens: 50},
		Sync:    SyncConfig{Schedule: "@every 30m", MaxDocBytes: 2 << 20, MaxChunksPerDoc: 2000, Workers: 4},
		Log:     LogConfig{Level: "debug", Format: "json"},
		Slack: SlackConfig{Mode: "http", APIURL: "http://slack-proxy.internal:8080/api/", BotToken: "xoxb-1-secret",
			SigningSecret: "s1gn1ng", EscalationChannel: "C0HELPDESK", UserGroup: "S0ITTEAM", GroupName: "the IT team",
			FollowUps: "replies", History: 5, UserRate: 6, ChannelRate: 30, Reaction: "hourglass",
			Default: SlackChannelConfig{Sources: []string{"handbook"}},
			Channels: []SlackChannelConfig{
				{ID: "C0PUBLIC", Sources: []string{"local_notes"}, Labels: []string{"public"}, AutoAnswer: true},
				{ID: "C0ENG"},
			},
			// A file's prompts replace the default ones; unset keys keep their defaults.
			Assistant: SlackAssistantConfig{Status: "Looking…", PromptsTitle: "Ask me about the docs",
				Prompts: []SlackPrompt{{Title: "VPN", Message: "How do I reset my VPN token?"}}},
		},
		Discord: DiscordConfig{Token: "MTE.discord.secret", APIURL: "http://discord-proxy.internal:8080/api/v10",
			ApplicationID: "1100000000000000001", PublicKey: strings.Repeat("ab", 32), EscalationChannel: "1100000000000000002",
			EscalationRole: "1100000000000000003", GroupName: "the docs team", Command: "docs", FollowUps: "replies",
			History: 4, UserRate: 6, ChannelRate: 30,
			Default: DiscordChannelConfig{Sources: []string{"handbook"}},
			Channels: []DiscordChannelConfig{
				{ID: "1100000000000000004", Sources: []string{"local_notes"}, Labels: []string{"public"}, AutoAnswer: true, Reply: "inline"},
				{ID: "1100000000000000005", AutoAnswer: true},
			},
		},
		Auth: AuthConfig{
			Admins: []AdminConfig{{User: "alice@example.com", PasswordHash: "$2a$04$8jC2u6H7b5vYH0C6Zl5Gk.9P3m8m5yqTcXfXyAqK5lY0rZbB7U6vS"}},
			TrustedHeader: TrustedHeaderConfig{Header: "X-Forwarded-Email", Allowed: []string{"bob@example.com"},
				Proxies: []string{"10.0.0.0/8", "192.0.2.7"}},
			SessionIdle: 30 * time.Minute, APITokens: TokensRequired, APIRatePerMinute: 120, DocLinkTTL: 24 * time.Hour,
		},
		Console: ConsoleConfig{StaleAfterDays: 180},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got\n%#v\nwant\n%#v", c, want)
		if !reflect.DeepEqual(c.Answerer, want.Answerer) {
			t.Errorf("answerer %+v %+v, want %+v %+v", c.Answerer, *c.Answerer.Decision, want.Answerer, *want.Answerer.Decision)
		}
		for i := range c.Sources {
			if !reflect.DeepEqual(c.Sources[i], want.Sources[i]) {
				t.Errorf("source %d: %+v %+v %+v, want %+v %+v %+v", i, c.Sources[i], c.Sources[i].Dir, c.Sources[i].Git, want.Sources[i], want.Sources[i].Dir, want.Sources[i].Git)
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		want []string // substrings of the error
	}{
		{
			name: "malformed YAML reports its line",
			yaml: "data_dir: ./d\nserver:\n  addr: \":1\"\n  public_url: [http://x\nlog:\n  level: info\n",
			want: []string{"config: docent.yaml:"},
		},
		{
			name: "tab indentation reports its line",
			yaml: "data_dir: ./d\nserver:\n\taddr: x\n",
			want: []string{"config: docent.yaml:3: "},
		},
		{
			name: "unknown top-level key",
			yaml: "data_dir: ./d\n\nfusion: rrf\n",
			want: []string{`config: docent.yaml:3: fusion: unknown key "fusion" (known here: answerer, auth, chunker, console, data_dir, discord, embedder, index, llm, log, server, slack, sources, sync)`},
		},
		{
			name: "unknown key nested in a source",
			yaml: "sources:\n  - name: docs\n    type: dir\n    dir:\n      path: ./docs\n      exlude: [x]\n",
			want: []string{`config: docent.yaml:6: sources[0].dir.exlude: unknown key "exlude" (did you mean "exclude"?)`},
		},
		{
			name: "unknown key in a confluence section",
			yaml: "sources:\n  - name: wiki\n    type: confluence\n    confluence:\n      base_url: https://acme.atlassian.net/wiki\n      space: [ENG]\n",
			want: []string{`config: docent.yaml:6: sources[0].confluence.space: unknown key "space" (did you mean "spaces"?)`},
		},
		{
			name: "confluence rule errors carry the line",
			yaml: "sources:\n  - name: wiki\n    type: confluence\n    confluence:\n      base_url: https://acme.atlassian.net/wiki\n      flavor: server\n      token: t\n      spaces: [ENG]\n",
			want: []string{`config: docent.yaml:6: sources[0].confluence.flavor: unknown flavor "server"`},
		},
		{
			name: "notion overlap must be a duration",
			yaml: "sources:\n  - name: n\n    type: notion\n    notion:\n      token: t\n      overlap: 10\n",
			want: []string{`config: docent.yaml:6: sources[0].notion.overlap: invalid duration`},
		},
		{
			name: "wrong type names the key",
			yaml: "sync:\n  workers: many\n",
			want: []string{`config: docent.yaml:2: sync.workers: cannot use "many" here: want an integer`},
		},
		{
			name: "bad duration names the key",
			yaml: "server:\n  shutdown_timeout: soon\n",
			want: []string{`config: docent.yaml:2: server.shutdown_timeout: invalid duration "soon"`},
		},
		{
			name: "unset variable names it and its line",
			yaml: "data_dir: ./d\nanswerer:\n  provider: gemini\n  api_key: ${GEMINI_API_KEY}\n",
			want: []string{"config: docent.yaml:4: ", "GEMINI_API_KEY is not set"},
		},
		{
			name: "unterminated placeholder",
			yaml: "data_dir: ${DATA\n",
			want: []string{"config: docent.yaml:1: ", "unterminated ${"},
		},
		{
			name: "newline in an unquoted value",
			yaml: "data_dir: ${MULTI}\n",
			env:  map[string]string{"MULTI": "a\nb: c"},
			want: []string{"config: docent.yaml:1: ", "MULTI contains a newline"},
		},
		{
			name: "validation error points at the key's line",
			yaml: "data_dir: ./d\nsources:\n  - name: a\n    type: bundled\n  - name: a\n    type: bundled\n",
			want: []string{"config: docent.yaml:5: sources[1].name: ", `"a" is already used by sources[0]`},
		},
		{
			name: "validation error on a missing key points at its parent",
			yaml: "sources:\n  - name: repo\n    type: git\n    git:\n      branch: main\n",
			want: []string{"config: docent.yaml:4: sources[0].git: set exactly one of url"},
		},
		{
			name: "a list where a string goes names the full path",
			yaml: "sources:\n  - name: a\n    type: bundled\n  - name: b\n    type: dir\n    dir:\n      path: [x, y]\n",
			want: []string{`config: docent.yaml:7: sources[1].dir.path: cannot use a list here: want a string`},
		},
		{
			name: "a mapping where a list goes",
			yaml: "sources:\n  name: a\n",
			want: []string{`config: docent.yaml:2: sources: cannot use a mapping here: want a list`},
		},
		{
			name: "a trusted header beyond localhost without proxies names the key and line",
			yaml: "server:\n  addr: \":8080\"\nauth:\n  admins: []\n  trusted_header:\n    header: X-Forwarded-Email\n    allowed: [ops@example.com]\n",
			want: []string{"config: docent.yaml:5: auth.trusted_header.proxies: list the addresses or CIDRs of the proxies that set X-Forwarded-Email"},
		},
		{
			name: "sources: [] is no sources",
			yaml: "sources: []\n",
			want: []string{"sources: no sources configured"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "docent.yaml")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			_, err := Load("docent.yaml", env(tc.env), Builtin())
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not a *config.Error", err)
			}
		})
	}

	t.Run("every unknown key and bad value at once, with paths and lines", func(t *testing.T) {
		t.Chdir(filepath.Dir(mustWrite(t, "docent.yaml", strings.Join([]string{
			"server:",
			"  public_ulr: https://x",
			"  shutdown_timeout: later",
			"sources:",
			"  - name: a",
			"    type: git",
			"    git:",
			"      url: https://x/y.git",
			"      brnch: main",
			"index:",
			"  candidates: lots",
			"colour: blue",
			"",
		}, "\n"))))
		_, err := Load("docent.yaml", env(nil), Builtin())
		if err == nil {
			t.Fatal("Load succeeded")
		}
		want := []string{
			`config: docent.yaml:2: server.public_ulr: unknown key "public_ulr" (did you mean "public_url"?)`,
			`config: docent.yaml:3: server.shutdown_timeout: invalid duration "later"`,
			`config: docent.yaml:9: sources[0].git.brnch: unknown key "brnch" (did you mean "branch"?)`,
			`config: docent.yaml:11: index.candidates: cannot use "lots" here: want an integer`,
			`config: docent.yaml:12: colour: unknown key "colour"`,
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(want) {
			t.Fatalf("got %d errors, want %d:\n%s", len(lines), len(want), err)
		}
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("error %d = %q, want it to start with %q", i, lines[i], w)
			}
		}
	})

	t.Run("a provider or source type this build lacks names its key and line", func(t *testing.T) {
		t.Chdir(filepath.Dir(mustWrite(t, "docent.yaml", "sources:\n  - name: wiki\n    type: confluence\nembedder:\n  provider: gemini\nllm:\n  gemini:\n    api_key: k\n")))
		impl := Implementations{Sources: []string{"bundled", "dir", "git"}, Backends: []string{"local"},
			Embedders: []string{"offline"}, Answerers: []string{"offline"}}
		_, err := Load("docent.yaml", env(nil), impl)
		for _, w := range []string{
			`config: docent.yaml:3: sources[0].type: unknown source type "confluence" (this build has: bundled, dir, git)`,
			`config: docent.yaml:5: embedder.provider: unknown provider "gemini" (this build has: offline)`,
		} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("error %v, want it to contain %q", err, w)
			}
		}
	})

	t.Run("malformed YAML line is exact", func(t *testing.T) {
		p := mustWrite(t, "docent.yaml", "log:\n  level: info\n  format: [text\n")
		_, err := Load(p, env(nil), Builtin())
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != 3 {
			t.Fatalf("err = %v, want a *Error on line 3", err)
		}
	})
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "alpha", "Q": `it's "q"`, "EMPTY": ""}
	tests := []struct {
		name, in, want string
	}{
		{"plain", "k: ${A}\n", "k: alpha\n"},
		{"inside a plain scalar", "k: x-${A}-y\n", "k: x-alpha-y\n"},
		{"double quoted escapes", `k: "${Q}"`, `k: "it's \"q\""`},
		{"single quoted escapes", `k: '${Q}'`, `k: 'it''s "q"'`},
		{"apostrophe inside a plain scalar is not a quote", "k: don't ${A} # ${UNSET}\n", "k: don't alpha # ${UNSET}\n"},
		{"empty value is allowed", "k: ${EMPTY}\n", "k: \n"},
		{"$$ escapes a dollar", "k: $${A} and $$5\n", "k: ${A} and $5\n"},
		{"bare $ is literal", "k: $A costs $5\n", "k: $A costs $5\n"},
		{"full-line comment is not expanded", "# token: ${UNSET}\nk: ${A}\n", "# token: ${UNSET}\nk: alpha\n"},
		{"trailing comment is not expanded", "k: ${A} # see ${UNSET}\n", "k: alpha # see ${UNSET}\n"},
		{"hash without a space is not a comment", "k: http://x/#${A}\n", "k: http://x/#alpha\n"},
		{"hash in quotes is not a comment", `k: "a # ${A}"`, `k: "a # alpha"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := expand([]byte(tc.in), env(vars))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}

	errTests := []struct {
		name, in, want string
		line           int
	}{
		{"unset", "a: 1\nb: 2\nc: ${NOPE}\n", "environment variable NOPE is not set", 3},
		{"bad name", "a: ${1X}\n", `invalid variable name "1X"`, 1},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := expand([]byte(tc.in), env(vars))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if ce.Line != tc.line || !strings.Contains(ce.Msg, tc.want) {
				t.Errorf("got line %d msg %q, want line %d containing %q", ce.Line, ce.Msg, tc.line, tc.want)
			}
		})
	}
}

func TestRedaction(t *testing.T) {
	secrets := []string{"ghp_secret1", "ts-admin-key", "gemini-key-123", "openai-key-456", "hunter2",
		"ghp_userToken77", "sk-user-88", "atl-confluence-tok", "secret_notion_tok",
		"$2a$04$8jC2u6H7b5vYH0C6Zl5Gk.9P3m8m5yqTcXfXyAqK5lY0rZbB7U6vS"}
	c := Default()
	c.Auth.Admins = []AdminConfig{{User: "alice", PasswordHash: secrets[len(secrets)-1]}}
	c.Sources = append(c.Sources, SourceConfig{Name: "repo", Type: "git", Git: &GitConfig{
		URL: "https://bot:hunter2@git.example.com/docs.git", Token: "ghp_secret1",
	}}, SourceConfig{Name: "gh", Type: "git", Git: &GitConfig{
		// A token given as the URL's user name.
		URL: "https://ghp_userToken77@github.com/acme/handbook.git",
	}}, SourceConfig{Name: "wiki", Type: "confluence", Confluence: &ConfluenceConfig{
		BaseURL: "https://acme.atlassian.net/wiki", Flavor: "cloud", Email: "bot@acme.example",
		Token: "atl-confluence-tok", Spaces: []string{"ENG"},
	}}, SourceConfig{Name: "notes", Type: "notion", Notion: &NotionConfig{
		Token: "secret_notion_tok", APIURL: DefaultNotionAPIURL,
	}})
	c.Index.Backend = BackendTypesense
	c.Index.Typesense.Nodes = []string{"http://ts:8108"}
	c.Index.Typesense.APIKey = "ts-admin-key"
	c.Embedder = EmbedderConfig{Provider: "gemini"}
	c.LLM.Gemini.APIKey = "gemini-key-123"
	c.Answerer.Provider = "openai"
	c.LLM.OpenAI.APIKey = "openai-key-456"
	c.LLM.OpenAI.Model = "gpt-4o-mini"
	c.LLM.OpenAI.BaseURL = "https://sk-user-88@llm.example.com/v1"
	if err := c.Validate(Builtin()); err != nil {
		t.Fatal(err)
	}
	_ = c.Redacted()
	if c.Auth.Admins[0].PasswordHash != secrets[len(secrets)-1] {
		t.Fatal("Redacted changed the config it was called on")
	}

	var textLog, jsonLog bytes.Buffer
	slog.New(slog.NewTextHandler(&textLog, nil)).Info("loaded", "config", c)
	slog.New(slog.NewJSONHandler(&jsonLog, nil)).Info("loaded", slog.Any("config", c))

	outputs := map[string]string{
		"Redacted":         c.Redacted(),
		"String":           c.String(),
		"fmt %v":           fmt.Sprintf("%v", c),
		"fmt %+v":          fmt.Sprintf("%+v", c),
		"fmt %s pointer":   fmt.Sprintf("%s", &c),
		"slog text":        textLog.String(),
		"slog json":        jsonLog.String(),
		"error formatting": fmt.Errorf("bad: %v", c).Error(),
	}
	for name, out := range outputs {
		t.Run(name, func(t *testing.T) {
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("output contains secret %q:\n%s", s, out)
				}
			}
			if !strings.Contains(out, "REDACTED") {
				t.Errorf("output has no REDACTED marker:\n%s", out)
			}
		})
	}

	t.Run("Secrets lists every secret value", func(t *testing.T) {
		got := c.Secrets()
		for _, s := range secrets {
			if !slices.Contains(got, s) {
				t.Errorf("Secrets() = %q, missing %q", got, s)
			}
		}
	})
	t.Run("original is untouched", func(t *testing.T) {
		if c.Sources[3].Confluence.Token != "atl-confluence-tok" || c.Sources[4].Notion.Token != "secret_notion_tok" {
			t.Errorf("redaction modified the wiki sections")
		}
		if c.Sources[1].Git.Token != "ghp_secret1" || c.Index.Typesense.APIKey != "ts-admin-key" ||
			c.Sources[1].Git.URL != "https://bot:hunter2@git.example.com/docs.git" {
			t.Errorf("redaction modified the config: %#v", c.Sources[1].Git)
		}
	})
	t.Run("empty secrets stay empty", func(t *testing.T) {
		out := Default().Redacted()
		if strings.Contains(out, "REDACTED") {
			t.Errorf("defaults have no secrets, got:\n%s", out)
		}
		if !strings.Contains(out, "data_dir: ./data") {
			t.Errorf("Redacted is not the YAML config:\n%s", out)
		}
	})
	t.Run("redacted YAML loads back", func(t *testing.T) {
		p := mustWrite(t, "docent.yaml", c.Redacted())
		got, err := Load(p, env(nil), Builtin())
		if err != nil {
			t.Fatal(err)
		}
		if got.Index.Typesense.APIKey != "REDACTED" || got.Index.Typesense.Nodes[0] != "http://ts:8108" {
			t.Errorf("round trip = %+v", got.Index)
		}
	})
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	write := func(name, dataDir string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("data_dir: "+dataDir+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagFile := write("flag.yaml", "from-flag")
	envFile := write("env.yaml", "from-env")
	t.Chdir(dir)

	tests := []struct {
		name     string
		flag     string
		env      map[string]string
		cwdFile  bool
		wantPath string
		wantData string
		wantErr  string
	}{
		// A relative data_dir is relative to the file's folder.
		{name: "flag beats everything", flag: flagFile, env: map[string]string{"DOCENT_CONFIG": envFile}, cwdFile: true, wantPath: flagFile, wantData: filepath.Join(dir, "from-flag")},
		{name: "DOCENT_CONFIG beats ./docent.yaml", env: map[string]string{"DOCENT_CONFIG": envFile}, cwdFile: true, wantPath: envFile, wantData: filepath.Join(dir, "from-env")},
		{name: "./docent.yaml when present", cwdFile: true, wantPath: "docent.yaml", wantData: "from-cwd"},
		{name: "defaults when nothing", wantPath: "", wantData: "./data"},
		{name: "DOCENT_DATA beats the file", flag: flagFile, env: map[string]string{"DOCENT_DATA": "/d"}, wantPath: flagFile, wantData: "/d"},
		{name: "missing flag file is an error", flag: filepath.Join(dir, "nope.yaml"), cwdFile: true, wantErr: "nope.yaml"},
		{name: "missing DOCENT_CONFIG file is an error", env: map[string]string{"DOCENT_CONFIG": "gone.yaml"}, cwdFile: true, wantErr: "gone.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(filepath.Join(dir, "docent.yaml"))
			if tc.cwdFile {
				write("docent.yaml", "from-cwd")
			}
			cfg, path, err := Resolve(tc.flag, env(tc.env), Builtin())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if path != tc.wantPath || cfg.DataDir != tc.wantData {
				t.Errorf("got path %q data_dir %q, want %q %q", path, cfg.DataDir, tc.wantPath, tc.wantData)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	git := func(g GitConfig) []SourceConfig { return []SourceConfig{{Name: "repo", Type: "git", Git: &g}} }
	// confluence and notion fill in a valid section's fields that are
	// zero; "-" empties one.
	or := func(v, def string) string {
		switch v {
		case "":
			return def
		case "-":
			return ""
		}
		return v
	}
	confluence := func(cf ConfluenceConfig) []SourceConfig {
		cf.BaseURL, cf.Flavor = or(cf.BaseURL, "https://acme.atlassian.net/wiki"), or(cf.Flavor, FlavorCloud)
		cf.Email, cf.Token = or(cf.Email, "bot@acme.example"), or(cf.Token, "t")
		if cf.Spaces == nil {
			cf.Spaces = []string{"ENG"}
		}
		return []SourceConfig{{Name: "wiki", Type: "confluence", Confluence: &cf}}
	}
	notion := func(n NotionConfig) []SourceConfig {
		n.Token, n.APIURL = or(n.Token, "secret_x"), or(n.APIURL, DefaultNotionAPIURL)
		return []SourceConfig{{Name: "notes", Type: "notion", Notion: &n}}
	}
	runValidateCases(t, []validateCase{
		{"defaults are valid", func(*Config) {}, "", ""},
		{"empty source name", func(c *Config) { c.Sources[0].Name = "" }, "sources[0].name", "must not be empty"},
		{"bad source name", func(c *Config) { c.Sources[0].Name = "Eng Docs" }, "sources[0].name", "a-z, 0-9"},
		{"duplicate source name", func(c *Config) { c.Sources = append(c.Sources, c.Sources[0]) }, "sources[1].name", "already used"},
		{"unknown source type", func(c *Config) { c.Sources[0].Type = "svn" }, "sources[0].type", `unknown source type "svn"`},
		{"missing source type", func(c *Config) { c.Sources[0].Type = "" }, "sources[0].type", "must be one of bundled, dir, git"},
		{"section of another type", func(c *Config) {
			c.Sources = []SourceConfig{{Name: "r", Type: "git", Git: &GitConfig{Path: "/r"}, Dir: &DirConfig{Path: "/d"}}}
		}, "sources[0].dir", "not allowed for type git"},
		{"git without section", func(c *Config) { c.Sources = []SourceConfig{{Name: "r", Type: "git"}} }, "sources[0].git", "needs a git section"},
		{"git with neither url nor path", func(c *Config) { c.Sources = git(GitConfig{Branch: "main"}) }, "sources[0].git", "exactly one of url"},
		{"git with both url and path", func(c *Config) { c.Sources = git(GitConfig{URL: "https://x/y.git", Path: "/y"}) }, "sources[0].git", "exactly one of url"},
		{"git with url", func(c *Config) { c.Sources = git(GitConfig{URL: "https://x/y.git"}) }, "", ""},
		{"git with path", func(c *Config) { c.Sources = git(GitConfig{Path: "/srv/repo"}) }, "", ""},
		{"dir without path", func(c *Config) { c.Sources = []SourceConfig{{Name: "d", Type: "dir", Dir: &DirConfig{}}} }, "sources[0].dir.path", "must not be empty"},
		{"dir without section", func(c *Config) { c.Sources = []SourceConfig{{Name: "d", Type: "dir"}} }, "sources[0].dir", "needs a dir section"},
		{"confluence cloud", func(c *Config) { c.Sources = confluence(ConfluenceConfig{}) }, "", ""},
		{"confluence datacenter without email", func(c *Config) {
			c.Sources = confluence(ConfluenceConfig{Flavor: FlavorDataCenter, Email: ""})
		}, "", ""},
		{"confluence cloud needs email", func(c *Config) { c.Sources = confluence(ConfluenceConfig{Email: "-"}) }, "sources[0].confluence.email", "required for Confluence Cloud"},
		{"confluence needs token", func(c *Config) { c.Sources = confluence(ConfluenceConfig{Token: "-"}) }, "sources[0].confluence.token", "required"},
		{"confluence needs spaces", func(c *Config) { c.Sources = confluence(ConfluenceConfig{Spaces: []string{}}) }, "sources[0].confluence.spaces", "at least one space"},
		{"confluence bad space key", func(c *Config) {
			c.Sources = confluence(ConfluenceConfig{Spaces: []string{"ENG", "HR, OPS"}})
		}, "sources[0].confluence.spaces[1]", "not a space key"},
		{"confluence unknown flavor", func(c *Config) { c.Sources = confluence(ConfluenceConfig{Flavor: "server"}) }, "sources[0].confluence.flavor", `unknown flavor "server"`},
		{"confluence relative base_url", func(c *Config) { c.Sources = confluence(ConfluenceConfig{BaseURL: "acme.atlassian.net"}) }, "sources[0].confluence.base_url", "absolute http(s) URL"},
		{"confluence root not an ID", func(c *Config) { c.Sources = confluence(ConfluenceConfig{Roots: []string{"Runbooks"}}) }, "sources[0].confluence.roots[0]", "not a page ID"},
		{"confluence negative overlap", func(c *Config) { c.Sources = confluence(ConfluenceConfig{Overlap: -time.Minute}) }, "sources[0].confluence.overlap", ">= 0"},
		{"confluence section without type", func(c *Config) {
			c.Sources = confluence(ConfluenceConfig{})
			c.Sources[0].Type = "git"
			c.Sources[0].Git = &GitConfig{Path: "/r"}
		}, "sources[0].confluence", "not allowed for type git"},
		{"notion", func(c *Config) { c.Sources = notion(NotionConfig{}) }, "", ""},
		{"notion needs token", func(c *Config) { c.Sources = notion(NotionConfig{Token: "-"}) }, "sources[0].notion.token", "required"},
		{"notion bad api_url", func(c *Config) { c.Sources = notion(NotionConfig{APIURL: "api.notion.com"}) }, "sources[0].notion.api_url", "absolute http(s) URL"},
		{"notion empty root", func(c *Config) { c.Sources = notion(NotionConfig{Roots: []string{" "}}) }, "sources[0].notion.roots[0]", "must not be empty"},
		{"notion negative rate", func(c *Config) { c.Sources = notion(NotionConfig{RequestsPerSecond: -1}) }, "sources[0].notion.requests_per_second", ">= 0"},
		{"notion without section", func(c *Config) { c.Sources = []SourceConfig{{Name: "n", Type: "notion"}} }, "sources[0].notion", "needs a notion section"},
		{"bad source schedule", func(c *Config) { c.Sources[0].Schedule = "every hour" }, "sources[0].schedule", "invalid cron spec"},
		{"source schedule off", func(c *Config) { c.Sources[0].Schedule = "off" }, "", ""},
		{"no sources", func(c *Config) { c.Sources = nil }, "sources", "no sources"},
		{"typesense needs nodes", func(c *Config) { c.Index.Backend = "typesense"; c.Index.Typesense.APIKey = "k" }, "index.typesense.nodes", "required"},
		{"typesense needs api_key", func(c *Config) { c.Index.Backend = "typesense"; c.Index.Typesense.Nodes = []string{"http://ts"} }, "index.typesense.api_key", "required"},
		{"typesense node must be a URL", func(c *Config) {
			c.Index.Backend = "typesense"
			c.Index.Typesense.APIKey = "k"
			c.Index.Typesense.Nodes = []string{"http://ts:8108", "ts-2:8108"}
		}, "index.typesense.nodes[1]", "absolute http(s) URL"},
		{"typesense complete", func(c *Config) {
			c.Index.Backend = "typesense"
			c.Index.Typesense.Nodes = []string{"http://ts"}
			c.Index.Typesense.APIKey = "k"
		}, "", ""},
		{"unknown backend", func(c *Config) { c.Index.Backend = "elastic" }, "index.backend", `unknown backend "elastic"`},
		{"unknown fusion", func(c *Config) { c.Index.Fusion = "max" }, "index.fusion", `unknown fusion "max"`},
		{"rrf fusion", func(c *Config) { c.Index.Fusion = "rrf" }, "", ""},
		{"negative keyword weight", func(c *Config) { c.Index.KeywordWeight = -1 }, "index.keyword_weight", ">= 0"},
		{"negative vector weight", func(c *Config) { c.Index.VectorWeight = -0.1 }, "index.vector_weight", ">= 0"},
		{"zero vector weight is allowed", func(c *Config) { c.Index.VectorWeight = 0 }, "", ""},
		{"both weights zero", func(c *Config) { c.Index.VectorWeight, c.Index.KeywordWeight = 0, 0 }, "index", "both be 0"},
		{"zero candidates", func(c *Config) { c.Index.Candidates = 0 }, "index.candidates", "positive"},
		{"zero rrf_k", func(c *Config) { c.Index.RRFK = 0 }, "index.rrf_k", "positive"},
		{"gemini embedder needs key", func(c *Config) { c.Embedder.Provider = "gemini" }, "llm.gemini.api_key", "required when embedder.provider is gemini"},
		{"gemini answerer needs key", func(c *Config) { c.Answerer.Provider = "gemini" }, "llm.gemini.api_key", "required when answerer.provider is gemini"},
		{"gemini with key", func(c *Config) { c.Answerer.Provider = "gemini"; c.LLM.Gemini.APIKey = "k" }, "", ""},
		{"openai answerer needs a model", func(c *Config) { c.Answerer.Provider = "openai" }, "llm.openai.model", "required when answerer.provider is openai"},
		{"openai embedder needs an embedding model", func(c *Config) { c.Embedder.Provider = "openai" }, "llm.openai.embedding_model", "required"},
		{"openai without key (local server)", func(c *Config) {
			c.Embedder.Provider = "openai"
			c.LLM.OpenAI.BaseURL = "http://localhost:11434/v1"
			c.LLM.OpenAI.EmbeddingModel = "nomic-embed-text"
		}, "", ""},
		{"relative base_url", func(c *Config) {
			c.Embedder.Provider = "openai"
			c.LLM.OpenAI.EmbeddingModel = "e"
			c.LLM.OpenAI.BaseURL = "localhost:11434"
		}, "llm.openai.base_url", "absolute http(s) URL"},
		{"unused provider settings are not checked", func(c *Config) { c.LLM.OpenAI.BaseURL = "nonsense" }, "", ""},
		{"unknown provider", func(c *Config) { c.Embedder.Provider = "cohere" }, "embedder.provider", `unknown provider "cohere"`},
		{"negative max_sources", func(c *Config) { c.Answerer.MaxSources = -1 }, "answerer.max_sources", "at least 1"},
		{"min_cosine over 1", func(c *Config) { c.Answerer.MinCosine = 1.5 }, "answerer.min_cosine", "between 0 and 1"},
		{"decision cut points out of order", func(c *Config) {
			c.Answerer.Decision = &DecisionConfig{AnswerAt: 0.3, NotFoundAt: 0.4}
		}, "answerer.decision.not_found_at", "between 0 and answer_at"},
		{"decision answer_at over 1", func(c *Config) {
			c.Answerer.Decision = &DecisionConfig{AnswerAt: 2}
		}, "answerer.decision.answer_at", "between 0 and 1"},
		{"uncited uncertain", func(c *Config) { c.Answerer.Uncited = "uncertain" }, "", ""},
		{"bad uncited", func(c *Config) { c.Answerer.Uncited = "answered" }, "answerer.uncited", `unknown value "answered"`},
		{"rerank off", func(c *Config) { c.Answerer.Rerank = "off" }, "", ""},
		{"bad rerank", func(c *Config) { c.Answerer.Rerank = "cohere" }, "answerer.rerank", "want model or off"},
		{"negative history_turns", func(c *Config) { c.Answerer.HistoryTurns = -1 }, "answerer.history_turns", ">= 0"},
		{"overlap not below target", func(c *Config) { c.Chunker.OverlapTokens = c.Chunker.TargetTokens }, "chunker.overlap_tokens", "smaller than chunker.target_tokens"},
		{"zero target", func(c *Config) { c.Chunker.TargetTokens = 0; c.Chunker.OverlapTokens = 0 }, "chunker.target_tokens", "positive"},
		{"bad sync schedule", func(c *Config) { c.Sync.Schedule = "hourly-ish" }, "sync.schedule", "invalid cron spec"},
		{"dir folder that does not exist", func(c *Config) {
			c.Sources = []SourceConfig{{Name: "notes", Type: SourceDir, Dir: &DirConfig{Path: "/nonexistent/docent-notes"}}}
		}, "sources[0].dir.path", "no folder /nonexistent/docent-notes"},
		{"dir path to a file", func(c *Config) {
			c.Sources = []SourceConfig{{Name: "notes", Type: SourceDir, Dir: &DirConfig{Path: "config_test.go"}}}
		}, "sources[0].dir.path", "is a file, not a folder"},
		{"standard cron spec", func(c *Config) { c.Sync.Schedule = "0 */2 * * *" }, "", ""},
		{"sync off", func(c *Config) { c.Sync.Schedule = "off" }, "", ""},
		{"sync empty", func(c *Config) { c.Sync.Schedule = "" }, "", ""},
		{"zero workers", func(c *Config) { c.Sync.Workers = 0 }, "sync.workers", "at least 1"},
		{"zero max_doc_bytes", func(c *Config) { c.Sync.MaxDocBytes = 0 }, "sync.max_doc_bytes", "positive"},
		{"bad log level", func(c *Config) { c.Log.Level = "loud" }, "log.level", "unknown level"},
		{"bad log format", func(c *Config) { c.Log.Format = "xml" }, "log.format", "unknown format"},
		{"relative public_url", func(c *Config) { c.Server.PublicURL = "docent.local" }, "server.public_url", "absolute URL"},
		{"empty addr", func(c *Config) { c.Server.Addr = "" }, "server.addr", "must not be empty"},
		{"bad auth mode", func(c *Config) { c.Auth.Mode = "open" }, "auth.mode", "want password or none"},
		{"auth none", func(c *Config) { c.Auth.Mode = AuthNone }, "", ""},
		{"bad api_tokens", func(c *Config) { c.Auth.APITokens = "sometimes" }, "auth.api_tokens", "want auto or required"},
		{"admin without user", func(c *Config) {
			c.Auth.Admins = []AdminConfig{{PasswordHash: "$2a$04$8jC2u6H7b5vYH0C6Zl5Gk.9P3m8m5yqTcXfXyAqK5lY0rZbB7U6vS"}}
		}, "auth.admins[0].user", "must not be empty"},
		{"plain password", func(c *Config) { c.Auth.Admins = []AdminConfig{{User: "a", PasswordHash: "hunter2"}} }, "auth.admins[0].password_hash", "docent admin hash-password"},
		{"duplicate admin", func(c *Config) {
			h := "$2a$04$8jC2u6H7b5vYH0C6Zl5Gk.9P3m8m5yqTcXfXyAqK5lY0rZbB7U6vS"
			c.Auth.Admins = []AdminConfig{{User: "a", PasswordHash: h}, {User: "a", PasswordHash: h}}
		}, "auth.admins[1].user", "already used"},
		{"trusted header without emails", func(c *Config) { c.Auth.TrustedHeader.Header = "X-Email" }, "auth.trusted_header.allowed", "list the emails"},
		{"emails without header", func(c *Config) { c.Auth.TrustedHeader.Allowed = []string{"a@b"} }, "auth.trusted_header.header", "must name the header"},
		{"trusted header on localhost without proxies", func(c *Config) {
			c.Auth.TrustedHeader = TrustedHeaderConfig{Header: "X-Email", Allowed: []string{"a@b"}}
		}, "", ""},
		{"trusted header beyond localhost without proxies", func(c *Config) {
			c.Server.Addr = ":8080"
			c.Auth.TrustedHeader = TrustedHeaderConfig{Header: "X-Email", Allowed: []string{"a@b"}}
		}, "auth.trusted_header.proxies", "list the addresses or CIDRs of the proxies that set X-Email"},
		{"trusted header beyond localhost with proxies", func(c *Config) {
			c.Server.Addr = "0.0.0.0:8080"
			c.Auth.TrustedHeader = TrustedHeaderConfig{Header: "X-Email", Allowed: []string{"a@b"}, Proxies: []string{"10.0.0.0/8", "::1", "192.0.2.7"}}
		}, "", ""},
		{"bad proxy", func(c *Config) {
			c.Auth.TrustedHeader = TrustedHeaderConfig{Header: "X-Email", Allowed: []string{"a@b"}, Proxies: []string{"10.0.0.0/8", "proxy.internal"}}
		}, "auth.trusted_header.proxies[1]", `"proxy.internal" is not an address or a CIDR`},
		{"admin user too long", func(c *Config) {
			c.Auth.Admins = []AdminConfig{{User: strings.Repeat("a", 257), PasswordHash: "$2a$04$8jC2u6H7b5vYH0C6Zl5Gk.9P3m8m5yqTcXfXyAqK5lY0rZbB7U6vS"}}
		}, "auth.admins[0].user", "at most 256 bytes"},
		{"zero doc_link_ttl", func(c *Config) { c.Auth.DocLinkTTL = 0 }, "auth.doc_link_ttl", "positive duration"},
		{"zero max_chunks_per_doc", func(c *Config) { c.Sync.MaxChunksPerDoc = 0 }, "sync.max_chunks_per_doc", "at least 1"},
		{"zero session_idle", func(c *Config) { c.Auth.SessionIdle = 0 }, "auth.session_idle", "positive duration"},
		{"zero api rate", func(c *Config) { c.Auth.APIRatePerMinute = 0 }, "auth.api_rate_per_minute", "at least 1"},
		{"zero stale policy", func(c *Config) { c.Console.StaleAfterDays = 0 }, "console.stale_after_days", "positive"},
		{"negative source stale policy", func(c *Config) { c.Sources[0].StaleAfterDays = -1 }, "sources[0].stale_after_days", ">= 0"},
		{"zero shutdown timeout", func(c *Config) { c.Server.ShutdownTimeout = 0 }, "server.shutdown_timeout", "positive duration"},
		{"empty data_dir", func(c *Config) { c.DataDir = "" }, "data_dir", "must not be empty"},
	})

	t.Run("reports every problem", func(t *testing.T) {
		c := Default()
		c.Sync.Workers = 0
		c.Log.Format = "xml"
		err := c.Validate(Builtin())
		if err == nil || !strings.Contains(err.Error(), "sync.workers") || !strings.Contains(err.Error(), "log.format") {
			t.Errorf("Validate() = %v, want both problems", err)
		}
	})
}

// validateCase is a change to the defaults and the error Validate gives.
type validateCase struct {
	name    string
	mutate  func(*Config)
	wantKey string // "" means valid
	wantMsg string
}

// runValidateCases validates the defaults changed by each case.
func runValidateCases(t *testing.T, tests []validateCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.mutate(&c)
			err := c.Validate(Builtin())
			if tc.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error on %s", tc.wantKey)
			}
			want := "config: " + tc.wantKey + ": "
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("Validate() = %q, want %q ... %q", err, want, tc.wantMsg)
			}
		})
	}
}

// TestRelativePaths: the relative paths a config file sets are relative
// to its folder, wherever docent runs; absolute paths, paths from the
// defaults and DOCENT_DATA stay as they are.
func TestRelativePaths(t *testing.T) {
	p := mustWrite(t, "docent.yaml", "data_dir: ./data-docs\nsources:\n  - name: d\n    type: dir\n    dir: {path: ./corpus}\n"+
		"  - name: g\n    type: git\n    git: {path: ../repo}\n  - name: abs\n    type: dir\n    dir: {path: "+os.TempDir()+"}\n", "corpus")
	dir := filepath.Dir(p)
	c, err := Load(p, env(nil), Builtin())
	if err != nil {
		t.Fatal(err)
	}
	got := []string{c.DataDir, c.Sources[0].Dir.Path, c.Sources[1].Git.Path, c.Sources[2].Dir.Path}
	want := []string{filepath.Join(dir, "data-docs"), filepath.Join(dir, "corpus"), filepath.Join(filepath.Dir(dir), "repo"), os.TempDir()}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths %q, want %q", got, want)
	}
	c, err = Load(p, env(map[string]string{"DOCENT_DATA": "rel-data"}), Builtin())
	if err != nil || c.DataDir != "rel-data" {
		t.Errorf("DOCENT_DATA: data_dir %q, %v; want it as given", c.DataDir, err)
	}
	noDataDir := mustWrite(t, "other.yaml", "sources:\n  - name: d\n    type: dir\n    dir: {path: docs}\n", "docs")
	if c, err := Load(noDataDir, env(nil), Builtin()); err != nil || c.DataDir != Default().DataDir {
		t.Errorf("default data_dir became %q, %v", c.DataDir, err)
	}
}

// TestWebURLNeedsPath: a file source's web_url without {path} would link
// every citation to one page: an error naming the key and the line.
func TestWebURLNeedsPath(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"dir", "sources:\n  - name: d\n    type: dir\n    dir:\n      path: ./docs\n      web_url: https://docs.example.com/\n",
			"docent.yaml:6: sources[0].dir.web_url: must contain {path}"},
		{"git", "sources:\n  - name: g\n    type: git\n    git:\n      url: https://github.com/acme/docs.git\n      web_url: https://github.com/acme/docs\n",
			"docent.yaml:6: sources[0].git.web_url: must contain {path}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(mustWrite(t, "docent.yaml", tc.yaml, "docs"), env(nil), Builtin())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Load(mustWrite(t, "docent.yaml", "sources:\n  - name: d\n    type: dir\n    dir: {path: x, web_url: \"https://x/{path}\"}\n", "x"), env(nil), Builtin()); err != nil {
		t.Errorf("a web_url with {path}: %v", err)
	}
}

func TestNormalizeIncludes(t *testing.T) {
	chdirWith(t, "x")
	p := mustWrite(t, "docent.yaml", "sources:\n  - name: d\n    type: dir\n    dir: {path: ./x}\n  - name: g\n    type: git\n    git: {path: ./r, include: ['*.md']}\n", "x")
	c, err := Load(p, env(nil), Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Sources[0].Dir.Include, DefaultInclude) {
		t.Errorf("dir include = %v, want defaults", c.Sources[0].Dir.Include)
	}
	if !reflect.DeepEqual(c.Sources[1].Git.Include, []string{"*.md"}) {
		t.Errorf("git include = %v, want as written", c.Sources[1].Git.Include)
	}
	// The defaults slice must not be shared: editing one config leaves DefaultInclude alone.
	c.Sources[0].Dir.Include[0] = "changed"
	if DefaultInclude[0] != "**/*.md" {
		t.Errorf("DefaultInclude was aliased")
	}
}

// TestDecisionFeatures: a decision weight must name a feature the build
// measures, at its key.
func TestDecisionFeatures(t *testing.T) {
	c := Default()
	c.Answerer.Decision = &DecisionConfig{Weights: map[string]float64{"coverage": 1, "vibes": 2}, AnswerAt: 0.5}
	impl := Builtin()
	impl.Features = []string{"coverage", "cosine"}
	err := c.Validate(impl)
	if err == nil || !strings.Contains(err.Error(), "answerer.decision.weights.vibes") || !strings.Contains(err.Error(), "unknown feature") {
		t.Fatalf("Validate = %v, want the unknown feature named at its key", err)
	}
	c.Answerer.Decision.Weights = map[string]float64{"coverage": 1}
	if err := c.Validate(impl); err != nil {
		t.Errorf("Validate with known features = %v", err)
	}
}

// TestPublicURLFollowsAddr: an unset server.public_url is where the
// server listens, from server.addr or serve's --addr (ServerConfig.Listen);
// a configured one stays.
func TestPublicURLFollowsAddr(t *testing.T) {
	for _, tc := range []struct {
		name, server, listen, want string
	}{
		{"default", "", "", "http://localhost:8080"},
		{"port only", "  addr: \":9090\"\n", "", "http://localhost:9090"},
		{"every interface", "  addr: 0.0.0.0:9091\n", "", "http://localhost:9091"},
		{"every IPv6 interface", "  addr: \"[::]:9092\"\n", "", "http://localhost:9092"},
		{"loopback", "  addr: 127.0.0.1:9093\n", "", "http://127.0.0.1:9093"},
		{"IPv6 loopback", "  addr: \"[::1]:9094\"\n", "", "http://[::1]:9094"},
		{"host name", "  addr: docent.internal:8081\n", "", "http://docent.internal:8081"},
		{"--addr", "", "localhost:9095", "http://localhost:9095"},
		{"--addr over server.addr", "  addr: \":9090\"\n", "127.0.0.1:9096", "http://127.0.0.1:9096"},
		{"configured", "  addr: \":9090\"\n  public_url: https://docent.example.com\n", "", "https://docent.example.com"},
		{"configured, --addr", "  public_url: https://docent.example.com\n", ":9097", "https://docent.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.server != "" {
				path = mustWrite(t, "docent.yaml", "server:\n"+tc.server)
			}
			c, err := Load(path, env(nil), Builtin())
			if err != nil {
				t.Fatal(err)
			}
			if tc.listen != "" {
				c.Server.Listen(tc.listen)
			}
			if c.Server.PublicURL != tc.want {
				t.Errorf("public_url = %q, want %q", c.Server.PublicURL, tc.want)
			}
			if follows := !strings.Contains(tc.server, "public_url"); c.Server.PublicURLFromAddr() != follows {
				t.Errorf("PublicURLFromAddr = %v, want %v", c.Server.PublicURLFromAddr(), follows)
			}
		})
	}
}
