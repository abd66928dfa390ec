package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Golden is a golden set: questions with the documents that answer them.
type Golden struct {
	// Questions are the golden questions, in file order.
	Questions []docent.GoldenQuestion `yaml:"questions" json:"questions"`
}

// LoadGolden reads and validates the golden set YAML file at path.
// Unknown keys, syntax errors and invalid questions are errors that name
// the file and line.
func LoadGolden(path string) (*Golden, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: golden: %w", err)
	}
	return ParseGolden(path, data)
}

// ParseGolden parses and validates a golden set; name is used in errors.
func ParseGolden(name string, data []byte) (*Golden, error) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(name, err)
	}
	var body ast.Node
	for _, doc := range file.Docs {
		if doc.Body == nil {
			continue
		}
		if body != nil {
			return nil, fmt.Errorf("eval: golden: %s: more than one YAML document", name)
		}
		body = doc.Body
	}
	if body == nil {
		return nil, fmt.Errorf("eval: golden: %s: empty file", name)
	}
	var g Golden
	if err := yaml.NodeToValue(body, &g, yaml.DisallowUnknownField()); err != nil {
		return nil, yamlError(name, err)
	}
	// Record each question's line from the AST.
	if m, ok := body.(*ast.MappingNode); ok {
		for _, kv := range m.Values {
			if kv.Key.String() != "questions" {
				continue
			}
			if seq, ok := kv.Value.(*ast.SequenceNode); ok {
				for i, item := range seq.Values {
					if i < len(g.Questions) && item.GetToken() != nil {
						g.Questions[i].Line = item.GetToken().Position.Line
					}
				}
			}
		}
	}
	if err := g.validate(name); err != nil {
		return nil, err
	}
	return &g, nil
}

// Half returns the questions at odd (1, 3, 5, ...) or even (2, 4, ...)
// positions of the file, for keeping one half of a development set
// untouched: develop on one half, report the other. half is "odd" or
// "even"; any other value is an error.
func (g *Golden) Half(half string) (*Golden, error) {
	var want int
	switch half {
	case "odd":
		want = 1
	case "even":
		want = 0
	default:
		return nil, fmt.Errorf("eval: golden: half %q: want odd or even", half)
	}
	out := &Golden{}
	for i, q := range g.Questions {
		if (i+1)%2 == want {
			out.Questions = append(out.Questions, q)
		}
	}
	if len(out.Questions) == 0 {
		return nil, fmt.Errorf("eval: golden: the %s half has no questions", half)
	}
	return out, nil
}

// yamlError formats a go-yaml error as "eval: golden: name:line:col: msg".
func yamlError(name string, err error) error {
	var yerr yaml.Error
	if errors.As(err, &yerr) && yerr.GetToken() != nil {
		pos := yerr.GetToken().Position
		return fmt.Errorf("eval: golden: %s:%d:%d: %s", name, pos.Line, pos.Column, yerr.GetMessage())
	}
	return fmt.Errorf("eval: golden: %s: %w", name, err)
}

// Validate checks the set: at least one question; every question has a
// unique id, text and a known kind; expect is empty exactly for
// unanswerable questions; every expected doc is named. All problems are
// reported, joined.
func (g *Golden) Validate() error {
	return g.validate("golden set")
}

func (g *Golden) validate(name string) error {
	if len(g.Questions) == 0 {
		return fmt.Errorf("eval: golden: %s: no questions", name)
	}
	var errs []error
	seen := make(map[string]int)
	for i, q := range g.Questions {
		where := name
		if q.Line > 0 {
			where = fmt.Sprintf("%s:%d", name, q.Line)
		}
		bad := func(format string, args ...any) {
			label := fmt.Sprintf("question %d", i+1)
			if q.ID != "" {
				label = fmt.Sprintf("question %q", q.ID)
			}
			errs = append(errs, fmt.Errorf("eval: golden: %s: %s: %s", where, label, fmt.Sprintf(format, args...)))
		}
		if strings.TrimSpace(q.ID) == "" {
			bad("missing id")
		} else if prev, dup := seen[q.ID]; dup {
			bad("duplicate id (first at question %d)", prev)
		} else {
			seen[q.ID] = i + 1
		}
		if strings.TrimSpace(q.Question) == "" {
			bad("missing question text")
		}
		switch {
		case q.Kind == "":
			bad("missing kind (want %s)", kindList())
		case !q.Kind.Known():
			bad("unknown kind %q (want %s)", q.Kind, kindList())
		case q.Kind == docent.KindUnanswerable && len(q.Expect) > 0:
			bad("unanswerable question must not list expected documents")
		case q.Kind != docent.KindUnanswerable && len(q.Expect) == 0:
			bad("%s question must list at least one expected document", q.Kind)
		case q.Kind == docent.KindUnanswerable && len(q.Facts) > 0:
			bad("unanswerable question must not list facts")
		}
		for j, e := range q.Expect {
			if strings.TrimSpace(e.Doc) == "" {
				bad("expect %d: missing doc", j+1)
			}
		}
	}
	return errors.Join(errs...)
}

func kindList() string {
	s := make([]string, len(docent.GoldenKinds))
	for i, k := range docent.GoldenKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// Answerer answers a question through the full pipeline (retrieval,
// threshold, generation, citation checks).
type Answerer interface {
	// Answer answers q. An error is recorded against the question and
	// the run goes on; a cancelled context ends the run.
	Answer(ctx context.Context, q docent.Question) (docent.Answer, error)
}

// AnswererFunc adapts a function to an Answerer.
type AnswererFunc func(ctx context.Context, q docent.Question) (docent.Answer, error)

// Answer calls f.
func (f AnswererFunc) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	return f(ctx, q)
}

// GoldenPlatform is the Question.Platform of golden-set questions, so
// that their turns can be told apart from real ones.
const GoldenPlatform = "eval"

// GoldenReport is the outcome of a golden-set run.
//
// Retrieval metrics come from Answer.Trace.Candidates ranked by document
// (a document ranks where its best chunk does) and are averaged over
// answerable questions; a rate with an empty denominator is 0.
type GoldenReport struct {
	// Questions, Answerable and Unanswerable count the questions run.
	Questions    int `json:"questions"`
	Answerable   int `json:"answerable"`
	Unanswerable int `json:"unanswerable"`
	// Passed counts questions that passed (see GoldenRow.Pass), and
	// PassRate is Passed / Questions.
	Passed   int     `json:"passed"`
	PassRate float64 `json:"pass_rate"`
	// Errors counts questions whose Answerer call failed.
	Errors int `json:"errors"`
	// HitAt1, HitAt3 and HitAt5 are the shares of answerable questions
	// with an expected document within the top 1, 3 and 5 documents.
	HitAt1 float64 `json:"hit_at_1"`
	HitAt3 float64 `json:"hit_at_3"`
	HitAt5 float64 `json:"hit_at_5"`
	// MRR10 is the mean reciprocal rank of the first expected document
	// within the top 10 documents.
	MRR10 float64 `json:"mrr_at_10"`
	// DocRecall5 is the mean share of a question's expected documents
	// found within the top 5 (it matters for multi questions).
	DocRecall5 float64 `json:"doc_recall_at_5"`
	// SectionHitAt1, SectionHitAt3 and SectionHitAt5 are the shares of
	// SectionQuestions (answerable questions that name at least one
	// section) with a candidate chunk among the first 1, 3 and 5
	// candidates whose document and section match an expectation (see
	// GoldenRow.SectionRank); SectionMRR10 is the mean reciprocal rank of
	// the first such chunk within the first 10 candidates. Unlike the page
	// figures, these rank chunks: the section a quote or a model needs.
	SectionHitAt1    float64 `json:"section_hit_at_1"`
	SectionHitAt3    float64 `json:"section_hit_at_3"`
	SectionHitAt5    float64 `json:"section_hit_at_5"`
	SectionMRR10     float64 `json:"section_mrr_at_10"`
	SectionQuestions int     `json:"section_questions"`
	// AnsweredRate, UncertainRate and FalseNotFoundRate are the shares
	// of answerable questions that came back answered, uncertain and
	// not_found.
	AnsweredRate      float64 `json:"answered_rate"`
	UncertainRate     float64 `json:"uncertain_rate"`
	FalseNotFoundRate float64 `json:"false_not_found_rate"`
	// LinkedFirstRate is the share of answerable questions answered or
	// uncertain whose first citation is an expected document: the asker
	// was pointed at the right page.
	LinkedFirstRate float64 `json:"linked_first_rate"`
	// CorrectRate is the share of answerable questions answered correctly:
	// answered, first citation an expected document, every fact stated.
	CorrectRate float64 `json:"correct_rate"`
	// LinkedRate is the share of answerable questions answered or
	// uncertain with an expected document among the pages linked (the
	// citations of an answer, the closest pages of an uncertain reply).
	LinkedRate float64 `json:"linked_rate"`
	// ModelAskedRate is the share of answerable questions a language
	// model was asked to answer (0 for the offline answerer);
	// ContextPageRate and ContextSectionRate the shares of those whose
	// sources held an expected document and an expected section;
	// SourcesPerQuestion and PromptTokensPerQuestion the mean sources and
	// prompt tokens of those questions.
	ModelAskedRate          float64 `json:"model_asked_rate,omitempty"`
	ContextPageRate         float64 `json:"context_page_rate,omitempty"`
	ContextSectionRate      float64 `json:"context_section_rate,omitempty"`
	SourcesPerQuestion      float64 `json:"sources_per_question,omitempty"`
	PromptTokensPerQuestion float64 `json:"prompt_tokens_per_question,omitempty"`
	// CitationPrecision is CitationsCorrect / Citations over answerable
	// questions: the share of citations that point at an expected
	// document (micro-averaged, so each citation counts once).
	CitationPrecision float64 `json:"citation_precision"`
	Citations         int     `json:"citations"`
	CitationsCorrect  int     `json:"citations_correct"`
	// NotFoundAccuracy is the share of unanswerable questions that came
	// back not_found; DeclinedRate the share not answered as if covered
	// (not_found or uncertain).
	NotFoundAccuracy float64 `json:"not_found_accuracy"`
	DeclinedRate     float64 `json:"declined_rate"`
	// Judge names who rated faithfulness and relevance ("" when no judge
	// ran); Judged counts the answered questions it rated and JudgeErrors
	// those it could not. Faithfulness is the share of the judged answers'
	// claims supported by the source they cite (micro-averaged over
	// claims), AnswerRelevance the mean relevance, UnsupportedClaims the
	// claims not supported.
	Judge             string  `json:"judge,omitempty"`
	Judged            int     `json:"judged,omitempty"`
	JudgeErrors       int     `json:"judge_errors,omitempty"`
	Faithfulness      float64 `json:"faithfulness,omitempty"`
	AnswerRelevance   float64 `json:"answer_relevance,omitempty"`
	UnsupportedClaims int     `json:"unsupported_claims,omitempty"`
	// LatencyP50 and LatencyP95 are Answerer latency percentiles.
	LatencyP50 time.Duration `json:"latency_p50_ns"`
	LatencyP95 time.Duration `json:"latency_p95_ns"`
	// ByKind breaks the results down by kind, in Kinds order, for kinds
	// present in the set.
	ByKind []KindStats `json:"by_kind"`
	// Rows holds one row per question, in golden-set order.
	Rows []GoldenRow `json:"rows"`
}

// KindStats summarizes the questions of one kind.
type KindStats struct {
	// Kind is the kind summarized.
	Kind docent.GoldenKind `json:"kind"`
	// Questions and Passed count its questions and those that passed.
	Questions int     `json:"questions"`
	Passed    int     `json:"passed"`
	PassRate  float64 `json:"pass_rate"`
	// HitAt5 and MRR10 are the retrieval metrics (0 for unanswerable).
	HitAt5 float64 `json:"hit_at_5"`
	MRR10  float64 `json:"mrr_at_10"`
	// AnsweredRate, UncertainRate and NotFoundRate are the shares of the
	// three outcomes: for unanswerable questions NotFoundRate is the
	// not-found accuracy, for the others it is the false not-found rate.
	AnsweredRate  float64 `json:"answered_rate"`
	UncertainRate float64 `json:"uncertain_rate"`
	NotFoundRate  float64 `json:"not_found_rate"`
	// CorrectRate is the share answered correctly (0 for unanswerable).
	CorrectRate float64 `json:"correct_rate"`
}

// GoldenRow is one question's outcome, meant to be diffed between runs.
type GoldenRow struct {
	// ID and Kind identify the question.
	ID   string            `json:"id"`
	Kind docent.GoldenKind `json:"kind"`
	// Status is the answer status (error when the Answerer failed).
	Status docent.Status `json:"status"`
	// FirstRank is the document rank of the first expected document among
	// all candidates, 0 when none was retrieved (or unanswerable).
	FirstRank int `json:"first_rank"`
	// Expected and Found5 count the expected documents and those within
	// the top 5.
	Expected int `json:"expected"`
	Found5   int `json:"found_at_5"`
	// SectionHit reports a section match within the first 5 candidates;
	// SectionRank is the candidate rank of the first chunk that matches an
	// expected section, 0 when none does.
	SectionHit  bool `json:"section_hit"`
	SectionRank int  `json:"section_rank,omitempty"`
	// Citations and CitationsCorrect count the answer's citations and
	// those pointing at an expected document.
	Citations        int `json:"citations"`
	CitationsCorrect int `json:"citations_correct"`
	// FirstCitedOK reports that the first citation is an expected
	// document; FactsOK that every fact of the question is stated.
	FirstCitedOK bool `json:"first_cited_ok"`
	FactsOK      bool `json:"facts_ok"`
	// MissingFacts lists the facts the answer did not state; Facts counts
	// the question's facts.
	MissingFacts []string `json:"missing_facts,omitempty"`
	Facts        int      `json:"facts,omitempty"`
	// FirstSectionOK reports that the first citation is a chunk of an
	// expected document in an expected section (false when the question
	// names no section).
	FirstSectionOK bool `json:"first_section_ok,omitempty"`
	// LinkedOK reports that an expected document is among the citations
	// (for an uncertain reply, the pages it links).
	LinkedOK bool `json:"linked_ok,omitempty"`
	// Features are the gate's measurements the decision was made on.
	Features map[string]float64 `json:"features,omitempty"`
	// ModelAsked reports that a language model was asked to write the
	// answer. Sources counts the chunks given to the generator;
	// ContextPage and ContextSection report that an expected document, and
	// an expected section of it, was among them. PromptTokens counts the
	// model tokens sent.
	ModelAsked     bool `json:"model_asked,omitempty"`
	Sources        int  `json:"sources,omitempty"`
	ContextPage    bool `json:"context_page,omitempty"`
	ContextSection bool `json:"context_section,omitempty"`
	PromptTokens   int  `json:"prompt_tokens,omitempty"`
	// Pass is true for an unanswerable question not answered as if
	// covered (not_found or uncertain), and for an answerable one answered
	// correctly: answered, first citation an expected document, every
	// fact stated.
	Pass bool `json:"pass"`
	// TopScore is the best candidate's relevance, as the gate measured it.
	TopScore float64 `json:"top_score"`
	// Judged is set when a Judge rated the answer: Faithfulness is its
	// share of supported claims, Relevance how well it answers, and
	// Unsupported quotes the claims not supported.
	Judged       bool     `json:"judged,omitempty"`
	Faithfulness float64  `json:"faithfulness,omitempty"`
	Relevance    float64  `json:"relevance,omitempty"`
	Unsupported  []string `json:"unsupported,omitempty"`
	// Error is the Answerer's error, if any.
	Error string `json:"error,omitempty"`
	// Latency is how long the Answerer took.
	Latency time.Duration `json:"latency_ns"`
}

// docKey returns the Document.Path part of a DocID ("<source>:<path>").
func docKey(docID string) string {
	if _, path, ok := strings.Cut(docID, ":"); ok {
		return path
	}
	return docID
}

// expectedDoc returns the expected doc path that docID matches: the
// whole DocID or its part after the first ':'.
func expectedDoc(docID string, expected map[string]bool) (string, bool) {
	if expected[docID] {
		return docID, true
	}
	if k := docKey(docID); expected[k] {
		return k, true
	}
	return "", false
}

// GoldenOptions tune a golden run.
type GoldenOptions struct {
	// Judge, when set, rates every answered question's faithfulness and
	// relevance.
	Judge Judge
}

// RunGolden asks every question of g through a and scores the answers.
// It stops early only when ctx is done.
func RunGolden(ctx context.Context, g *Golden, a Answerer) (GoldenReport, error) {
	return RunGoldenOptions(ctx, g, a, GoldenOptions{})
}

// RunGoldenOptions is RunGolden with options: with a Judge, every answered
// question is also rated.
func RunGoldenOptions(ctx context.Context, g *Golden, a Answerer, opts GoldenOptions) (GoldenReport, error) {
	rep := GoldenReport{Questions: len(g.Questions), Rows: make([]GoldenRow, 0, len(g.Questions))}
	var claims, supported int
	var relevance float64
	if opts.Judge != nil {
		rep.Judge = opts.Judge.Name()
	}
	type kindAcc struct {
		n, passed, answered, uncertain, notFound, correct int
		hit5, mrr                                         float64
	}
	kinds := make(map[docent.GoldenKind]*kindAcc)
	var (
		latencies                          []time.Duration
		answered, uncertain, falseNotFound int
		linked, correct, declined          int
		notFound                           int
		secHit1, secHit3, secHit5          int
		secMRR                             float64
		replied, linkedAny, asked          int
		ctxPage, ctxSection                int
		sources, tokens                    int
		hit1, hit3, hit5, mrr, rec5        float64
	)
	for _, q := range g.Questions {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("eval: golden: %w", err)
		}
		start := time.Now()
		ans, err := a.Answer(ctx, docent.Question{Text: q.Question, Platform: GoldenPlatform})
		lat := time.Since(start)
		if err != nil && ctx.Err() != nil {
			return rep, fmt.Errorf("eval: golden: question %s: %w", q.ID, err)
		}
		latencies = append(latencies, lat)
		row := GoldenRow{ID: q.ID, Kind: q.Kind, Status: ans.Status, Latency: lat, TopScore: ans.Trace.TopScore,
			PromptTokens: ans.Trace.TokensIn}
		if d := ans.Trace.Decision; d != nil {
			row.Features, row.ModelAsked, row.Sources = d.Features, d.ModelAsked, len(d.Sources)
		}
		if err != nil {
			row.Status = docent.StatusError
			row.Error = err.Error()
			rep.Errors++
		}
		if req, ok := JudgeInput(q.Question, ans); ok && opts.Judge != nil && row.Status == docent.StatusAnswered {
			j, jerr := opts.Judge.Judge(ctx, req)
			if jerr != nil {
				if ctx.Err() != nil {
					return rep, fmt.Errorf("eval: golden: question %s: judge: %w", q.ID, jerr)
				}
				rep.JudgeErrors++
			} else {
				rep.Judged++
				claims += j.Claims
				supported += j.Supported
				relevance += j.Relevance
				rep.UnsupportedClaims += j.Claims - j.Supported
				row.Judged, row.Faithfulness, row.Relevance, row.Unsupported = true, j.Faithfulness(), j.Relevance, j.Unsupported
			}
		}
		ka := kinds[q.Kind]
		if ka == nil {
			ka = &kindAcc{}
			kinds[q.Kind] = ka
		}
		ka.n++
		switch row.Status {
		case docent.StatusAnswered:
			ka.answered++
		case docent.StatusUncertain:
			ka.uncertain++
		case docent.StatusNotFound:
			ka.notFound++
		}

		if q.Kind == docent.KindUnanswerable {
			rep.Unanswerable++
			row.Pass = row.Status == docent.StatusNotFound || row.Status == docent.StatusUncertain
			if row.Pass {
				declined++
			}
			if row.Status == docent.StatusNotFound {
				notFound++
			}
		} else {
			rep.Answerable++
			ranked, rel := scoreAnswerable(q, ans, &row)
			hit1 += HitAt(ranked, rel, 1)
			hit3 += HitAt(ranked, rel, 3)
			h5 := HitAt(ranked, rel, 5)
			m := MRR(ranked, rel, 10)
			hit5 += h5
			mrr += m
			rec5 += Recall(ranked, rel, 5)
			ka.hit5 += h5
			ka.mrr += m
			if hasSection(q) {
				rep.SectionQuestions++
				if r := row.SectionRank; r > 0 {
					secHit1 += b2i(r <= 1)
					secHit3 += b2i(r <= 3)
					secHit5 += b2i(r <= 5)
					if r <= 10 {
						secMRR += 1 / float64(r)
					}
				}
			}
			rep.Citations += row.Citations
			rep.CitationsCorrect += row.CitationsCorrect
			switch row.Status {
			case docent.StatusAnswered:
				answered++
			case docent.StatusUncertain:
				uncertain++
			case docent.StatusNotFound:
				falseNotFound++
			}
			if row.FirstCitedOK && (row.Status == docent.StatusAnswered || row.Status == docent.StatusUncertain) {
				linked++
			}
			if row.Status == docent.StatusAnswered || row.Status == docent.StatusUncertain {
				replied++
				if row.LinkedOK {
					linkedAny++
				}
			}
			if row.ModelAsked {
				asked++
				if row.ContextPage {
					ctxPage++
				}
				if row.ContextSection {
					ctxSection++
				}
				sources += row.Sources
				tokens += row.PromptTokens
			}
			if row.Pass {
				correct++
				ka.correct++
			}
		}
		if row.Pass {
			rep.Passed++
			ka.passed++
		}
		rep.Rows = append(rep.Rows, row)
	}

	rep.PassRate = ratio(rep.Passed, rep.Questions)
	if rep.Judged > 0 {
		rep.Faithfulness = 1
		if claims > 0 {
			rep.Faithfulness = float64(supported) / float64(claims)
		}
		rep.AnswerRelevance = relevance / float64(rep.Judged)
	}
	if n := float64(rep.Answerable); n > 0 {
		rep.HitAt1, rep.HitAt3, rep.HitAt5 = hit1/n, hit3/n, hit5/n
		rep.MRR10 = mrr / n
		rep.DocRecall5 = rec5 / n
	}
	rep.SectionHitAt1 = ratio(secHit1, rep.SectionQuestions)
	rep.SectionHitAt3 = ratio(secHit3, rep.SectionQuestions)
	rep.SectionHitAt5 = ratio(secHit5, rep.SectionQuestions)
	if rep.SectionQuestions > 0 {
		rep.SectionMRR10 = secMRR / float64(rep.SectionQuestions)
	}
	rep.AnsweredRate = ratio(answered, rep.Answerable)
	rep.UncertainRate = ratio(uncertain, rep.Answerable)
	rep.FalseNotFoundRate = ratio(falseNotFound, rep.Answerable)
	rep.LinkedFirstRate = ratio(linked, rep.Answerable)
	rep.LinkedRate = ratio(linkedAny, replied)
	rep.ModelAskedRate = ratio(asked, rep.Answerable)
	rep.ContextPageRate = ratio(ctxPage, asked)
	rep.ContextSectionRate = ratio(ctxSection, asked)
	if asked > 0 {
		rep.SourcesPerQuestion = float64(sources) / float64(asked)
		rep.PromptTokensPerQuestion = float64(tokens) / float64(asked)
	}
	rep.CorrectRate = ratio(correct, rep.Answerable)
	rep.DeclinedRate = ratio(declined, rep.Unanswerable)
	rep.CitationPrecision = ratio(rep.CitationsCorrect, rep.Citations)
	rep.NotFoundAccuracy = ratio(notFound, rep.Unanswerable)
	rep.LatencyP50 = Percentile(latencies, 50)
	rep.LatencyP95 = Percentile(latencies, 95)
	for _, k := range docent.GoldenKinds {
		ka := kinds[k]
		if ka == nil {
			continue
		}
		ks := KindStats{
			Kind:          k,
			Questions:     ka.n,
			Passed:        ka.passed,
			PassRate:      ratio(ka.passed, ka.n),
			AnsweredRate:  ratio(ka.answered, ka.n),
			UncertainRate: ratio(ka.uncertain, ka.n),
			NotFoundRate:  ratio(ka.notFound, ka.n),
			CorrectRate:   ratio(ka.correct, ka.n),
		}
		if k != docent.KindUnanswerable {
			ks.HitAt5 = ka.hit5 / float64(ka.n)
			ks.MRR10 = ka.mrr / float64(ka.n)
		}
		rep.ByKind = append(rep.ByKind, ks)
	}
	return rep, nil
}

// scoreAnswerable fills the retrieval, section, citation and pass fields
// of row for an answerable question, and returns the document ranking
// and the relevance judgments it was scored with.
func scoreAnswerable(q docent.GoldenQuestion, ans docent.Answer, row *GoldenRow) (ranked []string, rel map[string]int) {
	expected := make(map[string]bool, len(q.Expect))
	rel = make(map[string]int, len(q.Expect))
	for _, e := range q.Expect {
		expected[e.Doc] = true
		rel[e.Doc] = 1
	}
	ranked = rankCandidateDocs(ans.Trace.Candidates, expected)
	row.Expected = len(expected)
	row.FirstRank = FirstRelevantRank(ranked, rel, 0)
	forEachUnique(ranked, 5, func(_ int, id string) {
		if rel[id] > 0 {
			row.Found5++
		}
	})
	row.SectionRank = SectionRank(q.Expect, ans.Trace.Candidates)
	row.SectionHit = row.SectionRank > 0 && row.SectionRank <= 5
	row.Citations = len(ans.Citations)
	for i, c := range ans.Citations {
		if _, ok := expectedDoc(c.DocID, expected); ok {
			row.CitationsCorrect++
			if i == 0 {
				row.FirstCitedOK = true
			}
		}
	}
	row.MissingFacts = missingFacts(q.Facts, ans.Text)
	row.Facts = len(q.Facts)
	row.FactsOK = len(row.MissingFacts) == 0
	row.LinkedOK = row.CitationsCorrect > 0
	if len(ans.Citations) > 0 {
		row.FirstSectionOK = citesSection(q.Expect, ans.Citations[0].DocID, ans.Citations[0].Section)
	}
	if d := ans.Trace.Decision; d != nil {
		byID := make(map[string]docent.Chunk, len(ans.Trace.Candidates))
		for _, h := range ans.Trace.Candidates {
			byID[h.Chunk.ID] = h.Chunk
		}
		for _, id := range d.Sources {
			c := byID[id]
			if _, ok := expectedDoc(c.DocID, expected); ok {
				row.ContextPage = true
			}
			if citesSection(q.Expect, c.DocID, strings.Join(c.Section, " › ")) {
				row.ContextSection = true
			}
		}
	}
	row.Pass = row.Status == docent.StatusAnswered && row.FirstCitedOK && row.FactsOK
	return ranked, rel
}

// citesSection reports whether a chunk of docID in section (the section
// path as "A › B" or space-joined) is in an expected section: its path
// holds the expected heading.
func citesSection(expect []docent.GoldenExpect, docID, section string) bool {
	for _, e := range expect {
		if e.Section == "" {
			continue
		}
		if _, ok := expectedDoc(docID, map[string]bool{e.Doc: true}); !ok {
			continue
		}
		if strings.Contains(strings.ToLower(section), strings.ToLower(e.Section)) {
			return true
		}
	}
	return false
}

// missingFacts returns the facts text does not state: a fact is stated
// when one of its " | "-separated alternatives appears in text, compared
// case-insensitively with runs of whitespace folded.
func missingFacts(facts []string, text string) []string {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	t := norm(text)
	var missing []string
	for _, f := range facts {
		found := false
		for _, alt := range strings.Split(f, "|") {
			if a := norm(alt); a != "" && strings.Contains(t, a) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, f)
		}
	}
	return missing
}

// rankCandidateDocs ranks documents by their best chunk among the
// candidates; documents matching an expected doc are named by its path.
func rankCandidateDocs(cands []docent.Hit, expected map[string]bool) []string {
	seen := make(map[string]bool, len(cands))
	var ranked []string
	for _, h := range cands {
		id := h.Chunk.DocID
		if e, ok := expectedDoc(id, expected); ok {
			id = e
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		ranked = append(ranked, id)
	}
	return ranked
}

// SectionRank returns the 1-based rank of the first candidate that is a
// chunk of an expected document in an expected section, 0 when none is. A
// chunk is in the section when its section path holds the expected
// heading (case-insensitive), or its body does (a small section merged
// into the chunk, search.BodyHeadings), or when the expected heading is the page's
// own title (its top heading, which the chunker leaves out of section
// paths) and the chunk is the page's opening chunk: the text under that
// heading before any other.
func SectionRank(expect []docent.GoldenExpect, cands []docent.Hit) int {
	for i, h := range cands {
		for _, e := range expect {
			if e.Section == "" {
				continue
			}
			if _, ok := expectedDoc(h.Chunk.DocID, map[string]bool{e.Doc: true}); !ok {
				continue
			}
			want := strings.TrimSpace(e.Section)
			for _, s := range append(slices.Clip(h.Chunk.Section), search.BodyHeadings(h.Chunk.Body())...) {
				if strings.EqualFold(strings.TrimSpace(s), want) {
					return i + 1
				}
			}
			if strings.EqualFold(strings.TrimSpace(h.Chunk.Title), want) && (len(h.Chunk.Section) == 0 || h.Chunk.Ord == 0) {
				return i + 1
			}
		}
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hasSection(q docent.GoldenQuestion) bool {
	for _, e := range q.Expect {
		if e.Section != "" {
			return true
		}
	}
	return false
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}
