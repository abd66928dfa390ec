package bot_test

import (
	"testing"

	"github.com/docent-hq/docent/bot"
)

func TestForumPostInAutoAnswerForumIsAQuestion(t *testing.T) {
	cfg := bot.Config{Channels: map[string]bot.ChannelConfig{"F-help": {AutoAnswer: true}}}
	for _, tt := range []struct {
		name string
		post bool
		want bool
	}{{"forum post", true, true}, {"plain message", false, false}} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, cfg, nil)
			m := bot.Message{Thread: bot.Thread{Platform: "slack", Channel: "F-help", ID: "7"}, User: "U1",
				Text: "VPN token stopped working after the update", TopLevel: true, Post: tt.post}
			if err := e.bot.HandleMessage(ctx, m, e.out); err != nil {
				t.Fatal(err)
			}
			if got := len(e.questions()) == 1; got != tt.want {
				t.Errorf("answered = %v, want %v", got, tt.want)
			}
		})
	}
}
