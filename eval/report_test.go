package eval

import (
	"bytes"
	"encoding/json"
	"github.com/docent-hq/docent"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fields splits each line of s into whitespace-separated fields.
func fields(s string) [][]string {
	var out [][]string
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, strings.Fields(line))
	}
	return out
}

func sampleBEIRReport(mode string, ndcg float64) BEIRReport {
	r := BEIRReport{
		Dataset: "scifact", Split: "test", Mode: mode, K: 100, Queries: 300,
		NDCG10: ndcg, Recall10: 0.8, Recall100: 0.925, MRR10: 0.63,
		QueryP50: 1234 * time.Microsecond, QueryP95: 5 * time.Millisecond, QueryP99: 1500 * time.Millisecond,
	}
	r.SetIndexing(5183, 10*time.Second)
	return r
}

func TestBEIRReportWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleBEIRReport("bm25", 0.67481).WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"dataset                scifact (test)\n" +
		"mode                   bm25\n" +
		"queries                300\n" +
		"depth (k)              100 docs\n" +
		"nDCG@10                0.6748\n" +
		"Recall@10              0.8000\n" +
		"Recall@100             0.9250\n" +
		"MRR@10                 0.6300\n" +
		"query p50 / p95 / p99  1.23ms / 5ms / 1.5s\n" +
		"index                  5183 docs in 10s (518.3 docs/s)\n"
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestCompareTable(t *testing.T) {
	var buf bytes.Buffer
	vec := sampleBEIRReport("vector", 0.5)
	vec.IndexDocsPerSec = 0
	err := CompareTable(&buf, sampleBEIRReport("bm25", 0.67481), vec, sampleBEIRReport("hybrid", 0.7))
	if err != nil {
		t.Fatal(err)
	}
	got := fields(buf.String())
	want := [][]string{
		{"mode", "bm25", "vector", "hybrid"},
		{"nDCG@10", "0.6748", "0.5000", "0.7000"},
		{"R@10", "0.8000", "0.8000", "0.8000"},
		{"R@100", "0.9250", "0.9250", "0.9250"},
		{"MRR@10", "0.6300", "0.6300", "0.6300"},
		{"index", "docs/s", "518.3", "-", "518.3"},
		{"query", "p50", "1.23ms", "1.23ms", "1.23ms"},
		{"query", "p95", "5ms", "5ms", "5ms"},
	}
	if len(got) != len(want) {
		t.Fatalf("table:\n%s", buf.String())
	}
	for i := range want {
		if strings.Join(got[i], " ") != strings.Join(want[i], " ") {
			t.Errorf("row %d = %q, want %q", i, got[i], want[i])
		}
	}
	// Columns are right-aligned: every line has the same width.
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	for _, l := range lines[1:] {
		if len(l) != len(lines[0]) {
			t.Errorf("line %q is %d wide, header %d", l, len(l), len(lines[0]))
		}
	}
}

func TestGoldenReportWriteTable(t *testing.T) {
	r := GoldenReport{
		Questions: 3, Answerable: 2, Unanswerable: 1, Passed: 2, PassRate: 2.0 / 3,
		HitAt1: 0.5, HitAt3: 1, HitAt5: 1, MRR10: 0.75, DocRecall5: 1, SectionHitAt5: 1, SectionQuestions: 1,
		AnsweredRate: 1, CitationPrecision: 0.5, Citations: 2, CitationsCorrect: 1,
		LatencyP50: 2 * time.Millisecond, LatencyP95: 3 * time.Millisecond,
		ByKind: []KindStats{
			{Kind: docent.KindExact, Questions: 2, Passed: 2, PassRate: 1, HitAt5: 1, MRR10: 0.75, AnsweredRate: 1},
			{Kind: docent.KindUnanswerable, Questions: 1, AnsweredRate: 1},
		},
		Rows: []GoldenRow{
			{ID: "a", Kind: docent.KindExact, Status: "answered", FirstRank: 1, Citations: 1, CitationsCorrect: 1, Pass: true},
			{ID: "b", Kind: docent.KindExact, Status: "answered", FirstRank: 2, Citations: 1, Pass: true},
			{ID: "c", Kind: docent.KindUnanswerable, Status: "answered"},
		},
	}
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range [][2]string{
		{"questions", "3 (2 answerable, 1 unanswerable)"},
		{"passed", "2/3 (66.7%)"},
		{"hit@1 / @3 / @5", "0.500 / 1.000 / 1.000"},
		{"answered / uncertain / not found", "100.0% / 0.0% / 0.0% of answerable"},
		{"right page cited first", "0.0% of answerable"},
		{"answered correctly", "0.0% of answerable"},
		{"citation precision", "0.500 (1/2 citations)"},
		{"not-found accuracy", "0.0% of unanswerable"},
		{"declined", "0.0% of unanswerable"},
		{"latency p50 / p95", "2ms / 3ms"},
	} {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want[0]) + ` +` + regexp.QuoteMeta(want[1]))
		if !re.MatchString(out) {
			t.Errorf("table lacks %q %q:\n%s", want[0], want[1], out)
		}
	}
	sections := strings.Split(out, "\n\n")
	if len(sections) != 3 {
		t.Fatalf("want summary, kinds and rows separated by blank lines:\n%s", out)
	}
	kinds := fields(sections[1])
	wantKinds := [][]string{
		{"kind", "questions", "passed", "hit@5", "MRR@10", "answered", "uncertain", "not", "found", "correct"},
		{"exact", "2", "2", "(100.0%)", "1.000", "0.750", "100.0%", "0.0%", "0.0%", "0.0%"},
		{"unanswerable", "1", "0", "(0.0%)", "-", "-", "100.0%", "0.0%", "0.0%", "-"},
	}
	rows := fields(sections[2])
	wantRows := [][]string{
		{"result", "id", "kind", "status", "rank", "cited", "ok", "missing", "facts"},
		{"PASS", "a", "exact", "answered", "1", "1/1", "-"},
		{"PASS", "b", "exact", "answered", "2", "0/1", "-"},
		{"FAIL", "c", "unanswerable", "answered", "-", "-", "-"},
	}
	for name, pair := range map[string][2][][]string{"kinds": {kinds, wantKinds}, "rows": {rows, wantRows}} {
		got, want := pair[0], pair[1]
		if len(got) != len(want) {
			t.Errorf("%s: %q, want %q", name, got, want)
			continue
		}
		for i := range want {
			if strings.Join(got[i], " ") != strings.Join(want[i], " ") {
				t.Errorf("%s row %d = %q, want %q", name, i, got[i], want[i])
			}
		}
	}
}

func TestReportsJSON(t *testing.T) {
	data, err := json.Marshal(sampleBEIRReport("hybrid", 0.7))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m["mode"] != "hybrid" || m["ndcg_at_10"] != 0.7 || m["query_p50_ns"] != float64(1234000) ||
		m["index_docs_per_sec"] != 518.3 {
		t.Errorf("BEIR JSON = %s", data)
	}
	data, err = json.Marshal(GoldenReport{HitAt5: 0.5, Rows: []GoldenRow{{ID: "a", Kind: docent.KindExact, Pass: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		HitAt5 float64 `json:"hit_at_5"`
		Rows   []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
			Pass bool   `json:"pass"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if g.HitAt5 != 0.5 || len(g.Rows) != 1 || g.Rows[0].ID != "a" || g.Rows[0].Kind != "exact" || !g.Rows[0].Pass {
		t.Errorf("golden JSON = %s", data)
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1500 * time.Nanosecond, "2µs"},
		{1234567 * time.Nanosecond, "1.23ms"},
		{1234567890 * time.Nanosecond, "1.235s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatDuration(tt.d); got != tt.want {
				t.Errorf("FormatDuration(%d) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}
