package git_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"

	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/git"
	"github.com/docent-hq/docent/connectors/git/gittest"
	"github.com/docent-hq/docent/internal/private/privatetest"
)

// TestCredentialsNeverStored: credentials given in the URL or as a token
// authenticate the clone and fetches, and no file of the clone holds
// them; a clone left by an older docent with the token in its config
// loses it on the next sync.
func TestCredentialsNeverStored(t *testing.T) {
	const token = "glpat-NeverOnDisk42"
	repoURL := gittest.MustServe(t, map[string]string{"faq.md": "# FAQ\n\nAsk away.\n"}, "bot", token)
	withUser := func(userinfo string) string { return strings.Replace(repoURL, "http://", "http://"+userinfo+"@", 1) }
	for _, tt := range []struct {
		name string
		url  string
		auth git.Auth
	}{
		{"user and token in the URL", withUser("bot:" + token), git.Auth{}},
		{"token in config, user in the URL", withUser("bot"), git.Auth{Token: token}},
		{"token and user in config", repoURL, git.Auth{Username: "bot", Token: token}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := t.TempDir()
			s, err := git.New("hb", git.Options{URL: tt.url, Auth: tt.auth, DataDir: dataDir, Logger: discard()})
			if err != nil {
				t.Fatal(err)
			}
			first := mustList(t, s, "")
			if strings.Join(ids(first.Docs), " ") != "hb:faq.md" {
				t.Fatalf("docs %v", ids(first.Docs))
			}
			mustList(t, s, first.Cursor) // a fetch too
			mustBePrivate(t, filepath.Join(dataDir, "git", "hb"), token)
			repo, err := gogit.PlainOpen(filepath.Join(dataDir, "git", "hb"))
			if err != nil {
				t.Fatal(err)
			}
			origin, err := repo.Remote("origin")
			if err != nil {
				t.Fatal(err)
			}
			if got := origin.Config().URLs[0]; got != repoURL {
				t.Errorf("origin URL = %q, want it without user info", got)
			}
		})
	}

	t.Run("old clone with the token in its config", func(t *testing.T) {
		dataDir := t.TempDir()
		url := withUser("bot:" + token)
		if _, err := gogit.PlainClone(filepath.Join(dataDir, "git", "hb"), true, &gogit.CloneOptions{URL: url}); err != nil {
			t.Fatal(err)
		}
		cfg, err := os.ReadFile(filepath.Join(dataDir, "git", "hb", "config"))
		if err != nil || !bytes.Contains(cfg, []byte(token)) {
			t.Fatalf("the setup should leave the token in the config: %v\n%s", err, cfg)
		}
		s, err := git.New("hb", git.Options{URL: url, DataDir: dataDir, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		mustList(t, s, "")
		mustBePrivate(t, filepath.Join(dataDir, "git", "hb"), token)
	})
}

// TestShortUserNameRedaction: a URL whose user name is one letter leaves
// the error's words intact ("authentication required"), and still hides
// the user info.
func TestShortUserNameRedaction(t *testing.T) {
	repoURL := gittest.MustServe(t, map[string]string{"faq.md": "# FAQ\n"}, "bot", "right-token")
	url := strings.Replace(repoURL, "http://", "http://u@", 1)
	s, err := git.New("hb", git.Options{URL: url, DataDir: t.TempDir(), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = connectorstest.Collect(context.Background(), s, "")
	if err == nil {
		t.Fatal("Changes succeeded with the wrong credentials")
	}
	msg := err.Error()
	if !strings.Contains(msg, "authentication required") || strings.Contains(msg, "REDACTEDth") ||
		strings.Contains(msg, "u@") || !strings.Contains(msg, "http://REDACTED@") {
		t.Errorf("error %q: want \"authentication required\" intact and the user info masked", msg)
	}
}

// mustBePrivate checks a clone with privatetest.MustBePrivate (private,
// no token) and that it holds files.
func mustBePrivate(t *testing.T, dir, token string) {
	t.Helper()
	if n := privatetest.MustBePrivate(t, dir, token); n == 0 {
		t.Fatalf("no files under %s", dir)
	}
}
