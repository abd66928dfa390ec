package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/api"
)

// Ask answers one question in the terminal. On an empty index it first
// syncs the configured sources, and says so.
func (m *Main) Ask(ctx context.Context, args []string) error {
	fl := m.flagSet("ask")
	asJSON := fl.Bool("json", false, "print the answer as JSON, with its trace")
	source := fl.String("source", "", "only search the source called `NAME`")
	words, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	question := strings.TrimSpace(strings.Join(words, " "))
	if question == "" {
		return fmt.Errorf("ask: %w: give the question as an argument, e.g. docent ask \"how do I reset my VPN token?\"", docent.ErrEmptyQuestion)
	}
	if err := m.Open(ctx); err != nil {
		return err
	}
	n, err := m.Index.Count(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		if err := m.lockForWrites(); err != nil {
			return fmt.Errorf("ask: the index is empty and cannot be synced now: %w", err)
		}
		fmt.Fprintln(m.Stderr, "The index is empty: syncing the configured sources first.")
		results, err := m.SyncSources(ctx, m.Sources, newProgressPrinter(m.Stderr))
		writeSyncSummary(m.Stderr, results)
		if err != nil {
			fmt.Fprintln(m.Stderr, "Some sources failed to sync; answering from what was indexed.")
		}
	}
	q := docent.Question{Text: question, Platform: "cli"}
	if *source != "" {
		q.Filter.Sources = []string{*source}
	}
	turn, err := m.Recorder.Ask(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(api.NewAskResponse(turn, answer.Format, true))
	}
	fmt.Fprintln(m.Stdout, answer.Format(turn.Answer))
	return nil
}

// PrintConfig prints the effective configuration with secrets redacted,
// then the implementation each seam got (index, embedder, answerer, each
// source) as YAML comments.
func (m *Main) PrintConfig(_ context.Context, args []string) error {
	rest, err := m.parse(m.flagSet("config"), args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("config takes no arguments, got %q: %w", rest, errUsage)
	}
	if err := m.LoadConfig(); err != nil {
		return err
	}
	fmt.Fprint(m.Stdout, m.Config.Redacted())
	fmt.Fprint(m.Stdout, formatSeams(seams(m.Config)))
	return nil
}
