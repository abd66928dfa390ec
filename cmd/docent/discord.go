package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/discord"
	"github.com/docent-hq/docent/config"
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
	log    *slog.Logger
}

// openDiscord wires the discord section to the bot core (answers through
// the Recorder, state in the store). It does not connect: Run does.
func openDiscord(_ context.Context, m *Main) (chatAdapter, error) {
	dc := m.Config.Discord
	if !dc.Enabled() {
		return nil, nil
	}
	log := m.Log.With(slog.String("platform", discord.Platform))
	inline := map[string]bool{}
	for _, c := range dc.Channels {
		inline[c.ID] = c.Reply == "inline"
	}
	bc := discordBotConfig(dc)
	bc = m.chatConfig(discord.Platform, bc)
	core := bot.New(discord.Platform, m.chatAsker(), m.chatStore(), m.staleChecker(), bc, log)
	client, err := discord.NewClient(discord.Config{
		Token: dc.Token, APIURL: dc.APIURL, ApplicationID: dc.ApplicationID, PublicKey: dc.PublicKey,
		EscalationChannel: dc.EscalationChannel, EscalationRole: dc.EscalationRole, Command: dc.Command, Inline: inline,
	}, core, log)
	if err != nil {
		return nil, err
	}
	return &discordAdapter{client: client, log: log}, nil
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

// Run connects, retrying with backoff (1s, doubling to a minute) while
// Discord cannot be reached, and takes events until ctx ends. A token
// Discord refuses ends it with the error.
func (a *discordAdapter) Run(ctx context.Context) error {
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		err := a.client.Open(ctx)
		if err == nil {
			break
		}
		if errors.Is(err, discord.ErrUnauthorized) {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		a.log.Error("discord: cannot connect; retrying", slog.Duration("in", wait), slog.Any("error", err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	<-ctx.Done()
	a.client.Stop()
	return nil
}

func (a *discordAdapter) Shutdown(ctx context.Context) error { return a.client.Close(ctx) }
