package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// RunSocketMode receives events over Socket Mode until ctx ends: it opens
// a connection (apps.connections.open with the app-level token gives the
// websocket URL), reconnects when Slack asks or the connection dies,
// acknowledges every envelope as soon as it arrives (Slack waits 3
// seconds) and carries the events and button presses out on their own
// goroutines. It returns nil when ctx ends and an error when the tokens
// are refused.
func (c *Client) RunSocketMode(ctx context.Context) error {
	if c.opts.AppToken == "" {
		return errors.New("slack: socket mode needs an app-level token")
	}
	smc := socketmode.New(c.api)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- smc.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			<-runErr
			return nil
		case err := <-runErr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slack: socket mode: %w", err)
		case evt := <-smc.Events:
			c.socketEvent(ctx, smc, evt)
		}
	}
}

func (c *Client) socketEvent(ctx context.Context, smc *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		c.log.DebugContext(ctx, "socket mode connecting")
	case socketmode.EventTypeConnected:
		c.log.InfoContext(ctx, "socket mode connected")
	case socketmode.EventTypeConnectionError:
		c.log.WarnContext(ctx, "socket mode connection failed; retrying", slog.Any("error", connErr(evt.Data)))
	case socketmode.EventTypeInvalidAuth:
		c.log.ErrorContext(ctx, "socket mode: the app-level token was refused")
	case socketmode.EventTypeErrorBadMessage:
		// An envelope slack-go cannot read (an event type it does not
		// know): acknowledged, so that Slack does not redeliver it.
		if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
			var env struct {
				EnvelopeID string `json:"envelope_id"`
			}
			if json.Unmarshal(bad.Message, &env) == nil && env.EnvelopeID != "" {
				if err := smc.AckCtx(ctx, env.EnvelopeID, nil); err != nil {
					c.log.WarnContext(ctx, "socket mode ack", slog.Any("error", err))
				}
			}
			c.log.DebugContext(ctx, "socket mode: envelope ignored", slog.Any("error", bad.Cause))
		}
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		c.log.WarnContext(ctx, "socket mode", slog.String("event", string(evt.Type)))
	case socketmode.EventTypeEventsAPI:
		// The work is handed over before the ack, so that an acked
		// envelope is always one the client is working on (or refused).
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if ok && ev.Type == slackevents.CallbackEvent {
			if !c.goWork(func(ctx context.Context) { c.handleEvent(ctx, ev) }) {
				c.log.WarnContext(ctx, "event dropped while shutting down")
			}
		}
		c.ack(ctx, smc, evt)
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slackapi.InteractionCallback)
		if ok {
			if !c.goWork(func(ctx context.Context) { c.handleInteraction(ctx, cb) }) {
				c.log.WarnContext(ctx, "interaction dropped while shutting down")
			}
		}
		c.ack(ctx, smc, evt)
	case socketmode.EventTypeSlashCommand:
		c.ack(ctx, smc, evt)
	}
}

// ack acknowledges an envelope.
func (c *Client) ack(ctx context.Context, smc *socketmode.Client, evt socketmode.Event) {
	if evt.Request == nil {
		return
	}
	if err := smc.AckCtx(ctx, evt.Request.EnvelopeID, nil); err != nil {
		c.log.WarnContext(ctx, "socket mode ack", slog.Any("error", err))
	}
}

func connErr(data any) error {
	if e, ok := data.(*slackapi.ConnectionErrorEvent); ok {
		return e.ErrorObj
	}
	return nil
}
