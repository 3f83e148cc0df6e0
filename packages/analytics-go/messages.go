package analytics

import "fmt"

// Message holds the fields every call has. It is embedded in each message type, as in the
// historical v2 client, so msg.Timestamp and msg.MessageId can be set directly.
type Message struct {
	Type      string `json:"type,omitempty"`
	MessageId string `json:"messageId,omitempty"`
	// Timestamp is ISO 8601; when empty the client stamps the time of the call (RFC 3339 UTC with
	// milliseconds). Set it to send historical data.
	Timestamp string `json:"timestamp,omitempty"`
	SentAt    string `json:"sentAt,omitempty"`
}

// Identify ties a user to their traits.
type Identify struct {
	Context      map[string]interface{} `json:"context,omitempty"`
	Integrations map[string]interface{} `json:"integrations,omitempty"`
	Traits       map[string]interface{} `json:"traits,omitempty"`
	AnonymousId  string                 `json:"anonymousId,omitempty"`
	UserId       string                 `json:"userId,omitempty"`
	Message
}

// Track records an action a user performed.
type Track struct {
	Context      map[string]interface{} `json:"context,omitempty"`
	Integrations map[string]interface{} `json:"integrations,omitempty"`
	Properties   map[string]interface{} `json:"properties,omitempty"`
	AnonymousId  string                 `json:"anonymousId,omitempty"`
	UserId       string                 `json:"userId,omitempty"`
	Event        string                 `json:"event"`
	Message
}

// Page records a page view. Its Traits are sent as the call's properties (url, title, referrer,
// path and any custom keys), as the historical client did.
type Page struct {
	Context      map[string]interface{} `json:"context,omitempty"`
	Integrations map[string]interface{} `json:"integrations,omitempty"`
	Traits       map[string]interface{} `json:"properties,omitempty"`
	AnonymousId  string                 `json:"anonymousId,omitempty"`
	UserId       string                 `json:"userId,omitempty"`
	Category     string                 `json:"category,omitempty"`
	Name         string                 `json:"name,omitempty"`
	Message
}

// Screen records a screen view in a mobile app.
type Screen struct {
	Context      map[string]interface{} `json:"context,omitempty"`
	Integrations map[string]interface{} `json:"integrations,omitempty"`
	Properties   map[string]interface{} `json:"properties,omitempty"`
	AnonymousId  string                 `json:"anonymousId,omitempty"`
	UserId       string                 `json:"userId,omitempty"`
	Category     string                 `json:"category,omitempty"`
	Name         string                 `json:"name,omitempty"`
	Message
}

// Group ties a user to a group (an account, a company).
type Group struct {
	Context      map[string]interface{} `json:"context,omitempty"`
	Integrations map[string]interface{} `json:"integrations,omitempty"`
	Traits       map[string]interface{} `json:"traits,omitempty"`
	AnonymousId  string                 `json:"anonymousId,omitempty"`
	UserId       string                 `json:"userId,omitempty"`
	GroupId      string                 `json:"groupId"`
	Message
}

// Alias merges two identities: PreviousId becomes UserId.
type Alias struct {
	Context      map[string]interface{} `json:"context,omitempty"`
	Integrations map[string]interface{} `json:"integrations,omitempty"`
	AnonymousId  string                 `json:"anonymousId,omitempty"`
	PreviousId   string                 `json:"previousId"`
	UserId       string                 `json:"userId"`
	Message
}

// FieldError says which required field of which message is missing.
type FieldError struct {
	Type string // "Track"
	Name string // "Event", or "UserId or AnonymousId"
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("analytics: %s.%s is required", e.Type, e.Name)
}

func needID(typ, userID, anonymousID string) error {
	if userID == "" && anonymousID == "" {
		return &FieldError{Type: typ, Name: "UserId or AnonymousId"}
	}
	return nil
}

func (m *Identify) validate() error { return needID("Identify", m.UserId, m.AnonymousId) }
func (m *Page) validate() error     { return needID("Page", m.UserId, m.AnonymousId) }
func (m *Screen) validate() error   { return needID("Screen", m.UserId, m.AnonymousId) }

func (m *Track) validate() error {
	if m.Event == "" {
		return &FieldError{Type: "Track", Name: "Event"}
	}
	return needID("Track", m.UserId, m.AnonymousId)
}

func (m *Group) validate() error {
	if m.GroupId == "" {
		return &FieldError{Type: "Group", Name: "GroupId"}
	}
	return needID("Group", m.UserId, m.AnonymousId)
}

func (m *Alias) validate() error {
	if m.UserId == "" {
		return &FieldError{Type: "Alias", Name: "UserId"}
	}
	if m.PreviousId == "" {
		return &FieldError{Type: "Alias", Name: "PreviousId"}
	}
	return nil
}

func (m *Identify) message() *Message { return &m.Message }
func (m *Track) message() *Message    { return &m.Message }
func (m *Page) message() *Message     { return &m.Message }
func (m *Screen) message() *Message   { return &m.Message }
func (m *Group) message() *Message    { return &m.Message }
func (m *Alias) message() *Message    { return &m.Message }

func (m *Identify) context() map[string]interface{} { return m.Context }
func (m *Track) context() map[string]interface{}    { return m.Context }
func (m *Page) context() map[string]interface{}     { return m.Context }
func (m *Screen) context() map[string]interface{}   { return m.Context }
func (m *Group) context() map[string]interface{}    { return m.Context }
func (m *Alias) context() map[string]interface{}    { return m.Context }
