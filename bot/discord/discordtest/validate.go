package discordtest

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"unicode/utf16"
)

// Discord's documented limits (Message, Embed, Components, Modal,
// Application Command references).
const (
	MaxContent          = 2000
	MaxEmbeds           = 10
	MaxEmbedTitle       = 256
	MaxEmbedDescription = 4096
	MaxEmbedFields      = 25
	MaxFieldName        = 256
	MaxFieldValue       = 1024
	MaxFooter           = 2048
	MaxAuthorName       = 256
	MaxEmbedTotal       = 6000
	MaxActionRows       = 5
	MaxRowButtons       = 5
	MaxButtonLabel      = 80
	MaxCustomID         = 100
	MaxThreadName       = 100
	MaxModalTitle       = 45
	MaxTextInputLabel   = 45
	MaxTextInputLength  = 4000
)

// Length counts text the way Discord's limits do (UTF-16 code units).
func Length(s string) int { return len(utf16.Encode([]rune(s))) }

// invalidForm is Discord's 50035 error.
func invalidForm(format string, args ...any) *apiError {
	return &apiError{Code: 50035, Message: "Invalid Form Body: " + fmt.Sprintf(format, args...)}
}

// validateMessage checks a message body; edit relaxes the rule that a
// message may not be empty (fields left out keep their values).
func validateMessage(w *messageWrite, edit bool) *apiError {
	content := ""
	if w.Content != nil {
		content = *w.Content
	}
	if n := Length(content); n > MaxContent {
		return invalidForm("content: must be %d or fewer in length (got %d)", MaxContent, n)
	}
	var embeds []Embed
	if w.Embeds != nil {
		embeds = *w.Embeds
	}
	var rows []Component
	if w.Components != nil {
		rows = *w.Components
	}
	if !edit && content == "" && len(embeds) == 0 && len(rows) == 0 {
		return &apiError{Code: 50006, Message: "Cannot send an empty message"}
	}
	if err := validateEmbeds(embeds); err != nil {
		return err
	}
	if err := validateRows(rows); err != nil {
		return err
	}
	if am := w.AllowedMentions; am != nil {
		for _, p := range am.Parse {
			if !slices.Contains([]string{"roles", "users", "everyone"}, p) {
				return invalidForm("allowed_mentions.parse: %q is not a valid mention type", p)
			}
		}
		if slices.Contains(am.Parse, "roles") && len(am.Roles) > 0 {
			return invalidForm("allowed_mentions: parse:[\"roles\"] and roles:[...] are mutually exclusive")
		}
		if slices.Contains(am.Parse, "users") && len(am.Users) > 0 {
			return invalidForm("allowed_mentions: parse:[\"users\"] and users:[...] are mutually exclusive")
		}
		if len(am.Roles) > 100 || len(am.Users) > 100 {
			return invalidForm("allowed_mentions: at most 100 roles and 100 users")
		}
	}
	return nil
}

func validateEmbeds(embeds []Embed) *apiError {
	if len(embeds) > MaxEmbeds {
		return invalidForm("embeds: must be %d or fewer in length", MaxEmbeds)
	}
	total := 0
	for i, e := range embeds {
		key := fmt.Sprintf("embeds.%d", i)
		type check struct {
			field  string
			n, max int
		}
		checks := []check{
			{"title", Length(e.Title), MaxEmbedTitle},
			{"description", Length(e.Description), MaxEmbedDescription},
			{"fields", len(e.Fields), MaxEmbedFields},
		}
		if e.Footer != nil {
			checks = append(checks, check{"footer.text", Length(e.Footer.Text), MaxFooter})
			total += Length(e.Footer.Text)
		}
		if e.Author != nil {
			checks = append(checks, check{"author.name", Length(e.Author.Name), MaxAuthorName})
			total += Length(e.Author.Name)
		}
		for _, c := range checks {
			if c.n > c.max {
				return invalidForm("%s.%s: must be %d or fewer in length (got %d)", key, c.field, c.max, c.n)
			}
		}
		total += Length(e.Title) + Length(e.Description)
		for j, f := range e.Fields {
			switch {
			case f.Name == "" || Length(f.Name) > MaxFieldName:
				return invalidForm("%s.fields.%d.name: must be between 1 and %d in length", key, j, MaxFieldName)
			case f.Value == "" || Length(f.Value) > MaxFieldValue:
				return invalidForm("%s.fields.%d.value: must be between 1 and %d in length", key, j, MaxFieldValue)
			}
			total += Length(f.Name) + Length(f.Value)
		}
		if e.URL != "" && !httpURL(e.URL) {
			return invalidForm("%s.url: Scheme %q is not supported. Scheme must be one of ('http', 'https').", key, e.URL)
		}
	}
	if total > MaxEmbedTotal {
		return invalidForm("embeds: Embed size exceeds maximum size of %d (got %d)", MaxEmbedTotal, total)
	}
	return nil
}

func validateRows(rows []Component) *apiError {
	if len(rows) > MaxActionRows {
		return invalidForm("components: must be %d or fewer in length", MaxActionRows)
	}
	ids := map[string]bool{}
	for i, r := range rows {
		key := fmt.Sprintf("components.%d", i)
		if r.Type != ComponentActionRow {
			return invalidForm("%s.type: top-level components must be action rows (got %d)", key, r.Type)
		}
		if len(r.Components) == 0 || len(r.Components) > MaxRowButtons {
			return invalidForm("%s.components: must be between 1 and %d in length", key, MaxRowButtons)
		}
		for j, b := range r.Components {
			bkey := fmt.Sprintf("%s.components.%d", key, j)
			if b.Type != ComponentButton {
				return invalidForm("%s.type: only buttons are supported here (got %d)", bkey, b.Type)
			}
			if b.Style < ButtonPrimary || b.Style > ButtonLink {
				return invalidForm("%s.style: invalid button style %d", bkey, b.Style)
			}
			if b.Label == "" && b.Emoji == nil {
				return invalidForm("%s: a button needs a label or an emoji", bkey)
			}
			if Length(b.Label) > MaxButtonLabel {
				return invalidForm("%s.label: must be %d or fewer in length", bkey, MaxButtonLabel)
			}
			if b.Style == ButtonLink {
				if b.URL == "" || b.CustomID != "" || !httpURL(b.URL) {
					return invalidForm("%s: a link button needs a url and no custom_id", bkey)
				}
				continue
			}
			if b.CustomID == "" || Length(b.CustomID) > MaxCustomID {
				return invalidForm("%s.custom_id: must be between 1 and %d in length", bkey, MaxCustomID)
			}
			if b.URL != "" {
				return invalidForm("%s.url: only link buttons may have a url", bkey)
			}
			if ids[b.CustomID] {
				return invalidForm("%s.custom_id: Component custom id cannot be duplicated", bkey)
			}
			ids[b.CustomID] = true
		}
	}
	return nil
}

// validateModal checks a modal (interaction callback type 9).
func validateModal(w *messageWrite) *apiError {
	if w.CustomID == "" || Length(w.CustomID) > MaxCustomID {
		return invalidForm("data.custom_id: must be between 1 and %d in length", MaxCustomID)
	}
	if w.Title == "" || Length(w.Title) > MaxModalTitle {
		return invalidForm("data.title: must be between 1 and %d in length", MaxModalTitle)
	}
	if w.Components == nil || len(*w.Components) == 0 || len(*w.Components) > 5 {
		return invalidForm("data.components: must be between 1 and 5 in length")
	}
	for i, r := range *w.Components {
		if r.Type != ComponentActionRow || len(r.Components) != 1 || r.Components[0].Type != ComponentTextInput {
			return invalidForm("data.components.%d: each row holds exactly one text input", i)
		}
		in := r.Components[0]
		switch {
		case in.CustomID == "" || Length(in.CustomID) > MaxCustomID:
			return invalidForm("data.components.%d.components.0.custom_id: must be between 1 and %d in length", i, MaxCustomID)
		case in.Style != 1 && in.Style != 2:
			return invalidForm("data.components.%d.components.0.style: must be 1 (short) or 2 (paragraph)", i)
		case in.Label == "" || Length(in.Label) > MaxTextInputLabel:
			return invalidForm("data.components.%d.components.0.label: must be between 1 and %d in length", i, MaxTextInputLabel)
		case in.MaxLength != nil && (*in.MaxLength < 1 || *in.MaxLength > MaxTextInputLength):
			return invalidForm("data.components.%d.components.0.max_length: must be between 1 and %d", i, MaxTextInputLength)
		case in.MinLength != nil && (*in.MinLength < 0 || *in.MinLength > MaxTextInputLength):
			return invalidForm("data.components.%d.components.0.min_length: must be between 0 and %d", i, MaxTextInputLength)
		case Length(in.Placeholder) > 100:
			return invalidForm("data.components.%d.components.0.placeholder: must be 100 or fewer in length", i)
		}
	}
	return nil
}

var commandName = regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)

// validateCommand checks a chat input command for registration.
func validateCommand(c Command) *apiError {
	if c.Type != 0 && c.Type != 1 {
		return nil // user and message commands have no description
	}
	if !commandName.MatchString(c.Name) {
		return invalidForm("name: Command name is invalid (%q)", c.Name)
	}
	if c.Description == "" || Length(c.Description) > 100 {
		return invalidForm("description: must be between 1 and 100 in length")
	}
	if len(c.Options) > 25 {
		return invalidForm("options: must be 25 or fewer in length")
	}
	optional := false
	for i, o := range c.Options {
		if !commandName.MatchString(o.Name) {
			return invalidForm("options.%d.name: Command name is invalid (%q)", i, o.Name)
		}
		if o.Description == "" || Length(o.Description) > 100 {
			return invalidForm("options.%d.description: must be between 1 and 100 in length", i)
		}
		if o.Type < 1 || o.Type > 11 {
			return invalidForm("options.%d.type: invalid option type %d", i, o.Type)
		}
		if o.Required && optional {
			return invalidForm("options.%d.required: Required options must be placed before non-required options", i)
		}
		optional = optional || !o.Required
	}
	return nil
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
