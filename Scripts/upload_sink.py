#!/usr/bin/env python3
"""A loopback upload sink for Courier's tests: stores each request body on disk, splits it
into multipart parts if it is multipart, and answers with the size and SHA-256 of the body and
of each part, so tests can check large uploads arrived intact without the server holding them
in memory (httpbin echoes bodies back as base64, which is useless for 200 MB).

Usage: upload_sink.py PORT   (binds 127.0.0.1 only)
"""
import hashlib
import http.server
import json
import mmap
import os
import re
import sys
import tempfile

CHUNK = 1 << 20


def digest(view):
    return {"size": len(view), "sha256": hashlib.sha256(view).hexdigest()}


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.answer({"ok": True})

    def do_POST(self):
        with tempfile.TemporaryFile() as body:
            length = self.headers.get("Content-Length")
            if length is None:
                self.answer({"error": "no Content-Length"}, status=411)
                return
            remaining = int(length)
            while remaining:
                chunk = self.rfile.read(min(CHUNK, remaining))
                if not chunk:
                    break
                body.write(chunk)
                remaining -= len(chunk)
            body.flush()
            size = body.tell()
            result = {"content_length": int(length), "received": size,
                      "content_type": self.headers.get("Content-Type", "")}
            if size:
                with mmap.mmap(body.fileno(), 0, access=mmap.ACCESS_READ) as view:
                    result["body"] = digest(view)
                    result["parts"] = parts(view, result["content_type"])
            self.answer(result)

    do_PUT = do_POST

    def answer(self, payload, status=200):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def parts(view, content_type):
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        return []
    delimiter = b"--" + match.group(1).encode()
    found = []
    position = view.find(delimiter)
    while position != -1:
        start = position + len(delimiter)
        if view[start:start + 2] == b"--":
            break
        header_end = view.find(b"\r\n\r\n", start)
        following = view.find(b"\r\n" + delimiter, header_end)
        if header_end == -1 or following == -1:
            break
        headers = view[start + 2:header_end].decode("utf-8", "replace")
        content = view[header_end + 4:following]
        name = re.search(r'name="([^"]*)"', headers)
        filename = re.search(r'filename="([^"]*)"', headers)
        part = {"name": name.group(1) if name else None,
                "filename": filename.group(1) if filename else None,
                "headers": headers}
        part.update(digest(content))
        found.append(part)
        position = following + 2
    return found


if __name__ == "__main__":
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink)
    server.daemon_threads = True
    server.serve_forever()
