// Package synthetic generates deterministic corpora for benchmarks and
// tests: chunks with clustered vectors and Zipf-distributed text, and query
// vectors near them. It is not part of any product API; `docent bench
// --synthetic` and the search/local benchmarks use it.
package synthetic

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// ChunksPerDoc is how many chunks each generated document has.
const ChunksPerDoc = 5

// Synthetic corpus shape.
const (
	synthVocab          = 50000
	synthChunksPerTopic = 200
	synthTopicWords     = 8
)

var (
	synthSources = []string{"wiki", "git-handbook", "notion", "confluence-eng"}
	synthSyll    = []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "ba", "do", "fe", "gu", "hi", "ja"}
)

// Word returns the i-th word of the synthetic vocabulary; word 0
// is the most frequent under the corpus's Zipf distribution.
func Word(i int) string {
	var b strings.Builder
	for {
		b.WriteString(synthSyll[i%len(synthSyll)])
		i /= len(synthSyll)
		if i == 0 {
			break
		}
	}
	return b.String()
}

// Chunks returns n chunks with dim-dimensional unit vectors, the
// same for the same arguments. Chunks come in documents of five; metadata
// spreads over four sources, twenty spaces, thirty labels and three years.
//
// Vectors are clustered, as real embeddings are: one random center per
// topic of about 200 chunks, plus Gaussian noise (per-chunk cosine to its
// center about 0.7), normalized. Text is 60 to 180 words drawn from a
// 50,000-word Zipf(s=1.1) vocabulary, plus a few words of the chunk's topic
// so that text and vectors agree.
func Chunks(n int, dim int, seed int64) []docent.Chunk {
	rng := rand.New(rand.NewSource(seed))
	topics := max(1, n/synthChunksPerTopic)
	centers := make([][]float32, topics)
	topicWords := make([][]string, topics)
	for t := range centers {
		centers[t] = randomUnit(rng, dim)
		for range synthTopicWords {
			topicWords[t] = append(topicWords[t], Word(1000+rng.Intn(synthVocab-1000)))
		}
	}
	zipf := rand.NewZipf(rng, 1.1, 1, synthVocab-1)
	base := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

	out := make([]docent.Chunk, 0, n)
	var b strings.Builder
	for i := range n {
		doc := i / ChunksPerDoc
		t := rng.Intn(topics)
		v := make([]float32, dim)
		const noise = 1.0 // per-dimension noise relative to the center's 1/sqrt(dim)
		for j := range v {
			v[j] = centers[t][j] + float32(rng.NormFloat64()*noise/math.Sqrt(float64(dim)))
		}
		search.Normalize(v)

		b.Reset()
		words := 60 + rng.Intn(121)
		for w := range words {
			if w > 0 {
				b.WriteByte(' ')
			}
			if rng.Intn(10) == 0 {
				b.WriteString(topicWords[t][rng.Intn(synthTopicWords)])
			} else {
				b.WriteString(Word(int(zipf.Uint64())))
			}
		}
		docRng := rand.New(rand.NewSource(seed ^ int64(doc)*7919))
		labels := []string{fmt.Sprintf("label%02d", docRng.Intn(30))}
		if docRng.Intn(3) == 0 {
			labels = append(labels, fmt.Sprintf("label%02d", docRng.Intn(30)))
		}
		out = append(out, docent.Chunk{
			ID:        fmt.Sprintf("syn-%07d-%d", doc, i%ChunksPerDoc),
			DocID:     fmt.Sprintf("syn-%07d", doc),
			Ord:       i % ChunksPerDoc,
			Source:    synthSources[docRng.Intn(len(synthSources))],
			Space:     fmt.Sprintf("space%02d", docRng.Intn(20)),
			Labels:    labels,
			UpdatedAt: base.Add(time.Duration(docRng.Intn(3*365*24)) * time.Hour),
			Title:     fmt.Sprintf("%s %s %d", topicWords[t][0], Word(docRng.Intn(2000)), doc),
			Section:   []string{Word(rng.Intn(500))},
			URL:       fmt.Sprintf("https://docs.example.com/syn/%d#%d", doc, i%ChunksPerDoc),
			Text:      b.String(),
			Vector:    v,
		})
	}
	return out
}

// Queries returns n query vectors drawn like Chunks's
// chunk vectors (near random chunks' topics) from their own seed.
func Queries(chunks []docent.Chunk, n int, seed int64) [][]float32 {
	rng := rand.New(rand.NewSource(seed))
	out := make([][]float32, n)
	for i := range out {
		c := chunks[rng.Intn(len(chunks))].Vector
		v := make([]float32, len(c))
		for j := range v {
			v[j] = c[j] + float32(rng.NormFloat64()*0.7/math.Sqrt(float64(len(c))))
		}
		search.Normalize(v)
		out[i] = v
	}
	return out
}

func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(rng.NormFloat64())
	}
	search.Normalize(v)
	return v
}
