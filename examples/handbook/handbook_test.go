package handbook_test

import (
	"io/fs"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/docent-hq/docent/examples/handbook"
)

// TestGoldenDocsExist checks that every document the golden set expects is
// embedded, so a renamed page cannot silently turn into a retrieval miss.
func TestGoldenDocsExist(t *testing.T) {
	var golden struct {
		Questions []struct {
			ID     string `yaml:"id"`
			Expect []struct {
				Doc string `yaml:"doc"`
			} `yaml:"expect"`
		} `yaml:"questions"`
	}
	if err := yaml.Unmarshal(handbook.Golden, &golden); err != nil {
		t.Fatalf("golden.yaml: %v", err)
	}
	if len(golden.Questions) == 0 {
		t.Fatal("golden.yaml has no questions")
	}
	for _, q := range golden.Questions {
		for _, e := range q.Expect {
			if _, err := fs.Stat(handbook.Source(), e.Doc); err != nil {
				t.Errorf("question %s expects %s: %v", q.ID, e.Doc, err)
			}
		}
	}
}
