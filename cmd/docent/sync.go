package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docent-hq/docent"

	"golang.org/x/term"

	"github.com/docent-hq/docent/connectors"
)

// Sync syncs all sources, or the one named by --source, printing progress
// on a terminal and a summary at the end.
func (m *Main) Sync(ctx context.Context, args []string) error {
	fl := m.flagSet("sync")
	only := fl.String("source", "", "sync only the source called `NAME`")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("sync takes no arguments, got %q: %w", rest, errUsage)
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
		finished := !p.Listing && p.Done >= p.Total
		if !finished && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		fmt.Fprintf(w, "\r\033[K%s", progressLine(p))
		if finished {
			fmt.Fprintln(w)
		}
	}
}

// progressLine is one line of sync progress: documents done out of the
// total, or so far while the source is still listing.
func progressLine(p connectors.Progress) string {
	rate := 0.0
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = float64(p.Done) / s
	}
	if p.Listing {
		return fmt.Sprintf("%s: %d docs, listing · %.1f docs/s", p.Source, p.Done, rate)
	}
	return fmt.Sprintf("%s: %d/%d docs · %.1f docs/s", p.Source, p.Done, p.Total, rate)
}

// writeSyncSummary prints one row per source and the documents that
// failed. Why a source failed is not repeated: the engine logged it.
func writeSyncSummary(w io.Writer, results []docent.RunResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "source\tseen\tadded\tupdated\tunchanged\tdeleted\tfailed\trequests\tretries\tdocs/s\ttime\tstatus\t")
	for _, r := range results {
		d := r.Finished.Sub(r.Started)
		rate := 0.0
		if d > 0 {
			rate = float64(r.Seen) / d.Seconds()
		}
		status := "ok"
		if r.Err != "" {
			status = "failed"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t\n", r.Source, r.Seen, r.Added, r.Updated,
			r.Unchanged, r.Deleted, r.Failed, r.Requests, r.Retries, rate, d.Round(time.Millisecond), status)
	}
	tw.Flush()
	for _, r := range results {
		if r.RateLimited > 0 || r.Waited >= time.Second {
			fmt.Fprintf(w, "%s: waited %s for the API (%d rate-limit answers)\n", r.Source, r.Waited.Round(time.Millisecond), r.RateLimited)
		}
		for _, e := range r.Errors {
			retry := ""
			if e.Retry {
				retry = " (retried next run)"
			}
			what := "skipped"
			if e.Truncated {
				what = "cut short"
			}
			fmt.Fprintf(w, "%s: %s %s: %s%s\n", r.Source, what, e.ID, e.Err, retry)
		}
		if line := contentLine(r.Content); line != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Source, line)
		}
		for _, e := range r.Content.Warnings {
			fmt.Fprintf(w, "%s: warning %s: %s\n", r.Source, e.ID, e.Err)
		}
	}
}

// contentLine summarises what a run's documents held, "" when there is
// nothing to say.
func contentLine(c docent.ContentCounts) string {
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(c.Embedded, "chunk embedded", "chunks embedded")
	add(c.Reused, "chunk kept its stored vector", "chunks kept their stored vectors")
	add(c.Dropped, "shortcode or component without text dropped", "shortcodes or components without text dropped")
	add(c.Empty, "document gives no chunk", "documents give no chunk")
	add(c.Oversized, "document over the size limit", "documents over the size limit")
	add(c.Fragments, "fragment indexed where it is included", "fragments indexed where they are included")
	add(len(c.Warnings), "document indexed with a warning", "documents indexed with a warning")
	return strings.Join(parts, ", ")
}
