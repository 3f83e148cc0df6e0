// An eventrelay webhook receiver in Go, standard library only (docs/receivers.md). It checks
// every request's signature over the raw body bytes before anything else, answers at once (204
// when it verified, 401 when not) and leaves the work for later.
//
//	WEBHOOK_SECRET   the destination's shared secret (required)
//	WEBHOOK_SCHEME   x-signature (default): X-Signature, or X-Eventrelay-Signature-Next during a
//	                 rotation; standard-webhooks: webhook-id, webhook-timestamp, webhook-signature
//	HOST, PORT       where to listen (default 127.0.0.1:3000; PORT=0 takes a free port)
//
//	WEBHOOK_SECRET=... go run examples/receivers/verify.go
package main

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const maxBody = 1 << 20

// Standard Webhooks: refuse a timestamp further than this from our clock (replayed requests).
const toleranceS = 5 * 60

var base64Part = regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)

// verifyXSignature checks X-Signature: lowercase hex HMAC-SHA1 of the raw body, keyed with the
// secret. During a rotation X-Signature is still signed with the previous secret and
// X-Eventrelay-Signature-Next with the new one, so a receiver that checks both keeps working
// whichever secret it holds.
func verifyXSignature(secret string, rawBody []byte, header http.Header) bool {
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write(rawBody)
	expected := []byte(hex.EncodeToString(mac.Sum(nil)))
	for _, name := range []string{"X-Signature", "X-Eventrelay-Signature-Next"} {
		// hmac.Equal takes the same time wherever the values differ.
		if given := header.Get(name); given != "" && hmac.Equal([]byte(given), expected) {
			return true
		}
	}
	return false
}

// standardKey is the HMAC key of a Standard Webhooks secret, by the rule eventrelay signs with: a
// whsec_ secret's base64 part, decoded; any other secret (or a whsec_ one whose rest is not
// base64) as its UTF-8 bytes.
func standardKey(secret string) []byte {
	if rest := strings.TrimPrefix(secret, "whsec_"); rest != secret && len(rest)%4 == 0 && base64Part.MatchString(rest) {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return key
		}
	}
	return []byte(secret)
}

// verifyStandardWebhooks checks Standard Webhooks v1: HMAC-SHA256 of
// `<webhook-id>.<webhook-timestamp>.<raw body>`, base64; the header holds one or more
// `v1,<signature>` separated by spaces (two during a rotation).
func verifyStandardWebhooks(secret string, rawBody []byte, header http.Header, now time.Time) bool {
	id, timestamp, signatures := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || timestamp == "" || signatures == "" {
		return false
	}
	sent, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || sent < 0 || now.Unix()-sent > toleranceS || sent-now.Unix() > toleranceS {
		return false
	}
	mac := hmac.New(sha256.New, standardKey(secret))
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(rawBody)
	expected := []byte(base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	for _, entry := range strings.Split(signatures, " ") {
		if strings.HasPrefix(entry, "v1,") && hmac.Equal([]byte(entry[3:]), expected) {
			return true
		}
	}
	return false
}

func main() {
	secret, scheme := os.Getenv("WEBHOOK_SECRET"), os.Getenv("WEBHOOK_SCHEME")
	if secret == "" {
		fmt.Fprintln(os.Stderr, "set WEBHOOK_SECRET to the destination's shared secret")
		os.Exit(2)
	}
	if scheme == "" {
		scheme = "x-signature"
	}
	if scheme != "x-signature" && scheme != "standard-webhooks" {
		fmt.Fprintln(os.Stderr, "WEBHOOK_SCHEME must be x-signature or standard-webhooks")
		os.Exit(2)
	}
	host, port := os.Getenv("HOST"), os.Getenv("PORT")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "3000"
	}

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The raw bytes, exactly as received: parsing and re-serializing the JSON would change them.
		rawBody, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(rawBody) > maxBody {
			http.Error(w, "body too large or cut short", http.StatusBadRequest)
			return
		}
		var ok bool
		if scheme == "standard-webhooks" {
			ok = verifyStandardWebhooks(secret, rawBody, r.Header, time.Now())
		} else {
			ok = verifyXSignature(secret, rawBody, r.Header)
		}
		if !ok {
			http.Error(w, "signature does not verify", http.StatusUnauthorized)
			return
		}
		// Answer first, work later: a slow answer is a timeout to eventrelay, and it sends the call
		// again. Dedupe on X-Eventrelay-Message-Id (or webhook-id): delivery is at-least-once.
		w.WriteHeader(http.StatusNoContent)
	})

	listener, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", listener.Addr())
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(server.Serve(listener))
}
