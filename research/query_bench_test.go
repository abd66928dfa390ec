//go:build research

package research

import (
	"context"
	"testing"

	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

// BenchmarkQueryDefault times the default pipeline's SciFact test queries
// (top 10, chunks loaded) and reports what one allocates:
//
//	DOCENT_SCIFACT=../shared/eval/scifact go test -tags research ./research -run '^$' -bench BenchmarkQueryDefault -benchtime 600x
func BenchmarkQueryDefault(b *testing.B) {
	s := mustSciFact(b)
	ix := s.open(b, local.Options{})
	r, err := search.NewRetriever(ix, s.emb, search.RetrieverOptions{})
	if err != nil {
		b.Fatal(err)
	}
	qs := s.sets["test"].Queries
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := qs[i%len(qs)]
		i++
		if _, err := r.Retrieve(context.Background(), search.Request{Text: q.Text, K: 10}); err != nil {
			b.Fatal(err)
		}
	}
}
