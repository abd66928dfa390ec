package discord

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestREADMEIntegers keeps the setup guide's permissions and intents
// integers equal to what the adapter needs and asks for.
func TestREADMEIntegers(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
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
			t.Errorf("README lacks %q", want)
		}
	}
}
