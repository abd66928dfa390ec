package discordtest

import "encoding/json"

// The JSON shapes below follow Discord's API reference (v10), written
// independently of discordgo so that a disagreement between the library
// and the documented API shows up in tests instead of being mirrored.

// Channel types (Discord "channel types").
const (
	ChannelText        = 0
	ChannelDM          = 1
	ChannelPublicThrd  = 11
	ChannelPrivateThrd = 12
	ChannelForum       = 15
)

// Message types used here.
const (
	MessageDefault          = 0
	MessageReply            = 19
	MessageChatInputCommand = 20
)

// Message flags.
const (
	FlagSuppressEmbeds = 1 << 2
	FlagEphemeral      = 1 << 6
	FlagLoading        = 1 << 7
)

// Interaction types.
const (
	InteractionPing        = 1
	InteractionCommand     = 2
	InteractionComponent   = 3
	InteractionModalSubmit = 5
)

// Interaction callback types.
const (
	CallbackPong                   = 1
	CallbackChannelMessage         = 4
	CallbackDeferredChannelMessage = 5
	CallbackDeferredUpdate         = 6
	CallbackUpdateMessage          = 7
	CallbackModal                  = 9
)

// Component types.
const (
	ComponentActionRow = 1
	ComponentButton    = 2
	ComponentTextInput = 4
)

// Button styles.
const (
	ButtonPrimary   = 1
	ButtonSecondary = 2
	ButtonSuccess   = 3
	ButtonDanger    = 4
	ButtonLink      = 5
)

// Gateway intents the server honours.
const (
	IntentGuilds        = 1 << 0
	IntentGuildMessages = 1 << 9
	// IntentGuildMessageReactions carries MESSAGE_REACTION_ADD.
	IntentGuildMessageReactions = 1 << 10
	IntentDirectMessages        = 1 << 12
	IntentMessageContent        = 1 << 15
)

// User is a Discord user.
type User struct {
	ID            string `json:"id"`
	Username      string `json:"username"`
	Discriminator string `json:"discriminator"`
	GlobalName    string `json:"global_name,omitempty"`
	Bot           bool   `json:"bot,omitempty"`
}

// Mention is how a message mentions the user.
func (u User) Mention() string { return "<@" + u.ID + ">" }

// ThreadMetadata is a thread's state.
type ThreadMetadata struct {
	Archived            bool   `json:"archived"`
	AutoArchiveDuration int    `json:"auto_archive_duration"`
	ArchiveTimestamp    string `json:"archive_timestamp"`
	Locked              bool   `json:"locked"`
}

// Channel is a guild channel, thread or DM.
type Channel struct {
	ID             string          `json:"id"`
	Type           int             `json:"type"`
	GuildID        string          `json:"guild_id,omitempty"`
	Name           string          `json:"name,omitempty"`
	ParentID       string          `json:"parent_id,omitempty"`
	OwnerID        string          `json:"owner_id,omitempty"`
	ThreadMetadata *ThreadMetadata `json:"thread_metadata,omitempty"`
	Recipients     []User          `json:"recipients,omitempty"`
	// AvailableTags are a forum's tags; AppliedTags the IDs of those a
	// post (a thread in the forum) carries.
	AvailableTags []ForumTag `json:"available_tags,omitempty"`
	AppliedTags   []string   `json:"applied_tags,omitempty"`
}

// ForumTag is a tag of a forum channel.
type ForumTag struct {
	ID        string  `json:"id,omitempty"`
	Name      string  `json:"name"`
	Moderated bool    `json:"moderated"`
	EmojiID   *string `json:"emoji_id"`
	EmojiName *string `json:"emoji_name"`
}

// IsThread reports whether the channel is a thread.
func (c Channel) IsThread() bool { return c.Type == ChannelPublicThrd || c.Type == ChannelPrivateThrd }

// Role is a guild role; permissions travel as a string.
type Role struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Color       int    `json:"color"`
	Hoist       bool   `json:"hoist"`
	Position    int    `json:"position"`
	Permissions string `json:"permissions"`
	Managed     bool   `json:"managed"`
	Mentionable bool   `json:"mentionable"`
	Flags       int    `json:"flags"`
}

// Member is a guild member; in MESSAGE_CREATE it comes without user.
type Member struct {
	User        *User    `json:"user,omitempty"`
	Roles       []string `json:"roles"`
	JoinedAt    string   `json:"joined_at"`
	Deaf        bool     `json:"deaf"`
	Mute        bool     `json:"mute"`
	Flags       int      `json:"flags"`
	Permissions string   `json:"permissions,omitempty"`
}

// Embed is a rich embed.
type Embed struct {
	Title       string       `json:"title,omitempty"`
	Type        string       `json:"type,omitempty"`
	Description string       `json:"description,omitempty"`
	URL         string       `json:"url,omitempty"`
	Timestamp   string       `json:"timestamp,omitempty"`
	Color       int          `json:"color,omitempty"`
	Footer      *EmbedFooter `json:"footer,omitempty"`
	Author      *EmbedAuthor `json:"author,omitempty"`
	Fields      []EmbedField `json:"fields,omitempty"`
}

// EmbedFooter is an embed's footer.
type EmbedFooter struct {
	Text string `json:"text"`
}

// EmbedAuthor is an embed's author line.
type EmbedAuthor struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// EmbedField is one field of an embed.
type EmbedField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline,omitempty"`
}

// Emoji is a partial emoji on a button.
type Emoji struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// Component is a message or modal component: an action row, a button or
// a text input.
type Component struct {
	Type        int         `json:"type"`
	Components  []Component `json:"components,omitempty"`
	Style       int         `json:"style,omitempty"`
	Label       string      `json:"label,omitempty"`
	CustomID    string      `json:"custom_id,omitempty"`
	URL         string      `json:"url,omitempty"`
	Disabled    bool        `json:"disabled,omitempty"`
	Emoji       *Emoji      `json:"emoji,omitempty"`
	Placeholder string      `json:"placeholder,omitempty"`
	MinLength   *int        `json:"min_length,omitempty"`
	MaxLength   *int        `json:"max_length,omitempty"`
	Required    *bool       `json:"required,omitempty"`
	Value       string      `json:"value,omitempty"`
}

// Buttons returns the buttons of a message's action rows, in order.
func Buttons(rows []Component) []Component {
	var out []Component
	for _, r := range rows {
		for _, c := range r.Components {
			if c.Type == ComponentButton {
				out = append(out, c)
			}
		}
	}
	return out
}

// MessageReference points at another message.
type MessageReference struct {
	Type            int    `json:"type,omitempty"`
	MessageID       string `json:"message_id,omitempty"`
	ChannelID       string `json:"channel_id,omitempty"`
	GuildID         string `json:"guild_id,omitempty"`
	FailIfNotExists *bool  `json:"fail_if_not_exists,omitempty"`
}

// AllowedMentions limits who a message pings.
type AllowedMentions struct {
	Parse       []string `json:"parse"`
	Roles       []string `json:"roles"`
	Users       []string `json:"users"`
	RepliedUser bool     `json:"replied_user"`
}

// InteractionMetadata is set on a message created by an interaction.
type InteractionMetadata struct {
	ID   string `json:"id"`
	Type int    `json:"type"`
	User User   `json:"user"`
}

// Message is a message as the API returns it and the gateway sends it.
type Message struct {
	ID                  string               `json:"id"`
	ChannelID           string               `json:"channel_id"`
	GuildID             string               `json:"guild_id,omitempty"`
	Author              User                 `json:"author"`
	Member              *Member              `json:"member,omitempty"`
	Content             string               `json:"content"`
	Timestamp           string               `json:"timestamp"`
	EditedTimestamp     *string              `json:"edited_timestamp"`
	TTS                 bool                 `json:"tts"`
	MentionEveryone     bool                 `json:"mention_everyone"`
	Mentions            []User               `json:"mentions"`
	MentionRoles        []string             `json:"mention_roles"`
	Attachments         []json.RawMessage    `json:"attachments"`
	Embeds              []Embed              `json:"embeds"`
	Components          []Component          `json:"components"`
	Pinned              bool                 `json:"pinned"`
	Type                int                  `json:"type"`
	Flags               int                  `json:"flags"`
	WebhookID           string               `json:"webhook_id,omitempty"`
	ApplicationID       string               `json:"application_id,omitempty"`
	MessageReference    *MessageReference    `json:"message_reference,omitempty"`
	ReferencedMessage   *Message             `json:"referenced_message,omitempty"`
	InteractionMetadata *InteractionMetadata `json:"interaction_metadata,omitempty"`
	Thread              *Channel             `json:"thread,omitempty"`

	// Edits counts how many times the message was edited (not sent).
	Edits int `json:"-"`
	// History holds the content of each earlier version, oldest first
	// (not sent).
	History []string `json:"-"`
}

// messageWrite is the body of create-message, execute-webhook and
// interaction-response message data; edits use the same fields, where an
// absent field keeps its value.
type messageWrite struct {
	Content          *string           `json:"content"`
	Embeds           *[]Embed          `json:"embeds"`
	Components       *[]Component      `json:"components"`
	AllowedMentions  *AllowedMentions  `json:"allowed_mentions"`
	MessageReference *MessageReference `json:"message_reference"`
	Flags            *int              `json:"flags"`
	TTS              bool              `json:"tts"`
	StickerIDs       []string          `json:"sticker_ids"`
	// Modal fields (interaction callback type 9).
	CustomID string `json:"custom_id"`
	Title    string `json:"title"`
}

// Modal is a modal the bot opened in answer to an interaction.
type Modal struct {
	CustomID   string      `json:"custom_id"`
	Title      string      `json:"title"`
	Components []Component `json:"components"`
}

// Command is a registered application command.
type Command struct {
	ID            string          `json:"id"`
	ApplicationID string          `json:"application_id"`
	Type          int             `json:"type,omitempty"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Options       []CommandOption `json:"options,omitempty"`
	Version       string          `json:"version"`
}

// CommandOption is an option of a command.
type CommandOption struct {
	Type        int    `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
	MaxLength   int    `json:"max_length,omitempty"`
	MinLength   int    `json:"min_length,omitempty"`
}

// apiError is Discord's JSON error body.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}
