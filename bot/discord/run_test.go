package discord_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/discord"
	"github.com/docent-hq/docent/bot/discord/discordtest"
	"github.com/docent-hq/docent/internal/backoff/backofftest"
	"github.com/docent-hq/docent/store"
)

// runClient builds a client over srv (not connected) with clk.
func runClient(t *testing.T, srv *discordtest.Server, token string, clk *backofftest.Clock) *discord.Client {
	t.Helper()
	parallel(t)
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rec := answer.NewRecorder(&pipeline{status: docent.StatusAnswered}, db, nil, slog.New(slog.DiscardHandler), nil)
	core := bot.New(discord.Platform, rec, db, nil, bot.Config{}, nil)
	c, err := discord.NewClient(discord.Config{Token: token, APIURL: srv.URL, Clock: clk}, core,
		slog.New(slog.NewTextHandler(newTestWriter(t), nil)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunWaitsRetryAfter: a 429 while connecting is retried after exactly
// its retry_after, on the client's clock, and the client then connects and
// runs until its context ends.
func TestRunWaitsRetryAfter(t *testing.T) {
	srv := discordtest.NewServer(t)
	srv.RateLimitNext("GET /gateway/bot", 3*time.Second)
	clk := backofftest.NewClock(time.Now())
	c := runClient(t, srv, srv.Token, clk)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	srv.WaitReady(t)
	if got := clk.Sleeps(); len(got) != 1 || got[0] != 3*time.Second {
		t.Errorf("waits %v, want one of the 429's retry_after (3s)", got)
	}
	if n := len(srv.RequestsTo("GET /gateway/bot")); n < 2 {
		t.Errorf("%d requests for the gateway, want the refused one and more", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context ended: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
}

// TestRunStopsOnARefusedToken: a token Discord refuses ends Run with
// ErrUnauthorized, without retrying.
func TestRunStopsOnARefusedToken(t *testing.T) {
	srv := discordtest.NewServer(t)
	clk := backofftest.NewClock(time.Now())
	c := runClient(t, srv, "not-the-token", clk)
	err := c.Run(context.Background())
	if !errors.Is(err, discord.ErrUnauthorized) || len(clk.Sleeps()) != 0 {
		t.Errorf("Run = %v after waits %v, want ErrUnauthorized at once", err, clk.Sleeps())
	}
	c.Close(context.Background())
}
