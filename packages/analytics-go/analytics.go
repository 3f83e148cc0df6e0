package analytics

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Version of this library, sent as context.library.version.
const Version = "2.1.0"

// Defaults of New.
const (
	DefaultEndpoint     = "http://localhost:8080"
	DefaultSize         = 20
	DefaultInterval     = 5 * time.Second
	DefaultMaxQueueSize = 10000
)

// Limits of the intake: a single call and a whole batch request, in bytes of JSON (KB = 1024).
// The intake measures a call with the batch's context merged in, and so does the client.
const (
	MaxMessageBytes = 32 * 1024
	MaxBatchBytes   = 500 * 1024
	// MaxBatchItems is the most calls the intake takes in one batch request.
	MaxBatchItems = 2500
)

// Endpoint is the default intake address, under the historical client's name.
const Endpoint = DefaultEndpoint

// DefaultContext is the context every batch carries, under the historical client's name.
var DefaultContext = map[string]interface{}{"library": map[string]interface{}{"name": "analytics-go", "version": Version}}

var (
	// ErrClosed is returned by calls made after Close.
	ErrClosed = errors.New("analytics: the client is closed")
	// ErrQueueFull is returned when MaxQueueSize calls are held in memory already (queued or being
	// sent), typically because the intake is unreachable. The call is not queued.
	ErrQueueFull = errors.New("analytics: the queue is full; the call was not queued")
)

// TooLargeError is returned for a call whose JSON exceeds MaxMessageBytes.
type TooLargeError struct {
	Type  string
	Bytes int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("analytics: %s call is %d bytes of JSON, over the limit of %d", e.Type, e.Bytes, MaxMessageBytes)
}

// Client queues calls and sends them to the intake in batches from a background goroutine. It is
// safe for concurrent use. Set its fields after New and before the first call.
type Client struct {
	// Endpoint is the intake's base URL; batches go to Endpoint + "/v1/batch".
	Endpoint string
	// Size is the number of queued calls that triggers a flush (1 sends every call at once).
	Size int
	// FlushAt is the same setting as Size; when both are set, FlushAt wins.
	FlushAt int
	// FlushAfter is the longest a call waits in the queue before a flush; it wins over Interval.
	FlushAfter time.Duration
	// Interval is the same setting as FlushAfter, under its historical name.
	Interval time.Duration
	// Logger receives error lines always, and debug lines when Verbose is set or the environment
	// has DEBUG=analytics.
	Logger  *log.Logger
	Verbose bool
	// Client sends the requests.
	Client http.Client
	// MaxQueueSize bounds the calls held in memory, queued or being sent; beyond it a call returns
	// ErrQueueFull instead of growing memory without limit. Default 10,000.
	MaxQueueSize int

	key string
	now func() time.Time
	uid func() string
	// backoff is the wait before retry n (n ≥ 1) of a batch; tests shorten it.
	backoff     func(n int) time.Duration
	maxAttempts int
	clientOnce  sync.Once
	noRedirects *http.Client

	startOnce sync.Once
	flushAt   int
	debug     bool

	mu     sync.Mutex
	queue  []json.RawMessage
	held   int
	closed bool
	// drained is closed when the first Close has sent (or given up) everything.
	drained chan struct{}

	flushNow chan struct{}
	quit     chan struct{}
	done     chan struct{}
	uploads  chan struct{}
	sending  sync.WaitGroup
}

// New returns a client for the source with this write key: flush at 20 calls or after 5 s, to
// http://localhost:8080.
func New(writeKey string) *Client {
	return &Client{
		Endpoint:     DefaultEndpoint,
		Size:         DefaultSize,
		Interval:     DefaultInterval,
		Logger:       log.New(os.Stderr, "analytics ", log.LstdFlags),
		Client:       http.Client{Timeout: 30 * time.Second},
		MaxQueueSize: DefaultMaxQueueSize,
		key:          writeKey,
		now:          time.Now,
		uid:          uuid,
		backoff:      defaultBackoff,
		maxAttempts:  10,
	}
}

// Identify queues an identify call. It returns an error at once when neither UserId nor
// AnonymousId is set.
func (c *Client) Identify(msg *Identify) error {
	m := *msg // the caller's struct is left as it is
	return c.enqueue(&m, "identify")
}

// Track queues a track call. Event and UserId or AnonymousId are required.
func (c *Client) Track(msg *Track) error {
	m := *msg // the caller's struct is left as it is
	return c.enqueue(&m, "track")
}

// Page queues a page call. UserId or AnonymousId is required.
func (c *Client) Page(msg *Page) error {
	m := *msg // the caller's struct is left as it is
	return c.enqueue(&m, "page")
}

// Screen queues a screen call. UserId or AnonymousId is required.
func (c *Client) Screen(msg *Screen) error {
	m := *msg // the caller's struct is left as it is
	return c.enqueue(&m, "screen")
}

// Group queues a group call. GroupId and UserId or AnonymousId are required.
func (c *Client) Group(msg *Group) error {
	m := *msg // the caller's struct is left as it is
	return c.enqueue(&m, "group")
}

// Alias queues an alias call. UserId and PreviousId are required.
func (c *Client) Alias(msg *Alias) error {
	m := *msg // the caller's struct is left as it is
	return c.enqueue(&m, "alias")
}

// Close sends what is queued, waits until every batch is sent (or given up), and stops the
// background goroutine. Calling it again does nothing; calls after it return ErrClosed.
func (c *Client) Close() error {
	c.start()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		// A second Close (a deferred one and a signal handler's, say) returns when the first is done.
		<-c.drained
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	close(c.quit)
	<-c.done
	c.sending.Wait()
	close(c.drained)
	return nil
}

// start reads the settings once, at the first call, so fields set after New take effect.
func (c *Client) start() {
	c.startOnce.Do(func() {
		c.Endpoint = strings.TrimRight(c.Endpoint, "/")
		if c.MaxQueueSize <= 0 {
			c.MaxQueueSize = DefaultMaxQueueSize
		}
		// A flush count the queue can never reach would leave only the interval to flush.
		c.flushAt = min(firstPositive(c.FlushAt, c.Size, DefaultSize), c.MaxQueueSize)
		if c.Logger == nil {
			c.Logger = log.New(os.Stderr, "analytics ", log.LstdFlags)
		}
		c.debug = c.Verbose || os.Getenv("DEBUG") == "analytics"
		if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.errorf("Endpoint %q is not an http(s) URL such as http://localhost:8080; nothing can be sent", c.Endpoint)
		}
		c.flushNow = make(chan struct{}, 1)
		c.drained = make(chan struct{})
		c.quit = make(chan struct{})
		c.done = make(chan struct{})
		c.uploads = make(chan struct{}, maxConcurrentUploads)
		interval := DefaultInterval
		if c.FlushAfter > 0 {
			interval = c.FlushAfter
		} else if c.Interval > 0 {
			interval = c.Interval
		}
		go c.loop(interval)
	})
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func firstPositive(values ...int) int {
	for _, v := range values {
		if v > 0 {
			return v
		}
	}
	return 0
}

// call is what every message type provides to enqueue (messages.go).
type call interface {
	validate() error
	message() *Message
	context() map[string]interface{}
}

// enqueue validates and encodes the call now (so the caller may reuse its maps afterwards) and
// queues it.
func (c *Client) enqueue(msg call, typ string) error {
	if err := msg.validate(); err != nil {
		return err
	}
	base, context := msg.message(), msg.context()
	base.Type = typ
	c.start()
	if base.MessageId == "" {
		base.MessageId = c.uid()
	} else if len(base.MessageId) > 100 {
		return &FieldError{Type: strings.ToUpper(base.Type[:1]) + base.Type[1:], Name: "MessageId (at most 100 characters)"}
	}
	if base.Timestamp == "" {
		base.Timestamp = formatTime(c.now())
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("analytics: cannot encode the %s call as JSON: %w", base.Type, err)
	}
	if size := sizeAtIntake(data, context); size > MaxMessageBytes {
		return &TooLargeError{Type: base.Type, Bytes: size}
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.held >= c.MaxQueueSize {
		c.mu.Unlock()
		return ErrQueueFull
	}
	c.queue = append(c.queue, data)
	c.held++
	full := len(c.queue) >= c.flushAt
	c.mu.Unlock()
	if full {
		select {
		case c.flushNow <- struct{}{}:
		default:
		}
	}
	return nil
}

// loop flushes when the queue reaches the flush count, when the interval has passed since the
// last flush, and a last time on Close.
func (c *Client) loop(interval time.Duration) {
	defer close(c.done)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-c.flushNow:
			c.flush()
			ticker.Reset(interval)
		case <-ticker.C:
			c.flush()
		case <-c.quit:
			c.flush()
			return
		}
	}
}

func (c *Client) flush() {
	c.mu.Lock()
	queued := c.queue
	c.queue = nil
	c.mu.Unlock()
	if len(queued) == 0 {
		return
	}
	for _, batch := range splitBatches(queued, min(c.flushAt, MaxBatchItems), MaxBatchBytes-envelopeBytes) {
		c.upload(batch)
	}
}

func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (c *Client) debugf(format string, args ...interface{}) {
	if c.debug {
		c.Logger.Printf("DEBUG: "+format, args...)
	}
}

func (c *Client) errorf(format string, args ...interface{}) {
	c.Logger.Printf("ERROR: "+format, args...)
}
