package workspacetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// handler answers one Web API method: it gets the call's arguments and
// returns the answer's fields, or an error code. Handlers run under w.mu.
type handler func(args map[string]string) (map[string]any, string)

// methods are the Web API methods the workspace answers.
func (w *Workspace) methods() map[string]handler {
	return map[string]handler{
		"auth.test":                             w.authTest,
		"chat.postMessage":                      w.postMessage,
		"chat.postEphemeral":                    w.postEphemeral,
		"chat.update":                           w.update,
		"chat.getPermalink":                     w.permalink,
		"reactions.add":                         w.reactionsAdd,
		"reactions.remove":                      w.reactionsRemove,
		"assistant.threads.setStatus":           w.assistantThread("status"),
		"assistant.threads.setSuggestedPrompts": w.assistantThread("prompts"),
		"assistant.threads.setTitle":            w.assistantThread("title"),
		"chat.startStream":                      w.startStream,
		"chat.appendStream":                     w.appendStream,
		"chat.stopStream":                       w.stopStream,
		"views.open":                            w.viewsOpen,
		"apps.connections.open":                 w.connectionsOpen,
	}
}

// api wraps a method: it reads the arguments (form or JSON), checks the
// token (the app-level token for apps.connections.open, the bot token
// otherwise), records the call and applies any fault.
func (w *Workspace) api(method string, h handler) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		args := map[string]string{}
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			var fields map[string]json.RawMessage
			if len(body) > 0 {
				if err := json.Unmarshal(body, &fields); err != nil {
					apiError(rw, "invalid_json")
					return
				}
			}
			for k, v := range fields {
				var s string
				if json.Unmarshal(v, &s) == nil {
					args[k] = s
				} else {
					args[k] = string(v)
				}
			}
		} else {
			form, err := url.ParseQuery(string(body))
			if err != nil {
				apiError(rw, "invalid_form_data")
				return
			}
			for k := range form {
				args[k] = form.Get(k)
			}
		}
		for k := range r.URL.Query() { // GET methods send their arguments in the query
			args[k] = r.URL.Query().Get(k)
		}
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if token == "" {
			token = args["token"]
		}
		delete(args, "token")

		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls = append(w.calls, Call{Method: method, Args: args, At: time.Now()})
		w.touch()
		want := w.BotToken
		if method == "apps.connections.open" {
			want = w.AppToken
		}
		if token == "" {
			apiError(rw, "not_authed")
			return
		}
		if token != want {
			apiError(rw, "invalid_auth")
			return
		}
		if fs := w.faults[method]; len(fs) > 0 {
			f := fs[0]
			w.faults[method] = fs[1:]
			if f.Status == http.StatusTooManyRequests {
				rw.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
				rw.WriteHeader(http.StatusTooManyRequests)
				_, _ = rw.Write([]byte(`{"ok":false,"error":"ratelimited"}`))
				return
			}
			apiError(rw, f.Error)
			return
		}
		out, code := h(args)
		if code != "" {
			apiError(rw, code)
			return
		}
		out["ok"] = true
		jsonResponse(rw, out)
	}
}

func (w *Workspace) authTest(map[string]string) (map[string]any, string) {
	return map[string]any{"url": "https://docent-test.slack.com/", "team": "Docent Test", "user": "docent",
		"team_id": w.TeamID, "user_id": w.BotUserID, "bot_id": w.BotID}, ""
}

// content parses and checks a message's text and blocks.
func content(args map[string]string, needText bool) (string, slack.Blocks, string) {
	var blocks slack.Blocks
	if raw := args["blocks"]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
			return "", blocks, "invalid_blocks_format"
		}
		if code := checkBlocks(blocks, raw); code != "" {
			return "", blocks, code
		}
	}
	text := args["text"]
	if needText && text == "" && len(blocks.BlockSet) == 0 {
		return "", blocks, "no_text"
	}
	if utf8.RuneCountInString(text) > 40000 {
		return "", blocks, "msg_too_long"
	}
	return text, blocks, ""
}

// checkBlocks enforces the Block Kit limits Slack documents for the
// blocks docent draws: 50 blocks a message; section text up to 3,000
// characters; context blocks up to 10 elements; actions blocks up to 25
// elements; button labels up to 75 characters, values up to 2,000 and
// action IDs up to 255; block IDs unique.
func checkBlocks(blocks slack.Blocks, raw string) string {
	if len(blocks.BlockSet) > 50 {
		return "invalid_blocks"
	}
	var generic []map[string]any
	_ = json.Unmarshal([]byte(raw), &generic)
	for _, g := range generic {
		if _, ok := g["type"].(string); !ok {
			return "invalid_blocks"
		}
	}
	ids := map[string]bool{}
	for _, b := range blocks.BlockSet {
		if id := b.ID(); id != "" {
			if ids[id] || len(id) > 255 {
				return "invalid_blocks"
			}
			ids[id] = true
		}
		switch b := b.(type) {
		case *slack.SectionBlock:
			if b.Text == nil && len(b.Fields) == 0 {
				return "invalid_blocks"
			}
			if b.Text != nil && (b.Text.Text == "" || utf8.RuneCountInString(b.Text.Text) > 3000) {
				return "invalid_blocks"
			}
		case *slack.ContextBlock:
			n := len(b.ContextElements.Elements)
			if n == 0 || n > 10 {
				return "invalid_blocks"
			}
			for _, e := range b.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok && (t.Text == "" || utf8.RuneCountInString(t.Text) > 3000) {
					return "invalid_blocks"
				}
			}
		case *slack.ActionBlock:
			if b.Elements == nil || len(b.Elements.ElementSet) == 0 || len(b.Elements.ElementSet) > 25 {
				return "invalid_blocks"
			}
			actions := map[string]bool{}
			for _, e := range b.Elements.ElementSet {
				btn, ok := e.(*slack.ButtonBlockElement)
				if !ok {
					continue
				}
				if btn.Text == nil || utf8.RuneCountInString(btn.Text.Text) > 75 || len(btn.Value) > 2000 ||
					len(btn.ActionID) > 255 || actions[btn.ActionID] {
					return "invalid_blocks"
				}
				actions[btn.ActionID] = true
			}
		}
	}
	return ""
}

func (w *Workspace) postMessage(args map[string]string) (map[string]any, string) {
	channel := args["channel"]
	if channel == "" {
		return nil, "channel_not_found"
	}
	text, blocks, code := content(args, true)
	if code != "" {
		return nil, code
	}
	m := &Message{Channel: channel, TS: w.nextTS(), ThreadTS: args["thread_ts"], User: w.BotUserID, Text: text, Blocks: blocks}
	w.messages = append(w.messages, m)
	return map[string]any{"channel": channel, "ts": m.TS, "message": map[string]any{"text": text, "ts": m.TS}}, ""
}

func (w *Workspace) postEphemeral(args map[string]string) (map[string]any, string) {
	channel, user := args["channel"], args["user"]
	if channel == "" {
		return nil, "channel_not_found"
	}
	if user == "" {
		return nil, "user_not_found"
	}
	text, blocks, code := content(args, true)
	if code != "" {
		return nil, code
	}
	m := &Message{Channel: channel, TS: w.nextTS(), ThreadTS: args["thread_ts"], User: w.BotUserID, Text: text,
		Blocks: blocks, Ephemeral: true, To: user}
	w.messages = append(w.messages, m)
	return map[string]any{"message_ts": m.TS}, ""
}

func (w *Workspace) update(args map[string]string) (map[string]any, string) {
	m := w.find(args["channel"], args["ts"])
	if m == nil {
		return nil, "message_not_found"
	}
	if m.User != w.BotUserID {
		return nil, "cant_update_message"
	}
	text, blocks, code := content(args, true)
	if code != "" {
		return nil, code
	}
	m.Text, m.Blocks, m.Streamed = text, blocks, ""
	m.Edits++
	return map[string]any{"channel": m.Channel, "ts": m.TS, "text": text}, ""
}

func (w *Workspace) permalink(args map[string]string) (map[string]any, string) {
	m := w.find(args["channel"], args["message_ts"])
	if m == nil {
		return nil, "message_not_found"
	}
	link := w.Permalink(m.Channel, m.TS)
	if m.ThreadTS != "" && m.ThreadTS != m.TS {
		link += "?thread_ts=" + m.ThreadTS + "&cid=" + m.Channel
	}
	return map[string]any{"channel": m.Channel, "permalink": link}, ""
}

func (w *Workspace) reactionsAdd(args map[string]string) (map[string]any, string) {
	m := w.find(args["channel"], args["timestamp"])
	if m == nil {
		return nil, "message_not_found"
	}
	name := args["name"]
	if name == "" || strings.Contains(name, ":") {
		return nil, "invalid_name"
	}
	for _, r := range m.Reactions {
		if r == name {
			return nil, "already_reacted"
		}
	}
	m.Reactions = append(m.Reactions, name)
	return map[string]any{}, ""
}

func (w *Workspace) reactionsRemove(args map[string]string) (map[string]any, string) {
	m := w.find(args["channel"], args["timestamp"])
	if m == nil {
		return nil, "message_not_found"
	}
	for i, r := range m.Reactions {
		if r == args["name"] {
			m.Reactions = append(m.Reactions[:i], m.Reactions[i+1:]...)
			return map[string]any{}, ""
		}
	}
	return nil, "no_reaction"
}

// assistantThread answers assistant.threads.* methods: they need the
// channel and thread, and what they set.
func (w *Workspace) assistantThread(field string) handler {
	return func(args map[string]string) (map[string]any, string) {
		if args["channel_id"] == "" || args["thread_ts"] == "" {
			return nil, "invalid_arguments"
		}
		if !strings.HasPrefix(args["channel_id"], "D") {
			return nil, "not_allowed" // assistant threads live in the app's DMs
		}
		if _, ok := args[field]; !ok && field != "status" {
			return nil, "invalid_arguments"
		}
		if field == "prompts" {
			var prompts []struct{ Title, Message string }
			if err := json.Unmarshal([]byte(args["prompts"]), &prompts); err != nil || len(prompts) == 0 || len(prompts) > 4 {
				return nil, "invalid_arguments"
			}
		}
		return map[string]any{}, ""
	}
}

func (w *Workspace) startStream(args map[string]string) (map[string]any, string) {
	channel := args["channel"]
	if channel == "" {
		return nil, "channel_not_found"
	}
	if args["thread_ts"] == "" {
		return nil, "invalid_arguments"
	}
	if !strings.HasPrefix(channel, "D") && (args["recipient_user_id"] == "" || args["recipient_team_id"] == "") {
		return nil, "invalid_arguments" // required when streaming to channels
	}
	m := &Message{Channel: channel, TS: w.nextTS(), ThreadTS: args["thread_ts"], User: w.BotUserID,
		Streamed: args["markdown_text"], Streaming: true}
	w.messages = append(w.messages, m)
	return map[string]any{"channel": channel, "ts": m.TS}, ""
}

func (w *Workspace) appendStream(args map[string]string) (map[string]any, string) {
	m := w.find(args["channel"], args["ts"])
	if m == nil {
		return nil, "message_not_found"
	}
	if !m.Streaming {
		return nil, "message_not_in_streaming_state"
	}
	if args["markdown_text"] == "" {
		return nil, "invalid_arguments"
	}
	m.Streamed += args["markdown_text"]
	return map[string]any{"channel": m.Channel, "ts": m.TS}, ""
}

func (w *Workspace) stopStream(args map[string]string) (map[string]any, string) {
	m := w.find(args["channel"], args["ts"])
	if m == nil {
		return nil, "message_not_found"
	}
	if !m.Streaming {
		return nil, "message_not_in_streaming_state"
	}
	_, blocks, code := content(args, false)
	if code != "" {
		return nil, code
	}
	m.Streamed += args["markdown_text"]
	m.Blocks = blocks
	m.Streaming = false
	return map[string]any{"channel": m.Channel, "ts": m.TS}, ""
}

func (w *Workspace) viewsOpen(args map[string]string) (map[string]any, string) {
	if args["trigger_id"] == "" {
		return nil, "invalid_trigger_id"
	}
	var v slack.ModalViewRequest
	if err := json.Unmarshal([]byte(args["view"]), &v); err != nil || v.Type != slack.VTModal || v.Title == nil {
		return nil, "invalid_arguments"
	}
	w.seq++
	id := fmt.Sprintf("V%08d", w.seq)
	w.views = append(w.views, View{ID: id, TriggerID: args["trigger_id"], View: v})
	return map[string]any{"view": map[string]any{"id": id, "type": "modal"}}, ""
}

func (w *Workspace) connectionsOpen(map[string]string) (map[string]any, string) {
	return map[string]any{"url": "ws://" + w.srv.ServerAddr + "/socket-mode"}, ""
}
