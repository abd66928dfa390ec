package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// apiPost posts a JSON body to the API with a bearer token ("" sends none).
func apiPost(t *testing.T, base, path, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestFeedbackAPI: POST /api/feedback with helpful: false puts the turn
// in the console's Misses inbox, as a chat button does; small talk rated
// not helpful never lands there; the token rules are /api/ask's (no token
// 401 where tokens are required), and a token rates only the turns it
// asked (another's is a 404, as an unknown turn).
func TestFeedbackAPI(t *testing.T) {
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("a long admin password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConsoleConfig(t, dir, "auth:\n  api_tokens: required\n  admins:\n    - user: ops@example.com\n"+
		"      password_hash: \""+string(hash)+"\"\n")
	var logs syncBuffer
	m := &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)})}
	base, stop := MustServeMain(t, m)
	defer stop()
	waitReady(t, base)
	c := newConsoleClient(t, base)
	c.login("ops@example.com", "a long admin password")
	token := func(name string) string {
		_, doc := c.post("/tokens", url.Values{"csrf": {c.csrf()}, "name": {name}})
		tok := strings.TrimSpace(doc.Find(`[data-testid=new-token]`).Text())
		if tok == "" {
			t.Fatalf("no token %s made", name)
		}
		return tok
	}
	widget, other := token("widget"), token("other")
	ask := func(q string) (int64, string) {
		t.Helper()
		code, body := apiPost(t, base, "/api/ask", widget, `{"question": `+strconv.Quote(q)+`}`)
		var r struct {
			TurnID int64  `json:"turn_id"`
			Status string `json:"status"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &r) != nil || r.TurnID == 0 {
			t.Fatalf("ask %q = %d %s", q, code, body)
		}
		return r.TurnID, r.Status
	}
	answered, status := ask("What does Gatekeeper error GK-409 mean?")
	if status != "answered" {
		t.Fatalf("GK-409 status = %s", status)
	}
	liked, _ := ask("How many vacation days do I get?")
	smallTalk, status := ask("lol ok")
	if status != "small_talk" {
		t.Fatalf("'lol ok' status = %s, want small_talk", status)
	}
	inMisses := func(id int64) (bool, string) {
		_, doc := c.get("/misses")
		row := doc.Find(`[data-testid=turn-row][data-turn="` + strconv.FormatInt(id, 10) + `"]`)
		return row.Length() > 0, strings.TrimSpace(row.Find(`[data-testid=miss-reasons]`).Text())
	}
	if in, _ := inMisses(answered); in {
		t.Fatal("an answered, unrated turn is in Misses")
	}

	for _, tc := range []struct {
		name, token, body string
		want              int
		code              string
	}{
		{"no token", "", `{"turn_id": ` + itoa64(answered) + `, "helpful": false}`, http.StatusUnauthorized, "token_required"},
		{"another token's turn", other, `{"turn_id": ` + itoa64(answered) + `, "helpful": false}`, http.StatusNotFound, "turn_not_found"},
		{"unknown turn", widget, `{"turn_id": 999999, "helpful": false}`, http.StatusNotFound, "turn_not_found"},
		{"no verdict", widget, `{"turn_id": ` + itoa64(answered) + `}`, http.StatusBadRequest, "invalid_feedback"},
		{"no turn", widget, `{"helpful": false}`, http.StatusBadRequest, "invalid_feedback"},
		{"unknown field", widget, `{"turn_id": ` + itoa64(answered) + `, "helpful": false, "stars": 1}`, http.StatusBadRequest, "unknown_field"},
		{"reason too long", widget, `{"turn_id": ` + itoa64(answered) + `, "helpful": false, "reason": "` + strings.Repeat("x", 2001) + `"}`, http.StatusBadRequest, "invalid_feedback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := apiPost(t, base, "/api/feedback", tc.token, tc.body)
			if code != tc.want || !strings.Contains(body, `"`+tc.code+`"`) {
				t.Errorf("= %d %s, want %d %s", code, body, tc.want, tc.code)
			}
		})
	}
	if in, _ := inMisses(answered); in {
		t.Fatal("a refused rating put the turn in Misses")
	}

	rate := func(id int64, helpful bool) {
		t.Helper()
		code, body := apiPost(t, base, "/api/feedback", widget,
			`{"turn_id": `+itoa64(id)+`, "helpful": `+strconv.FormatBool(helpful)+`, "reason": "the widget said so"}`)
		var r struct {
			ID     int64  `json:"id"`
			TurnID int64  `json:"turn_id"`
			Rating string `json:"rating"`
		}
		want := map[bool]string{true: "helpful", false: "not_helpful"}[helpful]
		if code != http.StatusCreated || json.Unmarshal([]byte(body), &r) != nil || r.ID == 0 || r.TurnID != id || r.Rating != want {
			t.Fatalf("feedback on %d = %d %s", id, code, body)
		}
	}
	rate(answered, false)
	rate(liked, true)
	rate(smallTalk, false)
	if in, why := inMisses(answered); !in || !strings.Contains(why, "not helpful") {
		t.Errorf("the turn rated not helpful: in Misses %v (%q), want there as not helpful", in, why)
	}
	if in, _ := inMisses(liked); in {
		t.Error("a turn rated helpful is in Misses")
	}
	if in, _ := inMisses(smallTalk); in {
		t.Error("small talk rated not helpful is in Misses")
	}
	_, doc := c.get("/turns/" + itoa64(answered))
	fb := doc.Find(`[data-testid=feedback-row]`).Text()
	if !strings.Contains(fb, "not_helpful") && !strings.Contains(fb, "not helpful") || !strings.Contains(fb, "widget") || !strings.Contains(fb, "the widget said so") {
		t.Errorf("turn page feedback = %q, want the widget's rating with its reason", fb)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
