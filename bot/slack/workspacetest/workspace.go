// Package workspacetest is a local Slack workspace for tests of the Slack
// adapter and of the binary that runs it. It is slack-go's slacktest
// server with the Web API methods docent calls added (every call
// recorded, tokens checked, Block Kit limits enforced, faults such as 429
// injectable), a Socket Mode websocket that speaks the envelope protocol
// (hello, events_api and interactive envelopes acknowledged by
// envelope_id, server pings, disconnect), and Events API and
// interactivity requests signed with the signing secret for HTTP mode.
// Events and button presses are built in the shapes Slack documents, from
// what the app actually posted: a test presses the button the bot drew.
package workspacetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slacktest"
)

// Workspace is a running local Slack. Its fields are fixed at New.
type Workspace struct {
	// BotToken, AppToken and SigningSecret are the app's credentials; the
	// Web API refuses other tokens with invalid_auth.
	BotToken, AppToken, SigningSecret string
	// BotUserID and BotID identify the app's bot user; TeamID and AppID
	// the workspace and the app.
	BotUserID, BotID, TeamID, AppID string
	// PingInterval is how often the Socket Mode server pings.
	PingInterval time.Duration

	srv *slacktest.Server

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	seq      int
	calls    []Call
	messages []*Message
	views    []View
	faults   map[string][]Fault
	// Socket Mode: the live connection, how many were opened, and the
	// acks received by envelope ID.
	conn     *socketConn
	conns    int
	sent     map[string]time.Time
	acks     map[string]Ack
	envelope int
}

// Call is one Web API call the app made.
type Call struct {
	// Method is the API method, e.g. "chat.postMessage".
	Method string
	// Args are the form values, or a JSON body's top-level fields (objects
	// and arrays as JSON text).
	Args map[string]string
	// At is when it arrived.
	At time.Time
}

// Message is a message in the workspace: posted by a person (through the
// event helpers) or by the app.
type Message struct {
	Channel, TS, ThreadTS string
	// User wrote it (the bot's user ID for the app's posts).
	User string
	// Text is the message text (the notification fallback for blocks);
	// Blocks its Block Kit blocks.
	Text   string
	Blocks slack.Blocks
	// Ephemeral messages (chat.postEphemeral) are seen by To only.
	Ephemeral bool
	To        string
	// Streamed is the markdown streamed into the message with
	// chat.startStream and chat.appendStream; Streaming is true until
	// chat.stopStream.
	Streamed  string
	Streaming bool
	// Edits counts chat.update calls on the message.
	Edits int
	// Reactions are the emoji names the app put on it.
	Reactions []string
}

// View is a modal the app opened.
type View struct {
	// ID is the view's ID; TriggerID the trigger it was opened with.
	ID, TriggerID string
	// View is the modal as the app sent it.
	View slack.ModalViewRequest
}

// Fault is what the next call to a method gets instead of its answer.
type Fault struct {
	// Status 429 answers "Too Many Requests" with RetryAfter seconds.
	Status     int
	RetryAfter int
	// Error answers {"ok": false, "error": Error}.
	Error string
}

// Ack is a Socket Mode acknowledgement.
type Ack struct {
	// EnvelopeID is the envelope it acknowledges; Payload what came with it.
	EnvelopeID string
	Payload    json.RawMessage
	// After is how long after sending the envelope the ack arrived.
	After time.Duration
}

// New starts a workspace; it stops when the test ends.
func New(tb testing.TB) *Workspace {
	tb.Helper()
	w := &Workspace{
		BotToken: "xoxb-test-bot-token", AppToken: "xapp-test-app-token", SigningSecret: "test-signing-secret",
		BotUserID: "UDOCENT01", BotID: "BDOCENT01", TeamID: "TTEAM0001", AppID: "ADOCENT01",
		PingInterval: 2 * time.Second,
		changed:      make(chan struct{}), faults: map[string][]Fault{}, acks: map[string]Ack{}, sent: map[string]time.Time{},
	}
	w.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		for method, h := range w.methods() {
			c.Handle("/"+method, w.api(method, h))
		}
		c.Handle("/socket-mode", w.socketMode)
	})
	w.srv.Start()
	tb.Cleanup(w.Close)
	return w
}

// Close stops the server and drops the Socket Mode connection.
func (w *Workspace) Close() {
	w.mu.Lock()
	conn := w.conn
	w.conn = nil
	w.mu.Unlock()
	if conn != nil {
		conn.close()
	}
	w.srv.Stop()
}

// APIURL is the Web API base to give the app (slack.api_url).
func (w *Workspace) APIURL() string { return w.srv.GetAPIURL() }

// FailNext makes the next calls to method fail, one fault per call.
func (w *Workspace) FailNext(method string, faults ...Fault) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults[method] = append(w.faults[method], faults...)
}

// Calls returns the calls made to method ("" for every call), in order.
func (w *Workspace) Calls(method string) []Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Call
	for _, c := range w.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns copies of the messages in channel ("" for every
// channel) in the order they were posted.
func (w *Workspace) Messages(channel string) []Message {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Message
	for _, m := range w.messages {
		if channel == "" || m.Channel == channel {
			out = append(out, m.copy())
		}
	}
	return out
}

// BotMessages returns the app's messages in a thread (channel and the
// thread's ts), ephemeral ones included.
func (w *Workspace) BotMessages(channel, thread string) []Message {
	var out []Message
	for _, m := range w.Messages(channel) {
		if m.User == w.BotUserID && (m.ThreadTS == thread || m.TS == thread) {
			out = append(out, m)
		}
	}
	return out
}

// Views returns the modals the app opened.
func (w *Workspace) Views() []View {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.views)
}

// Wait waits until cond holds (it is checked after every change) or
// fails the test after timeout.
func (w *Workspace) Wait(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		ch := w.changed
		w.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			tb.Fatalf("workspacetest: timed out after %s waiting for %s", timeout, what)
		}
	}
}

// WaitBotMessages waits until the app has posted at least n messages in
// the thread and returns them.
func (w *Workspace) WaitBotMessages(tb testing.TB, channel, thread string, n int) []Message {
	tb.Helper()
	var got []Message
	w.Wait(tb, 30*time.Second, fmt.Sprintf("%d bot messages in %s/%s", n, channel, thread), func() bool {
		got = w.BotMessages(channel, thread)
		return len(got) >= n
	})
	return got
}

// touch wakes Wait; callers hold w.mu.
func (w *Workspace) touch() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// nextTS returns a new, increasing message timestamp; callers hold w.mu.
func (w *Workspace) nextTS() string {
	w.seq++
	return fmt.Sprintf("1710000000.%06d", w.seq*100)
}

// find returns the message at channel/ts; callers hold w.mu.
func (w *Workspace) find(channel, ts string) *Message {
	for _, m := range w.messages {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

// Permalink is the permalink chat.getPermalink gives for a message.
func (w *Workspace) Permalink(channel, ts string) string {
	return "https://docent-test.slack.com/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
}

func (m *Message) copy() Message {
	c := *m
	c.Reactions = slices.Clone(m.Reactions)
	c.Blocks.BlockSet = slices.Clone(m.Blocks.BlockSet)
	return c
}

// AllText returns the message's text, streamed text and the text of its
// section, context, header and markdown blocks, one per line.
func (m Message) AllText() string {
	parts := []string{m.Text}
	if m.Streamed != "" {
		parts = append(parts, m.Streamed)
	}
	for _, b := range m.Blocks.BlockSet {
		switch b := b.(type) {
		case *slack.SectionBlock:
			if b.Text != nil {
				parts = append(parts, b.Text.Text)
			}
			for _, f := range b.Fields {
				parts = append(parts, f.Text)
			}
		case *slack.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok {
					parts = append(parts, t.Text)
				}
			}
		case *slack.HeaderBlock:
			if b.Text != nil {
				parts = append(parts, b.Text.Text)
			}
		case *slack.MarkdownBlock:
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Buttons returns the message's buttons, in order.
func (m Message) Buttons() []*slack.ButtonBlockElement {
	var out []*slack.ButtonBlockElement
	for _, b := range m.Blocks.BlockSet {
		if a, ok := b.(*slack.ActionBlock); ok && a.Elements != nil {
			for _, e := range a.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok {
					out = append(out, btn)
				}
			}
		}
	}
	return out
}

// ButtonTexts returns the labels of the message's buttons, in order.
func (m Message) ButtonTexts() []string {
	var out []string
	for _, b := range m.Buttons() {
		out = append(out, b.Text.Text)
	}
	return out
}

// Button returns the button with actionID and the ID of its block.
func (m Message) Button(actionID string) (*slack.ButtonBlockElement, string, bool) {
	for _, b := range m.Blocks.BlockSet {
		a, ok := b.(*slack.ActionBlock)
		if !ok || a.Elements == nil {
			continue
		}
		for _, e := range a.Elements.ElementSet {
			if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == actionID {
				return btn, a.BlockID, true
			}
		}
	}
	return nil, "", false
}

// socketConn is one Socket Mode websocket; writes are serialized.
type socketConn struct {
	mu   sync.Mutex
	ws   *websocket.Conn
	done chan struct{}
	once sync.Once
}

func (c *socketConn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *socketConn) ping() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
}

func (c *socketConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

// jsonResponse writes v as the JSON answer.
func jsonResponse(rw http.ResponseWriter, v any) {
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(v)
}

func apiError(rw http.ResponseWriter, code string) {
	jsonResponse(rw, map[string]any{"ok": false, "error": code})
}
