package answer

import (
	"context"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// The ask path is six stages, each a small contract declared here, where
// the Pipeline consumes it, and a Rule that turns the gate's evidence into
// an outcome. The offline implementations are in answer/offline, the
// model-backed ones in answer/llmstage.
//
//	rewrite -> retrieve -> rerank -> gate (evidence) -> rule -> generate -> verify

// Rewriter turns a question, with the conversation before it, into the
// standalone query retrieval runs, and splits a multi-part question into
// parts. The offline Identity rewriter returns the question unchanged.
type Rewriter interface {
	// Rewrite returns the query to retrieve with. It returns an error only
	// when it could not run (a provider failure).
	Rewrite(ctx context.Context, req RewriteRequest) (Rewrite, error)
}

// RewriteRequest is what a Rewriter works from.
type RewriteRequest struct {
	// Question is the question as asked (trimmed).
	Question string
	// History is the conversation before it, oldest first.
	History []docent.Exchange
}

// Rewrite is a Rewriter's output.
type Rewrite struct {
	// Query is the standalone query; "" means the question itself.
	Query string
	// SubQueries are the parts of a multi-part question, each retrieved on
	// its own; empty for a single question.
	SubQueries []string
	// Asks are the same parts as the asker wrote them (SubQueries may add
	// context words for retrieval), for replies that name a part; when
	// set, it has one entry per SubQuery.
	Asks []string
	// Hypothetical is a passage written as the docs might answer the
	// query (HyDE); when set, it is retrieved as one more query.
	Hypothetical string
	// Usage counts model tokens, when a model ran; Model names it.
	Usage Usage
	Model string
	// Detail says in a few words what the rewriter did, for the trace.
	Detail string
}

// Retriever finds candidates for a query: search.Retriever implements it
// (embedding the query once, hybrid search, fusion, feedback).
type Retriever interface {
	// Retrieve returns at most req.K hits, best first, chunks loaded.
	Retrieve(ctx context.Context, req search.Request) (search.Result, error)
}

var _ Retriever = (*search.Retriever)(nil)

// Reranker reorders candidates by their relevance to the query and sets
// Hit.RerankScore; it may drop candidates. The offline PageOrder lifts
// pages with several strong chunks and newer versions of a page;
// FusedOrder keeps the retrieval order.
type Reranker interface {
	// Rerank returns the hits to keep, best first. It returns an error only
	// when it could not run; a reranker whose model answers badly falls
	// back to the order it was given.
	Rerank(ctx context.Context, req RerankRequest) (Reranked, error)
}

// RerankRequest is what a Reranker orders.
type RerankRequest struct {
	// Query is the standalone query the hits were retrieved for.
	Query string
	// Hits are the candidates in retrieval order.
	Hits []docent.Hit
}

// Reranked is a Reranker's output.
type Reranked struct {
	// Hits are the candidates to keep, best first.
	Hits []docent.Hit
	// Usage counts model tokens, when a model ran; Model names it.
	Usage Usage
	Model string
	// Detail says in a few words what the reranker did, for the trace.
	Detail string
}

// Gate measures the evidence the candidates hold for an answer; it never
// decides. The Pipeline maps the evidence to an outcome with the
// answerer's Rule. The offline gate (answer/offline) measures term
// coverage, answer kinds and missing details; the model answerers' gate
// (Plausible) only checks that retrieval found anything at all, since the
// model judges coverage itself.
type Gate interface {
	// Gate returns the evidence. It may set Hit.Relevance on req.Hits. It
	// returns an error only when it could not run.
	Gate(ctx context.Context, req GateRequest) (Evidence, error)
}

// GateRequest is what a Gate judges.
type GateRequest struct {
	// Question is the question as asked; Query the standalone query.
	Question, Query string
	// SubQueries are the parts of a multi-part question, if any, and Asks
	// the same parts as written (see Rewrite).
	SubQueries, Asks []string
	// Hits are the candidates, best first; the Gate may set their Relevance.
	Hits []docent.Hit
	// PartHits are the candidates retrieved for each of SubQueries, in
	// the same order, best first; nil for a single question.
	PartHits [][]docent.Hit
}

// Evidence is what a Gate measured: how well the candidates support an
// answer, and what an answer or an uncertain reply would draw on.
type Evidence struct {
	// Features measure the closest page's best passage; the Rule decides
	// on them.
	Features Features
	// Sources are the numbered sources a Generator answers from, best
	// first: the chunk of the passage the features measure comes first.
	Sources []Source
	// Pages are the best distinct pages, closest first (at most
	// MaxPages), each with its best passage: what an uncertain reply
	// links.
	Pages []Page
	// Missing are the question's specific details (a name, a code, a
	// number) that no source mentions; an uncertain reply names them.
	// Covered says what the closest source lists instead, when it can
	// tell ("United States, United Kingdom, Germany").
	Missing []string
	Covered string
	// Conflict is set when two sources disagree on what was asked;
	// ConflictNote describes it for the trace.
	Conflict     *Conflict
	ConflictNote string
	// Terms maps the question's content terms to their IDF weight, for
	// generators that match words.
	Terms map[string]float64
	// Parts are the evidence for each part of a multi-part question, in
	// order; empty for a single question.
	Parts []PartEvidence
	// Detail says in a few words what was measured, for the trace.
	Detail string
	// Omitted says, by chunk ID, why a candidate the gate read is not
	// among the Sources (below its floor, cut by the source limit, ...).
	Omitted map[string]string
	// Basis is the gate's own analysis of the question (its terms, the
	// passage it measured), handed unchanged to a Generator of the same
	// implementation so that the question is analysed once per ask and
	// the answer quotes the passage the decision was made on. Other
	// generators ignore it.
	Basis any
}

// MaxPages is the most pages an uncertain reply links.
const MaxPages = 3

// Page is one candidate page with its best passage.
type Page struct {
	// Hit is the page's best chunk.
	Hit docent.Hit
	// Passage is the chunk's passage that best matches the question, one
	// line (the uncertain reply quotes it).
	Passage string
}

// PartEvidence is the evidence for one part of a multi-part question.
type PartEvidence struct {
	// Ask is the part as asked.
	Ask string
	// Features measure the part's closest passage.
	Features Features
	// Sources are the numbers (Source.N) of the sources that hold the
	// part's evidence, best first.
	Sources []int
	// Missing names the part's details that its sources lack.
	Missing []string
	// Terms maps the part's content terms to their IDF weight.
	Terms map[string]float64
}

// Rule maps evidence to an outcome: one calibrated rule per answerer.
type Rule interface {
	// Decide returns the outcome for the features.
	Decide(f Features) Verdict
}

// Verdict is a Rule's outcome.
type Verdict struct {
	// Status is answered, uncertain or not found.
	Status docent.Status
	// Score is what the rule compared (for Logistic, the probability
	// that an answer is right); Threshold the answer threshold.
	Score, Threshold float64
	// Reason says why, for the trace.
	Reason string
}

// Part is the verdict on one part of a multi-part question, as a
// Generator sees it.
type Part struct {
	// Ask is the part as asked.
	Ask string
	// Status is the part's outcome.
	Status docent.Status
	// Sources are the numbers (Source.N) of the sources that answer the
	// part, best first; for an uncertain part, the closest page's.
	Sources []int
	// Missing names the part's details that its sources lack.
	Missing []string
	// Terms maps the part's content terms to their IDF weight.
	Terms map[string]float64
}

// Generator writes an answer from numbered sources. The offline
// Extractive generator is the default; model-backed generators (Gemini,
// OpenAI-compatible) implement it elsewhere.
type Generator interface {
	// Generate returns answer text that cites req.Sources as [n], n being
	// the source's Source.N. It may cite any subset, in any order; the
	// Verifier drops markers that name no source and renumbers the rest in
	// order of first use. Text that cites nothing is treated as "not
	// found". Generate returns an error only when it could not run (a
	// provider failure), never for a question it cannot answer.
	Generate(ctx context.Context, req GenerateRequest) (GenerateResult, error)
}

// Source is one numbered source given to a Generator.
type Source struct {
	// N is the source's number in the request, from 1.
	N int
	// Hit is the retrieved chunk with its ranks and scores.
	Hit docent.Hit
	// Relevance is the chunk's absolute relevance (see the package doc).
	Relevance float64
}

// Conflict names two sources that disagree, by their numbers in the request.
type Conflict struct {
	// Newer is the source from the most recently updated document; Older
	// the other one. When Dated is unset, neither is known to be newer
	// (both were updated on the same day, or a date is unknown): Newer is
	// then the better-ranked one.
	Newer, Older int
	// Dated is set when Newer was updated on a later day than Older.
	Dated bool
	// Terms are the heading words the two sources share.
	Terms []string
}

// GenerateRequest is what a Generator answers from.
type GenerateRequest struct {
	// Question is the question as asked (trimmed); Query the standalone
	// query retrieval ran (the same unless a follow-up was rewritten).
	Question, Query string
	// History is the conversation before the question, oldest first.
	History []docent.Exchange
	// Sources are numbered from 1, best first. Sources above the relevance
	// threshold come before those below it.
	Sources []Source
	// Conflict is set when two sources disagree; a generator should prefer
	// the newer one and say that the sources differ.
	Conflict *Conflict
	// Terms maps each content term of the question (search.Analyze form) to
	// its IDF weight. Generators that do their own matching may ignore it.
	Terms map[string]float64
	// Parts, for a multi-part question, say which sources answer which
	// part and which parts the docs do not cover; a generator answers
	// each part with its own citations and says which part it could not
	// answer.
	Parts []Part
	// Basis is Evidence.Basis (see there).
	Basis any
}

// GenerateResult is a Generator's answer.
type GenerateResult struct {
	// Text is the answer with [n] markers naming GenerateRequest.Sources.
	Text string
	// NotFound is set when the generator found no answer in the sources
	// (a model replying that the sources do not say); Text is then ignored.
	NotFound bool
	// Model names the model that wrote Text; "" for the offline answer.
	Model string
	// Prompt is what the model was sent, for the trace.
	Prompt string
	// Usage counts model tokens.
	Usage Usage
}

// Usage counts the tokens of model calls.
type Usage struct {
	// InputTokens and OutputTokens are the prompt and reply token counts.
	InputTokens, OutputTokens int
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// Verifier checks a generated answer's citations against the sources it
// was given. The offline Citations verifier drops markers that name no
// source and renumbers the rest by first use.
type Verifier interface {
	// Verify returns the checked answer. An answer left with no valid
	// citation has no Citations; the Pipeline then answers not found.
	Verify(ctx context.Context, req VerifyRequest) (Verified, error)
}

// VerifyRequest is a generated answer with the sources it was given.
type VerifyRequest struct {
	// Text is the generated answer with [n] markers.
	Text string
	// Sources are the sources the generator was given.
	Sources []Source
}

// Verified is a Verifier's output.
type Verified struct {
	// Text is the answer with markers renumbered 1..len(Citations) in
	// order of first use.
	Text string
	// Citations are the cited sources, in their new order.
	Citations []docent.Citation
	// Removed counts markers that named no source.
	Removed int
	// Uncited counts sentences that state something without a citation.
	Uncited int
}
