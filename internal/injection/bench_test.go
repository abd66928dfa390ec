package injection_test

import (
	"strings"
	"testing"

	"github.com/docent-hq/docent/internal/injection"
)

func BenchmarkFind(b *testing.B) {
	text := strings.Repeat("The office opens at nine and closes at six; parking is in the basement, level two. ", 25)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		injection.Find(text)
	}
}
