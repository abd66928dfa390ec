package bot

import "time"

// SetClock sets the core's clock (handoff times, rate limits).
func SetClock(b *Bot, now func() time.Time) { b.now = now }
