# The local servers of Courier's integration tests, sourced by Scripts/test.sh and
# Scripts/stress.sh (not run on its own).
#
# `install_test_tools` installs httpbin, gunicorn, cryptography, sse-starlette and uvicorn from
# PyPI into .build/venv (once) and nginx from Debian if it is missing (apt-get, through sudo when
# not root). `start_test_servers` starts on 127.0.0.1 at free ports: httpbin under gunicorn (also
# on 127.0.0.2, a second origin), an upload sink (Scripts/upload_sink.py), nginx with TLS
# certificates of a private CA (Scripts/make_test_certificates.py) that also serves .build/static
# and a cache origin, a forward proxy (Scripts/forward_proxy.py), a misbehaving server
# (Scripts/hostile_server.py), a server-sent-events server (Scripts/sse_server.py) and a small JSON
# API (Scripts/json_api.py, for the article "A JSON API in practice"); waits until
# each answers and exports their URLs in the COURIER_* variables the tests read. The caller stops
# them with `stop_test_servers` (test.sh and stress.sh do so in an EXIT trap, whatever happens).
# Servers' own output goes to .build/servers.log.

venv=.build/venv
server_log=.build/servers.log
server_pids=()

# Runs a command as root: directly when root, else through sudo (the Debian packages need it).
as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

install_test_tools() {
    local python=${PYTHON:-python3}
    # sse-starlette (with the Starlette, anyio and h11 it runs on) and uvicorn, all pure Python,
    # serve Scripts/sse_server.py; uvicorn runs there on h11 and asyncio, without its C extras.
    if ! "$venv/bin/python" -c 'import httpbin, gunicorn, cryptography, sse_starlette, uvicorn' 2>/dev/null; then
        echo "==> Installing httpbin, gunicorn, cryptography, sse-starlette and uvicorn into $venv"
        mkdir -p .build
        "$python" -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check 'httpbin==0.10.4' 'gunicorn==27.0.1' 'cryptography==48.0.0' \
            'sse-starlette==3.7.0' 'uvicorn==0.54.0' 'starlette==1.10.0' 'anyio==4.16.0' 'h11==0.16.0'
    fi
    if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
        echo "==> Installing nginx from Debian (the TLS and cache test server; needs root or sudo)"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
    fi
}

free_port() {
    "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop_test_servers() {
    local pid
    for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    # gunicorn stops its workers on SIGTERM; give everything 10 s, then force it.
    for pid in "${server_pids[@]}"; do
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    server_pids=()
}

# URL PID NAME [CA-FILE [LOG]]: waits until URL answers (trusting CA-FILE), or fails with LOG.
wait_for() {
    local attempt
    for attempt in $(seq 300); do
        if "$venv/bin/python" -c "import ssl, sys, urllib.request
context = ssl.create_default_context(cafile=sys.argv[2]) if sys.argv[2] else None
urllib.request.urlopen(sys.argv[1], timeout=1, context=context)" "$1" "${4:-}" 2>/dev/null; then
            return 0
        fi
        if ! kill -0 "$2" 2>/dev/null || [ "$attempt" = 300 ]; then
            echo "$3 did not start; its log:" >&2
            cat "${5:-$server_log}" >&2 || true
            return 1
        fi
        sleep 0.1
    done
}

start_test_servers() {
    : >"$server_log"
    local port sink_port
    port=$(free_port)
    sink_port=$(free_port)
    # What reached httpbin, one line a request, for the cache tests' server-side counts.
    local httpbin_access=$PWD/.build/httpbin-access.log
    : >"$httpbin_access"

    echo "==> Starting httpbin on 127.0.0.1:$port and 127.0.0.2:$port, and an upload sink on 127.0.0.1:$sink_port"
    # gthread workers keep connections alive and accept chunked bodies (the Werkzeug dev server does
    # neither). The second address is a second origin, for cross-origin redirect tests. httpbin's
    # start-up warnings (no flasgger: no Swagger UI, which no test uses) go to the servers' log.
    "$venv/bin/gunicorn" --bind "127.0.0.1:$port" --bind "127.0.0.2:$port" --worker-class gthread \
        --workers 2 --threads 16 --log-level warning --error-logfile "$server_log" \
        --access-logfile "$httpbin_access" --access-logformat '%(m)s %(U)s?%(q)s %(s)s inm=%({if-none-match}i)s ims=%({if-modified-since}i)s' \
        httpbin:app 2>>"$server_log" &
    server_pids+=($!)
    wait_for "http://127.0.0.1:$port/get" "${server_pids[-1]}" httpbin || return 1
    "$venv/bin/python" Scripts/upload_sink.py "$sink_port" 2>>"$server_log" &
    server_pids+=($!)
    wait_for "http://127.0.0.1:$sink_port/" "${server_pids[-1]}" "the upload sink" || return 1

    # A TLS server: nginx with certificates of a private CA (Scripts/make_test_certificates.py):
    # valid (HTTP/2), expired, and for another host, each on its own port (TLS 1.2: nginx 1.22's
    # default protocols stop there); it answers with its protocol, the connection's serial number
    # (so tests count connections), whether the TLS session was resumed ("r", or "."), the TLS
    # version and the client certificate's subject. A fourth server with the valid certificate
    # speaks HTTP/1.1 only and closes the connection after every response: reconnections.
    # For the TLS settings' tests (TLSSettingsIntegrationTests), three more: mutual TLS (HTTP/2, a
    # client certificate of the private CA required: OpenSSL ends the handshake without one, as
    # `VerifyMode Require` asks, rather than nginx's HTTP 400), answering with the subject of the
    # client certificate it received and logging it (COURIER_TLS_MTLS_LOG); TLS 1.2 only, since
    # under TLS 1.3 the server refuses after the client's handshake is done and the client, already
    # sending, sees either the alert or a reset connection; TLS 1.1 only (OpenSSL 3 serves it only
    # at security level 0); and a self-signed certificate (HTTP/2, TLS 1.2 and 1.3).
    local tls=$PWD/.build/tls
    mkdir -p "$tls/logs" "$tls/temp"
    "$venv/bin/python" Scripts/make_test_certificates.py "$tls"
    local tls_valid tls_expired tls_wrong tls_closing tls_mtls tls_v11 tls_self_signed
    tls_valid=$(free_port); tls_expired=$(free_port); tls_wrong=$(free_port); tls_closing=$(free_port)
    tls_mtls=$(free_port); tls_v11=$(free_port); tls_self_signed=$(free_port)
    # The same nginx serves a folder of static files over plain HTTP, for the download tests: they
    # write files there and download them, with nginx's own ETag, Last-Modified, Range and If-Range.
    # Each response echoes the Range and If-Range it received (X-Received-Range, X-Received-If-Range),
    # and a request with X-Courier-Rate: BYTES is sent at that many bytes per second (to interrupt).
    local static=$PWD/.build/static
    rm -rf "$static"
    mkdir -p "$static"
    local static_port
    static_port=$(free_port)
    # And an origin for the cache tests: static files under .build/cache-origin with nginx's own
    # ETag, Last-Modified and 304s, a folder per caching rule set in its config, and an access log
    # of every request with the validators it carried (COURIER_CACHE_ORIGIN_LOG), which the tests
    # count. nginx writes a line when it finishes a response, before the client has it all.
    local cache_origin=$PWD/.build/cache-origin
    rm -rf "$cache_origin"
    mkdir -p "$cache_origin/files"
    local cache_origin_port
    cache_origin_port=$(free_port)
    tls_server() { # PORT CERTIFICATE [http2] [EXTRA DIRECTIVES]
        local answer='{"protocol":"$server_protocol","connection":$connection,"resumed":"$ssl_session_reused","tls":"$ssl_protocol","subject":"$ssl_client_s_dn"}'
        local closes=""
        [ "${3:-}" = http2 ] || closes="keepalive_timeout 0;"
        cat <<CONF
    server {
        listen 127.0.0.1:$1 ssl ${3:-};
        ssl_certificate $tls/$2.pem;
        ssl_certificate_key $tls/$2.key;
        # One session cache for every server, as production servers have (without it, this
        # nginx resumes no TLS session): so a client that offered one server's session to
        # another would be let in without a certificate, which the tests check never happens.
        ssl_session_cache shared:courier-tls:1m;
        $closes
        ${4:-}
        location / { default_type application/json; return 200 '$answer'; }
    }
CONF
    }
    # Started by root, nginx would serve files as "nobody", who cannot read a clone in a private
    # folder (/root, a 0700 home): its workers then keep the user that started it.
    local nginx_user=""
    [ "$(id -u)" = 0 ] && nginx_user="user $(id -un) $(id -gn);"
    cat >"$tls/nginx.conf" <<CONF
$nginx_user
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
$(tls_server "$tls_valid" valid http2)
$(tls_server "$tls_expired" expired http2)
$(tls_server "$tls_wrong" wrong-host http2)
$(tls_server "$tls_closing" valid)
    log_format courier_mtls escape=none '\$request_uri subject=\$ssl_client_s_dn verify=\$ssl_client_verify';
$(tls_server "$tls_mtls" valid http2 "ssl_protocols TLSv1.2; ssl_client_certificate $tls/ca.pem; ssl_verify_client on;
        ssl_conf_command VerifyMode Peer,Request,Require; access_log $tls/logs/mtls.log courier_mtls;")
$(tls_server "$tls_v11" valid "" "ssl_protocols TLSv1.1; ssl_ciphers DEFAULT:@SECLEVEL=0;")
$(tls_server "$tls_self_signed" self-signed http2 "ssl_protocols TLSv1.2 TLSv1.3;")
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
    local nginx_bin
    nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
    : >"$tls/logs/mtls.log"
    echo "==> Starting nginx with TLS on 127.0.0.1:$tls_valid (valid), $tls_expired (expired), $tls_wrong (wrong host), $tls_closing (valid, HTTP/1.1, closes), $tls_mtls (client certificates), $tls_v11 (TLS 1.1 only), $tls_self_signed (self-signed), and static files on $static_port"
    "$nginx_bin" -c "$tls/nginx.conf" -p "$tls" 2>>"$server_log" &
    server_pids+=($!)
    wait_for "https://127.0.0.1:$tls_valid/" "${server_pids[-1]}" "nginx (TLS)" "$tls/ca.pem" "$tls/logs/error.log" || return 1

    local proxy_port hostile_port sse_port
    proxy_port=$(free_port)
    echo "==> Starting a forward proxy on 127.0.0.1:$proxy_port"
    "$venv/bin/python" Scripts/forward_proxy.py "$proxy_port" 2>>"$server_log" &
    server_pids+=($!)
    wait_for "http://127.0.0.1:$proxy_port/" "${server_pids[-1]}" "the forward proxy" || return 1
    hostile_port=$(free_port)
    echo "==> Starting a hostile server on 127.0.0.1:$hostile_port"
    "$venv/bin/python" Scripts/hostile_server.py "$hostile_port" 2>>"$server_log" &
    server_pids+=($!)
    wait_for "http://127.0.0.1:$hostile_port/ok" "${server_pids[-1]}" "the hostile server" || return 1
    sse_port=$(free_port)
    echo "==> Starting a server-sent-events server on 127.0.0.1:$sse_port (it runs under $venv's Python)"
    "$venv/bin/python" Scripts/sse_server.py "$sse_port" 2>>"$server_log" &
    server_pids+=($!)
    wait_for "http://127.0.0.1:$sse_port/health" "${server_pids[-1]}" "the server-sent-events server" || return 1
    local json_api_port
    json_api_port=$(free_port)
    echo "==> Starting a JSON API (Scripts/json_api.py) on 127.0.0.1:$json_api_port"
    "$venv/bin/python" Scripts/json_api.py "$json_api_port" 2>>"$server_log" &
    server_pids+=($!)
    wait_for "http://127.0.0.1:$json_api_port/health" "${server_pids[-1]}" "the JSON API" || return 1

    export COURIER_HTTPBIN_URL="http://127.0.0.1:$port"
    export COURIER_HTTPBIN_SECOND_ORIGIN="http://127.0.0.2:$port"
    export COURIER_UPLOAD_SINK_URL="http://127.0.0.1:$sink_port"
    export COURIER_HOSTILE_URL="http://127.0.0.1:$hostile_port" COURIER_PROXY_PORT="$proxy_port"
    export COURIER_SSE_URL="http://127.0.0.1:$sse_port" COURIER_JSON_API_URL="http://127.0.0.1:$json_api_port"
    # The durable crash test starts (and stops, and starts again) a JSON API of its own.
    export COURIER_PYTHON="$PWD/$venv/bin/python" COURIER_JSON_API_SCRIPT="$PWD/Scripts/json_api.py"
    export COURIER_TLS_URL="https://127.0.0.1:$tls_valid" COURIER_TLS_EXPIRED_URL="https://127.0.0.1:$tls_expired"
    export COURIER_TLS_WRONG_HOST_URL="https://127.0.0.1:$tls_wrong" COURIER_TLS_CA="$tls/ca.pem"
    export COURIER_TLS_CLOSING_URL="https://127.0.0.1:$tls_closing"
    export COURIER_TLS_MTLS_URL="https://127.0.0.1:$tls_mtls" COURIER_TLS_MTLS_LOG="$tls/logs/mtls.log"
    export COURIER_TLS_V11_URL="https://127.0.0.1:$tls_v11" COURIER_TLS_SELF_SIGNED_URL="https://127.0.0.1:$tls_self_signed"
    # Where the certificates, keys and pins are (Scripts/make_test_certificates.py names them).
    export COURIER_TLS_DIR="$tls"
    export COURIER_STATIC_URL="http://127.0.0.1:$static_port" COURIER_STATIC_DIR="$static"
    export COURIER_CACHE_ORIGIN_URL="http://127.0.0.1:$cache_origin_port" COURIER_CACHE_ORIGIN_DIR="$cache_origin/files"
    export COURIER_CACHE_ORIGIN_LOG="$cache_origin/access.log" COURIER_HTTPBIN_ACCESS_LOG="$httpbin_access"
    export COURIER_GUNICORN="$PWD/$venv/bin/gunicorn"
    # Under the script a missing server fails a test instead of skipping it.
    export COURIER_REQUIRE_HTTPBIN=1
}
