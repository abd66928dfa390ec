package main

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/bot/discord"
	"github.com/docent-hq/docent/bot/slack"
	"github.com/docent-hq/docent/config"
)

// The Recorder streams answers to the adapters when the model streams.
var _ bot.StreamAsker = (*answer.Recorder)(nil)

// chatAdapter is a chat platform serve runs beside the HTTP API.
type chatAdapter interface {
	// Routes adds the adapter's HTTP endpoints, if it has any.
	Routes(mux *http.ServeMux)
	// Run receives events until ctx ends; it returns an error only when
	// it cannot go on (credentials refused).
	Run(ctx context.Context) error
	// Shutdown waits for the answers in flight, until ctx ends.
	Shutdown(ctx context.Context) error
}

// chatDeps are what a chat adapter is built on: the bot core answers
// through the Recorder and keeps its state in the store.
type chatDeps struct {
	asker bot.Asker
	store bot.Store
	// stale flags stale sources beside answers (nil: no flags).
	stale bot.StaleChecker
	// loaded is closed once the index can answer (nil: always);
	// questions before it are held.
	loaded <-chan struct{}
	// admission admits each answer (nil: answered at once).
	admission bot.Admission
	// delivered counts each answer posted to its thread or not.
	delivered func(platform string, posted bool)
	// resolutions records how Discord forum posts were solved.
	resolutions discord.Resolutions
}

// chatOpener opens one chat adapter; it returns nil when its section is
// off.
type chatOpener func(ctx context.Context, e env, d chatDeps) (chatAdapter, error)

// chatOpeners open the chat adapters. A new platform is a package and a
// line here.
var chatOpeners = []chatOpener{
	openSlack,
	openDiscord,
}

// openChats opens every chat adapter the configuration turns on.
func (m *Main) openChats(ctx context.Context) ([]chatAdapter, error) {
	d := m.chatDeps()
	var out []chatAdapter
	for _, open := range chatOpeners {
		a, err := open(ctx, m.env(m.Config.DataDir), d)
		if err != nil {
			return nil, err
		}
		if a != nil {
			out = append(out, a)
		}
	}
	return out, nil
}

// staleChecker reads the documents' stored stale state, through which
// the chat adapters flag a stale source next to it; nil (no flags)
// before the wiring made it.
func (m *Main) staleChecker() bot.StaleChecker {
	if m.Stale == nil {
		return nil
	}
	return m.Stale
}

// chatSeams are the chat adapters cfg turns on, for `docent config`.
func chatSeams(cfg config.Config) []Seam {
	var out []Seam
	if sc := cfg.Slack; sc.Enabled() {
		about := "bot/slack over Socket Mode (app-level token, no public URL)"
		if sc.Mode == config.SlackHTTP {
			about = "bot/slack: Events API at " + strings.TrimRight(cfg.Server.PublicURL, "/") + slack.EventsPath +
				", interactivity at " + slack.InteractionsPath
		}
		out = append(out, Seam{"chat slack", sc.Mode, about})
	}
	if dc := cfg.Discord; dc.Enabled() {
		out = append(out, discordSeam(cfg))
	}
	return out
}

// slackAdapter runs bot/slack in the configured mode.
type slackAdapter struct {
	client *slack.Client
	mode   string
}

// openSlack wires the slack section to the bot core (answers through the
// Recorder, state in the store) and checks the bot token.
func openSlack(ctx context.Context, e env, d chatDeps) (chatAdapter, error) {
	sc := e.cfg.Slack
	if !sc.Enabled() {
		return nil, nil
	}
	log := e.log.With(slog.String("platform", "slack"))
	bc := slackBotConfig(sc)
	bc = d.botConfig("slack", bc)
	core := bot.New("slack", d.asker, d.store, d.stale, bc, log)
	var prompts []slack.Prompt
	for _, p := range sc.Assistant.Prompts {
		prompts = append(prompts, slack.Prompt{Title: p.Title, Message: p.Message})
	}
	client := slack.NewClient(core, slack.Options{
		APIURL: sc.APIURL, BotToken: sc.BotToken, AppToken: sc.AppToken, SigningSecret: sc.SigningSecret,
		EscalationChannel: sc.EscalationChannel, UserGroup: sc.UserGroup, Reaction: sc.Reaction,
		AssistantStatus: sc.Assistant.Status, PromptsTitle: sc.Assistant.PromptsTitle, Prompts: prompts,
		Logger: e.log,
	})
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &slackAdapter{client: client, mode: sc.Mode}, nil
}

// slackBotConfig maps the slack section to the core's configuration.
func slackBotConfig(sc config.SlackConfig) bot.Config {
	channel := func(c config.SlackChannelConfig) bot.ChannelConfig {
		return bot.ChannelConfig{Sources: c.Sources, Labels: c.Labels, AutoAnswer: c.AutoAnswer}
	}
	cfg := bot.Config{Default: channel(sc.Default), Channels: map[string]bot.ChannelConfig{},
		FollowUps: bot.FollowUps(sc.FollowUps), History: sc.History, GroupName: sc.GroupName,
		UserRate: sc.UserRate, ChannelRate: sc.ChannelRate}
	for _, c := range sc.Channels {
		cfg.Channels[c.ID] = channel(c)
	}
	return cfg
}

func (a *slackAdapter) Routes(mux *http.ServeMux) {
	if a.mode == config.SlackHTTP {
		h := a.client.Handler()
		mux.Handle("POST "+slack.EventsPath, h)
		mux.Handle("POST "+slack.InteractionsPath, h)
	}
}

func (a *slackAdapter) Run(ctx context.Context) error {
	if a.mode == config.SlackSocket {
		return a.client.RunSocketMode(ctx)
	}
	<-ctx.Done() // events arrive over HTTP
	return nil
}

func (a *slackAdapter) Shutdown(ctx context.Context) error { return a.client.Shutdown(ctx) }

// chatAsker is what the chat adapters ask through: the Recorder, with
// the /docs links of each answer signed when /docs needs a token (see
// console.DocLinks), so that citations open for the people they are
// shown to. The stored turn keeps the plain links.
func (m *Main) chatAsker() bot.Asker {
	if m.docLinks == nil {
		return m.Recorder
	}
	return signingAsker{rec: m.Recorder, sign: m.docLinks.Sign}
}

// chatStore is the store the chat adapters keep state in; a turn read
// back (for an escalation post) has its links signed like an answer.
func (m *Main) chatStore() bot.Store {
	if m.docLinks == nil {
		return m.Store
	}
	return signingStore{Store: m.Store, sign: m.docLinks.Sign}
}

// signingAsker signs the citation links of the turns it returns.
type signingAsker struct {
	rec  *answer.Recorder
	sign func(string) string
}

var _ bot.StreamAsker = signingAsker{}

func (a signingAsker) Ask(ctx context.Context, q docent.Question) (docent.Turn, error) {
	t, err := a.rec.Ask(ctx, q)
	return signTurn(t, a.sign), err
}

func (a signingAsker) AskStream(ctx context.Context, q docent.Question, onDelta func(string)) (docent.Turn, error) {
	t, err := a.rec.AskStream(ctx, q, onDelta)
	return signTurn(t, a.sign), err
}

// signingStore signs the citation links of the turns it reads.
type signingStore struct {
	bot.Store
	sign func(string) string
}

func (s signingStore) Turn(ctx context.Context, id int64) (docent.Turn, error) {
	t, err := s.Store.Turn(ctx, id)
	return signTurn(t, s.sign), err
}

// signTurn signs the URLs of t's citations, in a copy.
func signTurn(t docent.Turn, sign func(string) string) docent.Turn {
	cs := slices.Clone(t.Answer.Citations)
	for i := range cs {
		cs[i].URL = sign(cs[i].URL)
	}
	t.Answer.Citations = cs
	return t
}
