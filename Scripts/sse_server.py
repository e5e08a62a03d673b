#!/usr/bin/env python3
r"""A loopback server-sent-events server for Courier's streaming and SSE integration tests.

Usage: sse_server.py PORT  (binds 127.0.0.1 only; logs to stderr; stops on SIGTERM or SIGINT).
Built on sse-starlette's EventSourceResponse served by uvicorn (pure-Python h11, asyncio loop),
both pinned in Scripts/test.sh. sse-starlette's keep-alive pings are off (ping=0), so every byte
below is deterministic. Responses are HTTP/1.1, chunked, one chunk per event.

Line ends: CRLF (sse-starlette's default separator), unless `?sep=lf` or `?sep=cr` asks for LF or
CR throughout (the stream endpoints take it; the bytes are otherwise the same).

GET /events/basic[?session=S][&sep=crlf|lf|cr]
    200 text/event-stream (`Content-Type: text/event-stream; charset=utf-8`,
    `Cache-Control: no-store`), this body, then the server ends the response:

        : keep-alive\r\n
        \r\n
        id: 1\r\n
        data: first line\r\n
        data: second line\r\n
        data: third line\r\n
        \r\n
        id: 2\r\n
        event: update\r\n
        data: {"user":"ada","action":"joined"}\r\n
        \r\n
        retry: 2500\r\n
        \r\n
        data: plain message\r\n
        \r\n

    As one string: ": keep-alive\r\n\r\nid: 1\r\ndata: first line\r\ndata: second line\r\n"
    "data: third line\r\n\r\nid: 2\r\nevent: update\r\ndata: {\"user\":\"ada\",\"action\":\"joined\"}"
    "\r\n\r\nretry: 2500\r\n\r\ndata: plain message\r\n\r\n"  (182 bytes). A WHATWG parser
    dispatches exactly three events:
        1. type "message", data "first line\nsecond line\nthird line", lastEventId "1"
        2. type "update",  data "{\"user\":\"ada\",\"action\":\"joined\"}", lastEventId "2"
        3. type "message", data "plain message", lastEventId "2" (the last ID carries over)
    and sets the reconnection time to 2500 ms; the comment block and the retry-only block
    dispatch nothing.

GET /events/reconnect?session=S   (S required: tests run in parallel, the log is per session)
    The answer depends only on the request's Last-Event-ID header:
      none:  200, "retry: 50\r\n\r\n" then "id: 1\r\ndata: event 1\r\n\r\n",
             "id: 2\r\ndata: event 2\r\n\r\n", "id: 3\r\ndata: event 3\r\n\r\n", then the end;
      "3":   200, "id: 4\r\ndata: event 4\r\n\r\n", "id: 5\r\ndata: event 5\r\n\r\n", the end;
      "5":   204 No Content (which, per the WHATWG standard, ends reconnection);
      other (an empty value too): 400, text/plain, saying what was expected.
    No session: 400.

GET /events/log?session=S
    200 application/json: a list, in order, of the connections to /events/reconnect and /events/drop, and to
    /events/basic and /events/endless when they were given session=S, each
    {"last_event_id": <header or null>, "accept": <header or null>, "cache_control": <header or null>};
    for /events/endless also "events_sent" (events handed to the connection so far), "finished"
    (the stream ended, either way) and "disconnected" (the server saw the client go away before
    the last event). Those are updated as the stream runs: poll until "finished". An unknown
    session is [].

GET /events/endless?interval_ms=N&count=M[&session=S][&sep=...]
    200 text/event-stream: "data: 1\r\n\r\n", "data: 2\r\n\r\n", ... one every N ms (default 10),
    M events in all (default 10000, at most 1000000), then the end. For cancel-mid-stream tests.

GET /events/drop?session=S   (S required, logged as for /events/reconnect)
    A connection lost mid-stream, then the end. The answer depends on the Last-Event-ID header:
      none:  200 text/event-stream, chunked, "retry: 10\r\n\r\nid: 1\r\ndata: before the drop\r\n\r\n",
             then the connection is closed without the body's last chunk (the client sees the
             transfer cut short: a lost connection, not an end);
      "1":   204 No Content;
      other: 400, text/plain.
    uvicorn logs "ASGI callable returned without completing response" for the first: expected.

GET /events/status/CODE   (200 <= CODE <= 599)
    That status with Content-Type text/plain and body "status CODE\n" (no body for 204 and 304).
GET /events/wrong-type
    200 with `Content-Type: text/plain` and an SSE-looking body "data: not an event stream\n\n".
GET /health
    200 "ok".
GET or POST /problem/CODE   (400 <= CODE <= 599)
    That status with an API's error body, for typed error bodies:
    application/json {"error_message": "problem CODE", "code": CODE, "method": <the request's method>}.

Held responses, for the shared-transfer tests (requests counted as they arrive, so a test knows
exactly how many reached the server without reading a log):
GET /held/KEY
    Counts the arrival, waits until /release/KEY (at most 60 s, then 504), then
    200 application/json {"key": KEY, "arrivals": <arrivals so far>}.
GET /release/KEY
    Lets every waiting and later /held/KEY answer; 200 {"released": <requests waiting>}.
GET /arrivals/KEY
    200 application/json {"arrivals": <requests that reached /held/KEY>, "waiting": <still held>}.

Content codings and Age, for the content-coding and cache-age tests (each request to these counts
as an arrival of KEY, read with /arrivals/KEY, when it carries ?key=KEY):
GET or POST /coded/NAME[?key=KEY][&age=N]
    200 application/octet-stream with `Cache-Control: max-age=60` (and `Age: N` when asked), whose
    `Content-Encoding` and body depend on NAME:
      unknown:  `x-courier` (a coding no client decodes), body CODED_BODY as is;
      stacked:  `gzip, x-courier`, body CODED_BODY as is (a client cannot decode x-courier, so
                gzip cannot be undone either: the body must arrive exactly as sent);
      gzip:     `gzip`, body the gzip (mtime 0) of b"decoded by libcurl\n" (19 bytes decoded);
      identity: `identity`, body CODED_BODY as is.
    CODED_BODY is b"courier-coded\x00\x01\x80\xfe\xff" (18 bytes: not UTF-8, not gzip).
    Any other NAME: 404.
GET /aged?key=KEY[&age=N][&max_age=M][&revalidated_age=R]
    200 text/plain "aged KEY\n" with `Cache-Control: max-age=M` (default 60), `Age: N` (default 5),
    `ETag: "aged-KEY"` and the server's `Date`. A request whose If-None-Match is that ETag gets a
    304 with the same Cache-Control and ETag, and `Age: R` only when revalidated_age is given.
"""
import gzip
import json
import logging
import sys

import anyio
import uvicorn
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

SEPARATORS = {"crlf": "\r\n", "lf": "\n", "cr": "\r"}

# session -> list of what each connection received (mutated in place while /events/endless runs).
# One event loop serves everything, so no lock is needed.
LOGS: dict[str, list[dict]] = {}
# key -> arrivals, waiting, and the event that releases them.
HELD: dict[str, dict] = {}


def text(body: str, status: int = 200) -> Response:
    return Response(body, status_code=status, headers={"content-type": "text/plain"})


def separator(request: Request):
    value = request.query_params.get("sep", "crlf")
    if value not in SEPARATORS:
        raise ValueError(f"sep must be crlf, lf or cr, not {value!r}\n")
    return SEPARATORS[value]


def record(request: Request, session) -> dict:
    entry = {
        "last_event_id": request.headers.get("last-event-id"),
        "accept": request.headers.get("accept"),
        "cache_control": request.headers.get("cache-control"),
    }
    if session is not None:
        LOGS.setdefault(session, []).append(entry)
    return entry


def stream(events) -> EventSourceResponse:
    # ping=0: no keep-alive comments of sse-starlette's own (they carry a timestamp).
    return EventSourceResponse(events, ping=0)


async def basic(request: Request) -> Response:
    try:
        sep = separator(request)
    except ValueError as error:
        return text(str(error), 400)
    record(request, request.query_params.get("session"))
    events = [
        ServerSentEvent(comment="keep-alive", sep=sep),
        ServerSentEvent("first line\nsecond line\nthird line", id="1", sep=sep),
        ServerSentEvent('{"user":"ada","action":"joined"}', id="2", event="update", sep=sep),
        ServerSentEvent(retry=2500, sep=sep),
        ServerSentEvent("plain message", sep=sep),
    ]

    async def generate():
        for event in events:
            yield event

    return stream(generate())


async def reconnect(request: Request) -> Response:
    session = request.query_params.get("session")
    if not session:
        return text("/events/reconnect needs ?session=S (any string, one per test)\n", 400)
    try:
        sep = separator(request)
    except ValueError as error:
        return text(str(error), 400)
    entry = record(request, session)
    last = entry["last_event_id"]
    if last is None:
        events = [ServerSentEvent(retry=50, sep=sep)] + [
            ServerSentEvent(f"event {i}", id=str(i), sep=sep) for i in (1, 2, 3)
        ]
    elif last == "3":
        events = [ServerSentEvent(f"event {i}", id=str(i), sep=sep) for i in (4, 5)]
    elif last == "5":
        return Response(status_code=204)
    else:
        return text(f"expected no Last-Event-ID (first connection), 3 or 5; got {last!r}\n", 400)

    async def generate():
        for event in events:
            yield event

    return stream(generate())


class CutShort(Response):
    """A 200 event stream that sends `body` and then ends the ASGI call without the body's end:
    uvicorn then closes the connection without the last chunk, as a server that died would."""

    def __init__(self, body: bytes):
        super().__init__(status_code=200)
        self.cut_body = body

    async def __call__(self, scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": self.cut_body, "more_body": True})


async def drop(request: Request) -> Response:
    session = request.query_params.get("session")
    if not session:
        return text("/events/drop needs ?session=S (any string, one per test)\n", 400)
    last = record(request, session)["last_event_id"]
    if last is None:
        return CutShort(b"retry: 10\r\n\r\nid: 1\r\ndata: before the drop\r\n\r\n")
    if last == "1":
        return Response(status_code=204)
    return text(f"expected no Last-Event-ID (first connection) or 1; got {last!r}\n", 400)


async def log(request: Request) -> Response:
    session = request.query_params.get("session")
    if not session:
        return text("/events/log needs ?session=S\n", 400)
    return JSONResponse(LOGS.get(session, []))


async def endless(request: Request) -> Response:
    try:
        sep = separator(request)
    except ValueError as error:
        return text(str(error), 400)
    try:
        interval_ms = int(request.query_params.get("interval_ms", "10"))
        count = int(request.query_params.get("count", "10000"))
    except ValueError:
        interval_ms = count = -1
    if not (0 <= interval_ms <= 60_000 and 0 <= count <= 1_000_000):
        return text("interval_ms must be a whole number from 0 to 60000 and count from 0 to 1000000\n", 400)
    entry = record(request, request.query_params.get("session"))
    entry.update(events_sent=0, finished=False, disconnected=False)

    async def generate():
        try:
            for i in range(1, count + 1):
                if i > 1:
                    await anyio.sleep(interval_ms / 1000)
                yield ServerSentEvent(str(i), sep=sep)
                entry["events_sent"] = i
        finally:
            entry["finished"] = True
            logging.getLogger("sse_server").info(
                "endless: %d of %d events sent, disconnected: %s", entry["events_sent"], count,
                entry["disconnected"])

    async def on_disconnect(message):
        if not entry["finished"]:
            entry["disconnected"] = True

    return EventSourceResponse(generate(), ping=0, client_close_handler_callable=on_disconnect)


async def status(request: Request) -> Response:
    try:
        code = int(request.path_params["code"])
    except ValueError:
        code = 0
    if not 200 <= code <= 599:
        return text("the status must be a number from 200 to 599\n", 400)
    if code in (204, 304):
        return Response(status_code=code)
    return text(f"status {code}\n", code)


async def problem(request: Request) -> Response:
    try:
        code = int(request.path_params["code"])
    except ValueError:
        code = 0
    if not 400 <= code <= 599:
        return text("the status must be a number from 400 to 599\n", 400)
    return JSONResponse({"error_message": f"problem {code}", "code": code, "method": request.method}, status_code=code)


async def wrong_type(request: Request) -> Response:
    return text("data: not an event stream\n\n")


async def health(request: Request) -> Response:
    return text("ok")


def held_entry(key: str) -> dict:
    return HELD.setdefault(key, {"arrivals": 0, "waiting": 0, "released": anyio.Event()})


async def held(request: Request) -> Response:
    key = request.path_params["key"]
    entry = held_entry(key)
    entry["arrivals"] += 1
    entry["waiting"] += 1
    try:
        with anyio.move_on_after(60) as scope:
            await entry["released"].wait()
    finally:
        entry["waiting"] -= 1
    if scope.cancelled_caught:
        return text("never released\n", 504)
    return JSONResponse({"key": key, "arrivals": entry["arrivals"]})


async def release(request: Request) -> Response:
    entry = held_entry(request.path_params["key"])
    waiting = entry["waiting"]
    entry["released"].set()
    return JSONResponse({"released": waiting})


async def arrivals(request: Request) -> Response:
    entry = held_entry(request.path_params["key"])
    return JSONResponse({"arrivals": entry["arrivals"], "waiting": entry["waiting"]})


CODED_BODY = b"courier-coded\x00\x01\x80\xfe\xff"
CODINGS = {
    "unknown": ("x-courier", CODED_BODY),
    "stacked": ("gzip, x-courier", CODED_BODY),
    "gzip": ("gzip", gzip.compress(b"decoded by libcurl\n", mtime=0)),
    "identity": ("identity", CODED_BODY),
}


def count_arrival(request: Request):
    key = request.query_params.get("key")
    if key is not None:
        held_entry(key)["arrivals"] += 1


def age_headers(request: Request, default_age=None) -> dict:
    headers = {"cache-control": f"max-age={int(request.query_params.get('max_age', '60'))}"}
    age = request.query_params.get("age", default_age)
    if age is not None:
        headers["age"] = str(int(age))
    return headers


async def coded(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in CODINGS:
        return text(f"unknown coding route {name!r}: one of {', '.join(CODINGS)}\n", 404)
    count_arrival(request)
    coding, body = CODINGS[name]
    # Explicit bytes and headers: Starlette neither encodes nor compresses a Response's body.
    headers = {"content-type": "application/octet-stream", "content-encoding": coding, **age_headers(request)}
    return Response(body, headers=headers)


async def aged(request: Request) -> Response:
    count_arrival(request)
    key = request.query_params.get("key", "")
    etag = f'"aged-{key}"'
    if request.headers.get("if-none-match") == etag:
        headers = {"etag": etag, **age_headers(request)}
        headers.pop("age", None)
        revalidated_age = request.query_params.get("revalidated_age")
        if revalidated_age is not None:
            headers["age"] = str(int(revalidated_age))
        return Response(status_code=304, headers=headers)
    return Response(f"aged {key}\n", headers={"content-type": "text/plain", "etag": etag, **age_headers(request, "5")})


app = Starlette(routes=[
    Route("/events/basic", basic),
    Route("/events/reconnect", reconnect),
    Route("/events/drop", drop),
    Route("/events/log", log),
    Route("/events/endless", endless),
    Route("/events/status/{code}", status),
    Route("/events/wrong-type", wrong_type),
    Route("/health", health),
    Route("/problem/{code}", problem, methods=["GET", "POST"]),
    Route("/held/{key}", held),
    Route("/release/{key}", release),
    Route("/arrivals/{key}", arrivals),
    Route("/coded/{name}", coded, methods=["GET", "POST"]),
    Route("/aged", aged),
])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: sse_server.py PORT")
    logging_config = json.loads(json.dumps(uvicorn.config.LOGGING_CONFIG))
    logging_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    logging_config["loggers"]["sse_server"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), http="h11", loop="asyncio",
                lifespan="off", log_config=logging_config, server_header=False,
                timeout_graceful_shutdown=2)


if __name__ == "__main__":
    main()
