// Package answer turns a question into a cited answer. It holds the
// contracts of the ask path and the Pipeline that runs them:
//
//	rewrite -> retrieve -> rerank -> gate (evidence) -> rule -> generate -> verify
//
// The gate measures evidence and never decides; one Rule per answerer
// maps the evidence to answered, uncertain or not found. Two answerers
// implement the stages: answer/offline (no model: a fitted passage model
// and a calibrated Logistic rule, extractive quotes) and answer/llmstage
// (a language model reads every question with any plausible evidence and
// says NOT_FOUND itself; answer.Plausible is its only pre-check). Small
// talk is answered before retrieval. Every answer carries its Trace: the
// candidates, the decision's features, whether a model was asked.
//
// docs/answerer.md explains the decision, the features and how to
// calibrate them on a deployment's own questions.
package answer
