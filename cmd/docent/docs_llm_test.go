package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

// docLLMBlocks returns the YAML blocks of the "Language models" section
// of docs/configuration.md, in order.
func docLLMBlocks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Language models")
	if !ok {
		t.Fatal("docs/configuration.md has no Language models section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

var (
	readmeProviderRE = regexp.MustCompile(`(?m)^answerer:\n  provider: (\w+)`)
	readmeModelRE    = regexp.MustCompile(`(?m)^    model: (\S+)`)
	readmeBaseURLRE  = regexp.MustCompile(`(?m)^    base_url: \S+`)
)

// TestDocsLLMConfigs: each YAML block of the language model section of
// docs/configuration.md loads as printed (`docent config --config FILE` names the
// provider's implementation for the embedder and the answerer), and,
// with only its endpoint pointed at a local server that speaks the
// provider's API, really answers through that model: the handbook is
// embedded by it and the answer is written by the model the block names.
func TestDocsLLMConfigs(t *testing.T) {
	t.Parallel()
	blocks := docLLMBlocks(t)
	if len(blocks) != 3 {
		t.Fatalf("%d YAML blocks in the Language models section, want Gemini, Ollama and OpenAI", len(blocks))
	}
	for i, block := range blocks {
		pm := readmeProviderRE.FindStringSubmatch(block)
		mm := readmeModelRE.FindStringSubmatch(block)
		if pm == nil || mm == nil {
			t.Fatalf("block %d names no answerer provider or model:\n%s", i+1, block)
		}
		provider, model := pm[1], mm[1]
		t.Run(provider+"-"+model, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			env := map[string]string{"DOCENT_DATA": filepath.Join(dir, "data")}
			for k, v := range testKeys {
				env[k] = v
			}
			path := filepath.Join(dir, "docent.yaml")
			if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cm := &Main{ConfigPath: path, Stdout: &out, Stderr: io.Discard, Getenv: envOf(env)}
			err := cm.PrintConfig(context.Background(), nil)
			cm.Close()
			if err != nil {
				t.Fatalf("docent config on the docs block: %v\n%s", err, block)
			}
			for _, want := range []string{
				"#   embedder:          " + provider + " — llm/" + provider,
				"#   answerer:          " + provider + " — answer/llmstage over llm/" + provider,
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("docent config lacks %q:\n%s", want, out.String())
				}
			}
			for _, key := range []string{testGeminiKey, testOpenAIKey} {
				if strings.Contains(out.String(), key) {
					t.Errorf("docent config printed the key %s", key)
				}
			}

			// The same block, its endpoint pointed at a local server.
			servers := modelServers(t)
			s := servers[provider]
			if !strings.Contains(block, "api_key:") {
				s.Key = "" // Ollama: no key
			}
			url := s.URL
			if provider == "openai" {
				url += "/v1"
			}
			local := block
			if readmeBaseURLRE.MatchString(local) {
				local = readmeBaseURLRE.ReplaceAllLiteralString(local, "    base_url: "+url)
			} else {
				local = strings.Replace(local, "\n  "+provider+":\n", "\n  "+provider+":\n    base_url: "+url+"\n", 1)
			}
			if err := os.WriteFile(path, []byte(local), 0o644); err != nil {
				t.Fatal(err)
			}
			m := &Main{ConfigPath: path, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(env), Retry: fastRetry}
			ctx := context.Background()
			if err := m.Open(ctx); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.ensureIndexed(ctx, m.Sources); err != nil {
				t.Fatal(err)
			}
			a, err := m.Pipeline.Answer(ctx, docent.Question{Text: "how many vacation days do employees get?"})
			if err != nil {
				t.Fatal(err)
			}
			// The trace names the model version the API reports (Gemini resolves
			// an alias to a version).
			if !strings.HasPrefix(a.Trace.Model, model) || a.Trace.Prompt == "" || a.Status != docent.StatusAnswered || len(a.Citations) == 0 {
				t.Errorf("answer %s %q by model %q (want %q), %d citations", a.Status, a.Text, a.Trace.Model, model, len(a.Citations))
			}
			chats, embeds := 0, 0
			for _, c := range s.Calls() {
				switch {
				case c.Model == model && len(c.Texts) == 0:
					chats++
				case len(c.Texts) > 0:
					embeds++
				}
			}
			if chats == 0 || embeds == 0 {
				t.Errorf("the %s server saw %d chat calls to %s and %d embedding calls", provider, chats, model, embeds)
			}
			other := servers["gemini"]
			if provider == "gemini" {
				other = servers["openai"]
			}
			if n := len(other.Calls()); n != 0 {
				t.Errorf("the other provider's server was called %d times", n)
			}
		})
	}
}
