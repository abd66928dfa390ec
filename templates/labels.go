package templates

import (
	"slices"
	"strconv"
	"strings"

	"github.com/docent-hq/docent"
)

// StatusText names an answer or run status for people: "not found", not
// not_found; a failed turn (error) and a failed run are both "failed".
func StatusText(s string) string {
	switch s {
	case string(docent.StatusNotFound):
		return "not found"
	case string(docent.StatusError), "failed":
		return "failed"
	case string(docent.StatusSmallTalk):
		return "small talk"
	}
	return s
}

// Statuses are the answer outcomes the logs filter on, in order.
var Statuses = []string{"answered", "uncertain", "not_found", "error", "small_talk"}

// FeedbackText names a feedback filter value.
func FeedbackText(s string) string {
	switch s {
	case "not_helpful":
		return "not helpful"
	case "none":
		return "not rated"
	}
	return s
}

// RatingText names a rating: "helpful" or "not helpful".
func RatingText(r docent.Rating) string { return FeedbackText(string(r)) }

// PlatformText names where questions come from.
func PlatformText(p string) string {
	switch p {
	case "console":
		return "playground"
	case "api":
		return "API"
	case "mcp":
		return "MCP"
	case "cli":
		return "terminal"
	case "slack":
		return "Slack"
	case "discord":
		return "Discord"
	case "eval":
		return "golden run"
	}
	return p
}

// ChannelText names a channel of a platform: the playground's scopes
// ("every source", "only handbook"), a golden run ("run #12"), or the
// platform's channel with a #.
func ChannelText(platform, channel string) string {
	switch {
	case channel == "":
		return ""
	case platform == "console" && channel == "all":
		return "every source"
	case platform == "console" && strings.HasPrefix(channel, "source:"):
		return "only " + strings.TrimPrefix(channel, "source:")
	case platform == "eval" && strings.HasPrefix(channel, "run-"):
		return "run #" + strings.TrimPrefix(channel, "run-")
	}
	return "#" + channel
}

// WhereText says where a turn was asked: "Slack #C-help", "playground,
// only handbook".
func WhereText(platform, channel string) string {
	p, c := PlatformText(platform), ChannelText(platform, channel)
	switch {
	case c == "":
		return p
	case strings.HasPrefix(c, "#"):
		return p + " " + c
	}
	return p + ", " + c
}

// AskedBy says who asked: the API token a turn was asked with, the
// platform user, or "" when unknown.
func AskedBy(q docent.Question) string {
	switch {
	case (q.Platform == "api" || q.Platform == "mcp") && q.User != "":
		return "with API token " + q.User
	case q.Platform == "api" || q.Platform == "mcp":
		return "without a token"
	case q.User != "":
		return "by " + q.User
	}
	return ""
}

// Plural counts things: "1 turn", "2 turns", "no turns".
func Plural(n int, one, many string) string {
	switch n {
	case 0:
		return "no " + many
	case 1:
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// RunCounts says what a sync run did in words: "3 added, 34 unchanged,
// 1 failed"; "nothing listed" for an empty run.
func RunCounts(r docent.SyncRun) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{r.Added, "added"}, {r.Updated, "updated"}, {r.Deleted, "deleted"}, {r.Unchanged, "unchanged"}, {r.Failed, "failed"}} {
		if c.n > 0 {
			parts = append(parts, strconv.Itoa(c.n)+" "+c.what)
		}
	}
	if len(parts) == 0 {
		return "nothing listed"
	}
	return strings.Join(parts, ", ")
}

// Fate is what became of one candidate of a turn.
type Fate struct {
	// Sent reports that the chunk was given to the generator; Cited is
	// its citation number in the answer (0 when it is not cited).
	Sent  bool
	Cited int
	// Why says why it was not sent ("" when it was, or when the turn
	// did not record it).
	Why string
}

// CandidateFate says whether a turn's candidate was given to the
// generator, and cited, or why not, from the turn's decision. Turns
// stored before the decision recorded its sources fall back on the
// chunks the answer drew on.
func CandidateFate(t docent.Turn, chunkID string) Fate {
	var f Fate
	for _, c := range t.Answer.Citations {
		if c.ChunkID == chunkID {
			f.Cited = c.N
			break
		}
	}
	d := t.Answer.Trace.Decision
	switch {
	case d != nil && slices.Contains(d.Sources, chunkID):
		f.Sent = true
	case (d == nil || len(d.Sources) == 0) && Used(t.Answer.Trace, chunkID) && t.Answer.Status == docent.StatusAnswered:
		f.Sent = true
	case d != nil:
		f.Why = d.NotSent[chunkID]
	}
	return f
}

// NothingSent says why no chunk of a turn was given to the generator
// ("" when some were): the decision's reason.
func NothingSent(t docent.Turn) string {
	d := t.Answer.Trace.Decision
	if d == nil || len(d.Sources) > 0 || t.Answer.Status == docent.StatusSmallTalk {
		return ""
	}
	why := d.NotAsked
	if why == "" {
		why = d.Reason
	}
	if why == "" {
		why = "the turn " + StatusText(string(t.Answer.Status))
	}
	return why
}

// Words joins the non-empty strings with spaces.
func Words(s ...string) string {
	var out []string
	for _, w := range s {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// resolutionLabels name the ways a forum post is solved, in the order
// the overview lists them.
var resolutionLabels = []struct {
	how   docent.ResolutionHow
	label string
}{
	{docent.ResolvedAskerReaction, "asker ✅"},
	{docent.ResolvedAskerSaid, "asker said solved"},
	{docent.ResolvedStaffReaction, "staff ✅"},
	{docent.ResolvedStaffSaid, "staff said solved"},
	{docent.ResolvedHandoff, "handoff resolved"},
}

// ResolutionHows says how a forum's posts were solved: "asker ✅ 2 ·
// handoff resolved 1"; empty when none were.
func ResolutionHows(solved map[docent.ResolutionHow]int) string {
	var parts []string
	for _, l := range resolutionLabels {
		if n := solved[l.how]; n > 0 {
			parts = append(parts, l.label+" "+strconv.Itoa(n))
		}
	}
	return strings.Join(parts, " · ")
}
