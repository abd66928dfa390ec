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
	Bias: -4.3341,
	Weights: map[string]float64{
		"passage": 3.1851, "runner": 1.0673, "coverage": -0.9596, "chunk": -0.7311, "page": 1.5634,
		"cosine": 2.0602, "keyword": 0.4908, "agreement": 0.6938, "asks": 0.1088, "kind": -0.2697,
		"missing": -4.7438, "unknown": -2.1175, "gap": 1.0366, "length": 0.3863,
	},
	AnswerAt:   0.4635,
	NotFoundAt: 0.0582,
}
