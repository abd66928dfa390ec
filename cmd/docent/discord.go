package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/discord"
	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/store"
)

// The recorder streams answers to the chat adapters that can show them.
var _ bot.StreamAsker = (*answer.Recorder)(nil)

// discordInteractionsPath is where Discord delivers interactions when the
// application has an Interactions Endpoint URL (discord.public_key set).
const discordInteractionsPath = "/discord/interactions"

// discordAdapter runs bot/discord: the gateway, and the interactions
// endpoint when configured.
type discordAdapter struct {
	client *discord.Client
}

// openDiscord wires the discord section to the bot core (answers through
// the Recorder, state in the store). It does not connect: Run does.
func openDiscord(_ context.Context, e env, d chatDeps) (chatAdapter, error) {
	dc := e.cfg.Discord
	if !dc.Enabled() {
		return nil, nil
	}
	log := e.log.With(slog.String("platform", discord.Platform))
	inline, forums := map[string]bool{}, map[string]discord.ForumTags{}
	for _, c := range dc.Channels {
		inline[c.ID] = c.Reply == "inline"
		if c.Tags != nil {
			t := c.Tags.WithDefaults()
			forums[c.ID] = discord.ForumTags{Answered: t.Answered, Handoff: t.Handoff, Solved: t.Solved}
		}
	}
	bc := discordBotConfig(dc)
	bc = d.botConfig(discord.Platform, bc)
	core := bot.New(discord.Platform, d.asker, d.store, d.stale, bc, log)
	client, err := discord.NewClient(discord.Config{
		Token: dc.Token, APIURL: dc.APIURL, ApplicationID: dc.ApplicationID, PublicKey: dc.PublicKey,
		EscalationChannel: dc.EscalationChannel, EscalationRole: dc.EscalationRole, Command: dc.Command, Inline: inline,
		Forums: forums, Resolutions: d.resolutions,
	}, core, log)
	if err != nil {
		return nil, err
	}
	return &discordAdapter{client: client}, nil
}

// discordBotConfig maps the discord section to the core's configuration.
func discordBotConfig(dc config.DiscordConfig) bot.Config {
	channel := func(c config.DiscordChannelConfig) bot.ChannelConfig {
		return bot.ChannelConfig{Sources: c.Sources, Labels: c.Labels, AutoAnswer: c.AutoAnswer}
	}
	cfg := bot.Config{Default: channel(dc.Default), Channels: map[string]bot.ChannelConfig{},
		FollowUps: bot.FollowUps(dc.FollowUps), History: dc.History, GroupName: dc.GroupName,
		UserRate: dc.UserRate, ChannelRate: dc.ChannelRate}
	for _, c := range dc.Channels {
		cfg.Channels[c.ID] = channel(c)
	}
	return cfg
}

// discordSeam describes the Discord adapter for `docent config`.
func discordSeam(cfg config.Config) Seam {
	about := "bot/discord over the gateway (discordgo), REST at the api_url"
	if cfg.Discord.PublicKey != "" {
		about += "; interactions at " + strings.TrimRight(cfg.Server.PublicURL, "/") + discordInteractionsPath
	}
	return Seam{"chat discord", cfg.Discord.APIURL, about}
}

func (a *discordAdapter) Routes(mux *http.ServeMux) {
	if h := a.client.InteractionsHandler(); h != nil {
		mux.Handle("POST "+discordInteractionsPath, h)
	}
}

// Run connects (bot/discord retries with backoff while Discord cannot be
// reached) and takes events until ctx ends. A token Discord refuses ends
// it with the error.
func (a *discordAdapter) Run(ctx context.Context) error { return a.client.Run(ctx) }

func (a *discordAdapter) Shutdown(ctx context.Context) error { return a.client.Close(ctx) }

// discordForums are the Discord forums configured with tags, whose posts
// the console's overview follows.
func discordForums(dc config.DiscordConfig) []store.ForumRef {
	if !dc.Enabled() {
		return nil
	}
	var out []store.ForumRef
	for _, c := range dc.Channels {
		if c.Tags != nil && c.ID != "" {
			out = append(out, store.ForumRef{Platform: discord.Platform, ID: c.ID})
		}
	}
	return out
}
