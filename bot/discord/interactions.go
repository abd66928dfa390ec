package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/docent-hq/docent/bot"
)

// acknowledge sends an interaction's initial response (Discord wants one
// within 3 seconds) and returns the rest of the work:
//
//   - /ask: a deferred channel message (the asker sees "thinking"), then
//     the answer fills it;
//   - Not helpful: a modal asking what was wrong (optional), whose
//     submission stores the rating with the reason;
//   - any other button, a modal submission: a deferred update (no
//     visible change), then the action; notes for the presser alone are
//     ephemeral follow-ups.
func (c *Client) acknowledge(ctx context.Context, ix *discordgo.Interaction) (func(context.Context), error) {
	respond := func(r *discordgo.InteractionResponse) error {
		if err := c.s.InteractionRespond(ix, r, discordgo.WithContext(ctx)); err != nil {
			return fmt.Errorf("discord: respond to interaction %s: %w", ix.ID, clean(err))
		}
		return nil
	}
	nothing := func(context.Context) {}
	switch ix.Type {
	case discordgo.InteractionApplicationCommand:
		if ix.ApplicationCommandData().Name != c.cfg.Command {
			return nothing, respond(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
				Data: &discordgo.InteractionResponseData{Content: "I don't know that command.", Flags: discordgo.MessageFlagsEphemeral}})
		}
		if err := respond(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}); err != nil {
			return nil, err
		}
		return func(ctx context.Context) { c.onCommand(ctx, ix) }, nil

	case discordgo.InteractionMessageComponent:
		kind, id, root, ok := parseCustomID(ix.MessageComponentData().CustomID)
		if ok && kind == bot.ActionNotHelpful {
			return nothing, respond(reasonModal(id, root))
		}
		if err := respond(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}); err != nil {
			return nil, err
		}
		if !ok {
			c.log.WarnContext(ctx, "discord: a button docent does not know", slog.String("custom_id", ix.MessageComponentData().CustomID))
			return nothing, nil
		}
		return func(ctx context.Context) { c.onAction(ctx, ix, bot.Action{Kind: kind}, id, root) }, nil

	case discordgo.InteractionModalSubmit:
		data := ix.ModalSubmitData()
		kind, id, root, ok := parseCustomID(data.CustomID)
		if err := respond(&discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}); err != nil {
			return nil, err
		}
		if !ok || kind != bot.ActionNotHelpful {
			return nothing, nil
		}
		return func(ctx context.Context) {
			c.onAction(ctx, ix, bot.Action{Kind: kind, Reason: textInput(data.Components, reasonInput)}, id, root)
		}, nil
	}
	return nothing, nil
}

// reasonInput is the custom ID of the modal's text field.
const reasonInput = "reason"

// reasonModal asks why an answer did not help; the answer is optional.
func reasonModal(turn int64, root string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
		CustomID: customID(bot.ActionNotHelpful, turn, root),
		Title:    "What was wrong with the answer?",
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.TextInput{CustomID: reasonInput, Label: "What was missing or wrong? (optional)",
				Style: discordgo.TextInputParagraph, Required: false, MaxLength: 1000,
				Placeholder: "The policy changed in March; it also applies to contractors…"},
		}}},
	}}
}

// textInput returns the value of a modal's text input.
func textInput(rows []discordgo.MessageComponent, id string) string {
	for _, r := range rows {
		row, ok := r.(*discordgo.ActionsRow)
		if !ok {
			continue
		}
		for _, c := range row.Components {
			if in, ok := c.(*discordgo.TextInput); ok && in.CustomID == id {
				return in.Value
			}
		}
	}
	return ""
}

// user is who started an interaction.
func user(ix *discordgo.Interaction) string {
	if ix.Member != nil && ix.Member.User != nil {
		return ix.Member.User.ID
	}
	if ix.User != nil {
		return ix.User.ID
	}
	return ""
}

// onCommand answers /ask as a question that mentions the bot. In a plain
// channel the conversation's root is the response message, so that a
// thread started from it continues the conversation.
func (c *Client) onCommand(ctx context.Context, ix *discordgo.Interaction) {
	var question string
	for _, o := range ix.ApplicationCommandData().Options {
		if o.Name == "question" && o.Type == discordgo.ApplicationCommandOptionString {
			question = o.StringValue()
		}
	}
	p := &poster{c: c, ix: ix, question: question, pending: true}
	defer p.abandon(ctx)
	msg := bot.Message{EventID: ix.ID, User: user(ix), Text: question, Mentioned: true}
	if ix.GuildID == "" {
		msg.Direct = true
		msg.Thread = bot.Thread{Platform: Platform, Channel: ix.ChannelID, ID: ix.ChannelID}
	} else {
		ch, err := c.channel(ctx, ix.ChannelID)
		if err != nil {
			c.log.ErrorContext(ctx, "discord: /ask in an unknown channel", slog.Any("error", err))
			return
		}
		if ch.thread() {
			msg.Thread = bot.Thread{Platform: Platform, Channel: ch.parentID, ID: ix.ChannelID}
		} else {
			orig, err := c.s.InteractionResponse(ix, discordgo.WithContext(ctx))
			if err != nil {
				c.log.ErrorContext(ctx, "discord: read the deferred response", slog.Any("error", clean(err)))
				return
			}
			msg.Thread = bot.Thread{Platform: Platform, Channel: ix.ChannelID, ID: orig.ID}
			msg.TopLevel = true
		}
	}
	if err := c.core.HandleMessage(ctx, msg, p); err != nil {
		c.log.ErrorContext(ctx, "discord: handle /"+c.cfg.Command, slog.String("interaction", ix.ID),
			slog.String("thread", msg.Thread.ID), slog.Any("error", err))
		if p.takePending() { // failed before any reply: say so rather than spin
			_ = p.fillOriginal(ctx, c.render(bot.Reply{Kind: bot.ReplyFailed,
				Text: "Sorry, something went wrong. Please try again in a moment."}, msg.Thread))
		}
	}
}

// onAction carries out a button press (or the reason modal) through the
// core. Feedback and handoff act on the conversation the answer is in:
// the thread the button is in, else the root its custom ID names.
func (c *Client) onAction(ctx context.Context, ix *discordgo.Interaction, a bot.Action, id int64, root string) {
	a.User = user(ix)
	if a.Kind == bot.ActionClaim || a.Kind == bot.ActionResolve || a.Kind == bot.ActionResume {
		a.HandoffID = id
	} else {
		a.TurnID = id
		t, err := c.actionThread(ctx, ix, root)
		if err != nil {
			c.log.ErrorContext(ctx, "discord: button in an unknown channel", slog.Any("error", err))
			return
		}
		a.Thread = t
	}
	if err := c.core.HandleAction(ctx, a, &poster{c: c, ix: ix}); err != nil {
		c.log.ErrorContext(ctx, "discord: handle "+string(a.Kind), slog.String("interaction", ix.ID), slog.Any("error", err))
	}
}

func (c *Client) actionThread(ctx context.Context, ix *discordgo.Interaction, root string) (bot.Thread, error) {
	if ix.GuildID == "" {
		return bot.Thread{Platform: Platform, Channel: ix.ChannelID, ID: ix.ChannelID}, nil
	}
	ch, err := c.channel(ctx, ix.ChannelID)
	if err != nil {
		return bot.Thread{}, err
	}
	if ch.thread() {
		return bot.Thread{Platform: Platform, Channel: ch.parentID, ID: ix.ChannelID}, nil
	}
	if root == "" && ix.Message != nil {
		root = ix.Message.ID
	}
	return bot.Thread{Platform: Platform, Channel: ix.ChannelID, ID: root}, nil
}

// signatureWindow is how old a signed request may be: Discord signs the
// time it sends at, and an older request is a replay.
const signatureWindow = 5 * time.Minute

// maxBody bounds an interaction request.
const maxBody = 1 << 20

// InteractionsHandler serves the application's Interactions Endpoint URL
// (POST, e.g. /discord/interactions): Discord then delivers interactions
// over HTTP instead of the gateway. Each request's Ed25519 signature
// (X-Signature-Ed25519 over X-Signature-Timestamp and the body) is
// checked against the public key before the body is parsed; a missing,
// malformed, wrong or stale signature gets 401. PING is answered with
// PONG; other interactions get their initial response through the API
// and 202 here, and the work goes on after the request. It returns nil
// when no public key is configured.
func (c *Client) InteractionsHandler() http.Handler {
	if c.pub == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := c.verify(r.Header, body, time.Now()); err != nil {
			c.log.WarnContext(r.Context(), "discord: interaction refused", slog.String("reason", err.Error()),
				slog.String("remote", r.RemoteAddr))
			http.Error(w, "invalid request signature", http.StatusUnauthorized)
			return
		}
		var ix discordgo.Interaction
		if err := json.Unmarshal(body, &ix); err != nil {
			http.Error(w, "malformed interaction", http.StatusBadRequest)
			return
		}
		if ix.Type == discordgo.InteractionPing {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"type":1}`))
			return
		}
		acked := make(chan error, 1)
		started := c.spawnAck(func(ctx context.Context) {
			work, err := c.acknowledge(ctx, &ix)
			acked <- err
			if err == nil {
				c.spawn(work) // after the HTTP answer, on the work intake
			}
		})
		if !started {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		if err := <-acked; err != nil {
			c.log.ErrorContext(r.Context(), "discord: acknowledge interaction", slog.String("interaction", ix.ID), slog.Any("error", err))
			http.Error(w, "could not respond", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
}

// verify checks an interaction's signature and its age.
func (c *Client) verify(h http.Header, body []byte, now time.Time) error {
	sigHex, ts := h.Get("X-Signature-Ed25519"), h.Get("X-Signature-Timestamp")
	if sigHex == "" || ts == "" {
		return errors.New("missing signature headers")
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errors.New("malformed signature")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("malformed timestamp")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > signatureWindow || d < -signatureWindow {
		return fmt.Errorf("timestamp %s off by %s", ts, d.Round(time.Second))
	}
	if !ed25519.Verify(c.pub, append([]byte(ts), body...), sig) {
		return errors.New("signature does not match")
	}
	return nil
}
