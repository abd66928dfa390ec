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
	Bias: -3.0542,
	Weights: map[string]float64{
		"passage": 1.5136, "runner": 0.4772, "coverage": 0.0246, "chunk": 0.1803, "page": 0.9289,
		"cosine": 1.504, "keyword": 0.3623, "agreement": 0.4258, "asks": -0.0098, "kind": -0.012,
		"missing": -3.2342, "unknown": -1.791, "gap": -0.1131, "length": -0.0555, "precision": 1.2063,
	},
	AnswerAt:   0.4876,
	NotFoundAt: 0.1053,
}
