package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/search/typesense"
	"github.com/docent-hq/docent/search/typesense/typesensetest"
)

// countingEmbedder counts every call; the reindex must make none.
type countingEmbedder struct{ calls atomic.Int64 }

func (e *countingEmbedder) Name() string { return "counting" }
func (e *countingEmbedder) Dim() int     { return 8 }
func (e *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	return nil, errors.New("counting embedder: must not be called")
}
func (e *countingEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	e.calls.Add(1)
	return nil, errors.New("counting embedder: must not be called")
}

// writeConfig writes a docent.yaml over dataDir with index.typesense
// pointing at the cluster (the key from the environment) and returns
// its path.
func writeConfig(t *testing.T, dataDir string, c *typesensetest.Cluster, backend, embedder string) string {
	t.Helper()
	var nodes []string
	for _, u := range c.URLs() {
		nodes = append(nodes, `"`+u+`"`)
	}
	cfg := "data_dir: " + dataDir + "\n" +
		"embedder:\n  provider: " + embedder + "\n" +
		"index:\n  backend: " + backend + "\n  typesense:\n    nodes: [" + strings.Join(nodes, ", ") + "]\n" +
		"    api_key: ${TYPESENSE_API_KEY}\n    timeout: 5s\n    retries: 2\n"
	path := filepath.Join(t.TempDir(), "docent.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReindexToTypesense moves the handbook's local index into Typesense
// (through the in-repo cluster): no embedder call, every chunk arrives
// with its metadata and its exact vector, a second run writes nothing,
// and after switching the backend docent answers from Typesense and
// /readyz follows the cluster's health.
func TestReindexToTypesense(t *testing.T) {
	ctx := context.Background()
	dataDir := handbookData(t) // the handbook synced with the local index
	var stdout, stderr bytes.Buffer

	c, err := typesensetest.New(3, typesensetest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	counter := &countingEmbedder{}
	embedders["counting"] = impl[embedderOpener]{"test: counts calls", func(env) (search.Embedder, error) { return counter, nil }}
	t.Cleanup(func() { delete(embedders, "counting") })
	env := envOf(map[string]string{"TYPESENSE_API_KEY": c.APIKey()})
	cfgPath := writeConfig(t, dataDir, c, "local", "counting")

	reindex := func() string {
		t.Helper()
		stdout.Reset()
		m := &Main{ConfigPath: cfgPath, Stdout: &stdout, Stderr: &stderr, Getenv: env}
		defer m.Close()
		if err := m.Reindex(ctx, []string{"--to", "typesense"}); err != nil {
			t.Fatalf("reindex: %v\n%s", err, stderr.String())
		}
		return stdout.String()
	}
	out := reindex()
	if !strings.Contains(out, "copied") || !strings.Contains(out, "index.backend: typesense") {
		t.Errorf("first reindex said:\n%s", out)
	}
	if n := counter.calls.Load(); n != 0 {
		t.Errorf("the embedder was called %d times", n)
	}

	// Every chunk, one by one: metadata and vector.
	src, err := local.Open(ctx, filepath.Join(dataDir, "index.db"), local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := typesense.Open(ctx, typesense.Options{Nodes: c.URLs(), APIKey: c.APIKey()})
	if err != nil {
		t.Fatal(err)
	}
	var want []docent.Chunk
	if err := src.Scan(ctx, func(ch docent.Chunk) error { want = append(want, ch); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(want) < 50 {
		t.Fatalf("the handbook index holds %d chunks; expected the whole handbook", len(want))
	}
	ids := make([]string, len(want))
	for i, ch := range want {
		ids[i] = ch.ID
	}
	got, err := dst.Chunks(ctx, ids)
	if err != nil || len(got) != len(want) {
		t.Fatalf("Typesense Chunks: %d of %d, %v", len(got), len(want), err)
	}
	wantVecs, _ := src.Vectors(ctx, ids)
	gotVecs, err := dst.Vectors(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.ID || g.DocID != w.DocID || g.Ord != w.Ord || g.Source != w.Source || g.Space != w.Space ||
			!slices.Equal(g.Labels, w.Labels) || !g.UpdatedAt.Equal(w.UpdatedAt) || g.Title != w.Title ||
			!slices.Equal(g.Section, w.Section) || g.URL != w.URL || g.Text != w.Text {
			t.Errorf("chunk %s differs:\n got %+v\nwant %+v", w.ID, g, w)
		}
		if !slices.Equal(gotVecs[w.ID], wantVecs[w.ID]) || len(gotVecs[w.ID]) == 0 {
			t.Errorf("vector of %s differs (len %d vs %d)", w.ID, len(gotVecs[w.ID]), len(wantVecs[w.ID]))
		}
	}
	srcName, _ := src.EmbedderName(ctx)
	if name, err := dst.EmbedderName(ctx); err != nil || name != srcName || name == "" {
		t.Errorf("Typesense EmbedderName = %q, %v; want the local index's %q", name, err, srcName)
	}

	// A second run writes nothing.
	c.ResetStats()
	out = reindex()
	if !strings.Contains(out, "nothing to do") {
		t.Errorf("second reindex said:\n%s", out)
	}
	for op, n := range c.Stats().ByOp {
		if !strings.HasPrefix(op, "GET ") && op != "POST /multi_search" {
			t.Errorf("second run sent %d %s request(s)", n, op)
		}
	}
	if v := c.Violations(); len(v) > 0 {
		t.Errorf("refused requests: %v", v)
	}

	// Switch the backend: docent answers from Typesense.
	cfgPath = writeConfig(t, dataDir, c, "typesense", "offline")
	stdout.Reset()
	ask := &Main{ConfigPath: cfgPath, Stdout: &stdout, Stderr: &stderr, Getenv: env}
	if err := ask.Ask(ctx, []string{"What does Gatekeeper error GK-409 mean?"}); err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr.String())
	}
	ask.Close()
	if out := stdout.String(); !strings.Contains(out, "[1] Gatekeeper Error Codes") || strings.Contains(stderr.String(), "syncing") {
		t.Errorf("ask through Typesense:\n%s\nstderr:\n%s", out, stderr.String())
	}
	if n := counter.calls.Load(); n != 0 {
		t.Errorf("the counting embedder was called %d times", n)
	}

	// serve's /readyz follows the cluster.
	addr := make(chan string, 1)
	sctx, cancel := context.WithCancel(ctx)
	srv := &Main{ConfigPath: cfgPath, Stdout: &stdout, Stderr: &syncBuffer{}, Getenv: env, OnListen: func(a string) { addr <- a }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, []string{"--addr", "127.0.0.1:0"}); srv.Close() }()
	base := "http://" + <-addr
	waitReady(t, base)
	c.SetLeader(false)
	if code := status(t, base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz without a leader = %d, want 503", code)
	}
	c.SetLeader(true)
	if code := status(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with the leader back = %d, want 200", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
