package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/docent-hq/docent/store"
)

// pruneEvery is how often serve prunes turns past their retention.
const pruneEvery = time.Hour

// eventsKept is how long the chat adapters' delivered events are kept to
// drop redeliveries: platforms redeliver for minutes, not days.
const eventsKept = 24 * time.Hour

// prune deletes the delivered chat events older than eventsKept and the
// turns outside r, with their traces, now and then every interval until
// ctx ends, and logs what it freed.
func (m *Main) prune(ctx context.Context, r store.Retention, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := m.Store.PruneEvents(ctx, time.Now().Add(-eventsKept))
		switch {
		case err != nil && ctx.Err() == nil:
			m.Log.Error("prune chat events", slog.Any("error", err))
		case n > 0:
			m.Log.Info("pruned chat events", slog.Int64("events", n))
		}
		if r != (store.Retention{}) {
			res, err := m.Store.PruneTurns(ctx, r)
			switch {
			case err != nil && ctx.Err() == nil:
				m.Log.Error("prune turns", slog.Any("error", err))
			case res.Turns > 0:
				m.Log.Info("pruned turns", slog.Int64("turns", res.Turns), slog.Int64("trace_chunks", res.Chunks),
					slog.Int64("db_bytes_before", res.SizeBefore), slog.Int64("db_bytes_after", res.SizeAfter))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
