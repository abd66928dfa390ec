package question

import (
	"strings"
	"unicode"
)

// Small talk: a message made only of greetings, thanks, acknowledgements,
// laughter, emoji and punctuation is not a question. It gets a short
// friendly reply that cites nothing, before any retrieval, and is no miss.
// A message with any other word ("hi! how do I reset my vpn token?") is a
// question. The words are general chat English, not any corpus's.

// SmallTalk kinds.
const (
	smallGreeting = "greeting"
	smallThanks   = "thanks"
	smallAck      = "ack"
)

// smallWords maps the words of small talk to their kind; "" is a word
// that may join any kind ("you", "so", "much", "all").
var smallWords = map[string]string{
	"hi": smallGreeting, "hello": smallGreeting, "hey": smallGreeting, "heya": smallGreeting,
	"hiya": smallGreeting, "howdy": smallGreeting, "yo": smallGreeting, "greetings": smallGreeting,
	"morning": smallGreeting, "afternoon": smallGreeting, "evening": smallGreeting,
	"gm": smallGreeting, "sup": smallGreeting,

	"thanks": smallThanks, "thank": smallThanks, "thx": smallThanks, "ty": smallThanks, "tysm": smallThanks,
	"cheers": smallThanks, "appreciate": smallThanks, "appreciated": smallThanks, "grateful": smallThanks,
	"kudos": smallThanks, "helpful": smallThanks,

	"ok": smallAck, "okay": smallAck, "k": smallAck, "kk": smallAck, "cool": smallAck, "great": smallAck,
	"nice": smallAck, "awesome": smallAck, "perfect": smallAck, "lol": smallAck, "haha": smallAck,
	"hahaha": smallAck, "lmao": smallAck, "yes": smallAck, "yep": smallAck, "yeah": smallAck, "no": smallAck,
	"nope": smallAck, "sure": smallAck, "alright": smallAck, "got": smallAck, "understood": smallAck,
	"noted": smallAck, "bye": smallAck, "goodbye": smallAck, "later": smallAck, "np": smallAck,
	"wow": smallAck, "oh": smallAck, "ah": smallAck, "hmm": smallAck, "sounds": smallAck, "good": smallAck,
	"nvm": smallAck, "nevermind": smallAck,

	"you": "", "so": "", "much": "", "very": "", "a": "", "lot": "", "all": "", "everyone": "", "there": "",
	"folks": "", "team": "", "guys": "", "it": "", "that": "", "this": "", "again": "", "for": "", "the": "",
	"help": "", "and": "", "day": "", "night": "", "bot": "", "docent": "", "thats": "", "that's": "",
	"is": "", "was": "", "really": "", "super": "", "just": "", "works": "", "worked": "", "i": "", "see": "",
}

// SmallTalk reports whether text is small talk rather than a question,
// and returns the short reply to it.
func SmallTalk(text string) (reply string, ok bool) {
	kinds := map[string]bool{}
	words := 0
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		f = strings.Trim(f, "'")
		if f == "" {
			continue
		}
		if strings.HasPrefix(f, "u0") || mentionID(f) {
			continue // a user mention's ID (<@U0123ABC>)
		}
		kind, known := smallWords[f]
		if !known {
			return "", false
		}
		words++
		if kind != "" {
			kinds[kind] = true
		}
	}
	if words > 0 && len(kinds) == 0 {
		return "", false // "you all" asks nothing, but is no greeting either
	}
	switch {
	case kinds[smallThanks]:
		return "You're welcome! Ask me anything else about the docs.", true
	case kinds[smallGreeting]:
		return "Hi! Ask me a question about the docs and I'll answer with links to the pages it comes from.", true
	case words == 0 && strings.TrimSpace(text) == "":
		return "", false
	}
	return "Got it. Ask me anything about the docs whenever you like.", true
}

// mentionID reports whether a lower-cased word reads as a chat platform's
// user or bot ID (Slack's "u024be7lh", Discord's digits).
func mentionID(w string) bool {
	if len(w) < 8 {
		return false
	}
	digits := 0
	for _, r := range w {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	return digits == len(w) || (digits >= 2 && (w[0] == 'u' || w[0] == 'w' || w[0] == 'b'))
}
