package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/docent-hq/docent/store"
)

// pruneEvery is how often serve prunes turns past their retention.
const pruneEvery = time.Hour

// pruneTurns deletes the turns outside r, with their traces, now and then
// every interval until ctx ends, and logs what it freed.
func (m *Main) pruneTurns(ctx context.Context, r store.Retention, every time.Duration) {
	if r == (store.Retention{}) {
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		res, err := m.Store.PruneTurns(ctx, r)
		switch {
		case err != nil && ctx.Err() == nil:
			m.Log.Error("prune turns", slog.Any("error", err))
		case res.Turns > 0:
			m.Log.Info("pruned turns", slog.Int64("turns", res.Turns), slog.Int64("trace_chunks", res.Chunks),
				slog.Int64("db_bytes_before", res.SizeBefore), slog.Int64("db_bytes_after", res.SizeAfter))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
