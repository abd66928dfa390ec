package question

import "testing"

func TestLooks(t *testing.T) {
	for text, want := range map[string]bool{
		"How do I reset my VPN token":    true,
		"what's the wifi password":       true,
		"Is the office open on Friday":   true,
		"did the deploy go out":          true,
		"anyone know where the badge is": true,
		"May I expense a monitor":        true,
		"The VPN is down again.":         false,
		"thanks, that worked":            false,
		"  reset my token?  ":            true,
		"":                               false,
		"Howdy all":                      false,
		"Whatever, I'll ask IT tomorrow": false,
	} {
		if got := Looks(text); got != want {
			t.Errorf("Looks(%q) = %v, want %v", text, got, want)
		}
	}
}
