package analytics

import (
	"encoding/json"
	"strconv"
)

// envelopeBytes is the size of everything in a batch request but its calls and their commas:
// {"batch":[...],"context":{"library":{...}},"messageId":"<36>","sentAt":"<24>"}.
var envelopeBytes = len(encodeBatch(nil, "00000000-0000-4000-8000-000000000000", "2006-01-02T15:04:05.000Z"))

// libraryContext is what the batch envelope's context adds to every call at the intake.
var libraryContext = `"library":{"name":"analytics-go","version":` + strconv.Quote(Version) + `}`

// sizeAtIntake is the size the intake measures a call at: its JSON with the batch's
// context.library merged into its own context (or added as one). A call's own library wins there.
func sizeAtIntake(call []byte, context map[string]interface{}) int {
	if _, own := context["library"]; own {
		return len(call)
	}
	if len(context) > 0 {
		return len(call) + len(libraryContext) + 1 // the comma inside the call's context
	}
	return len(call) + len(`,"context":{}`) + len(libraryContext) // omitempty left an empty map out
}

// Batch is the request body, under the historical client's name; the client writes it directly.
type Batch struct {
	Context  map[string]interface{} `json:"context,omitempty"`
	Messages []interface{}          `json:"batch"`
	Message
}

// splitBatches cuts the queued calls into batches of at most maxCount calls whose JSON, commas
// included, fits in maxBytes. A single call always fits: calls over MaxMessageBytes are refused
// when they are made.
func splitBatches(calls []json.RawMessage, maxCount, maxBytes int) [][]json.RawMessage {
	var batches [][]json.RawMessage
	start, size := 0, 0
	for i, call := range calls {
		extra := len(call)
		if i > start {
			extra++ // the comma
		}
		if i > start && (i-start >= maxCount || size+extra > maxBytes) {
			batches = append(batches, calls[start:i])
			start, size, extra = i, 0, len(call)
		}
		size += extra
	}
	if start < len(calls) {
		batches = append(batches, calls[start:])
	}
	return batches
}

// encodeBatch writes the request body of docs/spec.md §7.
func encodeBatch(calls []json.RawMessage, messageID, sentAt string) []byte {
	size := 160
	for _, c := range calls {
		size += len(c) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, `{"batch":[`...)
	for i, c := range calls {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, c...)
	}
	out = append(out, `],"context":{`...)
	out = append(out, libraryContext...)
	out = append(out, `},"messageId":`...)
	out = strconv.AppendQuote(out, messageID)
	out = append(out, `,"sentAt":`...)
	out = strconv.AppendQuote(out, sentAt)
	return append(out, '}')
}
