package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent/api"
)

// TestHelp: help, -h and --help exit 0 and list every command with one
// line; a command's --help (and help COMMAND) shows its flags with their
// real defaults.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		if err != nil {
			t.Errorf("docent %s: %v", args[0], err)
		}
		for _, c := range commands {
			if n := strings.Count(stdout.String(), "\n  "+c.name+" "); n != 1 {
				t.Errorf("docent %s lists %q %d times:\n%s", args[0], c.name, n, stdout.String())
			}
		}
		if stderr.Len() > 0 {
			t.Errorf("docent %s wrote to stderr: %s", args[0], stderr.String())
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"config", "--help"}, []string{"Usage: docent config", "--config FILE"}},
		{[]string{"help", "config"}, []string{"Usage: docent config"}},
		{[]string{"serve", "--help"}, []string{"Usage: docent serve", "--addr ADDRESS", "localhost:8080", "--retain-days int", "(default 90)"}},
		{[]string{"ask", "-h"}, []string{"Usage: docent ask [flags] QUESTION", "--json", "--source NAME"}},
		{[]string{"sync", "--help"}, []string{"--source NAME"}},
		{[]string{"admin", "--help"}, []string{"hash-password", "--cost int", "(default 12)"}},
	} {
		var stdout bytes.Buffer
		if err := run(context.Background(), tc.args, &stdout, io.Discard); err != nil {
			t.Errorf("docent %q: %v", tc.args, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("docent %q lacks %q:\n%s", tc.args, w, stdout.String())
			}
		}
		if strings.Contains(stdout.String(), ":8080 ") || strings.Contains(stdout.String(), "(default :8080") {
			t.Errorf("docent %q states a default address that is not the real one:\n%s", tc.args, stdout.String())
		}
	}
}

// TestFlagsAnywhere: a command's flags and --config go before or after its
// arguments, and a one-shot command logs warnings only unless -v.
func TestFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "docent.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+filepath.Join(dir, "data")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	copyHandbook(t, filepath.Join(dir, "data")) // indexed: the asks answer at once
	t.Setenv("DOCENT_DATA", "")
	t.Setenv("DOCENT_CONFIG", "")
	const q = "What does Gatekeeper error GK-409 mean?"
	for _, args := range [][]string{
		{"ask", q, "--json", "--config", cfg},
		{"--config", cfg, "ask", "--json", q},
		{"ask", "--config=" + cfg, q, "--json"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("docent %q: %v\n%s", args, err, stderr.String())
		}
		var resp api.AskResponse
		if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil || resp.Answer == "" || resp.Trace == nil {
			t.Errorf("docent %q did not print the JSON answer: %v\n%s", args, err, stdout.String())
		}
		if strings.Contains(stderr.String(), "level=INFO") {
			t.Errorf("docent %q logged at info by default:\n%s", args, stderr.String())
		}
	}
	// -v, before or after the command, logs more.
	for _, args := range [][]string{{"-v", "sync", "--config", cfg}, {"sync", "--config", cfg, "-v"}} {
		var stderr bytes.Buffer
		if err := run(context.Background(), args, io.Discard, &stderr); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stderr.String(), `level=INFO msg="sync finished"`) {
			t.Errorf("docent %q did not log at info:\n%s", args, stderr.String())
		}
	}
	// Everything after -- is the question.
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"ask", "--config", cfg, "--", "--json", "GK-409?"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if json.Valid(stdout.Bytes()) {
		t.Errorf("--json after -- was read as a flag:\n%s", stdout.String())
	}
}

// TestServeReportsAFailedSourceOnce: serve's first sync logs a source that
// fails once, with the reason, and readies on the sources that synced.
func TestServeReportsAFailedSourceOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "hello.md"), []byte("# Hello\n\nThe office opens at nine.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "docent.yaml")
	yaml := "data_dir: " + filepath.Join(dir, "data") + "\nsources:\n" +
		"  - name: gone\n    type: git\n    git:\n      url: http://127.0.0.1:1/nope.git\n" +
		"  - name: local\n    type: dir\n    dir:\n      path: " + docs + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	base, stop := MustServeMain(t, &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: logs, Getenv: envOf(nil)})
	waitReady(t, base)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "connection refused"); n != 1 {
		t.Errorf("serve reported the failed source %d times, want once:\n%s", n, logs.String())
	}
}
