package store

import (
	"fmt"
	"go/build"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/docent-hq/docent"

// layerRules say which of the module's packages a lower layer may import
// (directly or through another of the module's packages). The store, the
// search contracts and backends, and the model providers sit below every
// feature package (connectors, answer, bot, api, console, config, eval, cmd):
// they import the root domain package and small shared helpers only, so a
// feature's records never pull the store above the features.
var layerRules = []struct {
	pkg     string   // package pattern: "x" or "x/..."
	allowed []string // module package patterns it may import
}{
	{"store", []string{"", "internal/..."}},
	{"search/...", []string{"", "search/...", "internal/..."}},
	{"llm/...", []string{"", "search", "llm/...", "internal/..."}},
	// Chat adapters reach answers only through the conversation core:
	// never a model provider, the index or the store directly.
	{"bot/...", []string{"", "bot/...", "internal/..."}},
	// The model stages implement eval's Judge over domain types: they
	// need nothing of eval (or of any feature package but answer).
	{"answer/llmstage", []string{"", "answer/...", "search/...", "llm/...", "internal/..."}},
}

// TestLayerImports fails when a lower-layer package imports a feature
// package of this module.
func TestLayerImports(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	pkgs := modulePackages(t, root)
	for _, rule := range layerRules {
		checked := 0
		for rel := range pkgs {
			if matchPattern(rule.pkg, rel) {
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("rule %s matches no package of the module", rule.pkg)
		}
	}
	for _, v := range layerViolations(pkgs) {
		t.Error(v)
	}
}

// layerViolations checks every package of pkgs against layerRules.
func layerViolations(pkgs map[string][]string) []string {
	var out []string
	for _, rule := range layerRules {
		for rel := range pkgs {
			if !matchPattern(rule.pkg, rel) {
				continue
			}
			for _, bad := range forbidden(pkgs, rel, rule.allowed) {
				out = append(out, fmt.Sprintf("%s imports %s (through %s); a %s package may import only %s of this module",
					rel, bad.target, strings.Join(bad.chain, " -> "), rule.pkg, describePatterns(rule.allowed)))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestLayerImportsCatchesForbiddenImports: the rule fails on the module's
// real import graph once a forbidden import is added to it, directly or
// through another package of the module.
func TestLayerImportsCatchesForbiddenImports(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	real := modulePackages(t, filepath.Dir(filepath.Dir(file)))
	for _, pkg := range []string{"store", "search", "llm/gemini", "bot/slack", "connectors", "answer", "console"} {
		if _, ok := real[pkg]; !ok {
			t.Fatalf("package %s not found", pkg)
		}
	}
	tests := []struct {
		from, imp string
		want      string // in the violation
	}{
		{"store", "connectors", "store imports connectors (through store -> connectors)"},
		{"store", "console", "store imports console"},
		{"search", "answer", "search imports answer"},
		{"llm/gemini", "answer", "llm/gemini imports answer"},
		{"bot/slack", "llm/gemini", "bot/slack imports llm/gemini"},
		{"bot/slack", "store", "bot/slack imports store"},
		// Through an allowed package: internal/... may be imported, but not
		// when it pulls a feature in.
		{"internal/redact", "eval", "store imports eval (through store -> internal/redact -> eval)"},
	}
	for _, tt := range tests {
		t.Run(tt.from+" -> "+tt.imp, func(t *testing.T) {
			pkgs := map[string][]string{}
			for k, v := range real {
				pkgs[k] = slices.Clone(v)
			}
			if _, ok := pkgs[tt.from]; !ok {
				pkgs[tt.from] = nil
			}
			pkgs[tt.from] = append(pkgs[tt.from], tt.imp)
			if tt.from == "internal/redact" && !slices.Contains(pkgs["store"], "internal/redact") {
				pkgs["store"] = append(pkgs["store"], "internal/redact")
			}
			got := layerViolations(pkgs)
			if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tt.want) }) {
				t.Errorf("adding %s -> %s: violations %q, want one with %q", tt.from, tt.imp, got, tt.want)
			}
		})
	}
}

type violation struct {
	target string
	chain  []string
}

// forbidden walks rel's module imports and returns every one that no
// allowed pattern matches.
func forbidden(pkgs map[string][]string, rel string, allowed []string) []violation {
	var out []violation
	seen := map[string]bool{rel: true}
	var walk func(p string, chain []string)
	walk = func(p string, chain []string) {
		for _, imp := range pkgs[p] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			next := append(slices.Clone(chain), imp)
			if !slices.ContainsFunc(allowed, func(a string) bool { return matchPattern(a, imp) }) {
				out = append(out, violation{target: imp, chain: next})
				continue
			}
			walk(imp, next)
		}
	}
	walk(rel, []string{rel})
	return out
}

// modulePackages maps each package of the module (by path relative to
// the module, "" for the root) to the module packages its non-test files
// import.
func modulePackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(p, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		var imps []string
		for _, imp := range bp.Imports {
			if imp == module {
				imps = append(imps, "")
			} else if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				imps = append(imps, r)
			}
		}
		pkgs[rel] = imps
		return nil
	})
	if err != nil {
		t.Fatalf("list packages: %v", err)
	}
	if len(pkgs["store"]) == 0 && pkgs["search"] == nil {
		t.Fatalf("found no packages under %s", root)
	}
	return pkgs
}

// matchPattern matches "x" exactly and "x/..." as x and everything below it.
func matchPattern(pattern, rel string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return pattern == rel
}

// describePatterns names module package patterns, the root as "docent".
func describePatterns(ps []string) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		if p == "" {
			p = "docent (the root package)"
		}
		out[i] = p
	}
	return strings.Join(out, ", ")
}
