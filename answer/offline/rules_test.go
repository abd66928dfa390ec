package offline

// Every rule of the offline answerer and the test that covers it. The
// inputs are pages of a made-up makerspace wiki and questions written
// for these tests (fixtures_test.go); TestRuleInputsAreNotEvalQuestions
// checks that no question literal of these tests is a question of an
// eval set.
//
// question.go — one analysis per ask
//   newQuestion: corpus IDF and DF, IDF estimated over the candidates
//     without a corpus, the parts of one word share its IDF, maxIDF,
//     opaque identifiers dropped ........... TestNewQuestionWeights
//   questionWords: word, salience, share; sentence starts after .?!: ... TestQuestionWords
//   isSalient: letters+digits, capitals, capital inside a sentence, I ... TestIsSalient
//   askStartRE/expectedType: procedure, condition (whenConditionRE),
//     time, who/whom, where, amount, any; the first typed ask after a
//     comma or "and" ........................ TestExpectedType
//   answerType.holds/matches: timeRE, looseTimeRE, conditionRE,
//     unitStatesAmount (a row's bare number), countRE, amountWordRE,
//     whoRE, whereRE (a capital after in/on/at), instructionRE, code;
//     unitKinds agrees with matches ........ TestAnswerTypeHolds, TestWhereNeedsAName
//   procedureVerb, opensWith, answers (a unit opening with the verb) ... TestProcedureVerb
//   namesSomeone (a person the question does not name; @, #) ... TestNamesSomeone
//   dropOpaque/opaqueID/switches: UUIDs, timestamps, clock times with
//     seconds, underscored and generated IDs; codes kept ... TestDropOpaque,
//     TestGateMissing ("an opaque identifier is no detail")
//
// relevance.go — terms and coverage
//   fillers (chat shorthand, light verbs, prepositions), degreeRE,
//     clockRE, distinct terms in order ...... TestQueryTerms
//   termSet joins compounds ("break-glass", "401(k)") ... TestTermSetJoinsCompounds
//   scorer.coverage (extra weight), gain, no terms ... TestScorer
//   unitCoverage/unitWeight: own 1, title titleWeight, headings
//     structWeight for rows and items, sectionWeight for sentences ... TestUnitWeight, TestScorer
//
// sentences.go, cache.go — units
//   splitUnits: title line skipped, in-chunk headings and section path
//     as context, paragraphs numbered, rows rendered with the header as
//     context, empty cells left out, list items with keys, nested items
//     (Sub), continuation lines, blockquotes, rules, short code blocks
//     joined to the sentence ending in ":" (at most maxCodeLines), code
//     words among the terms, meta sentences ... TestSplitUnits
//   a sentence that goes on in lower case after the code block it
//     introduces is one unit ............... TestSplitUnitsSentenceAcrossCode
//   groups: each list and table its own ..... TestSplitUnitsNewGroups
//   itemKey (at most five words before : or –) ... TestItemKey
//   renderRow (one, two, more columns) ....... TestRenderRow
//   cleanInline (links, images, HTML, emphasis, code marks) ... TestCleanInline
//   chunk cache: recomputed when content changes, no ID not cached,
//     bounded .................................. TestChunkCache, TestChunkCacheBounded
//
// corpus.go — corpus statistics
//   N, DF (once per chunk, joined forms not counted), IDF ... TestCorpusCounts
//   Variant: joined (wifi, 401k), clipped (not in capitals, one stem,
//     minClipped/minClippedOff), acronyms (capitals of two letters,
//     lower case of three, at most five), a held word, a filler ... TestCorpusVariant
//   headingAcronyms: runs of 2–5 words from a non-stopword, the variant
//     without inner stopwords ............... TestHeadingAcronyms
//   mostFrequent phrase, a heading counted once per page ... TestCorpusAcronymMostFrequent
//   compounds ................................. TestCompounds
//   holdsAll, firstHeld ....................... TestCorpusHolds
//   CorpusStats: built on first use and kept, rebuilt after Invalidate
//     with the old served meanwhile and one rebuild at a time, a failed
//     rebuild keeps the old and retries, first build error, fixed, nil,
//     concurrent first use ................... TestCorpusStats
//
// synonyms.go — deployment synonyms
//   parse: comments, equivalent vs one-way, several phrases, case and
//     spaces folded, longest ................. TestParseSynonyms
//   errors with file and line ................ TestParseSynonymsErrors, TestLoadSynonyms
//   Add (and its error), Merge (self, nil), Len, nil Synonyms ... TestSynonymsAddMerge
//   safe for concurrent use .................. TestSynonymsConcurrentAdd
//
// rewrite.go — the Standalone rewriter
//   follow-up: continuation words, fewer than two content terms, only
//     with history ............................ TestStandaloneFollowUp, TestPipelineFollowUp
//   synonyms: replaced when the docs lack the phrase, extended when they
//     hold it, both ways for equivalents, longest phrase first, any case,
//     a meaning the docs do not hold is none ... TestStandaloneRespell
//   Corpus.Variant respelling, acronyms and codes in capitals included,
//     capitalised names not ................. TestStandaloneRespell, TestRespellAcronymsAndCodes
//   channels, handles, paths and names the docs lack are not respelled,
//     WordNet is not asked about them, nor about fillers or held words ... TestStandaloneRespell
//   WordNet nouns (first related word the docs hold: a synonym or
//     derived form that relates back replaces the word, a broader word is
//     added beside it), phrasal verbs extended by a one-word verb, else
//     the noun ... TestStandaloneRespell, TestStandaloneWithWordNet
//   Detail, no corpus, no WordNet, corpus error ... TestStandaloneRespell, TestStandaloneWithoutData
//   splitAsks: strong breaks (?, ., :, dash) with askRE, weak breaks
//     (comma, semicolon, and) with weakAskRE, quotes, leading context,
//     refer-back and short parts get the words before, leading "and"
//     trimmed, one ask gives no SubQueries ... TestSplitAsks
//
// gate.go — evidence
//   closest page: the first unless one of the next evidencePages−1 is
//     overtake more probable .................. TestGateClosestPage
//   features: Passage, Runner, Coverage, Chunk, Page, Cosine (clamped),
//     Keyword (1/rank), Agreement (first agreementTop), Asks, Kind,
//     Missing, Unknown, Gap (the weightiest term the page lacks, a word
//     in parts as one), Length (lengthScale), Precision (the passage's
//     terms the question holds) ... TestGateFeatures, TestGateClosestPage
//   sources: the best chunk, chunksPerPage of its page at sourceShare,
//     one chunk of each further page at sourceShare in rank order,
//     MaxSources, superseded pages left out (newerVersion: newer, title
//     alike and a section alike; the title alone is not a version) ... TestGateSources
//   a conflicting near-duplicate added, the conflict and its note; a
//     version below passageDepth scored for the answer ... TestGateAddsAConflictingVersion
//   uncertainPages: closest first, distinct, superseded left out, at
//     most MaxPages, only pages among the first passageDepth, passage
//     with plain markers, a lead-in with its code or first maxLeadItems
//     items (pagePassage) .................... TestGateUncertainPages
//   gaps/siblings: salient details the page lacks, the keys of its table
//     or list, maxCovered and "others", nothing outside a keyed table ... TestGateMissing
//   no candidates, no content terms, corpus error ... TestGateWithoutEvidence
//   setRelevance ............................. TestGateSetsRelevance
//   IDF without corpus statistics ............ TestGateWithoutCorpus
//   parts: measured on their own and on the whole question's candidates,
//     sourcesPerPart, shared numbering, Missing, Asks fall back to the
//     sub-queries, no parts without their candidates ... TestGateParts
//   Observe, SetPassage, Passage, DefaultPassage for a zero model ... TestGateObserveAndSetPassage
//   Embedder: the sim feature, a failed embedding weighs nothing ... TestGateEmbedder
//
// passage.go — the passage model
//   feature names and order, model score, DefaultPassage's names ... TestPassageFeatureNames
//   every feature of passageFeatures: own, cover, heading
//     (sectionTerms), chunk, rank, fused, keyword, cosine, kind, lacks,
//     entry, keyed, codes, meta, early, lead, length, page, pagerank,
//     listed, steps, sim, score, pairs, chunkpairs ... TestPassageFeatures
//   kind/lacks for money asks (moneyAskRE/moneyRE), steps, entry,
//     keyed (keyHoldsCode), codes (holdsCodes), listed, meta (metaRE),
//     length and sim clamped, retrieval signals times coverage ... TestPassageFeatureRules
//   passageScore: quantityBoost, listBoost, typeMissPenalty (kind lacking,
//     who naming nobody), the verb of "how do I", metaPenalty, section
//     coverage, earlyPrior ................... TestPassageScore
//   pairs (stopwords skipped, a repeated term no pair), pairShare ... TestPairs
//
// extractive.go — the Extractive generator
//   the passage the decision was made on opens the answer ... TestExtractiveOpensWithTheDecidedPassage,
//     TestExtractiveLeadFirst, TestPipelineOpensWithTheDecidedPassage
//   paragraph context (maxParagraph, meta left out) ... TestExtractiveParagraph
//   keyedAll (a keyed table when no key is named) and the named row ... TestExtractiveTables
//   list siblings: list questions, items alike, listOf (an introducing
//     sentence, maxList, nested items, the rest of a short list) ... TestExtractiveLists, TestExtractiveListSiblings
//   gain loop (minGain, keepRatio), MaxUnits, MaxSources, defaults ... TestExtractiveGain,
//     TestExtractiveMinGain, TestExtractiveSourcesAndTerms, TestExtractiveDefaultLimits
//   sensitive instructions quoted only as the answering passage ... TestExtractiveSensitiveInstructions
//   a unit that refers back (backRefRE) is added for coverage only after
//     the unit before it, and as the opening unit brings the sentence
//     before it ... TestRefersBack, TestExtractiveBackReferenceNeedsItsReferent,
//     TestExtractiveBackReferenceBringsItsReferent
//   a question that asks for a kind gets the opening source's unit that
//     states one when no picked unit does ... TestPickUnitsQuotesTheAskedKind
//   code quoted only for commands (asksCommand) ... TestExtractiveCommands
//   matchCodes, questionCodes ................ TestExtractiveCodes, TestQuestionCodes
//   conflict text: newer first, dates, alikePair (alike words, keyed
//     rows), differing ........................ TestExtractiveConflict, TestAlikePair, TestPipelineConflict
//   cite, plainMarkers ....................... TestCite, TestGateUncertainPages
//   parts: answered, uncertain, not found texts, a sentence once ... TestExtractiveParts, TestPipelineMultiPart
//   byScore and scoreTie ..................... TestByScore
//   the request's Terms without the gate's analysis, nothing shared ... TestExtractiveSourcesAndTerms
//   an amount wanted for money, quantity and conflicts (asksQuantity,
//     moneyAskRE), asksList, asksCommand ...... TestExtractiveAsksForAnAmount
//   joinAnd, quote, splitCited ............... TestJoinAndQuote
//
// conflict.go, duplicates.go — versions and conflicts (the comparison
// itself in search/versions.go, shared with package stale)
//   amounts (currencies, units, %, k, per X, commas; codes, dates, years
//     and numbers glued to letters left out) . TestAmounts
//   statesAmount .............................. TestStatesAmount
//   search.HeadingTerms, search.SimilarHeadings (search.MinHeadingJaccard) ... TestSimilarHeadings
//   versions: SimilarHeadings and the amounts each side lacks ... TestVersions
//   answeringUnits (conflictCoverage, keepRatio) ... TestAnsweringUnits
//   conflicts (minAlike, amounts on both sides) ... TestConflicts
//   detectConflict: a lead source, newer by date, a tie by rank, shared
//     heading terms, the note, dateOf ........ TestDetectConflict
//
// rerank.go — PageOrder
//   pageWeight over the first pageDepth, negative scores, RerankScore,
//     the request's hits unchanged ........... TestPageOrderScores
//   page order, chunks under one heading counted once (leafHeading),
//     newerFirst (held until the newer's first chunk, chains; a version
//     repeats a section, a shared title alone keeps the order), docKey
//     without DocID .......................... TestPageOrder
//   titleTerms, jaccard ...................... TestTitleTermsAndJaccard
//
// stages.go and the pipeline
//   NewStages: the stages, the given rule or DefaultDecision ... TestNewStages
//   answered with citations renumbered, uncertain with MaxPages distinct
//     pages each with a passage, not found, a conflict quoting the newer
//     first, a part the docs lack ............ TestPipelineAnswered, TestPipelineUncertain,
//     TestPipelineNotFound, TestPipelineConflict, TestPipelineMultiPart
//   one embedding of the question per ask .... TestAnswerEmbedsQuestionOnce

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/docent-hq/docent/eval"
)

// normQuestion folds a question for comparison: lower case, spaces
// folded, final punctuation trimmed.
func normQuestion(s string) string {
	s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
	return strings.TrimRight(s, ".?!,;: ")
}

// evalQuestions returns the questions of the eval sets, normalised, with
// where each is from: the handbook's sets, and realdocs-dev when it sits
// beside the repository.
func evalQuestions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	load := func(path string) int {
		g, err := eval.LoadGolden(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range g.Questions {
			out[normQuestion(q.Question)] = filepath.Base(path) + ":" + q.ID
		}
		return len(g.Questions)
	}
	for _, name := range []string{"golden", "asked", "heldout-dev", "heldout-test"} {
		if load(filepath.Join("..", "..", "examples", "handbook", name+".yaml")) == 0 {
			t.Fatalf("%s.yaml has no questions", name)
		}
	}
	found := false
	for _, dir := range []string{filepath.Join("..", "..", "..", "shared"), filepath.Join("..", "..", "..", "..", "shared")} {
		path := filepath.Join(dir, "eval", "realdocs-dev", "questions.yaml")
		if _, err := os.Stat(path); err == nil {
			load(path)
			found = true
			break
		}
	}
	if !found {
		t.Log("realdocs-dev not beside the repository: its questions are not checked")
	}
	return out
}

// testLiterals returns every string literal of the package's test files,
// unquoted, with its position.
func testLiterals(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("test files: %v %v", files, err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var s scanner.Scanner
		s.Init(fset.AddFile(name, -1, len(src)), src, func(pos token.Position, msg string) { t.Errorf("%s: %s", pos, msg) }, 0)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.STRING {
				continue
			}
			v, err := strconv.Unquote(lit)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(pos), err)
			}
			out[v] = fset.Position(pos).String()
		}
	}
	return out
}

// TestRuleInputsAreNotEvalQuestions fails when a string of these tests
// is a question of an eval set, or holds one whole: the rules are tested
// on inputs of their own, so that a test passing says nothing about the
// sets quality is measured on.
func TestRuleInputsAreNotEvalQuestions(t *testing.T) {
	questions := evalQuestions(t)
	// The check finds what it is meant to find.
	for q := range questions {
		if _, ok := questions[normQuestion("  "+strings.ToUpper(q)+" ?")]; !ok {
			t.Fatalf("normalisation misses %q", q)
		}
		break
	}
	literals := testLiterals(t)
	if len(literals) < 100 {
		t.Fatalf("only %d literals found", len(literals))
	}
	var long []string // questions of five words or more, for containment
	for q := range questions {
		if len(strings.Fields(q)) >= 5 {
			long = append(long, q)
		}
	}
	for lit, pos := range literals {
		n := normQuestion(lit)
		if from, ok := questions[n]; ok {
			t.Errorf("%s: %q is the question %s", pos, lit, from)
			continue
		}
		for _, q := range long {
			if strings.Contains(n, q) {
				t.Errorf("%s: %q holds the question %s", pos, lit, questions[q])
			}
		}
	}
}
