package llmstage

import (
	"log/slog"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/llm"
)

// StagesOptions configure the model answerer.
type StagesOptions struct {
	// Rewriter and Reranker tune those stages; NoRerank keeps the fused
	// order instead of asking the model to score the candidates.
	Rewriter RewriterOptions
	Reranker RerankerOptions
	NoRerank bool
	// Plausible is the pre-check: the only reason a question is not sent
	// to the model is that retrieval found no plausible evidence at all.
	Plausible answer.Plausible
	// Log receives the stages' logs; nil discards them.
	Log *slog.Logger
}

// NewStages returns the answer stages of a model answerer over m and
// retriever: the model rewrites follow-ups and multi-part questions,
// reranks (unless NoRerank), and, for every question with any plausible
// evidence, reads the numbered sources and writes the grounded answer or
// says NOT_FOUND. No offline rule decides coverage on this path: the gate
// and the rule are answer.Plausible.
func NewStages(m llm.Model, retriever answer.Retriever, opts StagesOptions) answer.Stages {
	st := answer.Stages{
		Rewriter:  NewRewriter(m, opts.Rewriter, opts.Log),
		Retriever: retriever,
		Gate:      opts.Plausible,
		Rule:      opts.Plausible,
		Generator: NewGenerator(m),
		Verifier:  answer.Citations{Log: opts.Log},
	}
	if !opts.NoRerank {
		st.Reranker = NewReranker(m, opts.Reranker, opts.Log)
	}
	return st
}
