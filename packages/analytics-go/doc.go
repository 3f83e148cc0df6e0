// Package analytics sends identify, track, page, screen, group and alias calls to an eventrelay
// intake (or any Segment-compatible one) in batches, from a background goroutine.
//
// It keeps the public names of the historical analytics-go v2 client, so code written against
// that client compiles against this package after changing the import path:
//
//	client := analytics.New("<WRITE_KEY>")
//	client.Endpoint = "https://events.example.com"
//	defer client.Close()
//	err := client.Track(&analytics.Track{UserId: "u1", Event: "Signed Up"})
//
// Calls are validated at once and queued in memory; nothing is sent from the calling goroutine.
// A flush happens when FlushAt (or Size) calls are queued, default 20, or FlushAfter (or Interval)
// has passed since the last flush, default 5 s. Close flushes what is queued and waits for it.
//
// Deprecated: this is API version 2, kept for programs written against the historical v2 client.
// New code should use a maintained v3-style client (for example github.com/segmentio/analytics-go/v3),
// which speaks the same wire protocol: point its Endpoint at the eventrelay intake.
package analytics
