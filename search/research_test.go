//go:build research

package search_test

// Measurements of the default retrieval pipeline on BEIR SciFact through an
// index built by `docent eval --beir DIR --index-dir IDX`:
//
//	DOCENT_SCIFACT=/work/shared/eval/scifact DOCENT_SCIFACT_INDEX=/tmp/sf-idx \
//	  go test -tags research ./search -run TestResearchRetriever -v -timeout 30m

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

type memoIndex struct {
	inner search.Searcher
	mu    sync.Mutex
	cache map[string][]docent.Hit
}

func (m *memoIndex) Search(ctx context.Context, q search.Query) ([]docent.Hit, error) {
	key := fmt.Sprint(q.Mode, q.K, q.Text, q.Vector)
	m.mu.Lock()
	h, ok := m.cache[key]
	m.mu.Unlock()
	if ok {
		return slices.Clone(h), nil
	}
	h, err := m.inner.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.cache[key] = slices.Clone(h)
	m.mu.Unlock()
	return h, nil
}

type memoEmb struct {
	search.Embedder
	mu    sync.Mutex
	cache map[string][]float32
}

func (m *memoEmb) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	var missAt []int
	m.mu.Lock()
	for i, t := range texts {
		if v, ok := m.cache[t]; ok {
			out[i] = v
		} else {
			miss = append(miss, t)
			missAt = append(missAt, i)
		}
	}
	m.mu.Unlock()
	if len(miss) > 0 {
		vs, err := m.Embedder.Embed(ctx, miss)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		for j, v := range vs {
			m.cache[miss[j]] = v
			out[missAt[j]] = v
		}
		m.mu.Unlock()
	}
	return out, nil
}

func TestResearchRetriever(t *testing.T) {
	dir := os.Getenv("DOCENT_SCIFACT")
	idxDir := os.Getenv("DOCENT_SCIFACT_INDEX")
	if dir == "" || idxDir == "" {
		t.Skip("set DOCENT_SCIFACT and DOCENT_SCIFACT_INDEX")
	}
	ctx := context.Background()
	ix, err := local.Open(ctx, filepath.Join(idxDir, "index.db"), local.Options{Fusion: search.DefaultFusion()})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	emb := &memoEmb{Embedder: offline.NewEmbedder(offline.Options{ModelPath: filepath.Join(idxDir, "offline-embedder.bin")}), cache: map[string][]float32{}}
	mi := &memoIndex{inner: ix, cache: map[string][]docent.Hit{}}
	splits := strings.Split(envOr("DOCENT_SPLITS", "train,test"), ",")
	sets := map[string]*eval.BEIR{}
	for _, s := range splits {
		b, err := eval.LoadBEIR(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		sets[s] = b
	}
	for _, v := range variants() {
		r := search.NewRetriever(mi, emb, v.opts)
		line := fmt.Sprintf("%-40s", v.name)
		for _, s := range splits {
			rep, err := eval.RunBEIR(ctx, sets[s], eval.SearcherFunc(func(ctx context.Context, q string, k int) ([]docent.Hit, error) {
				return r.Search(ctx, search.Query{Text: q, K: k})
			}), eval.BEIROptions{K: 100})
			if err != nil {
				t.Fatal(err)
			}
			line += fmt.Sprintf("  %s nDCG %.4f R10 %.4f R100 %.4f MRR %.4f", s, rep.NDCG10, rep.Recall10, rep.Recall100, rep.MRR10)
		}
		t.Log(line)
	}
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

type variant struct {
	name string
	opts search.RetrieverOptions
}

func fmtName(f string, a ...any) string { return fmt.Sprintf(f, a...) }
