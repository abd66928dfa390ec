// Package templates holds the admin console's templ components: one
// layout that wraps every page, the pages, and the small components they
// share (status badges, charts, the trace tables). Handlers in console/
// fill the view models declared here from what the store holds.
//
// Edit the .templ files and run `make generate`; the generated
// *_templ.go files are committed.
package templates

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/docent-hq/docent"
)

// Meta is what the layout needs on every page.
type Meta struct {
	// Title is the page title; Nav the menu entry to highlight.
	Title string
	Nav   string
	// User is the signed-in admin ("" on the login page).
	User string
	// CSRF is the session's token for state-changing forms.
	CSRF string
	// Flash and Error are one-off notices to show.
	Flash, Error string
}

// NavItem is one entry of the menu.
type NavItem struct{ Key, Label, URL string }

// Nav is the console's menu, in order.
var Nav = []NavItem{
	{"overview", "Overview", "/"},
	{"turns", "Retrieval logs", "/turns"},
	{"misses", "Misses", "/misses"},
	{"golden", "Golden set", "/golden"},
	{"stale", "Stale documents", "/stale"},
	{"sources", "Sources", "/sources"},
	{"playground", "Playground", "/playground"},
	{"tokens", "API tokens", "/tokens"},
}

// LoginPage is the sign-in form.
type LoginPage struct {
	CSRF, User, Error string
	// Next is where to go after signing in.
	Next string
	// Demo notes the one-time password printed at start.
	Demo bool
}

// Overview is the dashboard over a window.
type Overview struct {
	Meta
	// Window is the selected window ("24h", "7d", "30d"); Windows all.
	Window  string
	Windows []string
	Stats   docent.TurnStats
	// Chart is questions per day by platform.
	Chart BarChart
	// Sources is sync health per source.
	Sources []SourceRow
	// Forums is each forum's posts: answered, handed off, solved and how.
	Forums []docent.ForumStat
}

// TurnFilter is the retrieval logs' filter form, as submitted.
type TurnFilter struct {
	Status, Feedback, Platform, Channel, Source, Doc, Since, Until, Q string
}

// TurnList is one page of the retrieval logs.
type TurnList struct {
	Meta
	Filter                       TurnFilter
	Platforms, Channels, Sources []string
	Turns                        []docent.TurnSummary
	Total                        int
	Pager                        Pager
	// Filtered says a filter is set (the empty state says so).
	Filtered bool
	// Flagged maps the cited documents flagged stale to why.
	Flagged map[string]string
}

// Pager links to the neighbouring pages of a list.
type Pager struct {
	Page, Pages      int
	PrevURL, NextURL string
}

// TurnDetail is one turn with its whole trace.
type TurnDetail struct {
	Meta
	Turn     docent.Turn
	Summary  docent.TurnSummary
	Feedback []docent.Feedback
	// Handoffs are the handoffs asked from the turn, newest first, and
	// Knowledge the replies people resolved them with.
	Handoffs  []docent.Handoff
	Knowledge []docent.KnowledgeCandidate
	// WhyNot is the "why not this document?" result, nil when none was asked.
	WhyNot *WhyNot
	// DocQuery and DocMatches are the document search of the why-not box.
	DocQuery   string
	DocMatches []docent.DocRecord
	// Golden is the form that turns the turn into a golden entry.
	Golden GoldenForm
	// Flagged maps the cited documents flagged stale to why.
	Flagged map[string]string
}

// WhyNot says where one document's chunks ranked for a turn's query.
type WhyNot struct {
	Doc docent.DocRecord
	// Depth is how many hits each retriever was asked for.
	Depth int
	// Filter describes the turn's filter ("" when it had none) and
	// Excluded why it removed the document ("" when it did not).
	Filter, Excluded string
	Chunks           []WhyNotChunk
	// Error says why the check could not run.
	Error string
}

// WhyNotChunk is one chunk of the picked document.
type WhyNotChunk struct {
	ID, Section string
	// Keyword and Vector are the 1-based ranks with the turn's filter
	// (0: not within Depth); the Unfiltered ranks are without it.
	Keyword, Vector                     int
	KeywordUnfiltered, VectorUnfiltered int
	// Candidate is the chunk's place among the turn's candidates (0: not there).
	Candidate int
	// Sent reports that it was given to the generator; Why says why
	// not (the gate's reason, not a candidate, or filtered).
	Sent bool
	Why  string
	// Excluded says why the filter removes it ("" when it does not).
	Excluded string
}

// Misses is the misses inbox.
type Misses struct {
	Meta
	// Review is "open", "reviewed" or "all"; Assignee filters by person.
	Review, Assignee string
	People           []string
	Items            []docent.TurnSummary
	Total            int
	Pager            Pager
	// Knowledge are the newest replies people resolved handoffs with:
	// answers the docs lacked.
	Knowledge []docent.KnowledgeCandidate
	// CanTune shows the form that adds a synonym (offline answerer).
	CanTune bool
	// Flagged maps the cited documents flagged stale to why.
	Flagged map[string]string
}

// GoldenPage lists the golden set and its runs.
type GoldenPage struct {
	Meta
	Questions []docent.GoldenQuestion
	Runs      []GoldenRunView
	// Trend charts hit@5, MRR@10 and not-found accuracy over the runs.
	Trend LineChart
	// Running is the run in progress, if any.
	Running *docent.GoldenRun
	// CanTune shows "Run and calibrate" (offline answerer).
	CanTune bool
}

// GoldenRunView is a run with its decoded report.
type GoldenRunView struct {
	Run    docent.GoldenRun
	Report RunReport
}

// RunReport is the figures of a golden run the pages show.
type RunReport struct {
	// Questions counts the questions run; Passed those that passed.
	Questions, Passed int
	// HitAt1 and HitAt5 are the shares of answerable questions with an
	// expected document within the top 1 and 5 documents; MRR10 the mean
	// reciprocal rank of the first one within the top 10.
	HitAt1, HitAt5, MRR10 float64
	// NotFoundAccuracy is the share of unanswerable questions that came
	// back not found, DeclinedRate the share not answered as if covered;
	// FalseNotFoundRate the share of answerable ones that came back not
	// found.
	NotFoundAccuracy, DeclinedRate, FalseNotFoundRate float64
	// CitationPrecision is the share of citations that point at an
	// expected document.
	CitationPrecision float64
}

// GoldenRunPage is one run: its numbers, rows and configuration.
type GoldenRunPage struct {
	Meta
	GoldenRunView
	Rows []GoldenRowView
	// Others are the runs it can be compared with.
	Others []docent.GoldenRun
	// Calibration is what the run fitted, when it calibrated, and
	// CalibrationConfig the config that sets it; CanTune shows Apply.
	Calibration       *Calibration
	CalibrationConfig string
	CanTune           bool
}

// Calibration is what a fitted decision rule gives, set by set, beside
// the rule in force.
type Calibration struct {
	// BySet is what the fitted rule gives on each set; Current what the
	// rule in force gives, in the same order (empty when none was in
	// force).
	BySet, Current []RuleOutcome
	// Evidence is, for the calibrated set, how well the fitted rule and
	// each measure alone tell its answerable questions from its
	// unanswerable ones; empty when the set has no question of one kind.
	Evidence []MeasureAUC
}

// MeasureAUC is a measure of the decision and its AUC between answerable
// and unanswerable questions: 0.5 is chance, near 1 (or 0, for a measure
// that falls when a question is covered) a cut separates them.
type MeasureAUC struct {
	Name string
	AUC  float64
}

// RuleOutcome is what a decision rule gives on a set of questions.
type RuleOutcome struct {
	// Answerable and Unanswerable count the questions.
	Answerable, Unanswerable int
	// AnsweredCorrect and AnsweredWrong count the answerable questions
	// answered rightly and wrongly; Declined the unanswerable ones not
	// answered.
	AnsweredCorrect, AnsweredWrong, Declined int
}

// GoldenRowView is a run row with its decoded outcome.
type GoldenRowView struct {
	docent.GoldenRunRow
	Outcome RowOutcome
}

// RowOutcome is what RunRowWhy reads of a question's decoded outcome.
type RowOutcome struct {
	// Kind is the question's kind; Status the answer status (error when
	// the answer failed) and Error the failure.
	Kind   docent.GoldenKind
	Status docent.Status
	Error  string
	// FirstRank is the document rank of the first expected document, 0
	// when none was retrieved.
	FirstRank int
	// FirstCitedOK reports that the first citation is an expected
	// document; FactsOK that every fact is stated, MissingFacts those
	// that are not.
	FirstCitedOK, FactsOK bool
	MissingFacts          []string
}

// GoldenDiff compares two runs question by question.
type GoldenDiff struct {
	Meta
	A, B                GoldenRunView
	Better, Worse, Same int
	Rows                []DiffRow
	Runs                []docent.GoldenRun
	OnlyChanged         bool
	// ConfigDiff is the line diff of the two runs' configurations, nil
	// when they ran under the same one.
	ConfigDiff []DiffLine
}

// DiffLine is one line of a diff: Op is "+" (only in the newer), "-"
// (only in the older), " " (context) or "…" (lines left out).
type DiffLine struct{ Op, Text string }

// DiffRow is one question in two runs.
type DiffRow struct {
	ID, Question, Kind string
	// A and B are the rows (nil when the question was not in that run).
	A, B *docent.GoldenRunRow
	// Change is "better", "worse" or "same".
	Change string
}

// GoldenForm adds or edits a golden question.
type GoldenForm struct {
	Meta
	// Edit is set when editing an existing question (its ID is fixed).
	Edit               bool
	ID, Question, Kind string
	// Expect holds one "path | section" per line; Facts one per line.
	Expect, Facts              string
	Covered, Uncovered, Source string
	FromTurn                   int64
	// Candidates are documents to pick the expected one from (a turn's,
	// or those DocQuery found).
	Candidates []DocChoice
	DocQuery   string
	// Errors by field name.
	Errors map[string]string
}

// DocChoice is a document offered as the expected one.
type DocChoice struct {
	Path, Title, Section string
	Rank                 int
}

// GoldenImport is the YAML import and export page.
type GoldenImport struct {
	Meta
	YAML  string
	Count int
}

// StalePage lists flagged documents.
type StalePage struct {
	Meta
	// WindowDays is how far back the answers citing a document count;
	// Generated is when the list was made.
	WindowDays int
	Generated  time.Time
	// Items are the rows shown; Acked counts the acknowledged documents,
	// listed only with ShowAcked.
	Items     []StaleRow
	ShowAcked bool
	Acked     int
	// DefaultUntil is the acknowledgement date the form proposes.
	DefaultUntil string
}

// StaleRow is one flagged document.
type StaleRow struct {
	// Doc is the registry record.
	Doc docent.DocRecord
	// AgeDays is how long ago it last changed; MaxAgeDays its source's policy.
	AgeDays, MaxAgeDays int
	// Findings are why it is flagged.
	Findings []StaleFinding
	// Cited counts the answers in the window that cited it; NotHelpful
	// those rated not helpful.
	Cited, NotHelpful int
	// Impact ranks the list.
	Impact float64
	// Ack is the acknowledgement in force, nil when there is none.
	Ack *docent.StaleAck
}

// StaleFinding is one reason a document is flagged.
type StaleFinding struct {
	// Kind is the machine name ("old", "conflict"); Label says it in a
	// few words; Detail in a sentence.
	Kind, Label, Detail string
}

// SourceRow is one source's sync state.
type SourceRow struct {
	Name, Type, Schedule string
	Scheduled            bool
	Running, Queued      bool
	Next                 time.Time
	Last                 *docent.SyncRun
	Counts               SourceCounts
	StaleAfterDays       int
	// Health is how the scheduler's syncs of the source have been going:
	// failed runs in a row, missed scheduled runs, stale, last success
	// (zero when it is not scheduled in this process).
	Health SourceHealth
}

// SourceCounts are a source's documents in the registry.
type SourceCounts struct {
	// Live and Deleted count documents present at and gone from the
	// source; Chunks the live documents' chunks.
	Live, Deleted, Chunks int
}

// SourceHealth is how a source's scheduled syncs have been going.
type SourceHealth struct {
	// LastSuccess is when the last successful run finished (zero if none
	// has); ConsecutiveFailures counts the failed runs since then, and
	// LastError is the last run's error ("" when it succeeded).
	LastSuccess         time.Time
	ConsecutiveFailures int
	LastError           string
	// MissedRuns counts the scheduled runs that came due since the last
	// success; Stale is set once too many have, without a success.
	MissedRuns int
	Stale      bool
}

// HealthText names a source's sync health in a few words: "healthy",
// "failing", "stale" (its schedule came due too often without a
// success), "not synced yet" (a new source: no run has succeeded and none
// has failed), or "not scheduled" in this process.
func HealthText(s SourceRow) string {
	switch {
	case !s.Scheduled:
		return "not scheduled"
	case s.Health.Stale:
		return "stale"
	case s.Health.ConsecutiveFailures > 0:
		return "failing"
	case s.Health.LastSuccess.IsZero():
		return "not synced yet"
	}
	return "healthy"
}

// healthClass colours HealthText: ok, bad, or none (not synced yet, not
// scheduled).
func healthClass(s SourceRow) string {
	switch HealthText(s) {
	case "healthy":
		return "ok"
	case "stale", "failing":
		return "bad"
	}
	return "muted"
}

// SourcesPage lists sources and recent runs.
type SourcesPage struct {
	Meta
	Sources []SourceRow
	Runs    []docent.SyncRun
}

// SourceDocuments lists one page of a source's live documents.
type SourceDocuments struct {
	Meta
	Source string
	// Total counts the source's live documents; Docs is this page of them.
	Total int
	Docs  []docent.DocRecord
	Pager Pager
}

// Document is one document's record and its chunks as indexed.
type Document struct {
	Meta
	Doc    docent.DocRecord
	Chunks []docent.Chunk
	// Missing counts the chunks the registry lists that the index does
	// not hold (a sync in progress, or one to heal).
	Missing int
}

// DocumentURL is the console page of a document.
func DocumentURL(id string) string { return "/document?id=" + url.QueryEscape(id) }

// ContentSummary is a run's content counts in words, "" when there is
// nothing to say.
func ContentSummary(c docent.ContentCounts) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, Itoa(n)+" "+what)
		}
	}
	add(c.Embedded, "embedded")
	add(c.Reused, "vectors reused")
	add(c.Dropped, "markup dropped")
	add(c.Empty, "empty")
	add(c.Oversized, "oversized")
	add(c.Fragments, "fragments")
	add(len(c.Warnings), "warnings")
	return strings.Join(parts, " · ")
}

// PlaygroundChannel is a scope to ask from.
type PlaygroundChannel struct {
	// Key identifies it in the form; Label shows it.
	Key, Label string
	// Sources and Labels are its source scope (empty: everything).
	Sources, Labels []string
}

// Playground asks as if from a channel.
type Playground struct {
	Meta
	Channels []PlaygroundChannel
	Channel  string
	Question string
	// Turn is the answer just given, with its trace.
	Turn *docent.Turn
	// Flagged maps its cited documents flagged stale to why.
	Flagged map[string]string
}

// TokensPage lists API tokens.
type TokensPage struct {
	Meta
	Tokens []docent.APIToken
	// NewToken is shown once, right after it was made.
	NewToken, NewName string
	DefaultRate       int
	// Required says whether /api/ needs a token on this server.
	Required bool
	// Sources are the configured sources a token can be scoped to.
	Sources []string
}

// ErrorPage shows a status and a safe message.
type ErrorPage struct {
	Meta
	Status  int
	Message string
}

// Part is a piece of answer text: plain text, or a citation marker.
type Part struct {
	Text string
	// N is the citation number, 0 for plain text.
	N int
	// Chunk is the cited chunk's ID.
	Chunk string
}

var markerRE = regexp.MustCompile(`\[(\d+)\]`)

// AnswerParts splits answer text at its [n] markers, linking each to
// its citation's chunk.
func AnswerParts(text string, cites []docent.Citation) []Part {
	byN := map[int]string{}
	for _, c := range cites {
		byN[c.N] = c.ChunkID
	}
	var parts []Part
	last := 0
	for _, m := range markerRE.FindAllStringSubmatchIndex(text, -1) {
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		chunk, ok := byN[n]
		if !ok {
			continue
		}
		if m[0] > last {
			parts = append(parts, Part{Text: text[last:m[0]]})
		}
		parts = append(parts, Part{Text: text[m[0]:m[1]], N: n, Chunk: chunk})
		last = m[1]
	}
	if last < len(text) {
		parts = append(parts, Part{Text: text[last:]})
	}
	return parts
}

// ChunkAnchor is the element ID of a candidate row.
func ChunkAnchor(id string) string { return "chunk-" + id }

// Itoa formats an int.
func Itoa(n int) string { return strconv.Itoa(n) }

// ScopeText says what a token's scope lets it read: "every source", or
// its sources and labels.
func ScopeText(s docent.Scope) string {
	if s.IsZero() {
		return "every source"
	}
	var parts []string
	if len(s.Sources) > 0 {
		parts = append(parts, "sources: "+strings.Join(s.Sources, ", "))
	}
	if len(s.Labels) > 0 {
		parts = append(parts, "labels: "+strings.Join(s.Labels, ", "))
	}
	return strings.Join(parts, " · ")
}

// I64 formats an int64.
func I64(n int64) string { return strconv.FormatInt(n, 10) }

// Rank formats a 1-based rank, "–" for 0 (not returned).
func Rank(n int) string {
	if n == 0 {
		return "–"
	}
	return strconv.Itoa(n)
}

// Score formats a score with four decimals, "–" for 0.
func Score(f float64) string {
	if f == 0 {
		return "–"
	}
	return strconv.FormatFloat(f, 'f', 4, 64)
}

// Pct formats n/d as a percentage, "–" when d is 0.
func Pct(n, d int) string {
	if d == 0 {
		return "–"
	}
	return strconv.FormatFloat(100*float64(n)/float64(d), 'f', 1, 64) + "%"
}

// Rate formats a share in [0,1] with three decimals.
func Rate(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

// MS formats milliseconds.
func MS(f float64) string {
	if f >= 1000 {
		return strconv.FormatFloat(f/1000, 'f', 2, 64) + " s"
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " ms"
}

// Dur formats a stage duration.
func Dur(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return MS(float64(d) / float64(time.Millisecond))
}

// When formats a time in UTC to the minute, "–" for the zero time.
func When(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// Day formats a date, "–" for the zero time.
func Day(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02")
}

// Section joins a section path.
func Section(s []string) string { return strings.Join(s, " › ") }

// Join joins strings with ", ".
func Join(s []string) string { return strings.Join(s, ", ") }

// FilterText describes a retrieval filter, "" when it restricts nothing.
func FilterText(f docent.Filter) string {
	var parts []string
	if len(f.Sources) > 0 {
		parts = append(parts, "sources: "+Join(f.Sources))
	}
	if len(f.Spaces) > 0 {
		parts = append(parts, "spaces: "+Join(f.Spaces))
	}
	if len(f.Labels) > 0 {
		parts = append(parts, "labels: "+Join(f.Labels))
	}
	if !f.UpdatedAfter.IsZero() {
		parts = append(parts, "updated after "+Day(f.UpdatedAfter))
	}
	if !f.UpdatedBefore.IsZero() {
		parts = append(parts, "updated before "+Day(f.UpdatedBefore))
	}
	return strings.Join(parts, "; ")
}

// Truncate shortens s to n runes with an ellipsis.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// MissReasons says why a turn is in the misses inbox.
func MissReasons(t docent.TurnSummary) []string {
	var out []string
	switch t.Status {
	case docent.StatusNotFound:
		out = append(out, "not found")
	case docent.StatusUncertain:
		out = append(out, "uncertain")
	case docent.StatusError:
		out = append(out, "failed")
	}
	if t.Error != "" && t.Status != docent.StatusError {
		out = append(out, "degraded")
	}
	if t.NotHelpful > 0 {
		out = append(out, fmt.Sprintf("not helpful ×%d", t.NotHelpful))
	}
	if t.Handoff != "" {
		out = append(out, "handoff "+string(t.Handoff))
	}
	return out
}

// CitedDocs lists a turn's cited documents, once each.
func CitedDocs(cites []docent.Citation) []docent.Citation {
	seen := map[string]bool{}
	var out []docent.Citation
	for _, c := range cites {
		if !seen[c.DocID] {
			seen[c.DocID] = true
			out = append(out, c)
		}
	}
	return out
}

// generatorName is what the sources are given to: the model, or the
// offline extractive answer.
func generatorName(t docent.Turn) string {
	if t.Answer.Trace.Model != "" || (t.Answer.Trace.Decision != nil && t.Answer.Trace.Decision.Rule == "plausible") {
		return "model"
	}
	return "answer writer"
}

// CandidateNumbers gives the 1-based candidate positions of chunk IDs
// ("–" for one not among the candidates).
func CandidateNumbers(t docent.Turn, ids []string) []string {
	pos := map[string]int{}
	for i, h := range t.Answer.Trace.Candidates {
		if _, ok := pos[h.Chunk.ID]; !ok {
			pos[h.Chunk.ID] = i + 1
		}
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, Rank(pos[id]))
	}
	return out
}

// Feature is one measured feature.
type Feature struct {
	Name  string
	Value float64
}

// SortedFeatures lists features by name.
func SortedFeatures(m map[string]float64) []Feature {
	out := make([]Feature, 0, len(m))
	for k, v := range m {
		out = append(out, Feature{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Used reports whether the answer drew on chunk id.
func Used(tr docent.Trace, id string) bool {
	for _, u := range tr.Used {
		if u == id {
			return true
		}
	}
	return false
}

// Injected counts the candidates flagged as addressing the assistant.
func Injected(tr docent.Trace) int {
	n := 0
	for _, h := range tr.Candidates {
		if h.Injection != "" {
			n++
		}
	}
	return n
}

// Query builds "?k=v&..." from pairs, leaving out empty values.
func Query(path string, kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// F1 formats a float with one decimal.
func F1(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "–"
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

type csrfKey struct{}

// WithCSRF returns ctx carrying the session's CSRF token, for forms deep
// in components that are not handed the page's Meta.
func WithCSRF(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, csrfKey{}, token)
}

func ctxCSRF(ctx context.Context) string {
	s, _ := ctx.Value(csrfKey{}).(string)
	return s
}

func goldenAction(p GoldenForm) string {
	if p.Edit {
		return "/golden/q/" + p.ID
	}
	return "/golden"
}

func diffClass(op string) string {
	switch op {
	case "+":
		return "add"
	case "-":
		return "del"
	}
	return "ctx"
}

// RunRowWhy says why a golden question failed, from its outcome.
func RunRowWhy(r GoldenRowView) string {
	o := r.Outcome
	switch {
	case r.Pass:
		return ""
	case o.Error != "":
		return "the answer failed: " + o.Error
	case o.Kind == docent.KindUnanswerable:
		return "answered, though the docs do not cover it"
	case o.FirstRank == 0:
		return "no expected page was retrieved"
	case o.Status != docent.StatusAnswered:
		return fmt.Sprintf("an expected page ranked %d, but the answer was %s", o.FirstRank, StatusText(string(o.Status)))
	case !o.FirstCitedOK:
		return "the first citation is not an expected page"
	case !o.FactsOK:
		return "the answer does not state " + Join(o.MissingFacts)
	}
	return "did not pass"
}

func diffStatus(r *docent.GoldenRunRow) string {
	if r == nil {
		return "absent"
	}
	s := StatusText(r.Status)
	if r.Pass {
		return s + " (pass)"
	}
	return s + " (fail)"
}

func diffRank(r *docent.GoldenRunRow) string {
	if r == nil {
		return "–"
	}
	return Rank(r.FirstRank)
}

// Gaps is the coverage-gaps page: the period's misses grouped into topics.
type Gaps struct {
	Meta
	// Period is "week" or "month".
	Period string
	// Gaps are the topics, largest first.
	Gaps []Gap
	// Misses counts the period's misses; Capped says only the newest were grouped.
	Misses int
	Capped bool
}

// Gap is one topic of missed questions.
type Gap struct {
	// Terms are the words the topic's questions share, commonest first.
	Terms []string
	// Misses are its questions, newest first: all of them (Size counts
	// them), though the page lists the first few.
	Misses []GapMiss
	// Pages are the closest documents, closest first.
	Pages []GapPage
	// Action is the suggested action's machine name ("write",
	// "synonym", "refresh", "fix", "golden"; GapActionText names it);
	// Advice says it in words.
	Action, Advice string
}

// Size is the number of missed questions in the gap.
func (g Gap) Size() int { return len(g.Misses) }

// GapMiss is one missed question of a gap.
type GapMiss struct {
	// TurnID and Question identify it; Status is the answer's outcome.
	TurnID   int64
	Question string
	Status   docent.Status
}

// GapPage is a document close to a gap.
type GapPage struct {
	// DocID and Title name it; Section is the closest chunk's.
	DocID, Title, Section string
	// Similarity is the cosine of its closest chunk to the gap's centroid.
	Similarity float64
	// Missing are the gap's terms the closest chunk does not contain.
	Missing []string
	// Flagged says why the document is flagged stale, "" when it is not.
	Flagged string
}

// GapActionText names a suggested action, given by its machine name
// (the action itself when it has no name here).
func GapActionText(action string) string {
	switch action {
	case "write":
		return "write a page"
	case "synonym":
		return "add a synonym"
	case "refresh":
		return "fix or refresh a stale page"
	case "fix":
		return "fix the page"
	case "golden":
		return "add a golden question"
	}
	return action
}

// Similarity formats a similarity in [0, 1] as a percentage.
func Similarity(f float64) string { return strconv.Itoa(int(math.Round(f*100))) + "%" }
