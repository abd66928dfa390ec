// Package eval measures docent's retrieval and answers.
//
// It has three parts:
//
//   - metrics.go: pure ranking metrics (nDCG, recall, MRR, hit@k) with the
//     formulas in their doc comments, matching trec_eval/pytrec_eval as BEIR
//     uses them;
//   - beir.go: a loader for BEIR-format datasets (corpus.jsonl,
//     queries.jsonl, qrels/<split>.tsv) and RunBEIR, which scores any
//     Searcher that returns chunk hits at document level, optionally
//     writing a TREC run file;
//   - golden.go: the YAML golden set of questions with expected documents
//     and sections, and RunGolden, which scores the full answer pipeline
//     (retrieval hit@k and MRR from the answer trace, answered and
//     not-found rates, citation precision) per question and per kind.
//
// report.go renders the reports as aligned text tables; every report also
// marshals to JSON through its struct tags.
package eval
