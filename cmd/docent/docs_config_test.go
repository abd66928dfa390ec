package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

var (
	yamlBlock = regexp.MustCompile("(?s)```ya?ml\n(.*?)```")
	envRef    = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	// topSources finds a block's own sources section.
	topSources = regexp.MustCompile(`(?m)^sources:`)
	// folderPath is a folder a block names ("path: /srv/runbooks"): the
	// reader's own, made under the test's temp dir.
	folderPath = regexp.MustCompile(`(\bpath: )([^\s},]+)`)
)

// docPages are the pages whose YAML blocks are docent configurations: the
// README, every page of docs/ and the deployment guide.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) < 8 {
		t.Fatalf("docs/*.md: %v (%d pages)", err, len(pages))
	}
	return append([]string{"../../README.md", "../../deploy/README.md"}, pages...)
}

// docSecrets are values of the shape a validated secret must have, for
// the variables the examples name.
var docSecrets = map[string]string{
	"SLACK_BOT_TOKEN": "xoxb-1-2-docs", "SLACK_APP_TOKEN": "xapp-1-A1-docs",
}

// docSources are the sources a block without its own sources section is
// loaded beside: the ones the chat examples scope their channels to.
const docSources = "sources:\n" +
	"  - name: handbook\n    type: bundled\n" +
	"  - name: eng-docs\n    type: dir\n    dir:\n      path: DIR\n"

// TestDocsConfigExamples runs `docent config` on every YAML block of the
// README, docs/*.md and deploy/README.md, as a reader would paste it,
// with each ${VAR} it names set (a block without its own sources is
// loaded beside the handbook and an eng-docs folder, which the chat
// examples scope channels to): each must load and validate against this
// build's schema. Together they must show a Confluence Cloud source, a
// Confluence Data Center source, a Notion source, the Typesense backend
// and both chat adapters, so a renamed key in any of them fails here.
func TestDocsConfigExamples(t *testing.T) {
	want := map[string]bool{
		"flavor: cloud":      false,
		"flavor: datacenter": false,
		"type: notion":       false,
		"backend: typesense": false,
		"nodes:":             false,
		"slack:":             false,
		"discord:":           false,
	}
	dir := t.TempDir()
	h, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	hash := string(h)
	blocks := 0
	for _, doc := range docPages(t) {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, m := range yamlBlock.FindAllStringSubmatchIndex(text, -1) {
			line := strings.Count(text[:m[0]], "\n") + 1
			body := dedent(text[m[2]:m[3]])
			blocks++
			if !topSources.MatchString(body) {
				body = strings.ReplaceAll(docSources, "DIR", dir) + body
			}
			body = folderPath.ReplaceAllStringFunc(body, func(s string) string {
				m := folderPath.FindStringSubmatch(s)
				if _, err := os.Stat(m[2]); err == nil {
					return s
				}
				folder := filepath.Join(dir, "folders", m[2])
				if err := os.MkdirAll(folder, 0o755); err != nil {
					t.Fatal(err)
				}
				return m[1] + folder
			})
			// The console example's elided password hash, as a reader
			// would fill it in.
			body = strings.ReplaceAll(body, `"$2a$12$..."`, `"`+hash+`"`)
			t.Run(strings.TrimPrefix(doc, "../../")+":"+itoa(line), func(t *testing.T) {
				for _, v := range envRef.FindAllStringSubmatch(body, -1) {
					val, ok := docSecrets[v[1]]
					if !ok {
						val = "x-" + strings.ToLower(v[1])
					}
					t.Setenv(v[1], val)
				}
				t.Setenv("DOCENT_DATA", filepath.Join(dir, "data"))
				f := filepath.Join(dir, "example.yaml")
				if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := run(context.Background(), []string{"--config", f, "config"}, &out, io.Discard); err != nil {
					t.Fatalf("docent config on the example at %s:%d: %v\n%s", doc, line, err, body)
				}
				for k := range want {
					if strings.Contains(body, k) && strings.Contains(out.String(), k) {
						want[k] = true
					}
				}
			})
		}
	}
	if blocks < 15 {
		t.Errorf("%d YAML blocks in the docs; the pages lost their examples", blocks)
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("no configuration example in the docs shows %q", k)
		}
	}
}

// dedent removes the indentation of the block's first line from every
// line (a fenced block inside a numbered list is indented).
func dedent(s string) string {
	first := strings.SplitN(s, "\n", 2)[0]
	pad := first[:len(first)-len(strings.TrimLeft(first, " "))]
	if pad == "" {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, pad)
	}
	return strings.Join(lines, "\n")
}

func itoa(n int) string {
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
