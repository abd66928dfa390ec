package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds config.Load arbitrary YAML files. It must never panic;
// a file it refuses gets *Error values that say "config: " and name the
// file; a file it accepts gives a configuration that validates and whose
// printed form holds no secret field and no URL user info.
func FuzzLoad(f *testing.F) {
	full, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(full),
		"",
		"data_dir: ./data\n",
		"server:\n  addr: \":8080\"\n  public_url: http://localhost:8080\n",
		"sources:\n  - name: docs\n    type: dir\n    dir:\n      path: /srv/docs\n",
		"sources:\n  - name: docs\n    type: git\n    git:\n      url: https://bot:${GIT_TOKEN}@git.example/docs.git\n      token: ${GIT_TOKEN}\n",
		"sources:\n  - name: docs\n    type: git\n    git:\n      url: [unclosed\n",
		"index:\n  backend: local\n  fusoin: rrf\n",
		"index:\n  rrf_k: sixty\n",
		"server:\n\taddr: tabs\n",
		"token: ${UNSET_VARIABLE}\n",
		"data_dir: \"$$HOME/${DATA\"\n",
		"sources: {name: x}\n",
		"sources:\n  - *anchor\n",
		"a: &a [*a]\n",
		"log:\n  level: debug\n  format: json\n  extra: [1, 2, {x: y}]\n",
		"sync:\n  schedule: \"*/5 * * *\"\n  workers: -1\n",
		"--- \n...\n---\nserver: {}\n",
		"# ${COMMENTED_OUT}\nchunker:\n  target_tokens: 1e3\n",
	} {
		f.Add([]byte(seed))
	}
	getenv := func(k string) (string, bool) {
		if k == "GIT_TOKEN" {
			return "ghp_fuzzsecret", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "docent.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, getenv, Builtin())
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error is not a *config.Error: %T %v", err, err)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "config: ") {
					t.Fatalf("error line %q does not start with \"config: \"", line)
				}
			}
			return
		}
		if err := cfg.Validate(Builtin()); err != nil {
			t.Fatalf("Load accepted a config that does not validate: %v", err)
		}
		out := cfg.Redacted()
		if out == "" || cfg.String() != out {
			t.Fatalf("Redacted %q, String differs", out)
		}
		// What is printed holds no secret: in the redacted copy every
		// secret field and every URL's user info is the mask.
		for _, secret := range cfg.redact().Secrets() {
			if secret != redactedValue {
				t.Fatalf("secret %q survives redaction:\n%s", secret, out)
			}
		}
	})
}
