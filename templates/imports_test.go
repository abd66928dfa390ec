package templates

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsOnlyViewModels: of docent's own packages, templates imports
// only the root (the shared domain value types) and static (the assets).
// The pages take the view models declared here, and console converts
// the domain packages' types into them.
func TestImportsOnlyViewModels(t *testing.T) {
	const module = "github.com/docent-hq/docent"
	allowed := map[string]bool{module: true, module + "/static": true}
	ctxt := build.Default
	ctxt.UseAllFiles = true // every non-test file, whatever its build constraints
	pkg, err := ctxt.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		if strings.HasPrefix(path, module+"/") && !allowed[path] {
			t.Errorf("templates imports %s: give the page a view model here and convert to it in console", path)
		}
	}
}
