package git_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docent-hq/docent"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/git"
)

// requireUploadPack skips when the git binary that go-git's file transport
// runs is missing (HTTP(S) remotes need no binary).
func requireUploadPack(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not installed: go-git clones local paths with git-upload-pack")
	}
}

func TestRemoteCloneAndFetch(t *testing.T) {
	requireUploadPack(t)
	origin := MustInitRepo(t)
	c1 := origin.commit("Alice", t1, change{write: map[string]string{"docs/a.md": "# A\n", "docs/b.md": "# B\n"}})
	dataDir := t.TempDir()

	tests := []struct {
		name string
		url  string
	}{
		{"plain path", origin.dir},
		{"file url", "file://" + filepath.ToSlash(origin.dir)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := []string{"remote-path", "remote/url"}[i]
			s, err := git.New(name, git.Options{URL: tt.url, DataDir: dataDir, Subdir: "docs", Logger: discard()})
			if err != nil {
				t.Fatal(err)
			}
			first := mustList(t, s, "")
			if !first.Complete || strings.Join(ids(first.Docs), " ") != name+":a.md "+name+":b.md" {
				t.Errorf("first sync: Complete %v, docs %v", first.Complete, ids(first.Docs))
			}
			if !strings.HasPrefix(first.Cursor, c1.String()) {
				t.Errorf("cursor %q, want commit %s", first.Cursor, c1)
			}
			if d := byID(first.Docs)[name+":a.md"]; d.Author != "Alice" || !d.UpdatedAt.Equal(t1) {
				t.Errorf("a.md author %q at %v", d.Author, d.UpdatedAt)
			}
			// The clone is bare, in DataDir/git/<name> (name made filesystem-safe).
			cloneDir := filepath.Join(dataDir, "git", strings.ReplaceAll(name, "/", "_"))
			if _, err := gogit.PlainOpen(cloneDir); err != nil {
				t.Errorf("no clone at %s: %v", cloneDir, err)
			}

			again := mustList(t, s, first.Cursor)
			if again.Complete || len(again.Docs) != 0 || len(again.Deleted) != 0 || again.Cursor != first.Cursor {
				t.Errorf("no-op sync: %+v", again)
			}
		})
	}

	// A new commit at the origin is fetched into both existing clones.
	c2 := origin.commit("Bob", t2, change{write: map[string]string{"docs/a.md": "# A, revised\n", "docs/c.md": "# C\n"}, remove: []string{"docs/b.md"}})
	for i := range tests {
		name := []string{"remote-path", "remote/url"}[i]
		s, err := git.New(name, git.Options{URL: tests[i].url, DataDir: dataDir, Subdir: "docs", Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		ch := mustList(t, s, c1.String()+":"+strings.SplitN(mustCursorFP(t, s), ":", 2)[1])
		if ch.Complete || strings.Join(ids(ch.Docs), " ") != name+":a.md "+name+":c.md" || strings.Join(ch.Deleted, " ") != name+":b.md" {
			t.Errorf("%s after fetch: Complete %v docs %v deleted %v", name, ch.Complete, ids(ch.Docs), ch.Deleted)
		}
		if !strings.HasPrefix(ch.Cursor, c2.String()) {
			t.Errorf("%s cursor %q, want commit %s", name, ch.Cursor, c2)
		}
		if d := byID(ch.Docs)[name+":a.md"]; d.Title != "A, revised" || d.Author != "Bob" {
			t.Errorf("%s a.md = %q by %q", name, d.Title, d.Author)
		}
	}
}

// mustCursorFP returns a cursor from a sync, to reuse its options fingerprint.
func mustCursorFP(t *testing.T, s *git.Source) string {
	t.Helper()
	return mustList(t, s, "").Cursor
}

func TestRemoteBranch(t *testing.T) {
	requireUploadPack(t)
	origin := MustInitRepo(t)
	origin.commit("Alice", t1, change{write: map[string]string{"a.md": "# On main\n"}})
	if err := origin.wt.Checkout(&gogit.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("release"), Create: true}); err != nil {
		t.Fatal(err)
	}
	origin.commit("Bob", t2, change{write: map[string]string{"b.md": "# Only on release\n"}})
	// The origin's HEAD is now "release"; ask for "main" explicitly.
	s, err := git.New("r", git.Options{URL: origin.dir, Branch: "main", DataDir: t.TempDir(),
		WebURL: "https://x/{branch}/{path}", Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ch := mustList(t, s, "")
	if strings.Join(ids(ch.Docs), " ") != "r:a.md" || ch.Docs[0].URL != "https://x/main/a.md" {
		t.Errorf("docs %v (URL %q), want only r:a.md on main", ids(ch.Docs), ch.Docs[0].URL)
	}
	def, err := git.New("d", git.Options{URL: origin.dir, DataDir: t.TempDir(), WebURL: "https://x/{branch}/{path}", Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ch = mustList(t, def, "")
	if strings.Join(ids(ch.Docs), " ") != "d:a.md d:b.md" || byID(ch.Docs)["d:b.md"].URL != "https://x/release/b.md" {
		t.Errorf("default branch docs %v", ids(ch.Docs))
	}
}

func TestRemoteUnreachable(t *testing.T) {
	const token = "ghp_SuperSecretToken123"
	// A port nothing listens on: take a free one and close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/acme/nope.git"
	l.Close()
	// A server that refuses the credentials.
	var (
		mu                     sync.Mutex
		sentUser, sentPassword string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sentUser, sentPassword, _ = r.BasicAuth()
		mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "denied", http.StatusUnauthorized)
	}))
	defer srv.Close()
	withUser := func(u, userinfo string) string { return strings.Replace(u, "http://", "http://"+userinfo+"@", 1) }

	tests := []struct {
		name     string
		url      string
		auth     git.Auth
		wantURL  string
		wantUser string // what the server must see as the basic-auth user, when set
	}{
		{"connection refused", closed, git.Auth{Token: token}, closed, ""},
		{"token in the URL", withUser(closed, "bot:"+token), git.Auth{}, "http://REDACTED@", ""},
		{"token as the URL user name", withUser(closed, token), git.Auth{}, "http://REDACTED@", ""},
		{"token as the URL user name, refused", withUser(srv.URL, token) + "/acme/docs.git", git.Auth{}, "http://REDACTED@", token},
		{"bad credentials", srv.URL + "/acme/docs.git", git.Auth{Username: "bot", Token: token}, srv.URL + "/acme/docs.git", "bot"},
		{"missing local path", filepath.Join(t.TempDir(), "nope.git"), git.Auth{Token: token}, "nope.git", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dataDir := t.TempDir()
			var logs strings.Builder
			log := slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
			s, err := git.New("handbook", git.Options{URL: tt.url, Auth: tt.auth, DataDir: dataDir, Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			ch, err := connectorstest.Collect(ctx, s, "")
			if err == nil {
				t.Fatalf("List succeeded: %+v", ch)
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, `source "handbook"`) || !strings.Contains(msg, tt.wantURL) {
				t.Errorf("error %q does not name the source and %s", msg, tt.wantURL)
			}
			if strings.Contains(msg, token) {
				t.Errorf("error leaks the token: %q", msg)
			}
			if errors.Unwrap(err) == nil {
				t.Error("error does not wrap its cause")
			}
			mu.Lock()
			user, password := sentUser, sentPassword
			mu.Unlock()
			if tt.wantUser != "" && user != tt.wantUser {
				t.Errorf("server saw user %q, want %q", user, tt.wantUser)
			}
			if tt.name == "bad credentials" && password != token {
				t.Errorf("server saw password %q, want the token", password)
			}
			// A failed clone leaves nothing half-made behind.
			if _, err := os.Stat(filepath.Join(dataDir, "git", "handbook")); !os.IsNotExist(err) {
				t.Errorf("clone directory left behind: %v", err)
			}

			// Through the sync engine: the run fails and neither the
			// stored run nor any log line carries the token.
			reg, idx := connectorstest.OpenStores(t)
			eng := connectors.NewEngine(reg, idx, connectorstest.NewEmbedder("v1"), connectorstest.Chunker{}, log, connectors.EngineOptions{})
			res, err := eng.Sync(ctx, s, nil)
			if err == nil {
				t.Fatal("Sync succeeded")
			}
			if strings.Contains(err.Error(), token) || strings.Contains(res.Err, token) {
				t.Errorf("sync error leaks the token: %q / RunResult.Err %q", err, res.Err)
			}
			run, err := reg.LastRun(ctx, "handbook")
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != docent.RunFailed || !strings.Contains(run.Err, tt.wantURL) || strings.Contains(run.Err, token) {
				t.Errorf("stored run = %s %q, want failed naming %s without the token", run.Status, run.Err, tt.wantURL)
			}
			if !strings.Contains(logs.String(), "sync failed") {
				t.Errorf("logs lack the failed sync:\n%s", logs.String())
			}
			if strings.Contains(logs.String(), token) {
				t.Errorf("logs leak the token:\n%s", logs.String())
			}
		})
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestRemoteHTTP clones and fetches over git's smart HTTP protocol, served
// by git-http-backend behind basic auth.
func TestRemoteHTTP(t *testing.T) {
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git binary not installed")
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("git-http-backend not installed")
	}
	root := t.TempDir()
	bare, err := gogit.PlainInit(filepath.Join(root, "handbook.git"), true)
	if err != nil {
		t.Fatal(err)
	}
	work := MustInitRepo(t)
	if _, err := work.repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{filepath.Join(root, "handbook.git")}}); err != nil {
		t.Fatal(err)
	}
	push := func() {
		t.Helper()
		if err := work.repo.Push(&gogit.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}}); err != nil {
			t.Fatalf("push: %v", err)
		}
	}
	c1 := work.commit("Alice", t1, change{write: map[string]string{"faq.md": "# FAQ\n"}})
	push()
	if err := bare.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))); err != nil {
		t.Fatal(err)
	}

	const token = "glpat-TopSecret"
	cgiHandler := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "x-access-token" || pass != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "denied", http.StatusUnauthorized)
			return
		}
		cgiHandler.ServeHTTP(w, r)
	}))
	defer srv.Close()

	s, err := git.New("hb", git.Options{URL: srv.URL + "/handbook.git", Auth: git.Auth{Token: token},
		DataDir: t.TempDir(), WebURL: "https://git.example/{repo}/-/blob/{branch}/{path}", Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	first := mustList(t, s, "")
	if !strings.HasPrefix(first.Cursor, c1.String()) || strings.Join(ids(first.Docs), " ") != "hb:faq.md" {
		t.Fatalf("first sync: cursor %q docs %v", first.Cursor, ids(first.Docs))
	}
	if u := first.Docs[0].URL; u != "https://git.example/handbook/-/blob/main/faq.md" {
		t.Errorf("URL = %q", u)
	}
	c2 := work.commit("Bob", t2, change{write: map[string]string{"faq.md": "# FAQ\n\nNew answer.\n"}})
	push()
	ch := mustList(t, s, first.Cursor)
	if ch.Complete || !strings.HasPrefix(ch.Cursor, c2.String()) || len(ch.Docs) != 1 || ch.Docs[0].Author != "Bob" {
		t.Errorf("after fetch: Complete %v cursor %q docs %+v", ch.Complete, ch.Cursor, ch.Docs)
	}
}

// TestRemoteURLChanged points an existing clone at a new URL: the next
// sync fetches from the new origin.
func TestRemoteURLChanged(t *testing.T) {
	requireUploadPack(t)
	oldOrigin := MustInitRepo(t)
	oldOrigin.commit("Alice", t1, change{write: map[string]string{"old.md": "# Old\n"}})
	newOrigin := MustInitRepo(t)
	c := newOrigin.commit("Bob", t2, change{write: map[string]string{"new.md": "# New\n"}})
	dataDir := t.TempDir()
	for _, tt := range []struct {
		url  string
		want string
	}{
		{oldOrigin.dir, "o:old.md"},
		{newOrigin.dir, "o:new.md"},
	} {
		s, err := git.New("o", git.Options{URL: tt.url, Branch: "main", DataDir: dataDir, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		ch := mustList(t, s, "")
		if strings.Join(ids(ch.Docs), " ") != tt.want {
			t.Errorf("from %s: docs %v, want %s", tt.url, ids(ch.Docs), tt.want)
		}
	}
	s, err := git.New("o", git.Options{URL: newOrigin.dir, Branch: "main", DataDir: dataDir, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if ch := mustList(t, s, ""); !strings.HasPrefix(ch.Cursor, c.String()) {
		t.Errorf("cursor %q, want the new origin's head %s", ch.Cursor, c)
	}
}
