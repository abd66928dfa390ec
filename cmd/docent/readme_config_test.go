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
	// sourcesOrIndex picks the examples of sources and the index (the
	// Slack and Discord examples have tests of their own).
	sourcesOrIndex = regexp.MustCompile(`(?m)^(sources|index):`)
)

// TestREADMEConfigExamples runs `docent config` on every YAML example of
// sources or the index in the README, deploy/README.md and
// docs/security.md, as a reader would paste it, with each
// ${VAR} it names set: each must load and validate against this build's
// schema. Together they must show a Confluence Cloud source, a Confluence
// Data Center source, a Notion source and the Typesense backend, so a
// renamed key in any of them fails here.
func TestREADMEConfigExamples(t *testing.T) {
	want := map[string]bool{
		"flavor: cloud":      false,
		"flavor: datacenter": false,
		"type: notion":       false,
		"backend: typesense": false,
		"nodes:":             false,
	}
	dir := t.TempDir()
	h, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	hash := string(h)
	for _, doc := range []string{"../../README.md", "../../deploy/README.md", "../../docs/security.md"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, m := range yamlBlock.FindAllStringSubmatchIndex(text, -1) {
			line := strings.Count(text[:m[0]], "\n") + 1
			body := dedent(text[m[2]:m[3]])
			if !sourcesOrIndex.MatchString(body) {
				continue
			}
			// The console example's elided password hash, as a reader
			// would fill it in.
			body = strings.ReplaceAll(body, `"$2a$12$..."`, `"`+hash+`"`)
			t.Run(strings.TrimPrefix(doc, "../../")+":"+itoa(line), func(t *testing.T) {
				for _, v := range envRef.FindAllStringSubmatch(body, -1) {
					t.Setenv(v[1], "x-"+strings.ToLower(v[1]))
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
	for k, ok := range want {
		if !ok {
			t.Errorf("no README configuration example shows %q", k)
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
