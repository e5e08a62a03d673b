#!/usr/bin/env bash
# Runs Courier's benchmark suite against a private nginx on 127.0.0.1.
#
# Installs nginx from Debian if it is missing, starts an instance of its own under .build/bench/
# (own config, prefix and pid file, one worker, keep-alive, no access log, no gzip) at a free port,
# serving a ~200-byte JSON file, a 1 MiB file, a 256 MiB and a 1 GiB file (sparse, made once) and
# an upload sink, waits until it answers, builds and runs
# the release benchmark (`CourierBench`) with its base URL, and stops nginx whatever happens.
# The benchmark compares raw URLSession, Courier through its curl transport (the default on
# Linux) and through URLSession, and curl's command line (/usr/bin/curl, which this script uses
# too) against that nginx; it writes BENCHMARKS.md and Benchmarks/throughput.svg.
#
# Extra arguments go to the benchmark (for example: Scripts/bench.sh --quick,
# Scripts/bench.sh --only throughput-16, Scripts/bench.sh --list). The full run takes about
# 11 minutes on 2 cores when nothing else runs (about 21 on a busy shared host); the streaming
# figures' files need 1.3 GB of disk under .build/bench/, and the download figure writes (and
# deletes) a 1 GiB file there in every round.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    echo "==> Installing nginx from Debian"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y nginx
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

prefix="$root/.build/bench/nginx"
www="$prefix/www"
mkdir -p "$prefix/logs" "$prefix/temp" "$www"

# ~200 bytes of JSON (decoded by the benchmark's `Item`) and 1 MiB of bytes.
cat >"$www/small.json" <<'JSON'
{"id":42,"name":"Courier benchmark item","price":19.99,"inStock":true,"tags":["fast","small","json"],"owner":{"id":7,"login":"ada"},"createdAt":"2025-01-01T00:00:00Z","score":0.875}
JSON
if [ ! -s "$www/large.bin" ] || [ "$(stat -c %s "$www/large.bin")" != 1048576 ]; then
    head -c 1048576 /dev/urandom >"$www/large.bin"
fi
# The streaming figures' bodies: sparse files (zeros; holes read from no disk), which nginx sends
# as they are (gzip is off, and octet-stream would not be compressed anyway; checked below).
for pair in stream-256MiB.bin:268435456 download-1GiB.bin:1073741824; do
    name=${pair%%:*} size=${pair##*:}
    if [ ! -f "$www/$name" ] || [ "$(stat -c %s "$www/$name")" != "$size" ]; then
        rm -f "$www/$name"
        truncate -s "$size" "$www/$name"
    fi
done

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
        || echo $((20000 + RANDOM % 20000))
}
port=$(free_port)

# The HTTPS figures: a private CA and a server certificate for 127.0.0.1 it signs (openssl's
# command line; EC P-256, as the test certificates), made once and remade when it is about to
# expire. Courier trusts the CA through `trustedCertificates`, curl's command line through --cacert.
tls="$root/.build/bench/tls"
mkdir -p "$tls"
if [ ! -s "$tls/server.pem" ] || ! openssl x509 -checkend 86400 -noout -in "$tls/server.pem" >/dev/null 2>&1; then
    echo "==> Making the HTTPS figures' private CA and server certificate under $tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
        -subj "/CN=Courier benchmark CA" -keyout "$tls/ca.key" -out "$tls/ca.pem" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 825 \
        -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
fi
tls_port=$(free_port)
h2_port=$(free_port)
# Two TLS 1.3 servers with the same files: HTTP/1.1 only, and HTTP/2 (ALPN). nginx resumes TLS
# sessions (tickets, and a session cache) as a production server would. /close.json is the JSON
# with the connection closed after every response: reconnections. stub_status counts for the
# whole nginx, so /status on any server reports every server's accepted connections.
tls_server() { # LISTEN-ARGUMENTS
    cat <<SERVER
    server {
        listen 127.0.0.1:$1 backlog=4096;
        ssl_certificate $tls/server.pem;
        ssl_certificate_key $tls/server.key;
        ssl_protocols TLSv1.3;
        ssl_session_cache shared:bench:10m;
        ssl_session_timeout 1h;
        root $www;
        location = /small.json { }
        location = /close.json { alias $www/small.json; keepalive_timeout 0; }
        location = /status { stub_status; }
    }
SERVER
}

conf="$prefix/nginx.conf"
# As in Scripts/servers.sh: started by root, nginx's workers keep root's rights, so that they can
# read the files of a clone in a private folder.
nginx_user=""
[ "$(id -u)" = 0 ] && nginx_user="user $(id -un) $(id -gn);"
cat >"$conf" <<EOF
$nginx_user
worker_processes 1;
daemon off;
pid $prefix/nginx.pid;
error_log $prefix/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 300s;
    keepalive_requests 10000000;
    gzip off;
    client_body_temp_path $prefix/temp/client_body;
    proxy_temp_path $prefix/temp/proxy;
    fastcgi_temp_path $prefix/temp/fastcgi;
    uwsgi_temp_path $prefix/temp/uwsgi;
    scgi_temp_path $prefix/temp/scgi;
    types { application/json json; application/octet-stream bin; }
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$port backlog=4096;
        root $www;
        location = /small.json { }
        # The same JSON, fresh for an hour: the cache figure's hits.
        location = /cached.json { alias $www/small.json; expires 1h; }
        location = /large.bin { }
        location = /stream-256MiB.bin { }
        location = /download-1GiB.bin { }
        # Counts accepted connections: the benchmark reports new connections per request.
        location = /status { stub_status; }
        # Upload sink: \`return\` makes nginx read the whole body and discard it (it must, to
        # keep the connection alive; checked below).
        location /upload {
            client_max_body_size 0;
            return 200 "ok\n";
        }
    }
$(tls_server "$tls_port ssl")
$(tls_server "$h2_port ssl http2")
}
EOF

nginx_pid=""
stop_nginx() {
    if [ -n "$nginx_pid" ] && kill -0 "$nginx_pid" 2>/dev/null; then
        kill -QUIT "$nginx_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$nginx_pid" 2>/dev/null || true
    fi
}
trap stop_nginx EXIT
trap 'exit 130' INT TERM

echo "==> Starting nginx on 127.0.0.1:$port, HTTPS on $tls_port (HTTP/1.1) and $h2_port (HTTP/2) ($conf)"
"$nginx_bin" -c "$conf" -p "$prefix" &
nginx_pid=$!

base="http://127.0.0.1:$port"
for attempt in $(seq 100); do
    if curl -fsS -o /dev/null "$base/small.json" 2>/dev/null; then break; fi
    if ! kill -0 "$nginx_pid" 2>/dev/null || [ "$attempt" = 100 ]; then
        echo "nginx did not start; its error log:" >&2
        cat "$prefix/logs/error.log" >&2 || true
        exit 1
    fi
    sleep 0.05
done

# Check that the upload sink reads whole bodies: send 8 MiB, then ask for another file on the same
# connection. Had nginx left any of the body unread, those bytes would be parsed as the next
# request and the second answer would not be 200 on a reused connection (0 new connects).
head -c 8388608 /dev/zero >"$prefix/temp/upload-check.bin"
check=$(curl -sS -o /dev/null -w '%{http_code}/%{num_connects}/%{size_upload} ' \
    --data-binary @"$prefix/temp/upload-check.bin" -H 'Content-Type: application/octet-stream' "$base/upload" \
    --next -sS -o /dev/null -w '%{http_code}/%{num_connects}' "$base/small.json")
rm -f "$prefix/temp/upload-check.bin"
if [ "$check" != "200/1/8388608 200/0" ]; then
    echo "upload sink check failed: got '$check', expected '200/1/8388608 200/0'" >&2
    exit 1
fi
echo "==> Upload sink took an 8 MiB body whole and kept the connection"

# The large bodies must come as they are, even to a client that accepts compression (Courier's
# curl transport asks for every encoding libcurl decodes).
for name in stream-256MiB.bin download-1GiB.bin; do
    head=$(curl -sS -I -H 'Accept-Encoding: gzip, deflate, br' "$base/$name" | tr -d '\r')
    if ! grep -qx "Content-Length: $(stat -c %s "$www/$name")" <<<"$head" || grep -qi '^Content-Encoding:' <<<"$head"; then
        echo "nginx does not send $name as it is:" >&2
        echo "$head" >&2
        exit 1
    fi
done

# Both HTTPS servers answer, with the protocol each should speak.
for pair in "$tls_port:1.1" "$h2_port:2"; do
    got=$(curl -sS --cacert "$tls/ca.pem" -o /dev/null -w '%{http_version}' "https://127.0.0.1:${pair%%:*}/small.json")
    if [ "$got" != "${pair##*:}" ]; then
        echo "the HTTPS server on port ${pair%%:*} answered over HTTP/$got, expected HTTP/${pair##*:}" >&2
        exit 1
    fi
done

echo "==> Building CourierBench (release, scratch path .build-bench)"
swift build -c release --scratch-path .build-bench --product CourierBench

echo "==> Running CourierBench against $base"
swift_version=$(swift --version 2>&1 | grep -m1 'Swift version' || echo unknown)
server_version=$("$nginx_bin" -v 2>&1 | sed 's/^nginx version: //')
.build-bench/release/CourierBench --base-url "$base" \
    --tls-url "https://127.0.0.1:$tls_port" --tls-http2-url "https://127.0.0.1:$h2_port" --tls-ca "$tls/ca.pem" \
    --command "Scripts/bench.sh${*:+ $*}" \
    --swift-version "$swift_version" --server "$server_version" "$@"
