package offline

import (
	"log/slog"

	"github.com/docent-hq/docent/answer"
)

// Options configure the offline answerer. Zero values take the defaults.
type Options struct {
	// Corpus gives the index's statistics (IDF, the docs' spellings).
	Corpus *CorpusStats
	// Synonyms are the deployment's own (answerer.synonyms); nil has none.
	Synonyms *Synonyms
	// Related gives general English words related to a word, best first
	// (wordnet.Related); nil uses none.
	Related func(word, pos string) []string
	// MaxSources is how many sources an answer may draw on; default 4.
	MaxSources int
	// Decision is the calibrated rule; the zero value takes
	// DefaultDecision. Passage ranks passages; the zero value takes
	// DefaultPassage.
	Decision answer.Logistic
	Passage  PassageModel
	// Embedder, when set, is the local embedder the gate embeds passages
	// with (see GateOptions.Embedder).
	Embedder Embedder
	// Log receives the stages' debug logs; nil discards them.
	Log *slog.Logger
}

// NewStages returns the offline answer stages over retriever: the
// Standalone rewriter, PageOrder, the offline Gate, the Logistic rule,
// Extractive and the Citations verifier.
func NewStages(retriever answer.Retriever, opts Options) answer.Stages {
	rule := opts.Decision
	if rule.Weights == nil {
		rule = DefaultDecision
	}
	return answer.Stages{
		Rewriter:  Standalone{Corpus: opts.Corpus, Synonyms: opts.Synonyms, Related: opts.Related},
		Retriever: retriever,
		Reranker:  PageOrder{},
		Gate:      NewGate(GateOptions{MaxSources: opts.MaxSources, Corpus: opts.Corpus, Passage: opts.Passage, Embedder: opts.Embedder}, opts.Log),
		Rule:      rule,
		Generator: NewExtractive(),
		Verifier:  answer.Citations{Log: opts.Log},
	}
}

// DefaultDecision is the offline answerer's rule when answerer.decision
// is not set: fitted with DefaultPassage on the same development sets
// (see docs/answerer.md for how).
var DefaultDecision = answer.Logistic{
	Bias: -2.6658,
	Weights: map[string]float64{
		"passage": 1.2077, "runner": 0.5523, "coverage": 0.0068, "chunk": 0.2166, "page": 0.8266,
		"cosine": 1.4474, "keyword": 0.4013, "agreement": 0.4274, "asks": 0.0002, "kind": -0.023,
		"missing": -2.8532, "unknown": -1.4582, "gap": -0.2063, "length": -0.0605,
	},
	AnswerAt:   0.4635,
	NotFoundAt: 0.1231,
}
