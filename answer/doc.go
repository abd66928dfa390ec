// Package answer turns a question into a cited answer: embed the question,
// retrieve candidates, decide whether the docs cover it at all (the
// relevance threshold), generate an answer from the best sources, verify
// and renumber its citations, and record every step in a trace.
//
// # Relevance signal
//
// Fused scores are relative (min-max fusion always gives the best hit a
// score near 1), so they cannot say "the docs do not cover this". The
// pipeline therefore measures an absolute relevance for every candidate
// and answers only when the best one reaches the threshold:
//
//	relevance(c) = WeightCoverage·coverage(c) + WeightVector·cosine(c) + WeightKeyword·keyword(c)
//
// with the default weights 0.6, 0.3 and 0.1 (DefaultWeights) and the
// default threshold 0.5 (DefaultMinScore). Each component lies in [0, 1],
// so relevance does too.
//
//   - coverage(c) is the IDF-weighted share of the question's content terms
//     that occur in the chunk text (title and section prefix included):
//     Σ idf(t) over question terms found in c, divided by Σ idf(t) over all
//     question terms. Terms come from search.Analyze (lower-cased, English
//     stopwords removed, Snowball-stemmed) minus a few question fillers
//     ("much", "need", "tell", ...). idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5))
//     is estimated over the N retrieved candidates unless Options.IDF knows
//     the term. A question term that no candidate contains gets the largest
//     weight: when the word that carries the question ("dog", "sabbatical")
//     is nowhere in what retrieval found, coverage drops sharply.
//   - cosine(c) is the vector retriever's cosine similarity (Hit.VectorScore)
//     clamped to [0, 1]; it rescues paraphrases that share no words.
//   - keyword(c) is 1 when BM25 returned the chunk (Hit.KeywordRank > 0).
//
// Every Trace candidate carries its relevance in docent.Hit.Relevance
// (rounded to 4 decimals); Trace.TopScore is the best candidate's
// relevance and Trace.Threshold the threshold it was compared with. A question with no content terms has
// coverage 0 everywhere. Below the threshold the answer is
// StatusNotFound with NotFoundText and no citations: the pipeline never
// guesses. An answer whose generator cites no valid source is not found too.
//
// Measured limits (handbook golden set, offline embedder): unanswerable
// questions and paraphrases overlap on every signal tried (best-candidate
// relevance, coverage under corpus IDF, coverage by several candidates
// or a document's chunks together, BM25 normalized by the question's IDF
// mass, the share of the question absent from the corpus, small logistic
// models on these). Paraphrases lose words the corpus never uses ("baby",
// "Spain", "pager"), exactly as unanswerable questions do ("dog", "gym"),
// and the corpus-trained embedder has no vector for such words. The
// threshold therefore stays as documented above.
//
// # Extractive answers
//
// The offline generator scores each sentence, list item and table row by
// its coverage of the question terms, scaled by its source's relevance
// relative to the best source, and quotes those within keepRatio of the
// best. When the question names a code (a token mixing letters and
// digits: GK-409, AMR-12, v1) and some unit holds all of the code's terms,
// only units holding one of the question's codes are quoted.
//
// # Conflicts
//
// Two sources from different documents conflict when their headings say
// the same thing and their numbers do not: the stemmed content words of
// title and section (numbers left out) overlap with Jaccard similarity of
// at least 0.5, and the sets of amounts (numbers with $, %, units; bare
// years left out) in their question-relevant sentences are both non-empty
// and differ. The newer document (Chunk.UpdatedAt) is preferred: it is
// cited first and the answer says that the sources differ.
package answer
