#!/usr/bin/env python3
"""A minimal HTTP forward proxy for Courier's proxy tests: plain HTTP only, one request per
connection. It forwards absolute-form requests ("GET http://host:port/path HTTP/1.1") to their
origin on 127.0.0.1 only, adding "X-Courier-Proxy: forwarded" (httpbin hides Via), so a test can see that a request
went through it. Usage: forward_proxy.py PORT (binds 127.0.0.1).
"""
import http.client
import signal
import socketserver
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def forward(self):
        if self.path == "/":
            # Asked as a server rather than a proxy: the test script's readiness check.
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        target = urllib.parse.urlsplit(self.path)
        if target.scheme != "http" or target.hostname not in ("127.0.0.1", "localhost"):
            self.send_error(403, "this test proxy forwards only to http://127.0.0.1")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {name: value for name, value in self.headers.items()
                   if name.lower() not in ("proxy-connection", "connection", "keep-alive")}
        headers["X-Courier-Proxy"] = "forwarded"
        connection = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
        path = target.path or "/"
        if target.query:
            path += "?" + target.query
        connection.request(self.command, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        self.send_response(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length", "keep-alive"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        connection.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = forward

    def log_message(self, *arguments):
        pass


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with Server(("127.0.0.1", int(sys.argv[1])), Proxy) as server:
        server.serve_forever()
