package llmtest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Scripted stands in for a language model. It reads the prompt it is
// sent — never the test's expectations — and does what the prompt asks,
// the way a careful small model would:
//
//   - a grounded answer prompt (numbered, fenced sources and a
//     question): for each part of the question it picks the sentence,
//     list item or table row of the sources that covers the part's words
//     best, and replies with those, each followed by its source's [n];
//     when no source mentions the part's key word or covers at least half
//     of it, it replies NOT_FOUND and what the sources cover. Text inside
//     a source is only ever quoted, never obeyed. Between equally good
//     pieces it quotes the most recently updated source.
//   - a rewrite prompt: folds the previous question into a short
//     follow-up, splits a question that asks several things at " and
//     how/what/…" into sub-queries, as JSON.
//   - a rerank prompt: scores each fenced passage 0-10 by how much of the
//     query it covers, as JSON.
//   - a judge prompt: counts the answer's cited sentences whose words the
//     cited source holds, as JSON.
func Scripted(c Call) Reply {
	switch {
	case strings.HasPrefix(c.System, "You turn a chat message into search queries"):
		return Reply{Text: scriptedRewrite(c.Prompt)}
	case strings.HasPrefix(c.System, "You rate how well each numbered passage"):
		return Reply{Text: scriptedRerank(c.Prompt)}
	case strings.HasPrefix(c.System, "You check an answer"):
		return Reply{Text: scriptedJudge(c.Prompt)}
	}
	return Reply{Text: scriptedAnswer(c.Prompt)}
}

// Block is one fenced source or passage of a prompt.
type Block struct {
	// N is its number; Title its "Title › Section" line; Updated its
	// "Updated:" date (2006-01-02, "" when absent); Text its text.
	N       int
	Title   string
	Updated string
	Text    string
}

var fenceOpenRE = regexp.MustCompile(`^<<<(SOURCE|PASSAGE) (\d+) ([0-9a-f]+)>>>$`)

// Blocks parses the fenced blocks of a prompt as a model reads them: a
// block opens at a line <<<SOURCE n KEY>>> and ends at the first line
// <<<END SOURCE n KEY>>> with the same number and key.
func Blocks(prompt string) []Block {
	lines := strings.Split(prompt, "\n")
	var out []Block
	for i := 0; i < len(lines); i++ {
		m := fenceOpenRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		end := "<<<END " + m[1] + " " + m[2] + " " + m[3] + ">>>"
		var b Block
		fmt.Sscan(m[2], &b.N)
		var text []string
		inText := false
		j := i + 1
		for ; j < len(lines) && lines[j] != end; j++ {
			switch l := lines[j]; {
			case inText:
				text = append(text, l)
			case strings.HasPrefix(l, "Title: "):
				b.Title = strings.TrimPrefix(l, "Title: ")
			case strings.HasPrefix(l, "Updated: "):
				b.Updated = strings.TrimPrefix(l, "Updated: ")
			case l == "Text:":
				inText = true
			}
		}
		b.Text = strings.Join(text, "\n")
		out = append(out, b)
		i = j
	}
	return out
}

// lineAfter returns the text after the last line outside the fenced
// blocks that starts with prefix.
func lineAfter(prompt, prefix string) string {
	out := ""
	end := ""
	for _, l := range strings.Split(prompt, "\n") {
		switch {
		case end != "":
			if l == end {
				end = ""
			}
		case fenceOpenRE.MatchString(l):
			m := fenceOpenRE.FindStringSubmatch(l)
			end = "<<<END " + m[1] + " " + m[2] + " " + m[3] + ">>>"
		case strings.HasPrefix(l, prefix):
			out = strings.TrimSpace(strings.TrimPrefix(l, prefix))
		}
	}
	return out
}

var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but if of to in on at by for with from as is are was were be been
		being do does did doing have has had i me my we our you your he she it its they them their this that these those
		what which who whom when where why how can could should would will shall may might must not no yes so than then
		there here about into over under up down out off just also only very more most much many some any all each
		per get gets got please tell know want need like use using used one two am im i'm`) {
		stop[w] = true
	}
}

// terms returns the content words of s, lower-cased and crudely stemmed;
// a hyphenated word also gives its parts and their concatenation
// ("break-glass": break-glass, break, glass, breakglass).
func terms(s string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(s), -1) {
		words := []string{w}
		if strings.Contains(w, "-") {
			words = append(words, strings.Split(w, "-")...)
			words = append(words, strings.ReplaceAll(w, "-", ""))
		}
		for _, x := range words {
			if stop[x] || len(x) < 2 {
				continue
			}
			out = append(out, stem(x))
		}
	}
	return out
}

func stem(w string) string {
	for _, suf := range []string{"ies", "ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 && !strings.HasSuffix(w, "ss") {
			if suf == "ies" {
				return w[:len(w)-3] + "y"
			}
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

func set(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// unit is a quotable piece of a source.
type unit struct {
	n       int
	text    string
	terms   map[string]bool
	title   map[string]bool
	updated string
}

// units splits a source into sentences, list items and table rows; a
// row is read with its header ("Plan: Starter; Requests per minute: 60").
func units(b Block) []unit {
	title := set(terms(b.Title))
	var out []unit
	var header []string
	lines := strings.Split(b.Text, "\n")
	for i, line := range lines {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "```") || strings.Trim(l, "|-: ") == "" {
			continue
		}
		if strings.HasPrefix(l, "|") {
			cells := strings.Split(strings.Trim(l, "| "), "|")
			for j := range cells {
				cells[j] = strings.TrimSpace(cells[j])
			}
			if i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "|") &&
				strings.Trim(strings.TrimSpace(lines[i+1]), "|-: ") == "" {
				header = cells // the row above a |---| line
				continue
			}
			parts := make([]string, len(cells))
			for j, c := range cells {
				parts[j] = c
				if j < len(header) {
					parts[j] = header[j] + ": " + c
				}
			}
			text := strings.Join(parts, "; ")
			out = append(out, unit{b.N, text, set(terms(text)), title, b.Updated})
			continue
		}
		header = nil
		l = strings.TrimLeft(l, "-*0123456789. ")
		for _, s := range sentenceRE.Split(l, -1) {
			if s = strings.TrimSpace(s); len(strings.Fields(s)) >= 3 {
				out = append(out, unit{b.N, s, set(terms(s)), title, b.Updated})
			}
		}
	}
	return out
}

var sentenceRE = regexp.MustCompile(`(?:[.!?])\s+`)

// partRE cuts a question where a second question starts.
var partRE = regexp.MustCompile(`(?i)(,?\s+and\s+(?:how|what|which|where|when|who|why|do|does|can|is|are|should|tell)\b|\?\s+|;\s*)`)

// parts splits a question into the questions it asks; each later part
// that leans on the first ("does it allow") gets the first part's words.
func parts(q string) []string {
	idx := partRE.FindAllStringIndex(q, -1)
	var out []string
	prev := 0
	for _, m := range idx {
		cut := m[0]
		if p := strings.TrimSpace(q[prev:cut]); len(terms(p)) >= 2 {
			out = append(out, p)
			prev = cut
		}
	}
	if p := strings.TrimSpace(q[prev:]); len(terms(p)) >= 1 {
		if len(out) > 0 && len(terms(p)) < 2 {
			out[len(out)-1] += " " + p
		} else {
			out = append(out, p)
		}
	}
	for i := 1; i < len(out); i++ {
		out[i] = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(out[i]), ",;?"))
		out[i] = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(out[i], "and "), "And "))
		if pronounRE.MatchString(out[i]) {
			out[i] += " (" + strings.Join(terms(out[0]), " ") + ")"
		}
	}
	if len(out) == 0 {
		return []string{q}
	}
	return out
}

var pronounRE = regexp.MustCompile(`(?i)\b(it|its|they|them|their|this|that|those|these)\b`)

// idf weights terms by how few units hold them (a term no unit holds
// weighs most).
func idf(us []unit) func(string) float64 {
	df := map[string]int{}
	for _, u := range us {
		for t := range u.terms {
			df[t]++
		}
	}
	n := float64(len(us))
	return func(t string) float64 { return math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5)) }
}

func scriptedAnswer(prompt string) string {
	blocks := Blocks(prompt)
	question := lineAfter(prompt, "Question: ")
	var all []unit
	for _, b := range blocks {
		all = append(all, units(b)...)
	}
	w := idf(all)
	var picked []unit
	seen := map[string]bool{}
	for _, part := range parts(question) {
		// A later part's "(…)" holds the words a pronoun stands for: they
		// help find the piece, but the part's own words must be answered.
		own, ctx, _ := strings.Cut(part, " (")
		ts := terms(own)
		if len(ts) == 0 {
			continue
		}
		var cs []string
		for _, t := range terms(ctx) {
			if !slices.Contains(ts, t) {
				cs = append(cs, t)
			}
		}
		key, total := ts[0], 0.0
		for _, t := range ts {
			total += w(t)
			if w(t) > w(key) {
				key = t
			}
		}
		best, bestScore, bestHits, bestRank := -1, 0.0, 0, 0.0
		for i, u := range all {
			if seen[u.text] {
				continue // each part gets a fact of its own
			}
			score, n, extra := 0.0, 0, 0
			for _, t := range ts {
				if u.terms[t] {
					score += w(t)
					n++
				} else if u.title[t] {
					score += w(t) / 2
					n++
				}
			}
			for _, t := range cs {
				if u.terms[t] || u.title[t] {
					extra++
				}
			}
			// The piece that holds the most of the part's words wins, then the
			// rarer words; ties go to the most recently updated source (the
			// prompt's rule).
			rank := float64(n+extra) + score/(total+1)
			tie := rank == bestRank && best >= 0 && n > 0 && u.updated > all[best].updated
			if rank > bestRank || tie {
				best, bestScore, bestHits, bestRank = i, score, n, rank
			}
		}
		// Answer a part when the best unit holds half its words, or half its
		// weight including its rarest word.
		if best < 0 || !(2*bestHits >= len(ts) ||
			bestScore >= total/2 && (all[best].terms[key] || all[best].title[key])) {
			continue
		}
		if u := all[best]; !seen[u.text] {
			seen[u.text] = true
			picked = append(picked, u)
		}
	}
	if len(picked) == 0 {
		var titles []string
		for _, b := range blocks {
			titles = append(titles, b.Title)
		}
		return "NOT_FOUND The sources cover " + strings.Join(titles, "; ") + ", not this question."
	}
	var out []string
	for _, u := range picked {
		out = append(out, fmt.Sprintf("%s [%d].", strings.TrimRight(u.text, ".:; "), u.n))
	}
	return strings.Join(out, " ")
}

var followRE = regexp.MustCompile(`(?i)^(and|also|what about|how about|same for|what if)\b`)

func scriptedRewrite(prompt string) string {
	latest := lineAfter(prompt, "Latest question: ")
	prev := lineAfter(prompt, "User: ")
	query := latest
	if prev != "" && (followRE.MatchString(latest) || len(strings.Fields(latest)) <= 5) {
		rest := strings.TrimSpace(followRE.ReplaceAllString(latest, ""))
		query = strings.TrimRight(prev, "?.! ") + ", " + rest
	}
	reply := map[string]any{"query": query, "sub_queries": []string{}}
	if ps := parts(query); len(ps) > 1 {
		reply["sub_queries"] = ps
	}
	b, _ := json.Marshal(reply)
	return "```json\n" + string(b) + "\n```"
}

func scriptedRerank(prompt string) string {
	blocks := Blocks(prompt)
	query := terms(lineAfter(prompt, "Query: "))
	var all []unit
	for _, b := range blocks {
		all = append(all, unit{n: b.N, terms: set(terms(b.Title + " " + b.Text))})
	}
	w := idf(all)
	total := 0.0
	for _, t := range query {
		total += w(t)
	}
	type score struct {
		ID    int `json:"id"`
		Score int `json:"score"`
	}
	var scores []score
	for _, u := range all {
		got := 0.0
		for _, t := range query {
			if u.terms[t] {
				got += w(t)
			}
		}
		s := 0
		if total > 0 {
			s = int(math.Round(10 * got / total))
		}
		scores = append(scores, score{u.n, s})
	}
	sort.SliceStable(scores, func(i, j int) bool { return scores[i].Score > scores[j].Score })
	b, _ := json.Marshal(map[string]any{"scores": scores})
	return string(b)
}

var citedRE = regexp.MustCompile(`\[(\d+)\]`)

func scriptedJudge(prompt string) string {
	blocks := Blocks(prompt)
	byN := map[int]map[string]bool{}
	for _, b := range blocks {
		byN[b.N] = set(terms(b.Title + " " + b.Text))
	}
	ans := answerSection(prompt)
	claims, supported := 0, 0
	var unsupported []string
	for _, s := range sentenceRE.Split(ans, -1) {
		ms := citedRE.FindAllStringSubmatch(s, -1)
		ts := terms(citedRE.ReplaceAllString(s, ""))
		if len(ts) < 3 {
			continue
		}
		claims++
		ok := false
		for _, m := range ms {
			var n int
			fmt.Sscan(m[1], &n)
			src := byN[n]
			hit := 0
			for _, t := range ts {
				if src[t] {
					hit++
				}
			}
			if src != nil && float64(hit) >= 0.6*float64(len(ts)) {
				ok = true
			}
		}
		if ok {
			supported++
		} else {
			unsupported = append(unsupported, strings.TrimSpace(s))
		}
	}
	q := terms(lineAfter(prompt, "Question: "))
	at := set(terms(ans))
	hit := 0
	for _, t := range q {
		if at[t] {
			hit++
		}
	}
	rel := 0.0
	if len(q) > 0 {
		rel = float64(hit) / float64(len(q))
	}
	b, _ := json.Marshal(map[string]any{"claims": claims, "supported": supported, "unsupported": unsupported,
		"relevance": math.Round(rel*100) / 100})
	return string(b)
}

// answerSection returns the text between "Answer:" and the sources.
func answerSection(prompt string) string {
	_, after, ok := strings.Cut(prompt, "\nAnswer:\n")
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, "\n<<<")
	return strings.TrimSpace(before)
}
