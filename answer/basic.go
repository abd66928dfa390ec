package answer

import "context"

// Identity is a Rewriter that makes the question the query (the
// offline Standalone rewriter is in answer/offline).
type Identity struct{}

var _ Rewriter = Identity{}

// Rewrite returns the question unchanged.
func (Identity) Rewrite(_ context.Context, req RewriteRequest) (Rewrite, error) {
	return Rewrite{Query: req.Question}, nil
}

// FusedOrder is a Reranker that keeps the retrieval (fused) order, which
// measured better on SciFact than every offline passage reranker tried;
// the offline PageOrder (answer/offline) reorders by page-level evidence.
type FusedOrder struct{}

var _ Reranker = FusedOrder{}

// Rerank returns the hits as given.
func (FusedOrder) Rerank(_ context.Context, req RerankRequest) (Reranked, error) {
	return Reranked{Hits: req.Hits}, nil
}
