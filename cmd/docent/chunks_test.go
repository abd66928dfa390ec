package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChunksCommand: `docent chunks` prints the chunks as indexed, of
// everything, of one source or one document, and a random sample that the
// same --seed reproduces; --json prints one object per chunk with id,
// doc_id, title, section, url and text. The sync summary says what the
// documents held.
func TestChunksCommand(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	files := map[string]string{
		"ports.md": "# Ports\n\n## Options {#options}\n\nThe proxy listens on port 80 for plain HTTP and on port 443 for TLS, unless an entry point says otherwise.\n\n" +
			"{{< features-table >}}\n\n## Timeouts\n\nIdle connections are closed after three minutes; long uploads need a longer read timeout on their entry point.\n",
		"empty.md":  "---\ntitle: Backends\n---\n",
		"broken.md": "---\ntitle: [oops\n---\n\nThe body of a page whose front matter is broken is indexed all the same, every word of it.\n",
	}
	for name, body := range files {
		p := filepath.Join(docs, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "docent.yaml")
	// Relative paths are relative to the config file's folder.
	yaml := "data_dir: data\nsources:\n  - name: notes\n    type: dir\n    dir:\n      path: docs\n      web_url: https://notes.example.com/{path}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		m := &Main{ConfigPath: cfg, Stdout: &stdout, Stderr: &stderr, Getenv: envOf(nil)}
		var err error
		if args[0] == "sync" {
			err = m.Sync(context.Background(), args[1:])
		} else {
			err = m.Chunks(context.Background(), args[1:])
		}
		m.Close()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	summary, _ := run("sync")
	for _, want := range []string{"notes: 1 shortcode or component without text dropped, 1 document gives no chunk, 1 document indexed with a warning",
		"notes: warning notes:broken.md: front matter not used"} {
		if !strings.Contains(summary, want) {
			t.Errorf("sync summary lacks %q:\n%s", want, summary)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "index.db")); err != nil {
		t.Errorf("data_dir is not relative to the config file: %v", err)
	}

	out, _ := run("chunks", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	type chunkLine struct {
		ID      string   `json:"id"`
		DocID   string   `json:"doc_id"`
		Title   string   `json:"title"`
		Section []string `json:"section"`
		URL     string   `json:"url"`
		Text    string   `json:"text"`
	}
	var all []chunkLine
	for _, l := range lines {
		var c chunkLine
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if c.ID == "" || c.DocID == "" || c.Title == "" || c.Section == nil || c.URL == "" || c.Text == "" {
			t.Errorf("chunk line lacks a field: %+v", c)
		}
		all = append(all, c)
	}
	if len(all) != 2 {
		t.Fatalf("%d chunks, want 2 (broken.md and ports.md, whose small sections merge):\n%s", len(all), out)
	}
	var ports chunkLine
	for _, c := range all {
		if c.DocID == "notes:ports.md" {
			ports = c
		}
	}
	if strings.Join(ports.Section, " > ") != "Options" || ports.URL != "https://notes.example.com/ports.md#options" ||
		strings.Contains(ports.Text, "{{<") || !strings.Contains(ports.Text, "## Timeouts") {
		t.Errorf("ports.md chunk: %+v", ports)
	}

	text, _ := run("chunks", "--doc", "ports.md")
	if !strings.Contains(text, "section: Options") || !strings.Contains(text, "url:     https://notes.example.com/ports.md#options") ||
		strings.Contains(text, "broken.md") {
		t.Errorf("--doc ports.md:\n%s", text)
	}
	if byID, _ := run("chunks", "--doc", "notes:broken.md", "--json"); strings.Count(byID, "\n") != 1 {
		t.Errorf("--doc by ID: %q", byID)
	}
	if src, _ := run("chunks", "--source", "notes", "--json"); src != out {
		t.Errorf("--source notes differs from all chunks")
	}

	one, _ := run("chunks", "--sample", "1", "--seed", "7", "--json")
	again, _ := run("chunks", "--sample", "1", "--seed", "7", "--json")
	if strings.Count(one, "\n") != 1 || one != again {
		t.Errorf("--sample 1 --seed 7 twice: %q then %q", one, again)
	}
	seen := map[string]bool{}
	for seed := range 20 {
		s, _ := run("chunks", "--sample", "1", "--seed", strings.Repeat("1", seed+1), "--json")
		seen[s] = true
	}
	if len(seen) != 2 {
		t.Errorf("20 seeds picked %d distinct chunks of 2, want both", len(seen))
	}
	if both, _ := run("chunks", "--sample", "5", "--seed", "1", "--json"); both != out {
		t.Errorf("a sample larger than the index is every chunk, in order:\n%s", both)
	}
	if _, stderr := run("chunks", "--sample", "1"); !strings.Contains(stderr, "--seed ") {
		t.Errorf("a sample without --seed should print the seed it used: %q", stderr)
	}
}
