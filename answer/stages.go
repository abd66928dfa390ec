package answer

import (
	"context"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// The ask path is six stages, each a small contract declared here, where
// the Pipeline consumes it. Each has an offline implementation in this
// package; model-backed ones (llm/gemini, llm/openai) implement the same
// contracts.
//
//	rewrite -> retrieve -> rerank -> gate -> generate -> verify

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

// Gate decides whether the docs hold an answer (answered), seem to be
// about the question without confirming one (uncertain), or do not cover
// it (not found), and picks the numbered sources a Generator answers
// from. The offline Relevance gate is the one documented in the package
// doc.
type Gate interface {
	// Gate returns its decision. It sets Hit.Relevance on req.Hits.
	Gate(ctx context.Context, req GateRequest) (Decision, error)
}

// GateRequest is what a Gate judges.
type GateRequest struct {
	// Question is the question as asked; Query the standalone query.
	Question, Query string
	// SubQueries are the parts of a multi-part question, if any, and Asks
	// the same parts as written (see Rewrite).
	SubQueries, Asks []string
	// Hits are the candidates, best first; the Gate sets their Relevance.
	Hits []docent.Hit
	// PartHits are the candidates retrieved for each of SubQueries, in
	// the same order, best first; nil for a single question.
	PartHits [][]docent.Hit
}

// Decision is a Gate's verdict.
type Decision struct {
	// Status is StatusAnswered when the sources hold an answer worth
	// generating; StatusUncertain when the docs seem to be about the
	// question but do not confirm an answer (Sources then holds the
	// closest page); StatusNotFound when they do not cover it.
	Status docent.Status
	// Sources are the numbered sources to answer from, best first (for
	// StatusUncertain: the closest page).
	Sources []Source
	// Missing are the question's specific details (a place, product,
	// code, number) that no source mentions; with StatusUncertain the
	// reply names them. Covered says what the closest source lists
	// instead, when it can tell ("United States, United Kingdom, Germany").
	Missing []string
	Covered string
	// Conflict is set when two sources disagree on what was asked.
	Conflict *Conflict
	// ConflictNote describes the conflict for the trace.
	ConflictNote string
	// TopScore is the evidence of the closest page (for the offline gate,
	// how much of the question its best unit covers), Threshold the
	// answer threshold it was compared with.
	TopScore, Threshold float64
	// Terms maps the question's content terms to their IDF weight, for
	// generators that match words.
	Terms map[string]float64
	// Parts are the verdicts on the parts of a multi-part question, in
	// order; empty for a single question. Status is then the best part's.
	Parts []Part
	// Detail says in a few words why, for the trace.
	Detail string
}

// Part is the gate's verdict on one part of a multi-part question.
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
	// the other one.
	Newer, Older int
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
