package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent/eval"
)

// TestBenchJSON runs `docent bench --json` on a tiny BEIR set: one report
// with every mode of every query set, quality figures and a peak RSS.
func TestBenchJSON(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	err := m.Bench(context.Background(), []string{"--scifact", "../../eval/testdata/beir-tiny", "--json"})
	m.Close()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	var rep eval.BenchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	if rep.Engine != "docent" || rep.Docs != 5 || rep.Index <= 0 || rep.PeakRSS <= 0 {
		t.Errorf("report header %+v", rep)
	}
	for queries, modes := range benchModes {
		for _, mode := range modes {
			run, ok := rep.Run(mode, queries)
			if !ok || run.Latency.N == 0 || run.NDCG10 <= 0 {
				t.Errorf("%s %s: %+v (present %v)", queries, mode, run, ok)
			}
		}
	}
	if run, ok := rep.Run("answer", "test"); !ok || run.Latency.N == 0 {
		t.Errorf("answer latency missing: %+v", run)
	}
}

// TestBenchBaseline runs bench against a fake baseline that speaks the
// protocol (`CMD --beir DIR --json` prints an eval.BenchReport) and
// checks the side-by-side table and the rounds.
func TestBenchBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	report, err := json.Marshal(eval.BenchReport{Engine: "fake", Dataset: "beir-tiny", Docs: 5, Index: 1e9, PeakRSS: 100 << 20,
		Runs: []eval.BenchRun{{Mode: "bm25", Queries: "test", NDCG10: 0.5, Recall100: 0.8, Latency: eval.Latency{N: 4, P50: 1e6, P95: 2e6}}}})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "baseline")
	body := "#!/bin/sh\necho \"$@\" >> " + calls + "\ncat <<'EOF'\n" + string(report) + "\nEOF\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	err = m.Bench(context.Background(), []string{"--scifact", "../../eval/testdata/beir-tiny", "--baseline", script, "--rounds", "2"})
	m.Close()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	got, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if want := "--beir ../../eval/testdata/beir-tiny --json\n"; string(got) != want+want {
		t.Errorf("baseline called with %q, want twice %q", got, want)
	}
	out := stdout.String()
	for _, want := range []string{"2 round(s)", "docent/baseline", "index docs/s", "peak RSS", "query latency", "test bm25", "1ms / 2ms", "quality", "0.5000 / 0.8000", "long-noise default"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// A failing baseline fails the bench with its stderr.
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho broken >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m = &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	err = m.Bench(context.Background(), []string{"--scifact", "../../eval/testdata/beir-tiny", "--baseline", bad})
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("bench with a failing baseline: err = %v, want its stderr", err)
	}
}
