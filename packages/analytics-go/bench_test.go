package analytics

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkTrack measures what a Track call costs the calling goroutine (validate, encode,
// queue), with the background flusher sending to a local intake that answers 200.
func BenchmarkTrack(b *testing.B) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(200)
	}))
	defer server.Close()
	c := New("wk_bench")
	c.Endpoint = server.URL
	c.Logger = log.New(io.Discard, "", 0)
	c.MaxQueueSize = 1 << 30
	props := map[string]interface{}{"plan": "pro", "price": 9.99, "currency": "EUR"}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := c.Track(&Track{UserId: "user-1", Event: "Order Completed", Properties: props}); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	_ = c.Close()
}
