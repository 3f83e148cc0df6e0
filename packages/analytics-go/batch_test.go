package analytics

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestEnvelopeSizeIsExact(t *testing.T) {
	calls := []json.RawMessage{json.RawMessage(`{"a":1}`), json.RawMessage(`{"b":2}`)}
	body := encodeBatch(calls, uuid(), formatTime(time.Now()))
	if want := envelopeBytes + len(`{"a":1},{"b":2}`); len(body) != want {
		t.Fatalf("body of %d bytes, envelope arithmetic says %d", len(body), want)
	}
	var parsed map[string]interface{}
	if err := json.Unmarshal(body, &parsed); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
}

func TestSplitBatches(t *testing.T) {
	call := func(n int) json.RawMessage { return json.RawMessage(`"` + strings.Repeat("x", n-2) + `"`) }
	cases := []struct {
		name     string
		sizes    []int
		maxCount int
		maxBytes int
		want     []int // calls per batch
	}{
		{"by count", []int{10, 10, 10, 10, 10}, 2, 1000, []int{2, 2, 1}},
		{"by bytes, commas counted", []int{10, 10, 10}, 100, 21, []int{2, 1}},
		{"exactly full", []int{10, 10}, 100, 21, []int{2}},
		{"one call per batch", []int{30, 30}, 100, 30, []int{1, 1}},
		{"nothing", nil, 10, 100, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls []json.RawMessage
			for _, n := range tc.sizes {
				calls = append(calls, call(n))
			}
			var got []int
			for _, b := range splitBatches(calls, tc.maxCount, tc.maxBytes) {
				got = append(got, len(b))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("batches %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("batches %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"2":                             2 * time.Second,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		"Sat, 21 Nov 2026 09:00:30 GMT": 30 * time.Second,
		"Sat, 21 Nov 2026 08:00:00 GMT": 0,
		"86400":                         maxRetryAfter,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("Retry-After %q: %s, want %s", in, got, want)
		}
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	for n := 1; n <= 20; n++ {
		d := defaultBackoff(n)
		ceiling := 100 * time.Millisecond << uint(n-1)
		if n > 7 || ceiling > 10*time.Second {
			ceiling = 10 * time.Second
		}
		if d < ceiling/2 || d > ceiling {
			t.Fatalf("retry %d waits %s, want within [%s, %s]", n, d, ceiling/2, ceiling)
		}
	}
}

func TestUUIDs(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := uuid()
		if !uuidV4.MatchString(id) {
			t.Fatalf("%q is not a UUID v4", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
}
