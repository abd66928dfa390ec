// Package gittest serves real git repositories over git's smart HTTP
// protocol for tests: go-git builds the repository, git-http-backend (from
// the git package of the system) serves it, behind basic auth.
package gittest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// MustServe commits files (slash path -> content) to the branch "main" of
// a new repository and serves it over smart HTTP, accepting only basic
// auth as user with password token. It returns the repository's URL,
// ending in "/handbook.git", without user info. It skips the test when
// git-http-backend is not installed.
func MustServe(tb testing.TB, files map[string]string, user, token string) string {
	tb.Helper()
	root := tb.TempDir()
	mustCommit(tb, filepath.Join(root, "work"), filepath.Join(root, "handbook.git"), files)
	return ServeRoot(tb, root, user, token) + "/handbook.git"
}

// ServeRoot serves the repositories under root (bare, or with a .git
// folder) over smart HTTP, accepting only basic auth as user with
// password token, until the test ends. It returns the server's URL; a
// repository's URL is that plus its path under root. It skips the test
// when git-http-backend is not installed.
func ServeRoot(tb testing.TB, root, user, token string) string {
	tb.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		tb.Skip("git binary not installed")
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		tb.Skip("git-http-backend not installed")
	}
	cgiHandler := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "denied", http.StatusUnauthorized)
			return
		}
		cgiHandler.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// mustCommit commits files in a work repository at work and pushes them
// to a new bare repository at bare whose HEAD is main.
func mustCommit(tb testing.TB, work, bare string, files map[string]string) {
	tb.Helper()
	main := plumbing.NewBranchReferenceName("main")
	repo, err := gogit.PlainInitWithOptions(work, &gogit.PlainInitOptions{InitOptions: gogit.InitOptions{DefaultBranch: main}})
	if err != nil {
		tb.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		tb.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			tb.Fatal(err)
		}
	}
	when := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	if _, err := wt.Commit("docs", &gogit.CommitOptions{Author: &object.Signature{Name: "Alice", Email: "alice@example.com", When: when}}); err != nil {
		tb.Fatal(err)
	}
	b, err := gogit.PlainInit(bare, true)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{bare}}); err != nil {
		tb.Fatal(err)
	}
	if err := repo.Push(&gogit.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}}); err != nil {
		tb.Fatalf("push: %v", err)
	}
	if err := b.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, main)); err != nil {
		tb.Fatal(err)
	}
}
