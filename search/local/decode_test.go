package local

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzDecodeStrings: a stored labels or section column decodes as
// json.Unmarshal decodes it (nil for an empty array), whether it takes the
// plain path or not.
func FuzzDecodeStrings(f *testing.F) {
	for _, s := range [][]string{nil, {}, {"Options"}, {"Configuration Options", "sslHost"}, {`say "hi"`}, {"a,b", "<x>"},
		{"tab\there"}, {"é", "日本"}, {"", ""}, {"\xff"}} {
		raw, _ := json.Marshal(s)
		f.Add(string(raw))
	}
	f.Add(`["a",]`)
	f.Add(`["a""b"]`)
	f.Add(`[1]`)
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := decodeStrings(raw)
		var want []string
		werr := json.Unmarshal([]byte(raw), &want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("decodeStrings(%q) error %v, json.Unmarshal %v", raw, err, werr)
		}
		if err != nil {
			return
		}
		if len(want) == 0 {
			want = nil
		}
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("decodeStrings(%q) = %q, json.Unmarshal %q", raw, got, want)
		}
	})
}
