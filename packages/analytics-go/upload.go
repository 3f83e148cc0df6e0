package analytics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strconv"
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
// intake's Retry-After when longer); other answers are final.
func (c *Client) send(batch []json.RawMessage) {
	body := encodeBatch(batch, c.uid(), formatTime(c.now()))
	for attempt := 1; ; attempt++ {
		status, retryAfter, err := c.post(body)
		switch {
		case err == nil && status >= 200 && status < 300:
			c.debugf("sent %d calls (%d bytes), HTTP %d", len(batch), len(body), status)
			return
		case err == nil && status != 429 && status < 500:
			c.errorf("the intake refused a batch of %d calls with HTTP %d; not retried", len(batch), status)
			return
		}
		what := fmt.Sprintf("HTTP %d", status)
		if err != nil {
			what = err.Error()
		}
		if attempt >= c.maxAttempts {
			c.errorf("dropping a batch of %d calls after %d attempts; last error: %s", len(batch), attempt, what)
			return
		}
		wait := c.backoff(attempt)
		if retryAfter > wait {
			wait = retryAfter
		}
		c.debugf("batch of %d calls failed (%s); retry %d in %s", len(batch), what, attempt, wait)
		time.Sleep(wait)
	}
}

func (c *Client) post(body []byte) (status int, retryAfter time.Duration, err error) {
	req, err := http.NewRequest(http.MethodPost, c.Endpoint+"/v1/batch", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.SetBasicAuth(c.key, "")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "analytics-go (version: "+Version+")")
	res, err := c.Client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	// Read (a bounded part of) the answer so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64*1024))
	_ = res.Body.Close()
	return res.StatusCode, parseRetryAfter(res.Header.Get("Retry-After"), c.now()), nil
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

// defaultBackoff: 100 ms doubling per retry up to 10 s, with jitter over its upper half, so many
// clients that failed together do not retry together.
func defaultBackoff(n int) time.Duration {
	ceiling := 100 * time.Millisecond << uint(n-1)
	if n > 7 || ceiling > 10*time.Second {
		ceiling = 10 * time.Second
	}
	return ceiling/2 + time.Duration(rand.Int63n(int64(ceiling/2)+1))
}
