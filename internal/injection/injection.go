// Package injection finds text that addresses an AI assistant instead of
// a human reader: instructions to override earlier instructions, to take
// on a new role, to keep something from the user or reveal the prompt,
// role labels and chat-template tokens of a model transcript (SYSTEM:,
// <|im_start|>), and greetings of the model as a model. Documentation is
// written for people, so such text in a synced page is an attack on the
// assistant (prompt injection) or, rarely, a page about such attacks;
// either way it must not be quoted as an answer, and an admin should see
// it.
//
// The patterns are families of phrasing, not a list of known attack
// strings: an override verb (ignore, disregard, forget, bypass, ...)
// followed within a few words by prior guidance (instructions, rules,
// prompt, guardrails, ...); a change of role (you are now, from now on
// you, act as a, pretend to be, new instructions:); a secrecy demand
// (do not tell the user); an uppercase role label opening a line or a
// chat-template token; a sentence that addresses the model as a model
// (dear AI, as an AI language model, attention LLM).
//
// Each family has anchors; its pattern is tried only where a word of the
// text starts one, so a chunk costs a few microseconds.
package injection

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// family is one kind of phrasing: where it may start (anchors, lower
// case, or as written when exact) and the pattern tried there (anchored
// at the start of the anchor, on the lowered text unless exact).
type family struct {
	anchors []string
	re      *regexp.Regexp
	// exact matches the text as written, not lowered; lineStart wants
	// only spaces or list and quote marks between the line start and
	// the anchor; sentenceStart wants the anchor to open a sentence.
	exact, lineStart, sentenceStart bool
}

// guidance are the things an override dismisses.
const guidance = `(instructions?|directions?|directives?|rules|guidelines|guardrails|prompts?|system prompt|` +
	`context|constraints|programming|training|policies|safety)`

// model names the addressee when a sentence speaks to the model.
const model = `(ai|a\.i\.|llms?|(large )?language models?|chat ?bots?|ai assistants?|gpt|chatgpt)`

var families = []family{
	{ // Override: a verb of dismissal, then prior guidance within a few words.
		anchors: []string{"ignore", "disregard", "forget", "override", "overrule", "bypass", "discard", "abandon"},
		re:      regexp.MustCompile(`^[a-z]+\b(\W+\w+){0,4}?\W+` + guidance + `\b`),
	},
	{ // A new role or new orders.
		anchors: []string{"you are now", "you're now", "from now on", "you will now", "you must now", "you shall now",
			"new instruction", "new order", "new role", "new task", "new persona", "new directive"},
		re: regexp.MustCompile(`^(you are now|you're now|from now on,? you|you (will|must|shall) now|` +
			`new (instructions|orders|role|task|persona|directives?)\s*(are|is|:))`),
	},
	{ // A role given as an order: "Act as a ...", "Pretend you are ..."
		// opening a sentence ("IL-6 can act as a mitogen" is not one).
		anchors:       []string{"act as", "pretend", "roleplay as", "role-play as", "imagine you are", "imagine you're"},
		re:            regexp.MustCompile(`^(act as (an?|the|my)\b|pretend (to be|you are|you're)|role-?play as|imagine you('re| are) (an?|the)\b)`),
		sentenceStart: true,
	},
	{ // Keeping something from the person asking, or revealing the prompt.
		anchors: []string{"do not", "don't", "never", "reveal", "print", "repeat", "output", "show", "leak"},
		re: regexp.MustCompile(`^((do not|don't|never) (tell|inform|show|mention (this|it) to|reveal (this|it) to) the (user|human|person|reader|asker)s?\b|` +
			`(reveal|print|repeat|output|show|leak) (your (system )?(prompt|instructions)|the system prompt)\b)`),
	},
	{ // Chat-template tokens.
		anchors: []string{"<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>"},
		re:      regexp.MustCompile(`^(<\|\s*(im_start|im_end|system|assistant|user|endoftext)\s*\|>|\[/?inst\]|<</?sys>>)`),
	},
	{ // An uppercase role label opening a line ("System: Ubuntu 24.04"
		// in a requirements list is not one).
		anchors:   []string{"SYSTEM", "ASSISTANT", "DEVELOPER", "ADMIN OVERRIDE"},
		re:        regexp.MustCompile(`^(SYSTEM|ASSISTANT|DEVELOPER|ADMIN)( PROMPT| MESSAGE| OVERRIDE| NOTE)?\s*[\]):]`),
		exact:     true,
		lineStart: true,
	},
	{ // The model addressed as a model.
		anchors: []string{"dear", "attention", "note to", "hey", "hello", "instructions for", "message to", "message for",
			"if you are", "as a", "as an"},
		re: regexp.MustCompile(`^((dear|attention|note to( the)?|hey|hello|instructions for( the)?|message (to|for)( the)?)\W+` + model + `\b|` +
			`(if you are|as) an? ` + model + `\b)`),
	},
}

// maxQuote bounds the excerpt Find returns; window bounds how far a
// pattern may reach past its anchor.
const (
	maxQuote = 80
	window   = 200
)

// anchorRef is one anchor of one family.
type anchorRef struct {
	f      *family
	anchor string
}

// byWord maps the first word of each word anchor, lowered, to its
// anchors; symbols are the anchors that start with a symbol.
var byWord, symbols = indexAnchors()

func indexAnchors() (map[string][]anchorRef, []anchorRef) {
	words := map[string][]anchorRef{}
	var syms []anchorRef
	for i := range families {
		f := &families[i]
		for _, a := range f.anchors {
			first := strings.ToLower(a[:wordEnd(a, 0)])
			if first == "" {
				syms = append(syms, anchorRef{f, a})
				continue
			}
			words[first] = append(words[first], anchorRef{f, a})
		}
	}
	return words, syms
}

// Find returns the earliest passage of text that addresses an assistant,
// whitespace folded and at most 80 bytes, or "" when there is none.
func Find(text string) string {
	lower := asciiLower(text) // offsets match text
	best, at := "", len(text)
	for _, ref := range symbols {
		if i := strings.Index(lower[:min(len(lower), at+len(ref.anchor))], ref.anchor); i >= 0 && i < at {
			if n := ref.match(text, lower, i); n > 0 {
				best, at = text[i:i+n], i
			}
		}
	}
	// Words left to right: the first match is the earliest.
	for i := 0; i < at; {
		if !isWordChar(lower[i]) {
			i++
			continue
		}
		j := wordEnd(lower, i)
		for _, ref := range byWord[lower[i:j]] {
			if n := ref.match(text, lower, i); n > 0 {
				return excerpt(text[i : i+n])
			}
		}
		i = j
	}
	return excerpt(best)
}

// match returns the length of the family's passage at i, 0 for none.
func (r anchorRef) match(text, lower string, i int) int {
	hay := lower
	if r.f.exact {
		hay = text
	}
	if !strings.HasPrefix(hay[i:], r.anchor) || (r.f.lineStart && !lineStart(hay, i)) ||
		(r.f.sentenceStart && !sentenceStart(hay, i)) {
		return 0
	}
	if loc := r.f.re.FindStringIndex(hay[i:min(len(hay), i+window)]); loc != nil {
		return loc[1]
	}
	return 0
}

// Addresses reports whether text addresses an assistant (Find is not "").
func Addresses(text string) bool { return Find(text) != "" }

// isWordChar: letters and digits (ASCII and beyond), apostrophes and
// hyphens, so that "don't" and "role-play" are one word and
// "forget-me-not" is not "forget".
func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '\'' || c == '-' || c >= 0x80
}

// wordEnd is the end of the word that starts at s[i].
func wordEnd(s string, i int) int {
	for i < len(s) && isWordChar(s[i]) {
		i++
	}
	return i
}

// lineStart reports whether only spaces and list or quote marks stand
// between the start of s[i]'s line and i.
func lineStart(s string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch s[j] {
		case '\n':
			return true
		case ' ', '\t', '>', '*', '_', '-', '[', '(', '#':
		default:
			return false
		}
	}
	return true
}

// sentenceStart reports whether s[i] opens a sentence: only spaces,
// quotes and list or quote marks stand between it and the start of the
// text, a line, or the end of a sentence.
func sentenceStart(s string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch s[j] {
		case '\n', '.', '!', '?', ':', ';':
			return true
		case ' ', '\t', '>', '*', '_', '-', '[', '(', '#', '"', '\'', '`':
		default:
			return false
		}
	}
	return true
}

// asciiLower lowers ASCII letters only, so offsets match text.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// excerpt folds whitespace and cuts at maxQuote bytes.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxQuote {
		return s
	}
	cut := maxQuote
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
