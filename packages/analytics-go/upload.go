package analytics

import (
	"bytes"
	cryptorand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// maxConcurrentUploads bounds the batch requests in flight at once.
const maxConcurrentUploads = 8

// maxRetryAfter bounds how long a Retry-After from the intake can hold a batch back.
const maxRetryAfter = 5 * time.Minute

// upload sends one batch from its own goroutine (at most maxConcurrentUploads at once; the
// flusher waits for a free slot, which is the backpressure that fills the queue).
func (c *Client) upload(batch []json.RawMessage) {
	c.uploads <- struct{}{}
	c.sending.Add(1)
	go func() {
		defer func() {
			<-c.uploads
			c.mu.Lock()
			c.held -= len(batch)
			c.mu.Unlock()
			c.sending.Done()
		}()
		c.send(batch)
	}()
}

// send posts the batch, retrying network errors, 5xx and 429 with exponential backoff (and the
// intake's Retry-After when longer); other answers are final. Once Close has begun, a waiting
// retry is not waited out: the batch gets one more attempt and is then given up, so Close ends.
func (c *Client) send(batch []json.RawMessage) {
	// The same envelope messageId on every attempt; sentAt is the time of each attempt, because the
	// intake corrects each call's timestamp by sentAt's distance from its own clock.
	batchID := c.uid()
	closing := false
	for attempt := 1; ; attempt++ {
		body := encodeBatch(batch, batchID, formatTime(c.now()))
		res, err := c.post(body)
		switch {
		case err == nil && res.status >= 200 && res.status < 300:
			c.debugf("sent %d calls (%d bytes), HTTP %d", len(batch), len(body), res.status)
			for _, r := range res.rejected {
				c.errorf("the intake accepted the batch but dropped call %d: %s", r.Index, r.Message)
			}
			return
		case err == nil && res.status >= 300 && res.status < 400:
			c.errorf("the intake answered a batch of %d calls with HTTP %d (a redirect to %q); set Endpoint to the intake's own address; not retried", len(batch), res.status, res.location)
			return
		case err == nil && res.status != 429 && res.status < 500:
			c.errorf("the intake refused a batch of %d calls with HTTP %d; not retried", len(batch), res.status)
			return
		case err != nil && !retryableError(err):
			c.errorf("cannot send a batch of %d calls: %v; not retried", len(batch), err)
			return
		}
		what := fmt.Sprintf("HTTP %d", res.status)
		if err != nil {
			what = err.Error()
		}
		if attempt >= c.maxAttempts || closing {
			c.errorf("dropping a batch of %d calls after %d attempts; last error: %s", len(batch), attempt, what)
			return
		}
		wait := c.backoff(attempt)
		if res.retryAfter > wait {
			wait = res.retryAfter
		}
		c.debugf("batch of %d calls failed (%s); retry %d in %s", len(batch), what, attempt, wait)
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-c.quit:
			timer.Stop()
			closing = true
		}
	}
}

// retryableError: network trouble is worth retrying; a request that cannot be made (a malformed
// Endpoint, an unsupported scheme) is not.
func retryableError(err error) bool {
	// *url.Error itself satisfies net.Error, so look at what it wraps.
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

type answer struct {
	status     int
	retryAfter time.Duration
	location   string
	rejected   []rejection
}

// rejection is one call the intake dropped from a batch it otherwise accepted.
type rejection struct {
	Index   int    `json:"index"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (c *Client) post(body []byte) (answer, error) {
	req, err := http.NewRequest(http.MethodPost, c.Endpoint+"/v1/batch", bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.SetBasicAuth(c.key, "")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "analytics-go (version: "+Version+")")
	res, err := c.httpClient().Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	// Read (a bounded part of) the answer: it lists dropped calls, and reading lets the
	// connection be reused.
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	out := answer{status: res.StatusCode, retryAfter: parseRetryAfter(res.Header.Get("Retry-After"), c.now()), location: res.Header.Get("Location")}
	if res.StatusCode < 300 {
		var parsed struct {
			Rejected []rejection `json:"rejected"`
		}
		if json.Unmarshal(raw, &parsed) == nil {
			out.rejected = parsed.Rejected
		}
	}
	return out, nil
}

// httpClient is Client with redirects turned off: a redirected POST would be replayed as a GET
// without its body, losing the batch.
func (c *Client) httpClient() *http.Client {
	c.clientOnce.Do(func() {
		copied := c.Client
		copied.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		c.noRedirects = &copied
	})
	return c.noRedirects
}

// parseRetryAfter reads seconds or an HTTP-date; 0 when absent or unreadable.
func parseRetryAfter(value string, now time.Time) time.Duration {
	if value == "" {
		return 0
	}
	var wait time.Duration
	if seconds, err := strconv.Atoi(value); err == nil && seconds >= 0 {
		wait = time.Duration(seconds) * time.Second
	} else if at, err := http.ParseTime(value); err == nil {
		wait = at.Sub(now)
	}
	if wait < 0 {
		return 0
	}
	if wait > maxRetryAfter {
		return maxRetryAfter
	}
	return wait
}

// jitter is seeded from crypto/rand: Go 1.19's global math/rand starts from the same seed in
// every process, which would make a fleet of clients retry in lockstep.
var jitter = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(cryptoSeed()))}

func cryptoSeed() int64 {
	var b [8]byte
	if _, err := cryptorand.Read(b[:]); err != nil {
		return time.Now().UnixNano()
	}
	return int64(binary.LittleEndian.Uint64(b[:]))
}

// defaultBackoff: 100 ms doubling per retry up to 10 s, with jitter over its upper half, so many
// clients that failed together do not retry together.
func defaultBackoff(n int) time.Duration {
	ceiling := 100 * time.Millisecond << uint(n-1)
	if n > 7 || ceiling > 10*time.Second {
		ceiling = 10 * time.Second
	}
	jitter.Lock()
	defer jitter.Unlock()
	return ceiling/2 + time.Duration(jitter.Int63n(int64(ceiling/2)+1))
}
