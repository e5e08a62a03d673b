#!/usr/bin/env python3
r"""A small JSON API on loopback, as the everyday path meets one: for the DocC article "A JSON API
in practice" and its tests, which run the article's samples against it.

Usage: json_api.py PORT  (binds 127.0.0.1 only; logs to stderr; stops on SIGTERM or SIGINT).
Starlette under uvicorn (pure-Python h11, asyncio), the same pinned packages as sse_server.py.
It keeps no state, but for the durable queue's recording endpoint: every other answer depends
only on the request.

GET /posts[?page=N]            (N from 1 to 3; default 1)
    200, a JSON array of two posts in snake_case with ISO 8601 dates:
        [{"id": 1, "title": "Hello", "author_name": "ada", "published_at": "2026-11-01T09:00:00Z"},
         {"id": 2, "title": "Again", "author_name": "grace", "published_at": "2026-11-02T09:30:00Z"}]
    (ids 2N-1 and 2N for page N), with these fields, in this order:
        Link: </posts?page=N+1>; rel="next"     (not on page 3)
        Link: </posts?page=3>; rel="last"       (a second Link line)
        X-RateLimit-Limit: 60
        X-RateLimit-Remaining: 59
        Cache-Control: max-age=60
        ETag: "posts-N"
GET /posts/{id}
    200, that post (as above; 404 {"error": "no post {id}", "code": 404} above 6).
POST /posts                    (a JSON body {"title": …, "body_text": …})
    201 with the created post, id 101, its title and body_text, published_at
    "2026-11-26T12:00:00Z", and `Location: /posts/101`. A missing or empty title or body_text:
    422 {"error": "title is required", "code": 42} (or "body_text is required"); a body that is
    not a JSON object: 400 {"error": "the body is not a JSON object", "code": 40}.
DELETE /posts/{id}
    204, no body.
GET /languages
    200 {"accept_language": [...]}: every Accept-Language line of the request, in order, apart.
GET /health
    200 "ok".

For the durable queue's tests, a recording endpoint (the one place that keeps state):
POST /durable/{tag}/{name}
    Records [name, the request's Idempotency-Key] under tag, then: a name starting "fail-first"
    answers 503 the first time its key is seen; one starting "hold-first" holds the first request
    with its key for 5 s (the test's client goes away meanwhile) before answering; otherwise, and
    after the first time, 201 {"id": N, "text": name}, N how many requests tag has recorded.
GET /durable/{tag}/log[?count=N]
    200, a JSON array of the [name, key] pairs recorded under tag, in the order they arrived;
    with count, once at least N have arrived (waiting up to 10 s).

`json_api.py PORT [RECORD_FILE]`: with a record file, every recorded request is also appended to
it (a JSON line [tag, name, key], written before the answer) and the file's lines are read back at
start, so that a server stopped and started again (the durable crash test's origin that goes away)
keeps its log.
"""
import asyncio
import json
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

TITLES = ["Hello", "Again", "Third", "Fourth", "Fifth", "Sixth"]
AUTHORS = ["ada", "grace"]


def post(number: int) -> dict:
    return {
        "id": number,
        "title": TITLES[number - 1],
        "author_name": AUTHORS[(number - 1) % 2],
        "published_at": f"2026-11-{number:02d}T09:{30 * ((number - 1) % 2):02d}:00Z",
    }


def error(message: str, code: int, status: int) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status)


async def posts(request: Request) -> Response:
    try:
        page = int(request.query_params.get("page", "1"))
    except ValueError:
        page = 0
    if not 1 <= page <= 3:
        return error(f"no page {request.query_params.get('page')}", 404, 404)
    body = json.dumps([post(2 * page - 1), post(2 * page)]).encode()
    headers = []
    if page < 3:
        headers.append((b"link", f'</posts?page={page + 1}>; rel="next"'.encode()))
    headers += [
        (b"link", b'</posts?page=3>; rel="last"'),
        (b"x-ratelimit-limit", b"60"),
        (b"x-ratelimit-remaining", b"59"),
        (b"cache-control", b"max-age=60"),
        (b"etag", f'"posts-{page}"'.encode()),
    ]
    response = Response(body, media_type="application/json")
    # Raw header lines: Starlette's dict-like headers would fold the two Link lines into one.
    response.raw_headers += headers
    return response


async def one_post(request: Request) -> Response:
    number = request.path_params["id"]
    if request.method == "DELETE":
        return Response(status_code=204)
    if not 1 <= number <= len(TITLES):
        return error(f"no post {number}", 404, 404)
    return JSONResponse(post(number))


async def create(request: Request) -> Response:
    try:
        draft = json.loads(await request.body())
    except ValueError:
        draft = None
    if not isinstance(draft, dict):
        return error("the body is not a JSON object", 40, 400)
    for key in ("title", "body_text"):
        if not isinstance(draft.get(key), str) or not draft[key]:
            return error(f"{key} is required", 42, 422)
    created = {"id": 101, "title": draft["title"], "body_text": draft["body_text"],
               "published_at": "2026-11-26T12:00:00Z"}
    return JSONResponse(created, status_code=201, headers={"Location": "/posts/101"})


async def languages(request: Request) -> Response:
    return JSONResponse({"accept_language": request.headers.getlist("accept-language")})


RECORDED: dict = {}
# The keys seen per tag (for "the first time its key is seen"), and the record file, if any.
SEEN: dict = {}
RECORD_FILE = None


def record(tag: str, name: str, key: str) -> bool:
    """Records [name, key] under tag; returns whether the key was seen there for the first time."""
    seen = SEEN.setdefault(tag, set())
    first = key not in seen
    seen.add(key)
    RECORDED.setdefault(tag, []).append([name, key])
    if RECORD_FILE is not None:
        RECORD_FILE.write(json.dumps([tag, name, key]) + "\n")
        RECORD_FILE.flush()
    return first


async def durable_write(request: Request) -> Response:
    tag, name = request.path_params["tag"], request.path_params["name"]
    key = request.headers.get("idempotency-key", "")
    # Read whatever the answer: an unread body would be parsed as the connection's next request.
    await request.body()
    first = record(tag, name, key)
    log = RECORDED[tag]
    if first and name.startswith("fail-first"):
        return error("try again", 503, 503)
    if first and name.startswith("hold-first"):
        await asyncio.sleep(5)
    return JSONResponse({"id": len(log), "text": name}, status_code=201)


async def durable_log(request: Request) -> Response:
    tag = request.path_params["tag"]
    try:
        count = int(request.query_params.get("count", "0"))
    except ValueError:
        count = 0
    for _ in range(1000):
        if len(RECORDED.get(tag, [])) >= count:
            break
        await asyncio.sleep(0.01)
    return JSONResponse(RECORDED.get(tag, []))


async def health(request: Request) -> Response:
    return PlainTextResponse("ok")


app = Starlette(routes=[
    Route("/posts", posts, methods=["GET"]),
    Route("/posts", create, methods=["POST"]),
    Route("/posts/{id:int}", one_post, methods=["GET", "DELETE"]),
    Route("/languages", languages),
    Route("/health", health),
    Route("/durable/{tag}/log", durable_log, methods=["GET"]),
    Route("/durable/{tag}/{name}", durable_write, methods=["POST"]),
])


def main():
    global RECORD_FILE
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: json_api.py PORT [RECORD_FILE]")
    if len(sys.argv) == 3:
        try:
            with open(sys.argv[2]) as lines:
                for line in lines:
                    # A line cut short by a kill of the last server is not a record.
                    if line.endswith("\n"):
                        tag, name, key = json.loads(line)
                        record(tag, name, key)
        except FileNotFoundError:
            pass
        RECORD_FILE = open(sys.argv[2], "a")
    # No access log: uvicorn writes it to standard output, which is the test run's.
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), http="h11", loop="asyncio",
                lifespan="off", server_header=False, access_log=False, timeout_graceful_shutdown=2)


if __name__ == "__main__":
    main()
