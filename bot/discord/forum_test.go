package discord_test

import (
	"context"
	"slices"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot/discord"
	"github.com/docent-hq/docent/bot/discord/discordtest"
)

// withForumTags configures the env's forum with the default tag names.
func withForumTags() option {
	return withConfig(func(e *env, c *discord.Config) {
		c.Forums = map[string]discord.ForumTags{e.forum.ID: {
			Answered: discord.DefaultTagAnswered, Handoff: discord.DefaultTagHandoff, Solved: discord.DefaultTagSolved}}
		c.Resolutions = e.db
	})
}

// waitTags waits until forum post id carries exactly the tags named.
func waitTags(t *testing.T, e *env, id string, want ...string) {
	t.Helper()
	e.srv.WaitFor(t, "post tags "+joinTags(want), func() bool {
		return slices.Equal(e.srv.AppliedTags(id), want)
	})
}

// waitResolution waits until forum post id's resolution is stored, and
// checks it was marked how, by by, at the post's latest turn.
func waitResolution(t *testing.T, e *env, id string, how docent.ResolutionHow, by string) {
	t.Helper()
	var r docent.ForumResolution
	e.srv.WaitFor(t, "the stored resolution", func() bool {
		got, ok, err := e.db.ForumResolution(context.Background(), discord.Platform, id)
		if err != nil {
			t.Fatal(err)
		}
		r = got
		return ok
	})
	turns, err := e.db.ThreadTurns(context.Background(), discord.Platform, e.forum.ID, id, 1)
	if err != nil || len(turns) != 1 {
		t.Fatalf("ThreadTurns = %v, %v", turns, err)
	}
	if r.How != how || r.By != by || r.Forum != e.forum.ID || r.ForumName != "help-forum" || r.TurnID != turns[0].ID ||
		r.ResolvedAt.IsZero() {
		t.Errorf("resolution = %+v; want %s by %s in help-forum at turn %d", r, how, by, turns[0].ID)
	}
}

func joinTags(names []string) string {
	out := "["
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out + "]"
}

// TestForumLifecycle: in a forum configured with tags, through discordgo
// against the local Discord, a post is tagged as it moves — the tags
// created when missing, "Answered" on the bot's answer, "Needs a human"
// on a handoff, "Solved" when the handoff is resolved, the asker reacts
// ✅ or says "solved", or staff mark a reply with ✅ — and once solved the
// bot answers there only when mentioned.
func TestForumLifecycle(t *testing.T) {
	t.Run("answered, handed off, resolved", func(t *testing.T) {
		e := newEnv(t, withForumTags())
		e.srv.AddTags(e.forum.ID, "VPN")
		post, _ := e.srv.ForumPost(e.forum.ID, e.alice, "VPN token", "My token stopped working after the update")
		answer := e.botReply(t, post.ID, 1)
		waitTags(t, e, post.ID, "Answered")
		forum, _ := e.srv.Channel(e.forum.ID)
		var names []string
		for _, tag := range forum.AvailableTags {
			names = append(names, tag.Name)
		}
		if !slices.Equal(names, []string{"VPN", "Answered", "Needs a human", "Solved"}) {
			t.Errorf("forum tags = %q, want the missing ones created after the forum's own", names)
		}
		e.srv.Click(answer, button(t, answer, "Get a human"), e.alice)
		waitTags(t, e, post.ID, "Needs a human")
		var esc discordtest.Message
		e.srv.WaitFor(t, "the escalation post", func() bool {
			posts := e.srv.BotMessages(e.staff.ID)
			if len(posts) == 1 {
				esc = posts[0]
			}
			return len(posts) == 1
		})
		staffer := e.srv.AddUser("sam")
		e.srv.Click(esc, button(t, esc, "Claim"), staffer)
		e.srv.WaitFor(t, "the claim", func() bool { return len(e.srv.BotMessages(post.ID)) >= 3 })
		esc, _ = e.srv.Message(esc.ID)
		e.srv.Click(esc, button(t, esc, "Resolve"), staffer)
		waitTags(t, e, post.ID, "Solved")
		waitResolution(t, e, post.ID, docent.ResolvedHandoff, staffer.ID)
		// A post is resolved once: the asker's ✅ afterwards keeps the first.
		e.srv.React(answer, e.alice, "✅")
		e.srv.Flush(t)
		e.client.WaitIdle()
		waitResolution(t, e, post.ID, docent.ResolvedHandoff, staffer.ID)
	})

	for _, tc := range []struct {
		name string
		// solve marks the post solved (or tries to, when solves is false).
		// It returns who marked it.
		solve  func(e *env, post discordtest.Channel, answer discordtest.Message) string
		solves bool
		how    docent.ResolutionHow
	}{
		{"the asker's ✅", func(e *env, _ discordtest.Channel, a discordtest.Message) string {
			e.srv.React(a, e.alice, "✅")
			return e.alice.ID
		}, true, docent.ResolvedAskerReaction},
		{"the asker says solved", func(e *env, p discordtest.Channel, _ discordtest.Message) string {
			e.srv.Post(p.ID, e.alice, "Solved, thanks!")
			return e.alice.ID
		}, true, docent.ResolvedAskerSaid},
		{"staff mark a reply with ✅", func(e *env, p discordtest.Channel, _ discordtest.Message) string {
			staffer := e.srv.AddUser("sam")
			reply := e.srv.Post(p.ID, staffer, "Restart the Gatekeeper app after the reset.", discordtest.WithRoles(e.role))
			e.srv.React(reply, staffer, "✅", e.role)
			return staffer.ID
		}, true, docent.ResolvedStaffReaction},
		{"someone else's ✅", func(e *env, _ discordtest.Channel, a discordtest.Message) string {
			e.srv.React(a, e.bob, "✅")
			return ""
		}, false, ""},
		{"someone else says solved", func(e *env, p discordtest.Channel, _ discordtest.Message) string {
			e.srv.Post(p.ID, e.bob, "solved")
			return ""
		}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withForumTags())
			post, _ := e.srv.ForumPost(e.forum.ID, e.alice, "VPN token", "My token stopped working after the update")
			answer := e.botReply(t, post.ID, 1)
			waitTags(t, e, post.ID, "Answered")
			by := tc.solve(e, post, answer)
			e.srv.Flush(t)
			e.client.WaitIdle()
			if !tc.solves {
				if got := e.srv.AppliedTags(post.ID); !slices.Equal(got, []string{"Answered"}) {
					t.Errorf("tags = %q, want still Answered", got)
				}
				if _, ok, err := e.db.ForumResolution(context.Background(), discord.Platform, post.ID); ok || err != nil {
					t.Errorf("a resolution was stored (%v, %v), want none", ok, err)
				}
				return
			}
			waitTags(t, e, post.ID, "Solved")
			waitResolution(t, e, post.ID, tc.how, by)
			asked := len(e.pipe.questions())
			e.srv.Post(post.ID, e.alice, "and how do I reset it on a phone?")
			e.srv.Flush(t)
			e.client.WaitIdle()
			if n := len(e.pipe.questions()); n != asked {
				t.Errorf("a follow-up in a solved post was answered (%d questions, want %d)", n, asked)
			}
			e.srv.Post(post.ID, e.alice, e.srv.Bot.Mention()+" how do I reset it on a phone?")
			e.srv.WaitFor(t, "the mention answered", func() bool { return len(e.pipe.questions()) == asked+1 })
			e.srv.Flush(t)
			e.client.WaitIdle()
			if got := e.srv.AppliedTags(post.ID); !slices.Equal(got, []string{"Solved"}) {
				t.Errorf("tags after answering a mention = %q, want Solved kept", got)
			}
		})
	}

	t.Run("without Manage Channels", func(t *testing.T) {
		e := newEnv(t, withForumTags())
		e.srv.AddTags(e.forum.ID, "Answered")
		e.srv.DenyManageChannels()
		post, _ := e.srv.ForumPost(e.forum.ID, e.alice, "VPN token", "My token stopped working after the update")
		answer := e.botReply(t, post.ID, 1)
		waitTags(t, e, post.ID, "Answered")
		e.srv.Click(answer, button(t, answer, "Get a human"), e.alice)
		e.botReply(t, post.ID, 2)
		e.srv.Flush(t)
		e.client.WaitIdle()
		if got := e.srv.AppliedTags(post.ID); !slices.Equal(got, []string{"Answered"}) {
			t.Errorf("tags = %q, want Answered kept (Needs a human could not be created)", got)
		}
		if forum, _ := e.srv.Channel(e.forum.ID); len(forum.AvailableTags) != 1 {
			t.Errorf("forum tags = %+v, want the one it had", forum.AvailableTags)
		}
	})
}
