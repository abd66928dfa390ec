package discordtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// call makes a REST request as a bot would.
func call(t *testing.T, s *Server, method, path string, body any, auth bool) (int, apiError) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL+path, r)
	req.Header.Set("User-Agent", "DiscordBot (https://example.com, 1)")
	req.Header.Set("Content-Type", "application/json")
	if auth {
		req.Header.Set("Authorization", "Bot "+s.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e
}

func row(buttons ...Component) Component {
	return Component{Type: ComponentActionRow, Components: buttons}
}

func btn(id string) Component {
	return Component{Type: ComponentButton, Style: ButtonPrimary, Label: "B", CustomID: id}
}

// TestRefusesWhatDiscordRefuses: the server holds the bot to Discord's
// rules, so that adapter tests passing against it mean something.
func TestRefusesWhatDiscordRefuses(t *testing.T) {
	s := NewServer(t)
	text := s.AddChannel("general", ChannelText)
	forum := s.AddChannel("forum", ChannelForum)
	u := s.AddUser("alice")
	q := s.Post(text.ID, u, "hello")
	msgs := "/channels/" + text.ID + "/messages"
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		noAuth bool
		status int
		code   int
	}{
		{"content at the limit", "POST", msgs, map[string]any{"content": long(2000)}, false, 200, 0},
		{"content over the limit", "POST", msgs, map[string]any{"content": long(2001)}, false, 400, 50035},
		{"content over the limit in UTF-16 units", "POST", msgs, map[string]any{"content": strings.Repeat("😀", 1001)}, false, 400, 50035},
		{"empty message", "POST", msgs, map[string]any{"content": ""}, false, 400, 50006},
		{"no token", "POST", msgs, map[string]any{"content": "hi"}, true, 401, 0},
		{"a forum takes no messages", "POST", "/channels/" + forum.ID + "/messages", map[string]any{"content": "hi"}, false, 400, 50008},
		{"unknown channel", "POST", "/channels/1/messages", map[string]any{"content": "hi"}, false, 404, 10003},
		{"embed description over the limit", "POST", msgs, map[string]any{"embeds": []Embed{{Description: long(4097)}}}, false, 400, 50035},
		{"embeds over 6000 in total", "POST", msgs, map[string]any{"embeds": []Embed{{Description: long(4000)}, {Description: long(2001)}}}, false, 400, 50035},
		{"six buttons in a row", "POST", msgs, map[string]any{"content": "x", "components": []Component{
			row(btn("a"), btn("b"), btn("c"), btn("d"), btn("e"), btn("f"))}}, false, 400, 50035},
		{"duplicate custom IDs", "POST", msgs, map[string]any{"content": "x", "components": []Component{row(btn("a"), btn("a"))}}, false, 400, 50035},
		{"custom ID over 100", "POST", msgs, map[string]any{"content": "x", "components": []Component{row(btn(long(101)))}}, false, 400, 50035},
		{"a button outside a row", "POST", msgs, map[string]any{"content": "x", "components": []Component{btn("a")}}, false, 400, 50035},
		{"parse roles with a role list", "POST", msgs, map[string]any{"content": "x", "allowed_mentions": map[string]any{
			"parse": []string{"roles"}, "roles": []string{"1"}}}, false, 400, 50035},
		{"edit another user's message", "PATCH", msgs + "/" + q.ID, map[string]any{"content": "x"}, false, 403, 50005},
		{"thread name over 100", "POST", msgs + "/" + q.ID + "/threads", map[string]any{"name": long(101)}, false, 400, 50035},
		{"thread from a message", "POST", msgs + "/" + q.ID + "/threads", map[string]any{"name": "t"}, false, 201, 0},
		{"a second thread from it", "POST", msgs + "/" + q.ID + "/threads", map[string]any{"name": "t"}, false, 400, 160004},
		{"command name with capitals", "PUT", "/applications/" + s.AppID + "/commands", []Command{{Name: "Ask", Description: "d"}}, false, 400, 50035},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e := call(t, s, tt.method, tt.path, tt.body, !tt.noAuth)
			if status != tt.status || e.Code != tt.code {
				t.Errorf("%s %s = %d (code %d, %q), want %d (code %d)", tt.method, tt.path, status, e.Code, e.Message, tt.status, tt.code)
			}
		})
	}
}

func TestInteractionCallbacks(t *testing.T) {
	s := NewServer(t)
	text := s.AddChannel("general", ChannelText)
	u := s.AddUser("alice")
	if status, _ := call(t, s, "PUT", "/applications/"+s.AppID+"/commands", []Command{{Name: "ask", Description: "Ask",
		Options: []CommandOption{{Type: 3, Name: "question", Description: "q", Required: true}}}}, true); status != 200 {
		t.Fatalf("register = %d", status)
	}
	ix := s.Command(text.ID, u, "ask", map[string]string{"question": "why?"})
	cb := "/interactions/" + ix.ID + "/" + ix.Token + "/callback"
	if status, e := call(t, s, "POST", cb, map[string]any{"type": CallbackDeferredUpdate}, false); status != 400 {
		t.Errorf("deferred update for a command = %d %+v, want 400", status, e)
	}
	if status, _ := call(t, s, "POST", cb, map[string]any{"type": CallbackDeferredChannelMessage}, false); status != 204 {
		t.Fatalf("defer = %d", status)
	}
	if status, e := call(t, s, "POST", cb, map[string]any{"type": CallbackDeferredChannelMessage}, false); status != 400 || e.Code != 40060 {
		t.Errorf("second response = %d %+v, want 400 40060", status, e)
	}
	hook := "/webhooks/" + s.AppID + "/" + ix.Token
	if status, _ := call(t, s, "POST", hook, map[string]any{"content": "answer", "flags": FlagEphemeral}, false); status != 200 {
		t.Fatalf("follow-up = %d", status)
	}
	orig, _ := ix.Original()
	if orig.Content != "answer" || orig.Flags&(FlagEphemeral|FlagLoading) != 0 || len(ix.Followups()) != 0 {
		t.Errorf("the first follow-up after a deferral should fill the loading message: %+v, %d follow-ups", orig, len(ix.Followups()))
	}

	late := NewServer(t)
	late.ackDeadline = time.Nanosecond // past by the time any response arrives
	lt := late.AddChannel("general", ChannelText)
	late.commands = []Command{{ID: "1", Name: "ask"}}
	lix := late.Command(lt.ID, u, "ask", nil)
	if status, e := call(t, late, "POST", "/interactions/"+lix.ID+"/"+lix.Token+"/callback",
		map[string]any{"type": CallbackDeferredChannelMessage}, false); status != 404 || e.Code != 10062 {
		t.Errorf("response after the deadline = %d %+v, want 404 10062", status, e)
	}
}

func TestGatewayChecksTokenAndIntents(t *testing.T) {
	s := NewServer(t)
	text := s.AddChannel("general", ChannelText)
	u := s.AddUser("alice")
	dial := func(token string, intents int) *websocket.Conn {
		ws, _, err := websocket.DefaultDialer.Dial(s.gatewayURL()+"/?v=10&encoding=json", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		var hello struct {
			Op int `json:"op"`
		}
		if err := ws.ReadJSON(&hello); err != nil || hello.Op != opHello {
			t.Fatalf("hello = %+v, %v", hello, err)
		}
		_ = ws.WriteJSON(map[string]any{"op": opIdentify, "d": map[string]any{"token": token, "intents": intents,
			"properties": map[string]string{"os": "linux"}}})
		return ws
	}
	bad := dial("nope", IntentGuildMessages)
	_, _, err := bad.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4004 {
		t.Errorf("bad token: %v, want close 4004", err)
	}

	ws := dial(s.Token, IntentGuilds|IntentGuildMessages) // no MESSAGE_CONTENT
	next := func(event string) json.RawMessage {
		for {
			var f struct {
				T string          `json:"t"`
				D json.RawMessage `json:"d"`
			}
			if err := ws.ReadJSON(&f); err != nil {
				t.Fatalf("waiting for %s: %v", event, err)
			}
			if f.T == event {
				return f.D
			}
		}
	}
	next("READY")
	next("GUILD_CREATE")
	s.Post(text.ID, u, "a question nobody tagged the bot in")
	var m Message
	_ = json.Unmarshal(next("MESSAGE_CREATE"), &m)
	if m.Content != "" {
		t.Errorf("without MESSAGE_CONTENT a guild message arrived with content %q", m.Content)
	}
	s.Post(text.ID, u, s.Bot.Mention()+" a question for the bot")
	_ = json.Unmarshal(next("MESSAGE_CREATE"), &m)
	if m.Content == "" {
		t.Errorf("a message mentioning the bot arrived without content")
	}
}
