package console

import (
	"context"
	"log/slog"

	"github.com/docent-hq/docent"
)

// flagged returns the documents among the citations that are flagged
// stale, with why. A failure to tell is logged and shows no flags: it
// must not take the page down.
func (h *handler) flagged(ctx context.Context, cites ...[]docent.Citation) map[string]string {
	var ids []string
	seen := map[string]bool{}
	for _, cs := range cites {
		for _, c := range cs {
			if c.DocID != "" && !seen[c.DocID] {
				seen[c.DocID] = true
				ids = append(ids, c.DocID)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	out, err := h.opts.Stale.Flagged(ctx, ids)
	if err != nil {
		h.log.WarnContext(ctx, "console: stale flags", slog.Any("error", err))
		return nil
	}
	return out
}

// citationsOf lists the citations of turn summaries.
func citationsOf(ts []docent.TurnSummary) [][]docent.Citation {
	out := make([][]docent.Citation, len(ts))
	for i, t := range ts {
		out[i] = t.Citations
	}
	return out
}
