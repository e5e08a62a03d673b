#!/usr/bin/env python3
"""A loopback HTTP server that misbehaves on purpose, for Courier's hostile-server tests.

Usage: hostile_server.py PORT  (binds 127.0.0.1 only). Each path is one misbehaviour:

  /garbage-status   a status line that is not HTTP
  /huge-header      one 8 MB header field
  /many-headers     100,000 header fields
  /endless          a chunked body that never ends (until the client goes away)
  /gzip-bomb        512 MB of zeros, gzip-compressed to about 500 KB
  /challenge        a well-formed 401 with WWW-Authenticate: Bearer and a JSON body (not hostile)
  /challenge-basic  the same with WWW-Authenticate: Basic, whose body Linux's URLSession loses
  /echo-head        the request head as received, as a text body (not hostile)
  /ok               a normal 200, to check the server is up

Every connection is served on its own thread and closed after one response; a client that
disconnects ends its thread. Stops on SIGTERM or SIGINT.
"""
import gzip
import io
import signal
import socket
import sys
import threading


def make_bomb(size):
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as compressed:
        block = b"\0" * (1 << 20)
        for _ in range(size // len(block)):
            compressed.write(block)
    return buffer.getvalue()


BOMB = make_bomb(512 << 20)


def read_head(connection):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return None
        data += chunk
        if len(data) > 1 << 20:
            return None
    return data.split(b"\r\n\r\n", 1)[0].decode("latin-1")


def send(connection, data):
    connection.sendall(data)


def serve(connection):
    try:
        head = read_head(connection)
        if head is None:
            return
        request_line = head.split("\r\n", 1)[0]
        path = request_line.split(" ")[1] if " " in request_line else "/"
        if path == "/echo-head":
            # The request's head as it came, line by line: what a client really sent.
            body = head.encode("latin-1")
            send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        elif path == "/garbage-status":
            send(connection, b"HELLO THERE, NOT HTTP\r\nContent-Length: 2\r\n\r\nhi")
        elif path == "/huge-header":
            send(connection, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Huge: " + b"a" * (8 << 20) + b"\r\n\r\nhi")
        elif path == "/many-headers":
            lines = b"".join(b"X-Field-%d: %d\r\n" % (number, number) for number in range(100_000))
            send(connection, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + lines + b"\r\nhi")
        elif path == "/endless":
            send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"%x\r\n" % 65536 + b"x" * 65536 + b"\r\n"
            while True:
                send(connection, chunk)
        elif path in ("/challenge", "/challenge-basic"):
            scheme = b"Basic" if path == "/challenge-basic" else b"Bearer"
            body = b'{"error":"token expired"}'
            send(connection, b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: " + scheme + b" realm=\"courier\"\r\n"
                 + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        elif path == "/gzip-bomb":
            send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Encoding: gzip\r\n"
                 + b"Content-Length: %d\r\n\r\n" % len(BOMB) + BOMB)
        else:
            send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
    except (BrokenPipeError, ConnectionResetError, OSError):
        pass
    finally:
        try:
            connection.close()
        except OSError:
            pass


def main():
    port = int(sys.argv[1])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
