// Package research holds the measurement harnesses behind docent's
// retrieval decisions. They are tests behind the research build tag, read
// the BEIR SciFact set from $DOCENT_SCIFACT at run time (it is CC BY-NC and
// never copied into the repository), skip without it, and print tables
// rather than assert: they inform a decision, which the product's own
// evaluation (`docent eval`, `docent bench`) then confirms.
//
//	DOCENT_SCIFACT=/path/to/scifact go test -tags research ./research -run TestKeyword -v -timeout 30m
//
// keyword_test.go compares BM25 variants (TestKeyword: coverage factor,
// k1, b, field weights) on the short queries and the long-query sets
// (eval.LongQueries), and Retriever settings (TestRetriever: feedback,
// candidate depth, RRF tail, vector weight), through the real local index
// and the default retrieval pipeline, on the train split for choosing and
// the test split for reporting.
//
// What they showed for the in-memory keyword index (SciFact train, nDCG@10
// bm25 / default pipeline; 2026-11): lengths in tokens with stopwords, as
// FTS5 counted them, beat lengths in indexed terms (0.7022 / 0.7117 ->
// 0.7051 / 0.7140); docent's former short stopword list beat Snowball's
// in the pipeline (default 0.7140 -> 0.7173); Lucene's IDF beat FTS5's
// (0.7047 -> 0.7075 bm25, long-context default 0.7841 -> 0.7885). Flat
// or worse, so left as they were: an IDF-weighted coverage factor
// (exponent 0.25 / 0.5 / 1 / 2: bm25 0.7040 / 0.6998 / 0.6951 / 0.6868,
// no gain on long queries either), Bleve's count-based coordination
// factor (bm25 0.6744), weighting repeated query terms (default 0.7136,
// 0.7118), k1/b (0.9/0.4, 1.5/0.75, 1.2/0.5), field weights (1/1/1,
// 3/1.5/1, 1.5/1/1, 2/1/1: within 0.0005), the vector weight (0.3-0.6),
// feedback from 3 or 10 chunks, β 1 or 3, first-pass share 0 or 1, 200
// candidates, the RRF tail from 10 or 30 (all within 0.002).
//
// Findings of earlier harnesses, deleted when the code they measured
// changed (their figures are in docs/retrieval.md): the retrieval defaults
// (512-token chunks, score fusion with vector weight 0.4, vector feedback
// from 5 chunks with β 2, the RRF tail from rank 20); the offline
// embedder's training choices (PPMI window 5 with context smoothing 0.75,
// a term-document block at twice PPMI's norm, IDF pooling, one principal
// component removed, 256 dimensions; shifted PMI, eigenvalue weighting, a
// hashed trigram block and 384 dimensions did not help); and that an
// in-memory BM25 over Snowball terms ranks as well as FTS5 did (within
// 0.01 nDCG@10 over k1, b, BM25F and field weights), while RM3 expansion,
// document-level scores and bigrams did not help the default pipeline.
package research
