package analytics

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	uuidV4  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	isoMil  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	forever = time.Hour
)

// request is one batch request the intake received.
type request struct {
	header http.Header
	path   string
	size   int
	body   struct {
		Batch     []map[string]interface{} `json:"batch"`
		Context   map[string]interface{}   `json:"context"`
		MessageID string                   `json:"messageId"`
		SentAt    string                   `json:"sentAt"`
	}
	at     time.Time
	status int
}

// intake is an httptest server that answers with statuses from a script (200 once it runs out)
// and records every request.
type intake struct {
	*httptest.Server
	mu       sync.Mutex
	requests []request
	script   []int
	headers  map[string]string
	arrived  chan struct{}
}

func newIntake(t *testing.T, script ...int) *intake {
	t.Helper()
	in := &intake{script: script, arrived: make(chan struct{}, 100000)}
	in.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req request
		req.header, req.path, req.size, req.at = r.Header.Clone(), r.URL.Path, len(raw), time.Now()
		if err := json.Unmarshal(raw, &req.body); err != nil {
			t.Errorf("the body is not JSON: %v", err)
		}
		in.mu.Lock()
		req.status = 200
		if len(in.script) > 0 {
			req.status, in.script = in.script[0], in.script[1:]
		}
		in.requests = append(in.requests, req)
		for k, v := range in.headers {
			w.Header().Set(k, v)
		}
		in.mu.Unlock()
		w.WriteHeader(req.status)
		_, _ = w.Write([]byte(`{"success":true}`))
		in.arrived <- struct{}{}
	}))
	t.Cleanup(in.Close)
	return in
}

func (in *intake) got() []request {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]request(nil), in.requests...)
}

// waitFor waits until n requests arrived; fails the test after 5 s.
func (in *intake) waitFor(t *testing.T, n int) []request {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for len(in.got()) < n {
		select {
		case <-in.arrived:
		case <-deadline:
			t.Fatalf("got %d requests, want %d", len(in.got()), n)
		}
	}
	return in.got()
}

// accepted lists the messageIds of calls in requests answered 2xx, in order.
func (in *intake) accepted() []string {
	var ids []string
	for _, r := range in.got() {
		if r.status >= 300 {
			continue
		}
		for _, call := range r.body.Batch {
			ids = append(ids, call["messageId"].(string))
		}
	}
	return ids
}

type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testClient(t *testing.T, endpoint string, configure func(*Client)) (*Client, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	c := New("wk_test_0001")
	c.Endpoint = endpoint
	c.Logger = log.New(logs, "", 0)
	c.backoff = func(int) time.Duration { return time.Millisecond }
	if configure != nil {
		configure(c)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, logs
}

func track(id string) *Track {
	return &Track{UserId: "u1", Event: "Tested", Properties: map[string]interface{}{"n": 1}, Message: Message{MessageId: id}}
}

func TestRequiredFields(t *testing.T) {
	c, _ := testClient(t, "http://127.0.0.1:1", func(c *Client) { c.FlushAfter = forever })
	cases := []struct {
		name string
		call func() error
		want string // the missing field, or "" when valid
	}{
		{"identify without ids", func() error { return c.Identify(&Identify{Traits: map[string]interface{}{"a": 1}}) }, "Identify.UserId or AnonymousId"},
		{"identify with userId", func() error { return c.Identify(&Identify{UserId: "u"}) }, ""},
		{"identify with anonymousId", func() error { return c.Identify(&Identify{AnonymousId: "a"}) }, ""},
		{"track without event", func() error { return c.Track(&Track{UserId: "u"}) }, "Track.Event"},
		{"track without ids", func() error { return c.Track(&Track{Event: "E"}) }, "Track.UserId or AnonymousId"},
		{"track valid", func() error { return c.Track(&Track{AnonymousId: "a", Event: "E"}) }, ""},
		{"page without ids", func() error { return c.Page(&Page{Name: "Home"}) }, "Page.UserId or AnonymousId"},
		{"page valid", func() error { return c.Page(&Page{UserId: "u"}) }, ""},
		{"screen without ids", func() error { return c.Screen(&Screen{Name: "Home"}) }, "Screen.UserId or AnonymousId"},
		{"screen valid", func() error { return c.Screen(&Screen{AnonymousId: "a"}) }, ""},
		{"group without groupId", func() error { return c.Group(&Group{UserId: "u"}) }, "Group.GroupId"},
		{"group without ids", func() error { return c.Group(&Group{GroupId: "g"}) }, "Group.UserId or AnonymousId"},
		{"group valid", func() error { return c.Group(&Group{GroupId: "g", UserId: "u"}) }, ""},
		{"alias without userId", func() error { return c.Alias(&Alias{PreviousId: "p"}) }, "Alias.UserId"},
		{"alias without previousId", func() error { return c.Alias(&Alias{UserId: "u"}) }, "Alias.PreviousId"},
		{"alias valid", func() error { return c.Alias(&Alias{UserId: "u", PreviousId: "p"}) }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a FieldError, got %v", err)
			}
			if got := fe.Type + "." + fe.Name; got != tc.want {
				t.Fatalf("missing field %q, want %q", got, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want+" is required") {
				t.Fatalf("message %q does not name %s", err.Error(), tc.want)
			}
		})
	}
}

func TestWireFormat(t *testing.T) {
	in := newIntake(t)
	c, _ := testClient(t, in.URL+"/", func(c *Client) { c.Size = 7; c.FlushAfter = forever })
	ts := "2020-01-02T03:04:05.678Z"
	calls := []error{
		c.Identify(&Identify{UserId: "u1", Traits: map[string]interface{}{"plan": "pro"}}),
		c.Track(&Track{UserId: "u1", Event: "Bought", Properties: map[string]interface{}{"price": 9.5}, Integrations: map[string]interface{}{"All": false, "Webhooks": true}}),
		c.Page(&Page{UserId: "u1", Name: "Home", Category: "Docs", Traits: map[string]interface{}{"url": "https://x.test/"}, Message: Message{Timestamp: ts}}),
		c.Screen(&Screen{AnonymousId: "a1", Name: "Cart", Properties: map[string]interface{}{"items": 2}}),
		c.Group(&Group{UserId: "u1", GroupId: "g1", Traits: map[string]interface{}{"name": "Acme"}}),
		c.Alias(&Alias{UserId: "u1", PreviousId: "a1"}),
		c.Track(&Track{UserId: "u1", Event: "Own id", Context: map[string]interface{}{"ip": "203.0.113.1"}, Message: Message{MessageId: "my-id-1"}}),
	}
	for i, err := range calls {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	r := in.waitFor(t, 1)[0]
	if r.path != "/v1/batch" {
		t.Errorf("path %q, want /v1/batch", r.path)
	}
	if got, want := r.header.Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte("wk_test_0001:")); got != want {
		t.Errorf("Authorization %q, want %q", got, want)
	}
	if r.header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
	}
	lib, _ := r.body.Context["library"].(map[string]interface{})
	if lib["name"] != "analytics-go" || lib["version"] != Version {
		t.Errorf("context.library %v", lib)
	}
	if !uuidV4.MatchString(r.body.MessageID) || !isoMil.MatchString(r.body.SentAt) {
		t.Errorf("envelope messageId %q sentAt %q", r.body.MessageID, r.body.SentAt)
	}
	if len(r.body.Batch) != 7 {
		t.Fatalf("batch of %d calls, want 7", len(r.body.Batch))
	}
	types := []string{"identify", "track", "page", "screen", "group", "alias", "track"}
	for i, call := range r.body.Batch {
		if call["type"] != types[i] {
			t.Errorf("call %d type %v, want %s", i, call["type"], types[i])
		}
		if !isoMil.MatchString(call["timestamp"].(string)) {
			t.Errorf("call %d timestamp %v", i, call["timestamp"])
		}
		if id := call["messageId"].(string); i < 6 && !uuidV4.MatchString(id) {
			t.Errorf("call %d messageId %q is not a UUID v4", i, id)
		}
	}
	page := r.body.Batch[2]
	if page["timestamp"] != ts || page["properties"].(map[string]interface{})["url"] != "https://x.test/" || page["name"] != "Home" || page["category"] != "Docs" {
		t.Errorf("page call %v: Page.Traits must travel as properties, the timestamp as given", page)
	}
	if _, ok := page["traits"]; ok {
		t.Errorf("page call has a traits key: %v", page)
	}
	if r.body.Batch[1]["integrations"].(map[string]interface{})["Webhooks"] != true || r.body.Batch[1]["event"] != "Bought" {
		t.Errorf("track call %v", r.body.Batch[1])
	}
	if a := r.body.Batch[5]; a["userId"] != "u1" || a["previousId"] != "a1" {
		t.Errorf("alias call %v", a)
	}
	if g := r.body.Batch[4]; g["groupId"] != "g1" {
		t.Errorf("group call %v", g)
	}
	if own := r.body.Batch[6]; own["messageId"] != "my-id-1" || own["context"].(map[string]interface{})["ip"] != "203.0.113.1" {
		t.Errorf("own messageId or context lost: %v", own)
	}
}

func TestFlushAtTheCount(t *testing.T) {
	in := newIntake(t)
	c, _ := testClient(t, in.URL, func(c *Client) { c.Size = 3; c.FlushAfter = forever })
	for i := 0; i < 2; i++ {
		_ = c.Track(track(""))
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(in.got()); n != 0 {
		t.Fatalf("%d requests before the count was reached", n)
	}
	_ = c.Track(track(""))
	if got := in.waitFor(t, 1); len(got[0].body.Batch) != 3 {
		t.Fatalf("batch of %d calls, want 3", len(got[0].body.Batch))
	}
}

func TestSizeOneSendsEveryCallAtOnce(t *testing.T) {
	in := newIntake(t)
	c, _ := testClient(t, in.URL, func(c *Client) { c.Size = 1; c.FlushAfter = forever })
	for i := 0; i < 3; i++ {
		_ = c.Track(track(""))
		in.waitFor(t, i+1)
	}
	for _, r := range in.got() {
		if len(r.body.Batch) != 1 {
			t.Fatalf("batch of %d calls, want 1", len(r.body.Batch))
		}
	}
}

func TestFlushAfterTheInterval(t *testing.T) {
	for _, tc := range []struct {
		name      string
		configure func(*Client)
	}{
		{"FlushAfter", func(c *Client) { c.Size = 100; c.FlushAfter = 100 * time.Millisecond; c.Interval = forever }},
		{"Interval", func(c *Client) { c.Size = 100; c.Interval = 100 * time.Millisecond }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newIntake(t)
			c, _ := testClient(t, in.URL, tc.configure)
			start := time.Now()
			_ = c.Track(track(""))
			_ = c.Track(track(""))
			r := in.waitFor(t, 1)[0]
			if len(r.body.Batch) != 2 {
				t.Fatalf("batch of %d calls, want 2", len(r.body.Batch))
			}
			if waited := r.at.Sub(start); waited < 90*time.Millisecond {
				t.Fatalf("flushed after %s, before the interval", waited)
			}
		})
	}
}

func TestFlushAtWinsOverSize(t *testing.T) {
	in := newIntake(t)
	c, _ := testClient(t, in.URL, func(c *Client) { c.Size = 1; c.FlushAt = 3; c.FlushAfter = forever })
	_ = c.Track(track(""))
	_ = c.Track(track(""))
	time.Sleep(200 * time.Millisecond)
	if n := len(in.got()); n != 0 {
		t.Fatalf("%d requests: Size 1 won over FlushAt 3", n)
	}
	_ = c.Track(track(""))
	if got := in.waitFor(t, 1); len(got[0].body.Batch) != 3 {
		t.Fatalf("batch of %d calls, want 3", len(got[0].body.Batch))
	}
}

func TestCallSizeLimit(t *testing.T) {
	c, _ := testClient(t, "http://127.0.0.1:1", func(c *Client) { c.FlushAfter = forever })
	sized := func(n int) *Track {
		m := &Track{UserId: "u", Event: "E", Properties: map[string]interface{}{"p": ""}, Message: Message{MessageId: "m", Timestamp: "2020-01-01T00:00:00.000Z"}}
		probe := *m
		probe.Type = "track"
		raw, _ := json.Marshal(&probe)
		m.Properties["p"] = strings.Repeat("x", n-sizeAtIntake(raw, nil))
		return m
	}
	if err := c.Track(sized(MaxMessageBytes)); err != nil {
		t.Fatalf("a call of exactly 32 KB was refused: %v", err)
	}
	err := c.Track(sized(MaxMessageBytes + 1))
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Bytes != MaxMessageBytes+1 || tl.Type != "track" {
		t.Fatalf("a call of 32 KB + 1 byte: got %v, want a TooLargeError of %d bytes", err, MaxMessageBytes+1)
	}
}

func TestBatchesStayUnder500KB(t *testing.T) {
	in := newIntake(t)
	c, _ := testClient(t, in.URL, func(c *Client) { c.FlushAt = 1000; c.FlushAfter = forever })
	want := map[string]bool{}
	for i := 0; i < 1000; i++ {
		m := track("")
		m.Properties = map[string]interface{}{"pad": strings.Repeat("y", 2000)}
		m.MessageId = uuid()
		want[m.MessageId] = true
		if err := c.Track(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range in.got() {
		if r.size > MaxBatchBytes {
			t.Errorf("a request of %d bytes, over %d", r.size, MaxBatchBytes)
		}
		for _, call := range r.body.Batch {
			seen[call["messageId"].(string)]++
		}
	}
	if len(in.got()) < 4 {
		t.Errorf("%d requests for ~2 MB of calls; they were not split", len(in.got()))
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("call %s arrived %d times", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d distinct calls arrived, want %d", len(seen), len(want))
	}
}

func TestRetries(t *testing.T) {
	cases := []struct {
		name     string
		script   []int
		requests int
		accepted int
		logged   string
	}{
		{"500 then 200: the batch arrives once", []int{500, 200}, 2, 1, ""},
		{"503 and 502 then 200", []int{503, 502, 200}, 3, 1, ""},
		{"429 then 200", []int{429, 200}, 2, 1, ""},
		{"400: not retried, logged", []int{400}, 1, 0, "HTTP 400; not retried"},
		{"401: not retried, logged", []int{401}, 1, 0, "HTTP 401; not retried"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := newIntake(t, tc.script...)
			c, logs := testClient(t, in.URL, func(c *Client) { c.Size = 1; c.FlushAfter = forever })
			_ = c.Track(track("m-1"))
			in.waitFor(t, tc.requests)
			_ = c.Close()
			if got := len(in.got()); got != tc.requests {
				t.Fatalf("%d requests, want %d", got, tc.requests)
			}
			if got := len(in.accepted()); got != tc.accepted {
				t.Fatalf("accepted %d times, want %d", got, tc.accepted)
			}
			if !strings.Contains(logs.String(), tc.logged) {
				t.Fatalf("log %q does not say %q", logs.String(), tc.logged)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	in := newIntake(t, 429, 200)
	in.headers = map[string]string{"Retry-After": "1"}
	c, _ := testClient(t, in.URL, func(c *Client) { c.Size = 1; c.FlushAfter = forever })
	_ = c.Track(track(""))
	got := in.waitFor(t, 2)
	if gap := got[1].at.Sub(got[0].at); gap < 950*time.Millisecond {
		t.Fatalf("retried after %s, before Retry-After: 1", gap)
	}
}

func TestNetworkErrorsAreRetried(t *testing.T) {
	in := newIntake(t)
	url := in.URL
	in.Close() // nothing listens: connection refused
	c, logs := testClient(t, url, func(c *Client) { c.Size = 1; c.FlushAfter = forever; c.maxAttempts = 3 })
	_ = c.Track(track(""))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "dropping") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "after 3 attempts") || !strings.Contains(logs.String(), "connection refused") {
		t.Fatalf("log %q: want the batch given up after 3 attempts", logs.String())
	}
}

func TestCloseCutsRetriesShort(t *testing.T) {
	in := newIntake(t, 500, 500, 500, 500)
	c, logs := testClient(t, in.URL, func(c *Client) {
		c.Size = 1
		c.FlushAfter = forever
		c.backoff = func(int) time.Duration { return time.Hour }
	})
	_ = c.Track(track(""))
	in.waitFor(t, 1)
	start := time.Now()
	_ = c.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Close took %s waiting out a retry", took)
	}
	if got := len(in.got()); got != 2 {
		t.Fatalf("%d requests, want 2 (the first and one last attempt on Close)", got)
	}
	if !strings.Contains(logs.String(), "dropping a batch of 1 calls after 2 attempts") {
		t.Fatalf("log %q", logs.String())
	}
}

func TestSecondCloseWaitsForTheFirst(t *testing.T) {
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(1)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
		w.WriteHeader(200)
	}))
	defer server.Close()
	c, _ := testClient(t, server.URL, func(c *Client) { c.Size = 1; c.FlushAfter = forever })
	_ = c.Track(track(""))
	arrived.Wait()
	first := make(chan struct{})
	go func() { _ = c.Close(); close(first) }()
	second := make(chan struct{})
	go func() { time.Sleep(50 * time.Millisecond); _ = c.Close(); close(second) }()
	select {
	case <-second:
		t.Fatal("the second Close returned while the first was still sending")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	<-first
	<-second
}

func TestRetriesCarryAFreshSentAt(t *testing.T) {
	in := newIntake(t, 500, 200)
	c, _ := testClient(t, in.URL, func(c *Client) {
		c.Size = 1
		c.FlushAfter = forever
		c.backoff = func(int) time.Duration { return 20 * time.Millisecond }
	})
	_ = c.Track(track(""))
	got := in.waitFor(t, 2)
	if got[0].body.MessageID != got[1].body.MessageID {
		t.Errorf("the retry has another envelope messageId: %q, %q", got[0].body.MessageID, got[1].body.MessageID)
	}
	if got[0].body.SentAt == got[1].body.SentAt {
		t.Errorf("the retry reused sentAt %q", got[0].body.SentAt)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	target := newIntake(t)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/v1/batch", http.StatusFound))
	defer redirect.Close()
	c, logs := testClient(t, redirect.URL, func(c *Client) { c.Size = 1; c.FlushAfter = forever })
	_ = c.Track(track(""))
	_ = c.Close()
	if n := len(target.got()); n != 0 {
		t.Fatalf("the redirect was followed (%d requests at its target)", n)
	}
	if !strings.Contains(logs.String(), "HTTP 302 (a redirect to") {
		t.Fatalf("log %q", logs.String())
	}
}

func TestBadEndpointIsNotRetried(t *testing.T) {
	c, logs := testClient(t, "localhost:8080", func(c *Client) {
		c.Size = 1
		c.FlushAfter = forever
		c.backoff = func(int) time.Duration { return time.Hour }
	})
	_ = c.Track(track(""))
	start := time.Now()
	_ = c.Close()
	if !strings.Contains(logs.String(), `Endpoint "localhost:8080" is not an http(s) URL`) || !strings.Contains(logs.String(), "not retried") {
		t.Fatalf("log %q", logs.String())
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("a request that cannot be made was retried")
	}
}

func TestRejectedCallsAreLogged(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"success":true,"rejected":[{"index":0,"code":"invalid_event","message":"track requires event"}]}`))
	}))
	defer server.Close()
	c, logs := testClient(t, server.URL, func(c *Client) { c.Size = 1; c.FlushAfter = forever })
	_ = c.Track(track(""))
	_ = c.Close()
	if !strings.Contains(logs.String(), "dropped call 0: track requires event") {
		t.Fatalf("log %q", logs.String())
	}
}

func TestLimitsOnBatchesAndTheQueue(t *testing.T) {
	t.Run("at most 2500 calls per request", func(t *testing.T) {
		in := newIntake(t)
		c, _ := testClient(t, in.URL, func(c *Client) { c.FlushAt = 3000; c.FlushAfter = forever })
		for i := 0; i < 3000; i++ {
			_ = c.Track(track(""))
		}
		_ = c.Close()
		for _, r := range in.got() {
			if len(r.body.Batch) > MaxBatchItems {
				t.Fatalf("a batch of %d calls", len(r.body.Batch))
			}
		}
		if len(in.accepted()) != 3000 {
			t.Fatalf("%d calls arrived, want 3000", len(in.accepted()))
		}
	})
	t.Run("a flush count above MaxQueueSize still flushes by count", func(t *testing.T) {
		in := newIntake(t)
		c, _ := testClient(t, in.URL, func(c *Client) { c.Size = 20; c.MaxQueueSize = 5; c.FlushAfter = forever })
		for i := 0; i < 5; i++ {
			if err := c.Track(track("")); err != nil {
				t.Fatal(err)
			}
		}
		if got := in.waitFor(t, 1); len(got[0].body.Batch) != 5 {
			t.Fatalf("batch of %d", len(got[0].body.Batch))
		}
	})
	t.Run("a messageId over 100 characters is refused", func(t *testing.T) {
		c, _ := testClient(t, "http://127.0.0.1:1", func(c *Client) { c.FlushAfter = forever })
		var fe *FieldError
		if err := c.Track(track(strings.Repeat("m", 101))); !errors.As(err, &fe) || fe.Type != "Track" {
			t.Fatalf("got %v", err)
		}
		if err := c.Track(track(strings.Repeat("m", 100))); err != nil {
			t.Fatalf("100 characters refused: %v", err)
		}
	})
}

func TestCloseFlushesAndIsFinal(t *testing.T) {
	in := newIntake(t)
	c, _ := testClient(t, in.URL, func(c *Client) { c.Size = 100; c.FlushAfter = forever })
	for i := 0; i < 5; i++ {
		_ = c.Track(track(""))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(in.accepted()); got != 5 {
		t.Fatalf("%d calls arrived by the time Close returned, want 5", got)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := c.Track(track("")); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call after Close returned %v, want ErrClosed", err)
	}
}

func TestCloseWithoutCalls(t *testing.T) {
	c := New("wk")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentUseLosesNothing(t *testing.T) {
	in := newIntake(t)
	c, _ := testClient(t, in.URL, func(c *Client) { c.Size = 50; c.FlushAfter = 20 * time.Millisecond })
	var wg sync.WaitGroup
	for g := 0; g < 100; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := c.Track(track("")); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	_ = c.Close()
	ids := in.accepted()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("call %s arrived twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 5000 {
		t.Fatalf("%d calls arrived, want 5000", len(seen))
	}
}

func TestQueueIsBounded(t *testing.T) {
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.WriteHeader(200)
	}))
	defer server.Close()
	c, _ := testClient(t, server.URL, func(c *Client) { c.Size = 1; c.FlushAfter = forever; c.MaxQueueSize = 10 })
	var full int
	for i := 0; i < 30; i++ {
		if err := c.Track(track("")); errors.Is(err, ErrQueueFull) {
			full++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	if full != 20 {
		t.Fatalf("%d calls refused with ErrQueueFull, want 20 (10 held)", full)
	}
}

func TestDebugLogging(t *testing.T) {
	run := func(t *testing.T) string {
		in := newIntake(t)
		c, logs := testClient(t, in.URL, func(c *Client) { c.Size = 1; c.FlushAfter = forever })
		_ = c.Track(track(""))
		_ = c.Close()
		return logs.String()
	}
	t.Run("DEBUG=analytics logs", func(t *testing.T) {
		t.Setenv("DEBUG", "analytics")
		if out := run(t); !strings.Contains(out, "DEBUG: sent 1 calls") {
			t.Fatalf("no debug lines: %q", out)
		}
	})
	t.Run("without DEBUG nothing is logged", func(t *testing.T) {
		t.Setenv("DEBUG", "")
		if out := run(t); out != "" {
			t.Fatalf("logged %q", out)
		}
	})
	t.Run("Verbose logs", func(t *testing.T) {
		t.Setenv("DEBUG", "")
		in := newIntake(t)
		c, logs := testClient(t, in.URL, func(c *Client) { c.Size = 1; c.Verbose = true })
		_ = c.Track(track(""))
		_ = c.Close()
		if !strings.Contains(logs.String(), "DEBUG: sent 1 calls") {
			t.Fatalf("no debug lines: %q", logs.String())
		}
	})
}
