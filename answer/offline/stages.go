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
	Bias: -50.3667,
	Weights: map[string]float64{
		"passage": 46.8325, "runner": 1.8883, "coverage": -0.2102, "chunk": -0.2792, "page": 1.2877,
		"cosine": 1.9082, "keyword": 0.3453, "agreement": 0.574, "asks": 0.0888, "kind": -0.0222,
		"missing": -4.6982, "unknown": -1.7333, "gap": -0.1814, "length": 0.5087,
	},
	AnswerAt:   0.4857,
	NotFoundAt: 0.0337,
}
