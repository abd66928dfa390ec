package eval

import (
	"fmt"
	"github.com/docent-hq/docent"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes the report as an aligned two-column table.
func (r BEIRReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	dataset := r.Dataset
	if r.Split != "" {
		dataset += " (" + r.Split + ")"
	}
	fmt.Fprintf(tw, "dataset\t%s\n", dataset)
	fmt.Fprintf(tw, "mode\t%s\n", orDash(r.Mode))
	fmt.Fprintf(tw, "queries\t%d\n", r.Queries)
	fmt.Fprintf(tw, "depth (k)\t%d docs\n", r.K)
	fmt.Fprintf(tw, "nDCG@10\t%.4f\n", r.NDCG10)
	fmt.Fprintf(tw, "Recall@10\t%.4f\n", r.Recall10)
	fmt.Fprintf(tw, "Recall@100\t%.4f\n", r.Recall100)
	fmt.Fprintf(tw, "MRR@10\t%.4f\n", r.MRR10)
	fmt.Fprintf(tw, "query p50 / p95 / p99\t%s / %s / %s\n",
		FormatDuration(r.QueryP50), FormatDuration(r.QueryP95), FormatDuration(r.QueryP99))
	if r.IndexDocs > 0 || r.IndexDuration > 0 {
		fmt.Fprintf(tw, "index\t%d docs in %s (%.1f docs/s)\n",
			r.IndexDocs, FormatDuration(r.IndexDuration), r.IndexDocsPerSec)
	}
	return tw.Flush()
}

// CompareTable writes several BEIR reports side by side, one column per
// report (typically bm25, vector and hybrid on the same dataset).
func CompareTable(w io.Writer, reports ...BEIRReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, cell func(r BEIRReport) string) {
		fmt.Fprint(tw, name, "\t")
		for _, r := range reports {
			fmt.Fprint(tw, cell(r), "\t")
		}
		fmt.Fprintln(tw)
	}
	f4 := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	row("mode", func(r BEIRReport) string { return orDash(r.Mode) })
	row("nDCG@10", func(r BEIRReport) string { return f4(r.NDCG10) })
	row("R@10", func(r BEIRReport) string { return f4(r.Recall10) })
	row("R@100", func(r BEIRReport) string { return f4(r.Recall100) })
	row("MRR@10", func(r BEIRReport) string { return f4(r.MRR10) })
	row("index docs/s", func(r BEIRReport) string {
		if r.IndexDocsPerSec == 0 {
			return "-"
		}
		return strconv.FormatFloat(r.IndexDocsPerSec, 'f', 1, 64)
	})
	row("query p50", func(r BEIRReport) string { return FormatDuration(r.QueryP50) })
	row("query p95", func(r BEIRReport) string { return FormatDuration(r.QueryP95) })
	return tw.Flush()
}

// WriteTable writes the summary, a per-kind table and one row per
// question ("PASS"/"FAIL", id, kind, status, first expected rank,
// citations), in golden-set order so that two runs diff line by line.
func (r GoldenReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "questions\t%d (%d answerable, %d unanswerable)\n", r.Questions, r.Answerable, r.Unanswerable)
	fmt.Fprintf(tw, "passed\t%d/%d (%s)\n", r.Passed, r.Questions, pct(r.PassRate))
	fmt.Fprintf(tw, "hit@1 / @3 / @5\t%.3f / %.3f / %.3f\n", r.HitAt1, r.HitAt3, r.HitAt5)
	fmt.Fprintf(tw, "MRR@10\t%.3f\n", r.MRR10)
	fmt.Fprintf(tw, "doc recall@5\t%.3f\n", r.DocRecall5)
	fmt.Fprintf(tw, "section hit@1 / @3 / @5\t%.3f / %.3f / %.3f (%d questions with a section)\n",
		r.SectionHitAt1, r.SectionHitAt3, r.SectionHitAt5, r.SectionQuestions)
	fmt.Fprintf(tw, "section MRR@10\t%.3f\n", r.SectionMRR10)
	fmt.Fprintf(tw, "answered / uncertain / not found\t%s / %s / %s of answerable\n",
		pct(r.AnsweredRate), pct(r.UncertainRate), pct(r.FalseNotFoundRate))
	fmt.Fprintf(tw, "right page cited first\t%s of answerable (answered or uncertain)\n", pct(r.LinkedFirstRate))
	fmt.Fprintf(tw, "answered correctly\t%s of answerable (right page first, facts stated)\n", pct(r.CorrectRate))
	fmt.Fprintf(tw, "right page linked\t%s of answerable answered or uncertain (among the citations or closest pages)\n", pct(r.LinkedRate))
	if r.ModelAskedRate > 0 {
		fmt.Fprintf(tw, "model asked\t%s of answerable (%s refused before the model)\n", pct(r.ModelAskedRate), pct(1-r.ModelAskedRate))
		fmt.Fprintf(tw, "context recall\tpage %s, section %s of the questions the model saw\n", pct(r.ContextPageRate), pct(r.ContextSectionRate))
		fmt.Fprintf(tw, "per question asked\t%.1f sources, %.0f prompt tokens\n", r.SourcesPerQuestion, r.PromptTokensPerQuestion)
	}
	fmt.Fprintf(tw, "citation precision\t%.3f (%d/%d citations)\n", r.CitationPrecision, r.CitationsCorrect, r.Citations)
	fmt.Fprintf(tw, "not-found accuracy\t%s of unanswerable\n", pct(r.NotFoundAccuracy))
	fmt.Fprintf(tw, "declined\t%s of unanswerable (not found or uncertain)\n", pct(r.DeclinedRate))
	if r.Judge != "" {
		fmt.Fprintf(tw, "judge\t%s\n", r.Judge)
		fmt.Fprintf(tw, "faithfulness\t%.3f of claims supported by their cited source (%d answers judged, %d claims unsupported, %d judge errors)\n",
			r.Faithfulness, r.Judged, r.UnsupportedClaims, r.JudgeErrors)
		fmt.Fprintf(tw, "answer relevance\t%.3f\n", r.AnswerRelevance)
	}
	fmt.Fprintf(tw, "latency p50 / p95\t%s / %s\n", FormatDuration(r.LatencyP50), FormatDuration(r.LatencyP95))
	fmt.Fprintf(tw, "errors\t%d\n", r.Errors)
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tquestions\tpassed\thit@5\tMRR@10\tanswered\tuncertain\tnot found\tcorrect\t")
	for _, k := range r.ByKind {
		hit, m, c := fmt.Sprintf("%.3f", k.HitAt5), fmt.Sprintf("%.3f", k.MRR10), pct(k.CorrectRate)
		if k.Kind == docent.KindUnanswerable {
			hit, m, c = "-", "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d (%s)\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			k.Kind, k.Questions, k.Passed, pct(k.PassRate), hit, m, pct(k.AnsweredRate), pct(k.UncertainRate), pct(k.NotFoundRate), c)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "result\tid\tkind\tstatus\trank\tcited ok\tmissing facts\t")
	for _, row := range r.Rows {
		result := "FAIL"
		if row.Pass {
			result = "PASS"
		}
		rank := "-"
		if row.FirstRank > 0 {
			rank = strconv.Itoa(row.FirstRank)
		}
		cited := "-"
		if row.Kind != docent.KindUnanswerable {
			cited = fmt.Sprintf("%d/%d", row.CitationsCorrect, row.Citations)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", result, row.ID, row.Kind, row.Status, rank, cited,
			orDash(strings.Join(row.MissingFacts, "; ")))
	}
	return tw.Flush()
}

// FormatDuration renders d with a precision that suits its size:
// microseconds below 1ms, 10µs steps below 1s, milliseconds above.
func FormatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func pct(v float64) string {
	return strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
