// Package handbook embeds the example Kestrel Robotics handbook: the demo
// corpus a fresh docent install indexes, so that it can answer questions
// with no account, key or server, and the golden questions that score
// retrieval over it.
package handbook

import (
	"embed"
	"io/fs"
	"strings"
)

// FS holds the handbook pages: index.md and the markdown files of each
// section folder (it/, travel/, security/, ...), at their slash paths.
//
//go:embed *.md */*.md
var FS embed.FS

// Golden is golden.yaml: questions about the handbook with the document
// and section expected to answer each.
//
//go:embed golden.yaml
var Golden []byte

// Synonyms is synonyms.txt: the handbook's own words for what its pages
// call otherwise ("pto" for "paid time off"), in the format of
// answerer.synonyms. A deployment of the handbook brings them; no other
// package holds them.
//
//go:embed synonyms.txt
var Synonyms []byte

// Source returns the handbook pages as a file system rooted at the
// handbook folder, ready for connectors/files. It holds markdown only.
func Source() fs.FS { return FS }

// Pages calls fn with the path and text of each page, in path order, and
// returns the first error fn returns.
func Pages(fn func(path, text string) error) error {
	return fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		b, err := fs.ReadFile(FS, path)
		if err != nil {
			return err
		}
		return fn(path, string(b))
	})
}
