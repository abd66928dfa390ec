package search

import (
	"strings"
	"testing"
)

// TestCleanQuery: log noise goes before retrieval — timestamps, ids,
// addresses, stack frames — and the words and codes of the message stay.
func TestCleanQuery(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain question", "How do I reset my VPN token?", "How do I reset my VPN token?"},
		{"log line", `2024-05-31T09:12:44.123Z ERR request_id=7f3a9c2e41b84d0e9a6c5b1d2e3f4a5b upstream 10.0.3.17:8080 returned 502 Bad Gateway`,
			"ERR upstream returned 502 Bad Gateway"},
		{"access log", `192.168.1.9 - - [31/May/2024:09:12:44 +0000] "GET /api HTTP/1.1" 499 0`, `- - [ ] "GET /api HTTP/1.1" 499 0`},
		{"syslog and uuid", "May 31 09:12:44 gw traefik[812]: level=error msg=\"field not found, node: passthrough\" id=3f2b8c1e-9d4a-4b7e-8f6a-1c2d3e4f5a6b",
			`gw traefik[812]: level=error msg="field not found, node: passthrough" id=`},
		{"Java stack", "Caused by: java.net.ConnectException: Connection refused\n\tat java.base/sun.nio.ch.Net.connect0(Native Method)\n\tat com.acme.Client.call(Client.java:42)\n... 12 more\nwhy?",
			"Caused by: java.net.ConnectException: Connection refused why?"},
		{"Go panic", "panic: runtime error: invalid memory address\ngoroutine 1 [running]:\nmain.main()\n\t/src/app/main.go:42 +0x1d\nhow to fix",
			"panic: runtime error: invalid memory address main.main() how to fix"},
		{"codes stay", "Error GK-409, ORA-00942, E1234 and ERR_CONNECTION_REFUSED after 0x7ffe3a2b9c10", "Error GK-409, ORA-00942, E1234 and ERR_CONNECTION_REFUSED after"},
		{"hashes go, words stay", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 broke the deploymentConfiguration", "commit broke the deploymentConfiguration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CleanQuery(tc.in); got != tc.want {
				t.Errorf("CleanQuery =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestSalientWords: a query with more terms than the cap keeps the words
// of its rarest terms, in order; a shorter one is left alone.
func TestSalientWords(t *testing.T) {
	idf := func(terms []string) map[string]float64 {
		w := map[string]float64{}
		for _, term := range terms {
			switch term {
			case "gatekeep", "gk", "409":
				w[term] = 5
			case "absent":
			default:
				w[term] = 1
			}
		}
		return w
	}
	text := "the Gatekeeper sign in fails with GK-409 every morning after lunch absent"
	if got := salientWords(text, 3, idf); got != "Gatekeeper GK 409" {
		t.Errorf("salientWords = %q", got)
	}
	if got := salientWords(text, 100, idf); got != text {
		t.Errorf("under the cap: %q", got)
	}
}

// TestLongQueryFusion: a query of more than LongQueryTerms distinct terms
// weighs its vector less, from twice as many not at all, and skips
// feedback; a short one keeps the fusion as configured.
func TestLongQueryFusion(t *testing.T) {
	r, err := NewRetriever(nil, nil, RetrieverOptions{LongQueryTerms: 4})
	if err != nil {
		t.Fatal(err)
	}
	words := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(" word" + string(rune('a'+i)))
		}
		return b.String()
	}
	for _, tc := range []struct {
		n        int
		weight   float64
		feedback bool
	}{{3, 0.4, true}, {4, 0.4, true}, {6, 0.1, false}, {8, 0, false}, {20, 0, false}} {
		f, fb := r.fusionFor(words(tc.n))
		if diff := f.VectorWeight - tc.weight; diff > 1e-9 || diff < -1e-9 || fb != tc.feedback {
			t.Errorf("%d terms: vector weight %v, feedback %v; want %v, %v", tc.n, f.VectorWeight, fb, tc.weight, tc.feedback)
		}
	}
	off, _ := NewRetriever(nil, nil, RetrieverOptions{LongQueryTerms: -1})
	if f, fb := off.fusionFor(words(30)); f.VectorWeight != DefaultFusion().VectorWeight || !fb {
		t.Errorf("long queries off: %v %v", f.VectorWeight, fb)
	}
}

// TestJoinedWords: two neighbouring words whose concatenation the index
// holds as one term are offered joined; numbers, stopwords, words apart by
// other punctuation and joins the index lacks are not.
func TestJoinedWords(t *testing.T) {
	vocab := map[string]bool{}
	for _, w := range []string{"kilnvent", "glazecoat", "firelog", "to", "kiln2"} {
		AnalyzeKeywordQuery(w, func(term string) { vocab[term] = true })
	}
	holds := func(terms []string) map[string]bool {
		out := map[string]bool{}
		for _, term := range terms {
			out[term] = vocab[term]
		}
		return out
	}
	for _, tc := range []struct{ name, in, want string }{
		{"apart by a space", "where is the kiln vent on model B?", "kilnvent"},
		{"apart by a hyphen or underscore", "glaze-coat thickness and the fire_log", "glazecoat firelog"},
		{"case kept as written", "Kiln Vent", "KilnVent"},
		{"once", "kiln vent, then kiln vent again", "kilnvent"},
		{"not across other punctuation", "the kiln. Vent it", ""},
		{"not across two spaces", "kiln  vent", ""},
		{"no number joined", "kiln 2 is hot", ""},
		{"no stopword joined", "how to vent", ""},
		{"what the index lacks", "glaze vent", ""},
		{"one word", "kiln", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(joinedWords(tc.in, holds), " "); got != tc.want {
				t.Errorf("joinedWords(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzCleanQuery: skipping an expression a text cannot match changes no
// result.
func FuzzCleanQuery(f *testing.F) {
	for _, s := range []string{
		"How do I reset my VPN token?",
		`2024-05-31T09:12:44.123Z ERR request_id=7f3a9c2e41b84d0e9a6c5b1d2e3f4a5b upstream 10.0.3.17:8080 returned 502`,
		`192.168.1.9 - - [31/May/2024:09:12:44 +0000] "GET /api HTTP/1.1" 499 0`,
		"id=abcdefab-abcd-abcd-abcd-abcdefabcdef why",
		"at com.acme.Client.call(Native Method)\nwhy?",
		"Traceback (most recent call last):\nKeyError",
		"pointer 0x7ffe3a2b9c10 and 2024/05/31 and May 31 09:12:44",
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8 broke it",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := CleanQuery(s), cleanQuery(s, true); got != want {
			t.Errorf("CleanQuery(%q) = %q, every expression gives %q", s, got, want)
		}
	})
}
