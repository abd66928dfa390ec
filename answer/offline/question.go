package offline

import (
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/docent-hq/docent/search"
)

// qterm is one content term of a question.
type qterm struct {
	// Term is the analyzed form (search.Analyze).
	Term string
	// Word is the word it came from, as written in the question.
	Word string
	// IDF weighs the term (corpus IDF when known, else estimated from the
	// candidates).
	IDF float64
	// DF is the number of corpus chunks that hold the term; -1 when there
	// are no corpus statistics.
	DF int
	// Salient is set for a word written as a name or a code: capitalized
	// after the first word of a sentence, in capitals, or mixing letters
	// and digits ("Singapore", "UK", "GK-410"). A salient word the sources
	// lack is a detail they do not cover.
	Salient bool
	// Code is set for a term of a word that mixes letters and digits
	// ("GK-409", "AMR-12").
	Code bool
	// Share is how many terms the word analyzes into ("wi-fi" into two);
	// each weighs IDF/Share, so that the word weighs as one.
	Share int
}

// question is the analyzed question the gate judges candidates against.
type question struct {
	terms []qterm
	total float64 // Σ IDF
	// maxIDF is the IDF of a term no chunk holds.
	maxIDF float64
	// sc scores sets and units against the terms.
	sc *scorer
	// verb is the analyzed verb of a "how do I <verb>" ask, "" without one.
	verb string
	// list is set when the question asks for a list ("what are the
	// levels"): rows and items rank before sentences.
	list bool
	// text is the question as analyzed (opaque identifiers left out).
	text string
	// pairW caches pairs().
	pairW map[pair]float64
}

// newQuestion analyzes text once per ask: its content terms
// (queryTerms), each with the word it came from, its salience and its
// weight. IDF comes from corp when set, else it is estimated over the
// candidate term sets (one IDF for the gate and the generator).
func newQuestion(text string, corp *Corpus, sets []map[string]bool) *question {
	text = dropOpaque(text)
	words, salient, share := questionWords(text)
	codes := map[string]bool{}
	for _, c := range questionCodes(text) {
		for _, t := range c {
			codes[t] = true
		}
	}
	q := &question{text: text, verb: procedureVerb(text), list: asksList(text)}
	n := float64(len(sets))
	if corp != nil {
		n = float64(corp.N())
	}
	q.maxIDF = math.Log(1 + (n+0.5)/0.5)
	for _, t := range queryTerms(text) {
		qt := qterm{Term: t, Word: words[t], Salient: salient[t], Code: codes[t], DF: -1}
		if corp != nil {
			qt.DF, qt.IDF = corp.DF(t), corp.IDF(t)
		} else {
			df := 0.0
			for _, set := range sets {
				if set[t] {
					df++
				}
			}
			qt.IDF = math.Log(1 + (n-df+0.5)/(df+0.5))
		}
		if qt.Word == "" {
			qt.Word = t
		}
		// The parts of one written word ("wi-fi", "GK-403") weigh as one.
		qt.Share = max(1, share[t])
		qt.IDF /= float64(qt.Share)
		q.terms = append(q.terms, qt)
		q.total += qt.IDF
		q.maxIDF = max(q.maxIDF, qt.IDF*float64(qt.Share))
	}
	q.sc = q.scorer()
	return q
}

// weights returns the question's terms with their IDF.
func (q *question) weights() map[string]float64 {
	m := make(map[string]float64, len(q.terms))
	for _, t := range q.terms {
		m[t.Term] = t.IDF
	}
	return m
}

// scorer returns a scorer over the question's terms.
func (q *question) scorer() *scorer {
	s := &scorer{idf: q.weights(), total: q.total}
	for _, t := range q.terms {
		s.terms = append(s.terms, t.Term)
	}
	return s
}

// coverage is the IDF share of the question's terms in set (see
// scorer.coverage).
func (q *question) coverage(set map[string]bool) float64 { return q.sc.coverage(set, nil, 0) }

// precision returns the share of u's own terms that are terms of the
// question: the passage's side of the overlap.
func (q *question) precision(u unit) float64 {
	if len(u.Terms) == 0 {
		return 0
	}
	held := 0
	for t := range u.Terms {
		if _, ok := q.sc.idf[t]; ok {
			held++
		}
	}
	return float64(held) / float64(len(u.Terms))
}

// unitCoverage is the IDF share of the question's terms in a unit, its
// section headings and its title (see scorer.unitCoverage).
func (q *question) unitCoverage(u unit) float64 { return q.sc.unitCoverage(u) }

// questionWords maps each analyzed term of text to the word it first came
// from, tells which terms came from a salient word (see qterm), and into
// how many terms that word analyzes.
func questionWords(text string) (words map[string]string, salient map[string]bool, share map[string]int) {
	words, salient, share = map[string]string{}, map[string]bool{}, map[string]int{}
	// A sentence starts the text, each line (a pasted log's, a list's) and
	// after a token ending in ".", "?", "!" or ":" (an ellipsis too), or
	// in "=" (a log field's value).
	for _, line := range strings.Split(text, "\n") {
		start := true
		for _, tok := range strings.FieldsFunc(line, func(r rune) bool {
			return unicode.IsSpace(r) || strings.ContainsRune(`,;()[]{}"“”/|`, r)
		}) {
			word := strings.TrimFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			sal := word != "" && isSalient(word, start)
			terms := search.Analyze(word)
			for _, t := range queryTerms(word) {
				if _, ok := words[t]; !ok {
					words[t] = word
					share[t] = len(terms)
				}
				salient[t] = salient[t] || sal
			}
			// A log field's value ("msg=\"Unable to …\"") opens a
			// message as a sentence does.
			if ends := strings.ContainsAny(tok[len(tok)-1:], ".?!:="); ends || word != "" {
				start = ends
			}
		}
	}
	return words, salient, share
}

// isSalient reports whether a word is written as a name or a code: it
// mixes letters and digits, or has at least two letters all in capitals,
// or starts with a capital although it does not start a sentence.
func isSalient(word string, sentenceStart bool) bool {
	letters, upper, digits := 0, 0, 0
	for _, r := range word {
		switch {
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		case unicode.IsDigit(r):
			digits++
		}
	}
	switch {
	case letters > 0 && digits > 0:
		return true
	case letters >= 2 && upper == letters:
		return true
	}
	first := []rune(word)[0]
	return !sentenceStart && unicode.IsUpper(first) && word != "I" && !strings.HasPrefix(word, "I'")
}

// answerType is the kind of thing a question asks for, when its wording
// says: a procedure ("how do I"), a time ("when is"), a time or a
// condition ("when should"), an amount ("how much", "how long"), a person or
// team ("who"), a place ("where"). A unit that holds no such thing does
// not answer the question however many of its words it shares.
type answerType int

const (
	anyType answerType = iota
	timeType
	conditionType
	amountType
	whoType
	whereType
	procedureType
)

var (
	// Each ask of a question starts at the beginning or after a comma,
	// a colon, a question mark or "and"; its first words say the type.
	askStartRE = regexp.MustCompile(`(?i)(?:^|[,;:?.!]\s*|\band\s+)(how (?:do|can|should|would) (?:i|we|you)|when|how (?:much|many|long|often|soon|far|fast|quickly)|what(?:'s|s| is| are)? the (?:\w+ )?(?:limit|maximum|max|minimum|min|amount|rate|price|cost|fee|cap|allowance|per diem|threshold|deadline)|who|whom|where)\b`)
	timeRE     = regexp.MustCompile(`(?i)\b(\d+\s*(business |working |calendar )?(minutes?|hours?|days?|weeks?|months?|quarters?|years?)|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend|january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|daily|weekly|monthly|quarterly|annually|yearly|every (?:day|week|month|quarter|year|\w+day)|by the|noon|midnight|\d{1,2}:\d\d|\d{4}-\d\d-\d\d|\b(19|20)\d\d\b|first day|start date|end of|(?:once|twice|\w+ times) (?:a|an|per|each|every) \w+|per (?:day|week|month|quarter|year))\b`)
	// looseTimeRE matches words that place something in time without
	// saying when ("before", "immediately"): they answer "when should"
	// (a condition), not "when is".
	looseTimeRE = regexp.MustCompile(`(?i)\b(every|within|before|after|until|immediately|today|tomorrow)\b`)
	procedureRE = regexp.MustCompile(`^how (do|can|should|would) `)
	// instructionRE matches a unit that tells how to do something: it
	// opens with an instruction verb, or names one with its object.
	instructionRE   = regexp.MustCompile(`(?i)(^|[.:;]\s+|\d[.)]\s+)(please )?(install|download|open|click|run|go|select|choose|enter|sign|log|request|submit|enroll|ask|contact|email|call|file|create|add|set|use|follow|type|reset|restart|check|book|pay|upload|report|send|post|tell|page|approve|lock|disconnect|join|complete|fill|attach|get)\b|\b(install|enroll|download|sign in|log in|request|submit|open|file|raise|use)s? (it|them|the|a|an|your|from|in|through|via|with|on)\b|\b(you can|you must|you should|you need to|to do this|steps?)\b`)
	whenConditionRE = regexp.MustCompile(`(?i)\bwhen (should|must|can|could|would|to|do i need|does one)\b`)
	conditionRE     = regexp.MustCompile(`(?i)\b(if|when|whenever|during|once|unless|as soon as|in case)\b`)
	countRE         = regexp.MustCompile(`\b\d[\d,.]*\s+[a-zA-Z]{2,}`)
	amountWordRE    = regexp.MustCompile(`(?i)\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|once|twice|half|double|unlimited|no limit|none)\b`)
	whoRE           = regexp.MustCompile(`(?i)\b(team|manager|owner|owners|lead|leads|commander|engineer|engineers|admin|administrator|person|people|director|vp|ceo|cfo|cto|hr|it|security|finance|legal|employee|employees|approver|reviewer|reviewers|on-call|on call|staff|group|committee|desk|department|support|you|your)\b|@|#[a-z]|(?-i:\b[A-Z][a-z]+ [A-Z][a-z]+\b)`)
	whereRE         = regexp.MustCompile(`(?i)https?://|@|#[a-z]|/[a-z]|\.(com|io|org|net|internal)\b|\b(in|on|at|from|under|via|through) (the )?(?-i:[A-Z])|\b(page|site|portal|app|channel|folder|drive|repo|repository|wiki|dashboard|menu|tab|settings|system|tool|office|room|floor|desk|region)\b`)
)

// expectedType returns what the question's first typed ask asks for.
func expectedType(text string) answerType {
	m := askStartRE.FindStringSubmatch(text)
	if m == nil {
		return anyType
	}
	w := strings.ToLower(m[1])
	switch {
	case procedureRE.MatchString(w):
		return procedureType
	case w == "when" && whenConditionRE.MatchString(text):
		return conditionType
	case w == "when":
		return timeType
	case w == "who" || w == "whom":
		return whoType
	case w == "where":
		return whereType
	}
	return amountType
}

// procedureVerbRE finds the verb of a "how do I ..." ask.
var procedureVerbRE = regexp.MustCompile(`(?i)\bhow (?:do|can|should|would) (?:i|we|you) (\w+)`)

// procedureVerb returns the analyzed verb of the question's "how do I"
// ask ("swap" in "how do I swap shifts"), "" when there is none.
func procedureVerb(text string) string {
	m := procedureVerbRE.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	terms := search.Analyze(m[1])
	if len(terms) != 1 {
		return ""
	}
	return terms[0]
}

// opensWith reports whether unit u opens with the verb (analyzed form):
// "Swap shifts directly in PagerDuty" tells how to swap shifts.
func opensWith(u unit, verb string) bool {
	if verb == "" {
		return false
	}
	f := strings.Fields(u.Text)
	if len(f) == 0 {
		return false
	}
	terms := search.Analyze(f[0])
	return len(terms) == 1 && terms[0] == verb
}

// answers reports whether unit u holds the kind of answer q asks for
// (want): what want.holds says, or, for "how do I <verb>", a unit that
// opens with the verb.
func (q *question) answers(u unit, want answerType) bool {
	if want == whoType {
		return q.namesSomeone(u)
	}
	return want.holds(u) || (want == procedureType && opensWith(u, q.verb))
}

// namesSomeone reports whether u names a person, team or role other than
// the ones the question names: "Who is the CEO?" is not answered by "CEO
// approval".
func (q *question) namesSomeone(u unit) bool {
	if !whoType.holds(u) {
		return false
	}
	for _, m := range whoRE.FindAllString(u.display(), -1) {
		terms := search.Analyze(m)
		if len(terms) == 0 {
			return true // "@", "#channel"
		}
		for _, t := range terms {
			if _, asked := q.sc.idf[t]; !asked {
				return true
			}
		}
	}
	return false
}

// holds reports whether unit u holds something of type t.
func (t answerType) holds(u unit) bool {
	if u.kinds != 0 {
		return t == anyType || u.kinds&(1<<t) != 0
	}
	return t.matches(u)
}

// matches computes holds from the unit's text (see unitKinds).
func (t answerType) matches(u unit) bool {
	text := u.display()
	switch t {
	case timeType:
		return timeRE.MatchString(text)
	case conditionType:
		return timeRE.MatchString(text) || looseTimeRE.MatchString(text) || conditionRE.MatchString(text)
	case amountType:
		return unitStatesAmount(u) || amountWordRE.MatchString(text)
	case whoType:
		return whoRE.MatchString(text)
	case whereType:
		return whereRE.MatchString(text)
	case procedureType:
		return len(u.Code) > 0 || instructionRE.MatchString(text)
	}
	return true
}

// unitStatesAmount reports whether a unit states an amount: with a
// currency or a unit, or, in a table row, any number (the column header
// names its unit).
func unitStatesAmount(u unit) bool {
	if u.Kind == kindRow {
		return len(search.Amounts(u.Text)) > 0
	}
	return statesAmount(u.Text) || countRE.MatchString(u.Text)
}

// unitKinds computes, once per unit, the bitmask of the answer types it
// holds (bit 1<<t for type t), with bit 0 set so that a unit holding none
// still counts as computed.
func unitKinds(u unit) uint16 {
	k := uint16(1)
	time := timeRE.MatchString(u.display())
	for t := timeType; t <= procedureType; t++ {
		var m bool
		switch t {
		case timeType:
			m = time
		case conditionType: // a time, or a looser condition (see matches)
			m = time || t.matches(u)
		default:
			m = t.matches(u)
		}
		if m {
			k |= 1 << t
		}
	}
	return k
}

// Opaque identifiers pasted with a question (request IDs, UUIDs, ULIDs,
// commit hashes, timestamps from a log line) name one event, not a
// subject the docs could cover: they are no content terms, so never a
// missing detail. A code the docs may list ("GK-412", "401k", "v3") is
// kept.
var (
	opaqueStamp = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(z|[+-]\d{2}:?\d{2})?\b|\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b`)
	opaqueToken = regexp.MustCompile(`[A-Za-z0-9_]+`)
)

// dropOpaque blanks the opaque identifiers of text (see opaqueStamp and
// opaqueID).
func dropOpaque(text string) string {
	text = opaqueStamp.ReplaceAllString(text, " ")
	return opaqueToken.ReplaceAllStringFunc(text, func(tok string) string {
		if opaqueID(tok) {
			return " "
		}
		return tok
	})
}

// opaqueID reports whether tok (letters, digits, underscores) reads as a
// generated identifier: a part after an underscore that mixes letters and
// digits ("rq_01JB7Q2M9X", "site_4kq9"), or at least 8 characters that
// switch between letters and digits three times or more ("01JB7Q2M9X",
// a commit hash).
func opaqueID(tok string) bool {
	parts := strings.Split(tok, "_")
	if len(parts) > 1 {
		for _, p := range parts {
			if switches(p) >= 2 {
				return true
			}
		}
		return false
	}
	return len(tok) >= 8 && switches(tok) >= 3
}

// switches counts the changes between a letter and a digit along s.
func switches(s string) int {
	n, prev := 0, 0
	for _, r := range s {
		k := 0
		switch {
		case unicode.IsLetter(r):
			k = 1
		case unicode.IsDigit(r):
			k = 2
		}
		if k != 0 && prev != 0 && k != prev {
			n++
		}
		prev = k
	}
	return n
}
