// Command e2esend sends one call of every type with this library and closes the client; the
// end-to-end test (test/e2e/analytics-go.test.ts) runs it against a real ingest and then reads
// what ingest put on the router's queue. Env: ENDPOINT, WRITE_KEY.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	analytics "github.com/eventrelay/eventrelay/packages/analytics-go"
)

func main() {
	c := analytics.New(os.Getenv("WRITE_KEY"))
	c.Endpoint = os.Getenv("ENDPOINT")
	c.Size = 100
	id := func(s string) analytics.Message { return analytics.Message{MessageId: "go-" + s} }
	errs := []error{
		c.Identify(&analytics.Identify{UserId: "go-user", Traits: map[string]interface{}{"plan": "pro", "seats": 3}, Message: id("identify")}),
		c.Track(&analytics.Track{UserId: "go-user", Event: "Order Completed", Properties: map[string]interface{}{"revenue": 19.99}, Integrations: map[string]interface{}{"All": false, "Webhooks": true}, Message: id("track")}),
		c.Page(&analytics.Page{UserId: "go-user", Name: "Pricing", Category: "Marketing", Traits: map[string]interface{}{"url": "https://acme.test/pricing", "title": "Pricing"}, Message: id("page")}),
		c.Screen(&analytics.Screen{AnonymousId: "go-anon", Name: "Checkout", Properties: map[string]interface{}{"step": 2}, Message: id("screen")}),
		c.Group(&analytics.Group{UserId: "go-user", GroupId: "go-org", Traits: map[string]interface{}{"name": "Acme"}, Message: id("group")}),
		c.Alias(&analytics.Alias{UserId: "go-user", PreviousId: "go-anon", Message: id("alias")}),
		c.Track(&analytics.Track{AnonymousId: "go-anon", Event: "Historical", Message: analytics.Message{MessageId: "go-historical", Timestamp: "2026-01-02T03:04:05.678Z"}}),
	}
	// The largest call the client lets through must be one the intake accepts too (both measure
	// with the batch context merged in). A probe client that never sends finds the limit.
	probe := analytics.New("probe")
	probe.Size, probe.FlushAfter = 1<<30, time.Hour
	padded := func(n int) *analytics.Track {
		return &analytics.Track{UserId: "go-user", Event: "Largest", Properties: map[string]interface{}{"pad": strings.Repeat("x", n)}, Message: analytics.Message{MessageId: "go-largest", Timestamp: "2026-01-02T03:04:05.678Z"}}
	}
	fits := func(n int) bool {
		var tooLarge *analytics.TooLargeError
		return !errors.As(probe.Track(padded(n)), &tooLarge)
	}
	lo, hi := 0, analytics.MaxMessageBytes
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	errs = append(errs, c.Track(padded(lo)))
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2esend:", err)
			os.Exit(1)
		}
	}
	if err := c.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "e2esend:", err)
		os.Exit(1)
	}
}
