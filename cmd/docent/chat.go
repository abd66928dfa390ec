package main

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/discord"
	"github.com/docent-hq/docent/config"
)

// The recorder streams answers to the chat adapters that can show them.
var _ bot.StreamAsker = (*answer.Recorder)(nil)

// chatAdapter is a chat platform's adapter as serve runs it.
type chatAdapter interface {
	// Open connects; serve calls it again after a failure.
	Open(ctx context.Context) error
	// Close stops taking events and finishes the answers in flight.
	Close(ctx context.Context) error
}

// chat runs serve's chat adapters: each connects once the index has had
// its first sync (retrying until it can), their HTTP endpoints are served
// beside the API, and they close before the store does.
type chat struct {
	log      *slog.Logger
	names    []string
	adapters []chatAdapter
	// routes are the adapters' HTTP endpoints by mux pattern.
	routes map[string]http.Handler
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// openChat builds the configured chat adapters.
func (m *Main) openChat() (*chat, error) {
	c := &chat{log: m.Log, routes: map[string]http.Handler{}}
	if m.Config.Discord.Enabled() {
		d, err := m.openDiscord()
		if err != nil {
			return nil, err
		}
		c.names, c.adapters = append(c.names, "discord"), append(c.adapters, d)
		if h := d.InteractionsHandler(); h != nil {
			c.routes["POST /discord/interactions"] = h
		}
	}
	return c, nil
}

// openDiscord builds the Discord adapter over the answer pipeline and
// the store.
func (m *Main) openDiscord() (*discord.Client, error) {
	d := m.Config.Discord
	scope := func(c config.DiscordChannelConfig) bot.ChannelConfig {
		return bot.ChannelConfig{Sources: c.Sources, Labels: c.Labels, AutoAnswer: c.AutoAnswer}
	}
	channels, inline := map[string]bot.ChannelConfig{}, map[string]bool{}
	for _, c := range d.Channels {
		channels[c.ID] = scope(c)
		inline[c.ID] = c.Reply == "inline"
	}
	log := m.Log.With(slog.String("platform", discord.Platform))
	core := bot.New(discord.Platform, m.Recorder, m.Store, nil, bot.Config{
		Channels: channels, Default: scope(d.Default), FollowUps: bot.FollowUps(d.FollowUps), History: d.History,
		GroupName: d.GroupName, UserRate: d.UserRate, ChannelRate: d.ChannelRate,
	}, log)
	return discord.NewClient(discord.Config{
		Token: d.Token, APIURL: d.APIURL, ApplicationID: d.ApplicationID, PublicKey: d.PublicKey,
		EscalationChannel: d.EscalationChannel, EscalationRole: d.EscalationRole, Command: d.Command, Inline: inline,
	}, core, log)
}

// handler serves the adapters' endpoints beside api.
func (c *chat) handler(api http.Handler) http.Handler {
	if len(c.routes) == 0 {
		return api
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	for pattern, h := range c.routes {
		mux.Handle(pattern, h)
	}
	return mux
}

// start connects each adapter once ready is closed, retrying a failed
// connection with backoff (1s, doubling to a minute) until stop.
func (c *chat) start(ready <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for i, a := range c.adapters {
		name := c.names[i]
		c.wg.Go(func() {
			select {
			case <-ready:
			case <-ctx.Done():
				return
			}
			for wait := time.Second; ; wait = min(2*wait, time.Minute) {
				err := a.Open(ctx)
				if err == nil || ctx.Err() != nil {
					return
				}
				c.log.Error("chat: cannot connect; retrying", slog.String("platform", name),
					slog.Duration("in", wait), slog.Any("error", err))
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		})
	}
}

// stop ends connection attempts, then closes each adapter: it stops
// taking events and finishes the answers in flight (until ctx ends).
func (c *chat) stop(ctx context.Context) {
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
	for i, a := range c.adapters {
		if err := a.Close(ctx); err != nil {
			c.log.Warn("chat: close", slog.String("platform", c.names[i]), slog.Any("error", err))
		}
	}
}
