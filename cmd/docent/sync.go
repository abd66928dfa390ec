package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/docent-hq/docent"

	"golang.org/x/term"

	"github.com/docent-hq/docent/connectors"
)

// Sync syncs all sources, or the one named by --source, printing progress
// on a terminal and a summary at the end.
func (m *Main) Sync(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("sync", flag.ContinueOnError)
	fl.SetOutput(m.Stderr)
	only := fl.String("source", "", "sync only this source")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if err := m.Open(ctx); err != nil {
		return err
	}
	if err := m.lockForWrites(); err != nil {
		return err
	}
	sources := m.Sources
	if *only != "" {
		src, err := m.source(*only)
		if err != nil {
			return err
		}
		sources = []connectors.Source{src}
	}
	results, err := m.SyncSources(ctx, sources, newProgressPrinter(m.Stderr))
	writeSyncSummary(m.Stdout, results)
	return err
}

// newProgressPrinter returns a progress callback that redraws one line on
// a terminal, or nil when w is not a terminal (logs and pipes stay clean).
func newProgressPrinter(w io.Writer) func(connectors.Progress) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	var last time.Time
	return func(p connectors.Progress) {
		if p.Done < p.Total && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		rate := 0.0
		if s := p.Elapsed.Seconds(); s > 0 {
			rate = float64(p.Done) / s
		}
		fmt.Fprintf(w, "\r\033[K%s: %d/%d docs · %.1f docs/s", p.Source, p.Done, p.Total, rate)
		if p.Done >= p.Total {
			fmt.Fprintln(w)
		}
	}
}

// writeSyncSummary prints one row per source and the documents that failed.
func writeSyncSummary(w io.Writer, results []docent.RunResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "source\tadded\tupdated\tunchanged\tdeleted\tfailed\tdocs/s\ttime\tstatus\t")
	for _, r := range results {
		d := r.Finished.Sub(r.Started)
		total := r.Added + r.Updated + r.Unchanged + r.Failed
		rate := 0.0
		if d > 0 {
			rate = float64(total) / d.Seconds()
		}
		status := "ok"
		if r.Err != "" {
			status = "failed"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t\n", r.Source, r.Added, r.Updated, r.Unchanged,
			r.Deleted, r.Failed, rate, d.Round(time.Millisecond), status)
	}
	tw.Flush()
	for _, r := range results {
		if r.Err != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Source, r.Err)
		}
		for _, e := range r.Errors {
			fmt.Fprintf(w, "%s: skipped %s: %s\n", r.Source, e.ID, e.Err)
		}
	}
}
