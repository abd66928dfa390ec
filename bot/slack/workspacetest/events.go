package workspacetest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

// Event is an Events API event_callback, as Slack delivers it.
type Event struct {
	// ID is the event_id; TS the ts of the message it carries, if any.
	ID, TS string
	// Body is the JSON Slack sends (over HTTP, or as a Socket Mode
	// envelope's payload).
	Body []byte
}

// Said is a message a person posts; the event helpers turn it into events.
type Said struct {
	// Channel is where: C… for channels, D… for direct messages.
	Channel string
	// User wrote it; Text is what they wrote (Slack's mrkdwn).
	User, Text string
	// ThreadTS is the thread it replies in ("" for a new message).
	ThreadTS string
}

// Post records a person's message and returns the message event Slack
// sends for it (message.channels, message.im, ...).
func (w *Workspace) Post(s Said) Event {
	inner, ts := w.say(s)
	inner["type"] = "message"
	inner["channel_type"] = channelType(s.Channel)
	return w.event(inner, ts)
}

// Mention records a person's message mentioning the app ("<@BOT> " and
// text) and returns the app_mention event, and the message event Slack
// also sends to an app subscribed to the channel's messages.
func (w *Workspace) Mention(s Said) (mention, message Event) {
	s.Text = "<@" + w.BotUserID + "> " + s.Text
	inner, ts := w.say(s)
	inner["type"] = "app_mention"
	mention = w.event(inner, ts)
	msg := map[string]any{}
	for k, v := range inner {
		msg[k] = v
	}
	msg["type"] = "message"
	msg["channel_type"] = channelType(s.Channel)
	return mention, w.event(msg, ts)
}

// AssistantThreadStarted returns the assistant_thread_started event for a
// new assistant thread in the DM channel with user; it returns the
// thread's ts.
func (w *Workspace) AssistantThreadStarted(channel, user string) (Event, string) {
	w.mu.Lock()
	ts := w.nextTS()
	// The thread's root, which Slack writes when the thread starts.
	w.messages = append(w.messages, &Message{Channel: channel, TS: ts})
	w.mu.Unlock()
	ev := w.event(map[string]any{
		"type": "assistant_thread_started",
		"assistant_thread": map[string]any{"user_id": user, "channel_id": channel, "thread_ts": ts,
			"context": map[string]any{"channel_id": "", "team_id": w.TeamID, "enterprise_id": ""}},
		"event_ts": ts,
	}, ts)
	return ev, ts
}

// Other returns an event_callback carrying inner as its event, for
// events the helpers above do not build.
func (w *Workspace) Other(inner map[string]any) Event { return w.event(inner, "") }

// say records a person's message and returns the inner event's common
// fields.
func (w *Workspace) say(s Said) (map[string]any, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ts := w.nextTS()
	w.messages = append(w.messages, &Message{Channel: s.Channel, TS: ts, ThreadTS: s.ThreadTS, User: s.User, Text: s.Text})
	w.touch()
	inner := map[string]any{"user": s.User, "text": s.Text, "ts": ts, "channel": s.Channel, "event_ts": ts,
		"team": w.TeamID, "client_msg_id": fmt.Sprintf("c0ffee00-0000-4000-8000-%012d", w.seq)}
	if s.ThreadTS != "" {
		inner["thread_ts"] = s.ThreadTS
		if root := w.find(s.Channel, s.ThreadTS); root != nil {
			inner["parent_user_id"] = root.User
		}
	}
	return inner, ts
}

func channelType(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case strings.HasPrefix(channel, "G"):
		return "group"
	}
	return "channel"
}

// event wraps an inner event in its event_callback.
func (w *Workspace) event(inner map[string]any, ts string) Event {
	w.mu.Lock()
	w.seq++
	id := fmt.Sprintf("Ev%08d", w.seq)
	w.mu.Unlock()
	body, _ := json.Marshal(map[string]any{
		"token": "legacy-verification-token", "team_id": w.TeamID, "api_app_id": w.AppID,
		"event": inner, "type": "event_callback", "event_id": id, "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"enterprise_id": nil, "team_id": w.TeamID, "user_id": w.BotUserID,
			"is_bot": true, "is_enterprise_install": false}},
		"is_ext_shared_channel": false, "event_context": "4-" + id,
	})
	return Event{ID: id, TS: ts, Body: body}
}

// URLVerification is the body Slack posts when the Request URL is set.
func URLVerification(challenge string) []byte {
	b, _ := json.Marshal(map[string]string{"token": "legacy-verification-token", "challenge": challenge,
		"type": "url_verification"})
	return b
}

// Click presses a button the app drew in message m as user, and returns
// the block_actions payload Slack sends: the button's own action ID,
// block ID and value, and the message it is in.
func (w *Workspace) Click(tb testing.TB, m Message, actionID, user string) []byte {
	tb.Helper()
	btn, blockID, ok := m.Button(actionID)
	if !ok {
		tb.Fatalf("workspacetest: message %s/%s has no button %q (buttons: %q)", m.Channel, m.TS, actionID, m.ButtonTexts())
	}
	w.mu.Lock()
	w.seq++
	trigger := fmt.Sprintf("%d.%d.trigger%04d", time.Now().Unix(), w.seq, w.seq)
	w.mu.Unlock()
	blocks, _ := json.Marshal(m.Blocks)
	container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": m.Ephemeral}
	message := map[string]any{"type": "message", "user": m.User, "ts": m.TS, "text": m.Text,
		"blocks": json.RawMessage(blocks), "bot_id": w.BotID}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
		message["thread_ts"] = m.ThreadTS
	}
	payload, _ := json.Marshal(map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "team_id": w.TeamID},
		"api_app_id": w.AppID, "token": "legacy-verification-token",
		"container":    container,
		"trigger_id":   trigger,
		"team":         map[string]any{"id": w.TeamID, "domain": "docent-test"},
		"channel":      map[string]any{"id": m.Channel, "name": "channel-" + strings.ToLower(m.Channel)},
		"message":      message,
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": "https://hooks.slack.com/actions/" + w.TeamID + "/1/x",
		"actions": []map[string]any{{
			"action_id": btn.ActionID, "block_id": blockID, "type": "button", "value": btn.Value,
			"text":      map[string]any{"type": "plain_text", "text": btn.Text.Text, "emoji": true},
			"action_ts": fmt.Sprintf("%d.000100", time.Now().Unix()),
		}},
	})
	return payload
}

// SubmitView returns the view_submission payload for a modal the app
// opened, with values typed into its plain-text inputs, by block ID.
func (w *Workspace) SubmitView(v View, user string, values map[string]string) []byte {
	state := map[string]any{}
	for _, b := range v.View.Blocks.BlockSet {
		in, ok := b.(*slack.InputBlock)
		if !ok {
			continue
		}
		el, ok := in.Element.(*slack.PlainTextInputBlockElement)
		if !ok {
			continue
		}
		value := map[string]any{"type": "plain_text_input", "value": nil}
		if s, ok := values[in.BlockID]; ok {
			value["value"] = s
		}
		state[in.BlockID] = map[string]any{el.ActionID: value}
	}
	return w.viewPayload("view_submission", v, user, map[string]any{"values": state})
}

// CloseView returns the view_closed payload for a modal the app opened
// with notify_on_close.
func (w *Workspace) CloseView(v View, user string) []byte {
	return w.viewPayload("view_closed", v, user, nil)
}

func (w *Workspace) viewPayload(typ string, v View, user string, state map[string]any) []byte {
	blocks, _ := json.Marshal(v.View.Blocks)
	view := map[string]any{"id": v.ID, "team_id": w.TeamID, "type": "modal", "blocks": json.RawMessage(blocks),
		"private_metadata": v.View.PrivateMetadata, "callback_id": v.View.CallbackID, "app_id": w.AppID,
		"bot_id": w.BotID, "hash": "1710000000.hash", "notify_on_close": v.View.NotifyOnClose}
	if state != nil {
		view["state"] = state
	}
	payload, _ := json.Marshal(map[string]any{
		"type": typ, "team": map[string]any{"id": w.TeamID, "domain": "docent-test"},
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "team_id": w.TeamID},
		"api_app_id": w.AppID, "token": "legacy-verification-token", "view": view, "is_cleared": false,
	})
	return payload
}

// Sign returns the headers Slack sends with body at time at: the request
// timestamp and the v0 signature over "v0:timestamp:body".
func (w *Workspace) Sign(body []byte, at time.Time) http.Header {
	return SignWith(w.SigningSecret, body, at)
}

// SignWith signs body as Slack would with another signing secret.
func SignWith(secret string, body []byte, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

// PostEvent sends an Events API request to url as Slack does: JSON,
// signed now; retry > 0 adds X-Slack-Retry-Num and X-Slack-Retry-Reason.
func (w *Workspace) PostEvent(tb testing.TB, url string, body []byte, retry int) *http.Response {
	tb.Helper()
	h := w.Sign(body, time.Now())
	h.Set("Content-Type", "application/json")
	if retry > 0 {
		h.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
		h.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	return Do(tb, url, body, h)
}

// PostInteraction sends an interactivity request to url as Slack does:
// the payload form-encoded as payload=, signed now.
func (w *Workspace) PostInteraction(tb testing.TB, url string, payload []byte) *http.Response {
	tb.Helper()
	body := []byte(formPayload(payload))
	h := w.Sign(body, time.Now())
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	return Do(tb, url, body, h)
}

func formPayload(payload []byte) string {
	return url.Values{"payload": {string(payload)}}.Encode()
}

// Do posts body to url with headers h and returns the response with its
// body read and closed (available as the Body of a bytes.Reader).
func Do(tb testing.TB, url string, body []byte, h http.Header) *http.Response {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

// socketMode serves the Socket Mode websocket: hello on connect, pings
// every PingInterval, and acks read back by envelope ID.
func (w *Workspace) socketMode(rw http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	ws, err := up.Upgrade(rw, r, nil)
	if err != nil {
		return
	}
	c := &socketConn{ws: ws, done: make(chan struct{})}
	w.mu.Lock()
	old := w.conn
	w.conn = c
	w.conns++
	w.touch()
	w.mu.Unlock()
	if old != nil {
		old.close()
	}
	defer func() {
		c.close()
		w.mu.Lock()
		if w.conn == c {
			w.conn = nil
		}
		w.touch()
		w.mu.Unlock()
	}()
	if err := c.write(map[string]any{"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "applink-local", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": w.AppID}}); err != nil {
		return
	}
	go func() {
		t := time.NewTicker(w.PingInterval)
		defer t.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-t.C:
				if c.ping() != nil {
					return
				}
			}
		}
	}()
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		w.mu.Lock()
		if sent, ok := w.sent[ack.EnvelopeID]; ok {
			if _, dup := w.acks[ack.EnvelopeID]; !dup {
				w.acks[ack.EnvelopeID] = Ack{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, After: time.Since(sent)}
				w.touch()
			}
		}
		w.mu.Unlock()
	}
}

// WaitConnected waits until the app holds a Socket Mode connection, and
// returns how many it has opened so far.
func (w *Workspace) WaitConnected(tb testing.TB) int {
	tb.Helper()
	var n int
	w.Wait(tb, 30*time.Second, "a Socket Mode connection", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		n = w.conns
		return w.conn != nil
	})
	return n
}

// Send delivers a Socket Mode envelope of type typ ("events_api",
// "interactive") with payload, waits for its ack and returns it; the
// test fails when no ack comes within 10 seconds.
func (w *Workspace) Send(tb testing.TB, typ string, payload []byte) Ack {
	tb.Helper()
	w.WaitConnected(tb)
	w.mu.Lock()
	w.envelope++
	id := fmt.Sprintf("env-%04d-%d", w.envelope, time.Now().UnixNano())
	w.sent[id] = time.Now()
	c := w.conn
	w.mu.Unlock()
	env := map[string]any{"envelope_id": id, "payload": json.RawMessage(payload), "type": typ,
		"accepts_response_payload": typ != "events_api"}
	if typ == "events_api" {
		env["retry_attempt"], env["retry_reason"] = 0, ""
	}
	if c == nil || c.write(env) != nil {
		tb.Fatalf("workspacetest: no Socket Mode connection to send %s", typ)
	}
	var got Ack
	w.Wait(tb, 10*time.Second, "the ack of envelope "+id, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		var ok bool
		got, ok = w.acks[id]
		return ok
	})
	return got
}

// Disconnect asks the app to reconnect, as Slack does before it moves a
// connection (a disconnect message, reason refresh_requested).
func (w *Workspace) Disconnect(tb testing.TB) {
	tb.Helper()
	w.mu.Lock()
	c := w.conn
	w.mu.Unlock()
	if c == nil {
		tb.Fatal("workspacetest: no Socket Mode connection")
	}
	_ = c.write(map[string]any{"type": "disconnect", "reason": "refresh_requested",
		"debug_info": map[string]any{"host": "applink-local"}})
}
