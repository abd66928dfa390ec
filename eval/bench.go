package eval

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// Latency summarizes a set of timings by the nearest-rank percentiles.
type Latency struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50_ns"`
	P95 time.Duration `json:"p95_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// Summarize returns the percentiles of ds.
func Summarize(ds []time.Duration) Latency {
	return Latency{N: len(ds), P50: Percentile(ds, 50), P95: Percentile(ds, 95), P99: Percentile(ds, 99)}
}

// String renders the percentiles for a table.
func (l Latency) String() string {
	return fmt.Sprintf("p50 %s  p95 %s  p99 %s", FormatDuration(l.P50), FormatDuration(l.P95), FormatDuration(l.P99))
}

// PeakRSS returns the process's peak resident set size in bytes (VmHWM
// from /proc/self/status). It returns an error where procfs is missing.
func PeakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("eval: peak rss: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "VmHWM:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("eval: peak rss: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("eval: peak rss: no VmHWM in /proc/self/status")
}

// ResetPeakRSS resets the peak RSS mark, so that the next PeakRSS reports
// the peak of what runs in between (Linux: "5" to /proc/self/clear_refs).
func ResetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("eval: reset peak rss: %w", err)
	}
	return nil
}

// BenchReport is one engine's figures from one benchmark run on a BEIR
// set: indexing throughput, peak memory, and per retrieval mode and query
// set the latency of top-10 queries and the ranking quality at depth 100.
// `docent bench` writes it for docent and reads it from the baseline
// engine (bench/baseline) as JSON.
type BenchReport struct {
	// Engine names the engine and its configuration.
	Engine string `json:"engine"`
	// Dataset is the BEIR set's name; Docs how many documents were indexed.
	Dataset string `json:"dataset"`
	Docs    int    `json:"docs"`
	// Index is the time to index every document, from an empty index to
	// searchable.
	Index time.Duration `json:"index_ns"`
	// PeakRSS is the process's peak resident memory over the whole run.
	PeakRSS int64 `json:"peak_rss_bytes"`
	// Runs are the measured retrieval runs.
	Runs []BenchRun `json:"runs"`
}

// DocsPerSec is the indexing throughput.
func (r BenchReport) DocsPerSec() float64 {
	if r.Index <= 0 {
		return 0
	}
	return float64(r.Docs) / r.Index.Seconds()
}

// Run returns the run of mode on queries, and whether there is one.
func (r BenchReport) Run(mode, queries string) (BenchRun, bool) {
	for _, run := range r.Runs {
		if run.Mode == mode && run.Queries == queries {
			return run, true
		}
	}
	return BenchRun{}, false
}

// BenchRun is one retrieval mode on one query set.
type BenchRun struct {
	// Mode is the retrieval mode (bm25, hybrid, default; "answer" for the
	// full answer pipeline, which has latency only).
	Mode string `json:"mode"`
	// Queries names the query set: the split ("test"), or a long-query
	// set (LongContext, LongNoise).
	Queries string `json:"queries"`
	// Latency is over one top-10 request per query.
	Latency Latency `json:"latency"`
	// NDCG10 and Recall100 are RunBEIR's, at depth 100 documents.
	NDCG10    float64 `json:"ndcg_at_10"`
	Recall100 float64 `json:"recall_at_100"`
}

// MedianReport returns a report whose timings (index time, peak memory,
// each run's latency percentiles) are the medians over reports, and whose
// quality figures are the first report's (they are deterministic). The
// reports must be of one engine with the same runs.
func MedianReport(reports []BenchReport) BenchReport {
	if len(reports) == 0 {
		return BenchReport{}
	}
	out := reports[0]
	out.Runs = slices.Clone(out.Runs)
	out.Index = median(reports, func(r BenchReport) time.Duration { return r.Index })
	out.PeakRSS = int64(median(reports, func(r BenchReport) time.Duration { return time.Duration(r.PeakRSS) }))
	for i, run := range out.Runs {
		at := func(r BenchReport) Latency {
			got, _ := r.Run(run.Mode, run.Queries)
			return got.Latency
		}
		out.Runs[i].Latency.P50 = median(reports, func(r BenchReport) time.Duration { return at(r).P50 })
		out.Runs[i].Latency.P95 = median(reports, func(r BenchReport) time.Duration { return at(r).P95 })
		out.Runs[i].Latency.P99 = median(reports, func(r BenchReport) time.Duration { return at(r).P99 })
	}
	return out
}

func median(reports []BenchReport, f func(BenchReport) time.Duration) time.Duration {
	vs := make([]time.Duration, len(reports))
	for i, r := range reports {
		vs[i] = f(r)
	}
	return Percentile(vs, 50)
}

// WriteBenchComparison writes docent's and the baseline's figures side by
// side, with the ratio docent/baseline: index throughput and peak memory;
// per query set and docent mode, query latency p50 / p95; then nDCG@10 and
// recall@100. The baseline is compared by the run of the same mode on the
// same queries, or else by its run on the same queries (a keyword-only
// baseline has one ranking). rounds is how many runs each median is over.
func WriteBenchComparison(w io.Writer, docent, base BenchReport, rounds int) error {
	fmt.Fprintf(w, "== %s: %d documents; docent beside %s; %d round(s) each, alternating; timings are medians\n",
		docent.Dataset, docent.Docs, base.Engine, rounds)
	ratio := func(a, b float64) string {
		if a == 0 || b == 0 {
			return "-"
		}
		return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
	}
	baseRun := func(d BenchRun) (BenchRun, bool) {
		if d.Mode == "answer" {
			return BenchRun{}, false
		}
		if b, ok := base.Run(d.Mode, d.Queries); ok {
			return b, true
		}
		for _, b := range base.Runs {
			if b.Queries == d.Queries {
				return b, true
			}
		}
		return BenchRun{}, false
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tdocent\tbaseline\tdocent/baseline\t\n")
	fmt.Fprintf(tw, "index docs/s\t%.0f\t%.0f\t%s\t\n", docent.DocsPerSec(), base.DocsPerSec(), ratio(docent.DocsPerSec(), base.DocsPerSec()))
	fmt.Fprintf(tw, "peak RSS\t%s\t%s\t%s\t\n", mebibytes(docent.PeakRSS), mebibytes(base.PeakRSS), ratio(float64(docent.PeakRSS), float64(base.PeakRSS)))
	fmt.Fprintf(tw, "query latency (top 10)\tp50 / p95\tp50 / p95\tp50 / p95\t\n")
	for _, d := range docent.Runs {
		bs, rs := "-", "-"
		if b, ok := baseRun(d); ok {
			bs = FormatDuration(b.Latency.P50) + " / " + FormatDuration(b.Latency.P95)
			rs = ratio(float64(d.Latency.P50), float64(b.Latency.P50)) + " / " + ratio(float64(d.Latency.P95), float64(b.Latency.P95))
		}
		fmt.Fprintf(tw, "%s %s\t%s / %s\t%s\t%s\t\n", d.Queries, d.Mode, FormatDuration(d.Latency.P50), FormatDuration(d.Latency.P95), bs, rs)
	}
	fmt.Fprintf(tw, "quality (depth 100)\tnDCG@10 / R@100\tnDCG@10 / R@100\tnDCG@10 / R@100\t\n")
	for _, d := range docent.Runs {
		if d.Mode == "answer" {
			continue
		}
		bs, rs := "-", "-"
		if b, ok := baseRun(d); ok {
			bs = fmt.Sprintf("%.4f / %.4f", b.NDCG10, b.Recall100)
			rs = ratio(d.NDCG10, b.NDCG10) + " / " + ratio(d.Recall100, b.Recall100)
		}
		fmt.Fprintf(tw, "%s %s\t%.4f / %.4f\t%s\t%s\t\n", d.Queries, d.Mode, d.NDCG10, d.Recall100, bs, rs)
	}
	return tw.Flush()
}

func mebibytes(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// WriteBenchReport writes one engine's figures: indexing, peak memory, and
// per run its latency and quality.
func WriteBenchReport(w io.Writer, r BenchReport) error {
	fmt.Fprintf(w, "== %s: %d documents, %s\n", r.Dataset, r.Docs, r.Engine)
	fmt.Fprintf(w, "index: %s, %.0f docs/s; peak RSS %s\n", FormatDuration(r.Index), r.DocsPerSec(), mebibytes(r.PeakRSS))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "queries\tmode\tp50 (k=10)\tp95\tp99\tnDCG@10\tR@100\n")
	for _, run := range r.Runs {
		q := "-\t-"
		if run.Mode != "answer" {
			q = fmt.Sprintf("%.4f\t%.4f", run.NDCG10, run.Recall100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", run.Queries, run.Mode,
			FormatDuration(run.Latency.P50), FormatDuration(run.Latency.P95), FormatDuration(run.Latency.P99), q)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}
