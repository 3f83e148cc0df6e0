"""An eventrelay webhook receiver in Python, standard library only (docs/receivers.md).

It checks every request's signature over the raw body bytes before anything else, answers at
once (204 when it verified, 401 when not) and leaves the work for later.

  WEBHOOK_SECRET   the destination's shared secret (required)
  WEBHOOK_SCHEME   x-signature (default): X-Signature, or X-Eventrelay-Signature-Next during a
                   rotation; standard-webhooks: webhook-id, webhook-timestamp, webhook-signature
  HOST, PORT       where to listen (default 127.0.0.1:3000; PORT=0 takes a free port)

  WEBHOOK_SECRET=... python3 examples/receivers/verify.py
"""

import base64
import hashlib
import hmac
import os
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1024 * 1024
# Standard Webhooks: refuse a timestamp further than this from our clock (replayed requests).
TOLERANCE_S = 5 * 60


def verify_x_signature(secret: str, raw_body: bytes, headers) -> bool:
    """X-Signature: lowercase hex HMAC-SHA1 of the raw body, keyed with the secret.

    During a rotation X-Signature is still signed with the previous secret and
    X-Eventrelay-Signature-Next with the new one, so a receiver that checks both keeps working
    whichever secret it holds.
    """
    expected = hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha1).hexdigest()
    return any(
        same(headers.get(name, ""), expected)
        for name in ("X-Signature", "X-Eventrelay-Signature-Next")
    )


def same(given: str, expected: str) -> bool:
    """Equal strings, compared in a time that does not depend on where they differ."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def standard_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret, by the rule eventrelay signs with.

    A whsec_ secret's base64 part, decoded; any other secret (or a whsec_ one whose rest is not
    base64) as its UTF-8 bytes.
    """
    rest = secret[len("whsec_"):]
    if secret.startswith("whsec_") and len(rest) % 4 == 0 and re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", rest):
        return base64.b64decode(rest)
    return secret.encode("utf-8")


def verify_standard_webhooks(secret: str, raw_body: bytes, headers, now_s=None) -> bool:
    """Standard Webhooks v1: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, base64.

    The header holds one or more `v1,<signature>` separated by spaces (two during a rotation).
    """
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if msg_id is None or timestamp is None or signatures is None:
        return False
    now_s = int(time.time()) if now_s is None else now_s
    if not re.fullmatch(r"\d+", timestamp) or abs(now_s - int(timestamp)) > TOLERANCE_S:
        return False
    signed = f"{msg_id}.{timestamp}.".encode("utf-8") + raw_body
    expected = base64.b64encode(hmac.new(standard_key(secret), signed, hashlib.sha256).digest()).decode("ascii")
    return any(
        entry.startswith("v1,") and same(entry[3:], expected)
        for entry in signatures.split(" ")
    )


SECRET = os.environ.get("WEBHOOK_SECRET", "")
SCHEME = os.environ.get("WEBHOOK_SCHEME", "x-signature")


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        if length > MAX_BODY:
            self.send_response(413)
            self.end_headers()
            return
        # The raw bytes, exactly as received: parsing and re-serializing the JSON would change them.
        raw_body = self.rfile.read(length)
        if SCHEME == "standard-webhooks":
            ok = verify_standard_webhooks(SECRET, raw_body, self.headers)
        else:
            ok = verify_x_signature(SECRET, raw_body, self.headers)
        if not ok:
            self.send_response(401)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"signature does not verify")
            return
        # Answer first, work later: a slow answer is a timeout to eventrelay, and it sends the call
        # again. Dedupe on X-Eventrelay-Message-Id (or webhook-id): delivery is at-least-once.
        self.send_response(204)
        self.end_headers()

    def log_message(self, format, *args):
        pass


def main():
    if not SECRET:
        print("set WEBHOOK_SECRET to the destination's shared secret", file=sys.stderr)
        sys.exit(2)
    if SCHEME not in ("x-signature", "standard-webhooks"):
        print("WEBHOOK_SCHEME must be x-signature or standard-webhooks", file=sys.stderr)
        sys.exit(2)
    server = ThreadingHTTPServer((os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "3000"))), Receiver)
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
