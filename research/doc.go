// Package research holds the measurement harnesses behind docent's
// retrieval decisions. They are tests behind the research build tag, read
// the BEIR SciFact set from $DOCENT_SCIFACT at run time (it is CC BY-NC and
// never copied into the repository), skip without it, and print tables
// rather than assert: they inform a decision, which the product's own
// evaluation (`docent eval`, `docent bench`) then confirms.
//
//	DOCENT_SCIFACT=/path/to/scifact go test -tags research ./research -run TestKeyword -v -timeout 30m
//
// keyword_test.go compares BM25 parameters (coverage factor, k1, b) on the
// short queries and the long-query sets (eval.LongQueries), through the
// real local index and the default retrieval pipeline, on the train split
// for choosing and the test split for reporting.
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
