package answer

import (
	"regexp"
	"strings"

	"github.com/docent-hq/docent/search"
)

// lexicon is general English, not knowledge of any corpus: common
// workplace and technology words and abbreviations, each with words that
// mean the same or name the general kind of thing ("iPad" is a tablet),
// in order of preference. A question word that no chunk holds is
// replaced by the first of them whose every word the corpus does hold
// (after the corpus's own spellings, Corpus.Variant, found nothing), so
// an asker's "2fa" meets docs that say "MFA" and "uptime" docs that say
// "availability". No Go module on the proxy offers such a list (WordNet
// ports carry neither abbreviations nor this vocabulary), so it is kept
// here, short and reviewable. Keys are lower case.
var lexicon = map[string][]string{
	// Sign-in and security.
	"2fa":           {"mfa", "two-factor", "multi-factor"},
	"tfa":           {"mfa", "two-factor", "multi-factor"},
	"2sv":           {"mfa", "two-factor", "multi-factor"},
	"mfa":           {"2fa", "two-factor", "multi-factor"},
	"authenticator": {"mfa", "two-factor", "multi-factor"},
	"pw":            {"password"},
	"pwd":           {"password"},
	"passwd":        {"password"},
	"passcode":      {"password", "pin"},
	"login":         {"sign-in", "sign in"},
	"logon":         {"sign-in", "sign in"},
	// Devices.
	"ipad":       {"tablet"},
	"iphone":     {"phone"},
	"android":    {"phone"},
	"cellphone":  {"phone"},
	"cell":       {"phone"},
	"mobile":     {"phone"},
	"smartphone": {"phone"},
	"macbook":    {"laptop"},
	"notebook":   {"laptop"},
	"computer":   {"laptop"},
	"pc":         {"computer", "laptop"},
	// Engineering.
	"hotfix":   {"emergency fix", "emergency change"},
	"uptime":   {"availability"},
	"downtime": {"outage"},
	"repo":     {"repository"},
	"prod":     {"production"},
	"env":      {"environment"},
	"config":   {"configuration"},
	"deploy":   {"release"},
	"rollback": {"roll back", "revert"},
	"bug":      {"defect", "issue"},
	// People and pay.
	"kid":          {"child", "children", "family"},
	"kids":         {"children", "child", "family"},
	"son":          {"child", "children", "family"},
	"daughter":     {"child", "children", "family"},
	"mom":          {"parent", "family"},
	"mum":          {"parent", "family"},
	"dad":          {"parent", "family"},
	"mother":       {"parent", "family"},
	"father":       {"parent", "family"},
	"wife":         {"partner", "spouse", "family"},
	"husband":      {"partner", "spouse", "family"},
	"spouse":       {"partner", "family"},
	"grandmother":  {"family"},
	"grandfather":  {"family"},
	"grandma":      {"family"},
	"grandpa":      {"family"},
	"grandparent":  {"family"},
	"grandparents": {"family"},
	"aunt":         {"family"},
	"uncle":        {"family"},
	"cousin":       {"family"},
	"niece":        {"family"},
	"nephew":       {"family"},
	"sibling":      {"family"},
	"brother":      {"family"},
	"sister":       {"family"},
	"boss":         {"manager"},
	"mgr":          {"manager"},
	"salary":       {"pay", "compensation"},
	"wage":         {"pay", "compensation"},
	"vacation":     {"pto", "time off", "leave"},
	"wfh":          {"remote", "home"},
	"ooo":          {"out of office", "time off"},
	"hr":           {"people team", "human resources"},
	"acct":         {"account"},
	"dr":           {"doctor"},
	"drs":          {"doctor", "doctor's"},
	"gdoc":         {"google doc", "document"},
	"gdocs":        {"google docs", "documents"},
	"gsheet":       {"google sheet", "spreadsheet"},
	"misplaced":    {"lost"},
	"dropped":      {"lost"},
	"died":         {"bereavement", "death"},
	"dies":         {"bereavement", "death"},
	"funeral":      {"bereavement", "death"},
}

// lexiconPhrases are general English phrases of several words, with what
// they mean, tried like lexicon entries when one of the phrase's words
// is in no chunk ("kick in": start).
var lexiconPhrases = []struct {
	re   *regexp.Regexp
	with []string
	// add keeps the phrase and adds its first meaning the corpus holds,
	// even when the corpus holds the phrase too: docs that say "US" in
	// one place say "United States" in another.
	add bool
}{
	{regexp.MustCompile(`(?i)\bkicks? in\b`), []string{"start", "begin"}, false},
	{regexp.MustCompile(`(?i)\bkicked in\b`), []string{"started", "began"}, false},
	{regexp.MustCompile(`(?i)\b(time off|days? off|leave) in lieu\b`), []string{"extra day off", "compensatory time off"}, false},
	{regexp.MustCompile(`(?i)\b(daily|food|meal) allowance\b`), []string{"per diem"}, false},
	{regexp.MustCompile(`(?i)\b(?:fell|fallen|dropped|slipped) out of\b`), []string{"lost"}, true},
	{regexp.MustCompile(`(?i)\b(?:weird|suspicious|strange|fake|dodgy|sketchy|scam|spoofed|odd) (?:e-?mails?|links?|messages?|texts?|pages?|sites?|websites?|login pages?)\b`), []string{"phishing"}, true},
	{regexp.MustCompile(`(?i)\b(?:put|putting|pay|paying|set|setting) (?:in|into|aside)\b`), []string{"contribute", "contribution"}, true},
	{regexp.MustCompile(`(?i)\bcan'?t find\b`), []string{"lost"}, true},
	{regexp.MustCompile(`(?i)\bmoney back\b`), []string{"reimbursed", "reimbursement", "refund"}, false},
	{regexp.MustCompile(`(?i)\bpass(?:ed|es)? away\b`), []string{"bereavement", "death", "died"}, true},
	// Country abbreviations, in capitals only ("us" is a pronoun).
	{regexp.MustCompile(`\b(?:US|U\.S\.|USA)\b`), []string{"United States"}, true},
}

// synonym returns, for a word that no chunk holds, the first meaning of
// it in the lexicon that the corpus holds, every word of it.
func (c *Corpus) synonym(word string) (string, bool) {
	if c.holdsAll(word) {
		return "", false
	}
	for _, s := range lexicon[strings.ToLower(word)] {
		if c.holdsAll(s) {
			return s, true
		}
	}
	return "", false
}

// holdsAll reports whether every analyzed term of s is in some chunk.
func (c *Corpus) holdsAll(s string) bool {
	terms := search.Analyze(s)
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		if c.df[t] == 0 {
			return false
		}
	}
	return true
}

// rephrase replaces the lexicon phrases of q that the corpus does not
// use (one of the phrase's words is in no chunk) by the first meaning
// it holds.
func rephrase(q string, c *Corpus) string {
	for _, p := range lexiconPhrases {
		q = p.re.ReplaceAllStringFunc(q, func(m string) string {
			if p.add {
				for _, s := range p.with {
					if c.holdsAll(s) {
						return m + " " + s
					}
				}
				return m
			}
			if c.holdsAll(m) {
				return m
			}
			for _, s := range p.with {
				if c.holdsAll(s) {
					return s
				}
			}
			return m
		})
	}
	return q
}
