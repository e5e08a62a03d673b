#!/usr/bin/env python3
r"""A small JSON API on loopback, as the everyday path meets one: for the DocC article "A JSON API
in practice" and its tests, which run the article's samples against it.

Usage: json_api.py PORT  (binds 127.0.0.1 only; logs to stderr; stops on SIGTERM or SIGINT).
Starlette under uvicorn (pure-Python h11, asyncio), the same pinned packages as sse_server.py.
It keeps no state: every answer depends only on the request.

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
"""
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


async def health(request: Request) -> Response:
    return PlainTextResponse("ok")


app = Starlette(routes=[
    Route("/posts", posts, methods=["GET"]),
    Route("/posts", create, methods=["POST"]),
    Route("/posts/{id:int}", one_post, methods=["GET", "DELETE"]),
    Route("/languages", languages),
    Route("/health", health),
])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: json_api.py PORT")
    # No access log: uvicorn writes it to standard output, which is the test run's.
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), http="h11", loop="asyncio",
                lifespan="off", server_header=False, access_log=False, timeout_graceful_shutdown=2)


if __name__ == "__main__":
    main()
