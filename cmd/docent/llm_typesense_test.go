package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/search/typesense"
	"github.com/docent-hq/docent/search/typesense/typesensetest"
)

// TestLLMEmbedderChangeTypesenseNewVersion: with the Typesense backend,
// changing the embedder's dimension, or the embedder at the same
// dimension, re-embeds every chunk into a new collection version behind
// the alias. While the new version is being embedded, the alias serves
// the previous version whole (every chunk, named after its embedder):
// searches never see a half-emptied or mixed index.
func TestLLMEmbedderChangeTypesenseNewVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := typesensetest.New(1, typesensetest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	servers := modelServers(t)
	dir := t.TempDir()
	env := map[string]string{"TYPESENSE_API_KEY": c.APIKey()}
	for k, v := range testKeys {
		env[k] = v
	}
	probe, err := typesense.Open(ctx, typesense.Options{Nodes: c.URLs(), APIKey: c.APIKey(), Alias: "docent_chunks"})
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()

	// While a run embeds documents, what does the alias serve?
	var mu sync.Mutex
	var seen []string
	watch := func(call llmtest.Call) [][]float32 {
		if call.TaskType != "RETRIEVAL_QUERY" {
			n, _ := probe.Count(ctx)
			name, _ := probe.EmbedderName(ctx)
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%d %s", n, name))
			mu.Unlock()
		}
		dim := call.Dimensions
		if dim <= 0 {
			dim = 64
		}
		out := make([][]float32, len(call.Texts))
		for i, text := range call.Texts {
			out[i] = llmtest.HashVector(text, dim)
		}
		return out
	}
	servers["gemini"].Embed, servers["openai"].Embed = watch, watch

	// trySync syncs the handbook with embedder at dims and returns the
	// index's embedder name and chunk count, or the run's failure.
	trySync := func(embedder string, dims int) (string, int, error) {
		t.Helper()
		path := llmConfig(t, dir, "offline", embedder, servers,
			"index:\n  backend: typesense\n  typesense:\n    nodes: [\""+c.URLs()[0]+"\"]\n    api_key: ${TYPESENSE_API_KEY}\n")
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.ReplaceAll(string(b), "dimensions: 32", fmt.Sprintf("dimensions: %d", dims))), 0o644)
		m := &Main{ConfigPath: path, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(env), Retry: fastRetry}
		if err := m.Open(ctx); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		mu.Lock()
		seen = nil
		mu.Unlock()
		results, err := m.SyncSources(ctx, m.Sources, nil)
		for _, r := range results {
			if r.Err != "" || r.Failed > 0 {
				err = errors.Join(err, fmt.Errorf("sync %s: %s %v", r.Source, r.Err, r.Errors))
			}
		}
		if err != nil {
			return "", 0, err
		}
		name, err := m.Index.EmbedderName(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, err := m.Index.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return name, n, nil
	}
	sync := func(embedder string, dims int) (string, int) {
		t.Helper()
		name, n, err := trySync(embedder, dims)
		if err != nil {
			t.Fatal(err)
		}
		return name, n
	}

	name32, n := sync("gemini", 32)
	if name32 != "gemini/gemini-embedding-001/32" || n == 0 {
		t.Fatalf("first sync: %q, %d chunks", name32, n)
	}
	first := c.Collections()
	// A re-embed that fails part way (the provider goes down after a few
	// batches) leaves the served version as it was, and drops the new one.
	var calls atomic.Int32
	servers["gemini"].Embed = func(call llmtest.Call) [][]float32 {
		if calls.Add(1) > 2 {
			servers["gemini"].FailAlways(llmtest.Fault{Status: 503})
		}
		return watch(call)
	}
	if _, _, err := trySync("gemini", 40); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("sync with the provider down part way: %v, want the 503", err)
	}
	if name, _ := probe.EmbedderName(ctx); name != name32 {
		t.Errorf("after the failed re-embed the alias serves %q, want %q", name, name32)
	}
	if got, _ := probe.Count(ctx); got != n || strings.Join(c.Collections(), ",") != strings.Join(first, ",") {
		t.Errorf("after the failed re-embed: %d chunks, collections %v; want %d and %v", got, c.Collections(), n, first)
	}
	servers["gemini"].Heal()
	servers["gemini"].Embed = watch
	for _, step := range []struct {
		embedder string
		dims     int
		want     string
		prev     string
	}{
		{"gemini", 48, "gemini/gemini-embedding-001/48", name32},
		{"openai", 48, "openai/nomic-embed-text/48", "gemini/gemini-embedding-001/48"},
	} {
		before := c.Collections()
		name, got := sync(step.embedder, step.dims)
		if name != step.want || got != n {
			t.Errorf("%s/%d: index %q with %d chunks, want %q with %d", step.embedder, step.dims, name, got, step.want, n)
		}
		if after := c.Collections(); strings.Join(after, ",") == strings.Join(before, ",") {
			t.Errorf("%s/%d: collections %v unchanged: re-embedded in place, not into a new version", step.embedder, step.dims, after)
		}
		mu.Lock()
		for _, s := range seen {
			if s != fmt.Sprintf("%d %s", n, step.prev) {
				t.Errorf("%s/%d: during the re-embed the alias served %q, want the previous version whole (%d %s)",
					step.embedder, step.dims, s, n, step.prev)
				break
			}
		}
		if len(seen) == 0 {
			t.Errorf("%s/%d: no document embedding call", step.embedder, step.dims)
		}
		mu.Unlock()
	}
	t.Logf("collections: first %v, last %v", first, c.Collections())
}
