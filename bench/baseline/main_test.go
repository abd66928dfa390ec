package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/docent-hq/docent/eval"
)

// TestRunJSON indexes the tiny BEIR set with Bleve and checks the report
// docent bench reads: every query set, quality, throughput and memory.
func TestRunJSON(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = run(context.Background(), []string{"--beir", "../../eval/testdata/beir-tiny", "--json"})
	os.Stdout = stdout
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	var rep eval.BenchReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if rep.Engine != Engine || rep.Docs != 5 || rep.Index <= 0 || rep.PeakRSS <= 0 {
		t.Errorf("report header %+v", rep)
	}
	for _, q := range append([]string{"test"}, eval.LongKinds...) {
		run, ok := rep.Run("bm25", q)
		if !ok || run.Latency.N == 0 || run.NDCG10 <= 0 || run.Recall100 <= 0 {
			t.Errorf("%s: %+v (present %v)", q, run, ok)
		}
	}
	// Query 2 ("Does deep sleep help memory?") has one relevant document, d3.
	hits, err := func() ([]string, error) {
		dir := t.TempDir()
		b, err := eval.LoadBEIR("../../eval/testdata/beir-tiny", "test")
		if err != nil {
			return nil, err
		}
		idx, err := build(dir+"/i.bleve", b.Corpus)
		if err != nil {
			return nil, err
		}
		defer idx.Close()
		hs, err := search(context.Background(), idx, "Does deep sleep help memory?", 1)
		var ids []string
		for _, h := range hs {
			ids = append(ids, h.Chunk.DocID)
		}
		return ids, err
	}()
	if err != nil || len(hits) != 1 || hits[0] != "beir:d3" {
		t.Errorf("top hit %v, %v; want beir:d3", hits, err)
	}
}
