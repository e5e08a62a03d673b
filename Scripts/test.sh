#!/usr/bin/env bash
# Runs Courier's whole test suite, integration tests included, on a fresh Linux machine.
#
# Installs httpbin, gunicorn, sse-starlette and uvicorn from PyPI into .build/venv (once), starts
# httpbin under gunicorn on 127.0.0.1 and 127.0.0.2 (a second origin) at a free port, an upload
# sink (Scripts/upload_sink.py), a forward proxy (Scripts/forward_proxy.py), a misbehaving server
# (Scripts/hostile_server.py), a server-sent-events server (Scripts/sse_server.py, sse-starlette
# under uvicorn; its URL in COURIER_SSE_URL) and nginx with TLS
# (installed from Debian if missing; certificates from Scripts/make_test_certificates.py), which
# also serves .build/static over plain HTTP for the download tests (COURIER_STATIC_URL and
# COURIER_STATIC_DIR), on others, waits until they answer, and then, with their URLs in the
# environment: on Linux checks Courier's libcurl declarations (Scripts/check-curl.sh), runs
# `swift test` with the network tests through the curl transport and those tests again through
# URLSession, then the same under ThreadSanitizer, then a bounded fuzz run of the parsers
# (Scripts/fuzz.sh), then Scripts/docs.sh (the documentation, warnings as errors); it stops the
# servers whatever happens. Extra arguments go to a single
# `swift test` run instead (for example: Scripts/test.sh --filter Integration); set
# COURIER_TEST_TRANSPORT=curl or urlsession to choose the network transport of that run.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.build/venv
python=${PYTHON:-python3}
# sse-starlette (with the Starlette, anyio and h11 it runs on) and uvicorn, all pure Python, serve
# Scripts/sse_server.py; uvicorn runs there on h11 and asyncio, without its optional C extras.
if ! "$venv/bin/python" -c 'import httpbin, gunicorn, cryptography, sse_starlette, uvicorn' 2>/dev/null; then
    echo "==> Installing httpbin, gunicorn, cryptography, sse-starlette and uvicorn into $venv"
    mkdir -p .build
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'httpbin==0.10.4' 'gunicorn==27.0.1' 'cryptography==48.0.0' \
        'sse-starlette==3.7.0' 'uvicorn==0.54.0' 'starlette==1.10.0' 'anyio==4.16.0' 'h11==0.16.0'
fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    echo "==> Installing nginx from Debian (the TLS test server)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq nginx >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

free_port() {
    "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

port=$(free_port)
sink_port=$(free_port)
log=.build/httpbin.log
# What reached httpbin, one line a request, for the cache tests' server-side counts.
httpbin_access=$PWD/.build/httpbin-access.log
: >"$httpbin_access"
server_pids=()
stop_servers() {
    for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    # gunicorn stops its workers on SIGTERM; give everything 10 s, then force it.
    for pid in "${server_pids[@]}"; do
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
}
trap stop_servers EXIT
trap 'exit 130' INT TERM

wait_for() { # URL PID NAME [CA-FILE [LOG]]: until URL answers (trusting CA-FILE), or fail with LOG
    for attempt in $(seq 300); do
        if "$venv/bin/python" -c "import ssl, sys, urllib.request
context = ssl.create_default_context(cafile=sys.argv[2]) if sys.argv[2] else None
urllib.request.urlopen(sys.argv[1], timeout=1, context=context)" "$1" "${4:-}" 2>/dev/null; then
            return 0
        fi
        if ! kill -0 "$2" 2>/dev/null || [ "$attempt" = 300 ]; then
            echo "$3 did not start; its log:" >&2
            cat "${5:-$log}" >&2 || true
            exit 1
        fi
        sleep 0.1
    done
}

echo "==> Starting httpbin on 127.0.0.1:$port and 127.0.0.2:$port, and an upload sink on 127.0.0.1:$sink_port"
# gthread workers keep connections alive and accept chunked bodies (the Werkzeug dev server does
# neither). The second address is a second origin, for cross-origin redirect tests.
"$venv/bin/gunicorn" --bind "127.0.0.1:$port" --bind "127.0.0.2:$port" --worker-class gthread \
    --workers 2 --threads 16 --log-level warning --error-logfile "$log" \
    --access-logfile "$httpbin_access" --access-logformat '%(m)s %(U)s?%(q)s %(s)s inm=%({if-none-match}i)s ims=%({if-modified-since}i)s' \
    httpbin:app &
server_pids+=($!)
wait_for "http://127.0.0.1:$port/get" "${server_pids[0]}" httpbin
"$venv/bin/python" Scripts/upload_sink.py "$sink_port" 2>>"$log" &
server_pids+=($!)
wait_for "http://127.0.0.1:$sink_port/" "${server_pids[1]}" "the upload sink"
# A TLS server: nginx with certificates of a private CA (Scripts/make_test_certificates.py): valid
# (HTTP/2), expired, and for another host, each on its own port; it answers with its protocol.
tls=$PWD/.build/tls
mkdir -p "$tls/logs" "$tls/temp"
"$venv/bin/python" Scripts/make_test_certificates.py "$tls"
tls_valid=$(free_port); tls_expired=$(free_port); tls_wrong=$(free_port)
# The same nginx serves a folder of static files over plain HTTP, for the download tests: they
# write files there and download them, with nginx's own ETag, Last-Modified, Range and If-Range.
# Each response echoes the Range and If-Range it received (X-Received-Range, X-Received-If-Range),
# and a request with X-Courier-Rate: BYTES is sent at that many bytes per second (to interrupt).
static=$PWD/.build/static
rm -rf "$static"
mkdir -p "$static"
static_port=$(free_port)
# And an origin for the cache tests: static files under .build/cache-origin with nginx's own
# ETag, Last-Modified and 304s, a folder per caching rule set in its config, and an access log
# of every request with the validators it carried (COURIER_CACHE_ORIGIN_LOG), which the tests
# count. nginx writes a line when it finishes a response, before the client has it all.
cache_origin=$PWD/.build/cache-origin
rm -rf "$cache_origin"
mkdir -p "$cache_origin/files"
cache_origin_port=$(free_port)
tls_server() { # PORT CERTIFICATE
    cat <<CONF
    server {
        listen 127.0.0.1:$1 ssl http2;
        ssl_certificate $tls/$2.pem;
        ssl_certificate_key $tls/$2.key;
        location / { default_type application/json; return 200 '{"protocol":"\$server_protocol"}'; }
    }
CONF
}
cat >"$tls/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $tls/nginx.pid;
error_log $tls/logs/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $tls/temp/client_body;
    proxy_temp_path $tls/temp/proxy;
    fastcgi_temp_path $tls/temp/fastcgi;
    uwsgi_temp_path $tls/temp/uwsgi;
    scgi_temp_path $tls/temp/scgi;
$(tls_server "$tls_valid" valid)
$(tls_server "$tls_expired" expired)
$(tls_server "$tls_wrong" wrong-host)
    log_format courier_cache escape=none '\$request_method \$uri \$status inm=\$http_if_none_match ims=\$http_if_modified_since';
    server {
        listen 127.0.0.1:$cache_origin_port;
        root $cache_origin/files;
        access_log $cache_origin/access.log courier_cache;
        # Files as they are: validators and 304s by nginx, freshness only by heuristic.
        location /plain/ { }
        location /expires/ { expires 1h; }
        location /no-store/ { add_header Cache-Control "no-store"; }
        location /no-cache/ { add_header Cache-Control "no-cache"; }
        location /must-revalidate/ { add_header Cache-Control "max-age=60, must-revalidate"; }
        location /swr/ { add_header Cache-Control "max-age=60, stale-while-revalidate=600"; }
        location /sie/ {
            # A request with X-Courier-Fail: 1 gets a 503: the origin failing, for stale-if-error.
            if (\$http_x_courier_fail) { return 503; }
            add_header Cache-Control "max-age=60, stale-if-error=600";
        }
        location /vary/ { add_header Vary "Accept-Language"; add_header Cache-Control "max-age=60"; }
    }
    map \$http_x_courier_rate \$courier_rate { default 0; "~^[0-9]+\$" \$http_x_courier_rate; }
    server {
        listen 127.0.0.1:$static_port;
        root $static;
        location / {
            limit_rate \$courier_rate;
            add_header X-Received-Range \$http_range always;
            add_header X-Received-If-Range \$http_if_range always;
        }
    }
}
CONF
echo "==> Starting nginx with TLS on 127.0.0.1:$tls_valid (valid), $tls_expired (expired), $tls_wrong (wrong host), and static files on $static_port"
"$nginx_bin" -c "$tls/nginx.conf" -p "$tls" 2>>"$log" &
server_pids+=($!)
wait_for "https://127.0.0.1:$tls_valid/" "${server_pids[-1]}" "nginx (TLS)" "$tls/ca.pem" "$tls/logs/error.log"

proxy_port=$(free_port)
echo "==> Starting a forward proxy on 127.0.0.1:$proxy_port"
"$venv/bin/python" Scripts/forward_proxy.py "$proxy_port" 2>>"$log" &
server_pids+=($!)
wait_for "http://127.0.0.1:$proxy_port/" "${server_pids[-1]}" "the forward proxy"
hostile_port=$(free_port)
echo "==> Starting a hostile server on 127.0.0.1:$hostile_port"
"$venv/bin/python" Scripts/hostile_server.py "$hostile_port" 2>>"$log" &
server_pids+=($!)
wait_for "http://127.0.0.1:$hostile_port/ok" "${server_pids[-1]}" "the hostile server"
sse_port=$(free_port)
echo "==> Starting a server-sent-events server on 127.0.0.1:$sse_port"
"$venv/bin/python" Scripts/sse_server.py "$sse_port" 2>>"$log" &
server_pids+=($!)
wait_for "http://127.0.0.1:$sse_port/health" "${server_pids[-1]}" "the server-sent-events server"

echo "==> swift test (httpbin at http://127.0.0.1:$port)"
export COURIER_HTTPBIN_URL="http://127.0.0.1:$port"
export COURIER_HTTPBIN_SECOND_ORIGIN="http://127.0.0.2:$port"
export COURIER_UPLOAD_SINK_URL="http://127.0.0.1:$sink_port"
export COURIER_HOSTILE_URL="http://127.0.0.1:$hostile_port" COURIER_PROXY_PORT="$proxy_port"
export COURIER_SSE_URL="http://127.0.0.1:$sse_port"
export COURIER_TLS_URL="https://127.0.0.1:$tls_valid" COURIER_TLS_EXPIRED_URL="https://127.0.0.1:$tls_expired"
export COURIER_TLS_WRONG_HOST_URL="https://127.0.0.1:$tls_wrong" COURIER_TLS_CA="$tls/ca.pem"
export COURIER_STATIC_URL="http://127.0.0.1:$static_port" COURIER_STATIC_DIR="$static"
export COURIER_CACHE_ORIGIN_URL="http://127.0.0.1:$cache_origin_port" COURIER_CACHE_ORIGIN_DIR="$cache_origin/files"
export COURIER_CACHE_ORIGIN_LOG="$cache_origin/access.log" COURIER_HTTPBIN_ACCESS_LOG="$httpbin_access"
export COURIER_GUNICORN="$PWD/$venv/bin/gunicorn"
export COURIER_REQUIRE_HTTPBIN=1
if [ $# -gt 0 ]; then
    swift test "$@"
    exit
fi
results=.build/test-results.log
: >"$results"
if [ "$(uname)" = Linux ]; then
    # Building needs nothing but the toolchain: the build the tests then use is made with
    # libcurl's headers hidden (they may be installed: the check below installs them). Nothing links
    # -lcurl; Courier opens libcurl.so.4 at run time, so the library itself stays.
    if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
        echo "==> swift build --build-tests, with libcurl's headers hidden"
        unshare -m bash -c 'set -e
            for dir in /usr/include/curl /usr/include/*-linux-gnu/curl; do
                if [ -d "$dir" ]; then mount -t tmpfs none "$dir"; fi
            done
            swift build --build-tests'
    fi
    # Courier's own libcurl declarations against the real headers (installs them if missing).
    echo "==> Scripts/check-curl.sh"
    Scripts/check-curl.sh
    # The whole suite through the curl transport, then everything that touches the network again
    # through URLSession: parity between the two is tested, not assumed.
    echo "==> swift test, network tests through the curl transport"
    COURIER_TEST_TRANSPORT=curl swift test 2>&1 | tee -a "$results"
    echo "==> swift test, network tests through URLSession"
    COURIER_TEST_TRANSPORT=urlsession swift test --skip-build --filter 'Integration|FaultStress' 2>&1 | tee -a "$results"
    # A whole program on the curl transport, start to exit: the tour against httpbin. It must end
    # with status 0 (OpenSSL's exit handler once crashed processes that loaded libcurl).
    echo "==> swift run CourierExample --base-url (the tour through the curl transport)"
    if ! swift run --skip-build CourierExample --base-url "$COURIER_HTTPBIN_URL" --events-url "$COURIER_SSE_URL" >.build/tour.log 2>&1; then
        echo "The tour against httpbin failed; its output:" >&2
        cat .build/tour.log >&2
        exit 1
    fi
else
    swift test 2>&1 | tee -a "$results"
fi
# ThreadSanitizer over everything but the two long network tests (they run above), and on Linux
# the network tests once more through URLSession. A race makes a run exit non-zero even when every
# test passes.
echo "==> swift test --sanitize=thread"
COURIER_TEST_TRANSPORT=curl swift test --sanitize=thread --skip FaultStressTests --skip testLargeMultipartUpload 2>&1 \
    | tee -a "$results"
if [ "$(uname)" = Linux ]; then
    echo "==> swift test --sanitize=thread, network tests through URLSession"
    COURIER_TEST_TRANSPORT=urlsession swift test --sanitize=thread --skip-build --filter Integration \
        --skip testLargeMultipartUpload 2>&1 | tee -a "$results"
fi

# The parsers of what servers send, fuzzed for a bounded time (COURIER_FUZZ_SECONDS per target).
# Like the documentation below, its output stays out of $results and a failure fails the run
# after the test summary.
fuzz_status=0
if [ "$(uname)" = Linux ]; then
    Scripts/fuzz.sh "${COURIER_FUZZ_SECONDS:-60}" || fuzz_status=$?
fi

# The documentation: DocC catalog and documentation comments, any warning an error.
echo "==> Scripts/docs.sh"
docs_status=0
Scripts/docs.sh || docs_status=$?

# One closing line for all the runs (Swift Testing's own summary, printed last, counts only its tests).
awk '/Test Suite .(All tests|Selected tests). (passed|failed)/ { whole = 1; next }
     whole && /Executed [0-9]+ tests?, with/ {
         match($0, /Executed [0-9]+/); total += substr($0, RSTART + 9, RLENGTH - 9)
         if (match($0, /[0-9]+ tests? skipped/)) { split(substr($0, RSTART, RLENGTH), s, " "); skipped += s[1] }
         if (match($0, /[0-9]+ failures?/)) { split(substr($0, RSTART, RLENGTH), f, " "); failed += f[1] }
         whole = 0
     }
     END { printf "Tests: %d passed, %d failed, %d skipped\n", total - failed - skipped, failed, skipped }' "$results"
if [ "$fuzz_status" != 0 ]; then
    echo "Fuzzing: Scripts/fuzz.sh found a crash or a broken invariant (see above)" >&2
    exit "$fuzz_status"
fi
if [ "$docs_status" != 0 ]; then
    echo "Documentation: Scripts/docs.sh failed (its findings are above)" >&2
    exit "$docs_status"
fi
