package discord

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDocsIntegers keeps the setup guide's (docs/discord.md) permissions
// and intents integers equal to what the adapter needs and asks for.
func TestDocsIntegers(t *testing.T) {
	b, err := os.ReadFile("../../docs/discord.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, want := range []string{
		"permissions=" + strconv.FormatInt(int64(Permissions), 10),
		"permissions integer **" + strconv.FormatInt(int64(Permissions), 10) + "**",
		"MESSAGE_CONTENT (" + strconv.Itoa(int(Intents)) + ")",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("docs/discord.md lacks %q", want)
		}
	}
}
