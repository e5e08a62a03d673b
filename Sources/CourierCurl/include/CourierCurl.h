// Courier's own declarations for the few parts of libcurl it uses, so that building Courier needs
// no curl headers: libcurl.so.4 (the one FoundationNetworking already loads) is opened at run time.
// Every constant below is checked against the real <curl/curl.h> by Scripts/check-curl.sh, which
// the test command runs.
//
// The wrappers are typed because Swift cannot call C variadic functions (curl_easy_setopt,
// curl_multi_setopt, curl_easy_getinfo): calling them through a non-variadic prototype is wrong on
// some ABIs, so the one variadic call of each kind is made here, in C.
#ifndef COURIER_CURL_H
#define COURIER_CURL_H

#include <stddef.h>
#include <stdint.h>

typedef struct CourierCurlEasy CourierCurlEasy;    // CURL
typedef struct CourierCurlMulti CourierCurlMulti;  // CURLM
typedef struct CourierCurlList CourierCurlList;    // struct curl_slist
typedef struct CourierCurlShare CourierCurlShare;  // CURLSH

/// A write, header or read callback: (buffer, size, count, context) -> bytes handled.
typedef size_t (*CourierCurlDataCallback)(char *buffer, size_t size, size_t count, void *context);
/// A seek callback, to rewind the request body: (context, offset, origin) -> CURL_SEEKFUNC_*.
typedef int (*CourierCurlSeekCallback)(void *context, int64_t offset, int origin);

enum {
    // Easy options (CURLoption): long values
    COURIER_CURLOPT_NOBODY = 44,
    COURIER_CURLOPT_UPLOAD = 46,
    COURIER_CURLOPT_FOLLOWLOCATION = 52,
    COURIER_CURLOPT_NOSIGNAL = 99,
    COURIER_CURLOPT_HTTPAUTH = 107,
    COURIER_CURLOPT_TIMEOUT_MS = 155,
    COURIER_CURLOPT_LOW_SPEED_LIMIT = 19,
    COURIER_CURLOPT_LOW_SPEED_TIME = 20,
    COURIER_CURLOPT_BUFFERSIZE = 98,
    COURIER_CURLOPT_HTTP_CONTENT_DECODING = 158,
    COURIER_CURLOPT_PIPEWAIT = 237,
    COURIER_CURLOPT_SSLVERSION = 32,
    // Easy options: pointer values (strings are copied by libcurl; lists and data are not)
    COURIER_CURLOPT_WRITEDATA = 10001,
    COURIER_CURLOPT_URL = 10002,
    COURIER_CURLOPT_PROXY = 10004,
    COURIER_CURLOPT_READDATA = 10009,
    COURIER_CURLOPT_ERRORBUFFER = 10010,
    COURIER_CURLOPT_HTTPHEADER = 10023,
    COURIER_CURLOPT_HEADERDATA = 10029,
    COURIER_CURLOPT_CUSTOMREQUEST = 10036,
    COURIER_CURLOPT_CAINFO = 10065,
    COURIER_CURLOPT_CAPATH = 10097,
    COURIER_CURLOPT_SHARE = 10100,
    COURIER_CURLOPT_ACCEPT_ENCODING = 10102,
    COURIER_CURLOPT_SEEKDATA = 10168,
    COURIER_CURLOPT_USERNAME = 10173,
    COURIER_CURLOPT_PASSWORD = 10174,
    COURIER_CURLOPT_SSLCERT = 10025,
    COURIER_CURLOPT_KEYPASSWD = 10026,
    COURIER_CURLOPT_SSLKEY = 10087,
    COURIER_CURLOPT_PINNEDPUBLICKEY = 10230,
    COURIER_CURLOPT_DEBUGDATA = 10095,
    COURIER_CURLOPT_VERBOSE = 41,
    COURIER_CURLOPT_DEBUGFUNCTION = 20094,
    // Easy options: callbacks
    COURIER_CURLOPT_WRITEFUNCTION = 20011,
    COURIER_CURLOPT_READFUNCTION = 20012,
    COURIER_CURLOPT_HEADERFUNCTION = 20079,
    COURIER_CURLOPT_SEEKFUNCTION = 20167,
    // Easy options: curl_off_t values
    COURIER_CURLOPT_INFILESIZE_LARGE = 30115,

    // Information (CURLINFO)
    COURIER_CURLINFO_RESPONSE_CODE = 2097154,
    COURIER_CURLINFO_HTTP_VERSION = 2097198,
    COURIER_CURLINFO_TLS_SSL_PTR = 4194349,

    // Multi options (CURLMoption)
    COURIER_CURLMOPT_MAXCONNECTS = 6,
    COURIER_CURLMOPT_MAX_HOST_CONNECTIONS = 7,

    // Share options (CURLSHoption) and what a share handle shares (curl_lock_data)
    COURIER_CURLSHOPT_SHARE = 1,
    COURIER_CURL_LOCK_DATA_DNS = 3,
    COURIER_CURL_LOCK_DATA_SSL_SESSION = 4,

    // Values
    COURIER_CURLAUTH_BASIC = 1,
    COURIER_CURLAUTH_DIGEST = 2,
    COURIER_CURL_READFUNC_ABORT = 0x10000000,
    COURIER_CURL_WRITEFUNC_PAUSE = 0x10000001,
    COURIER_CURLPAUSE_CONT = 0,
    COURIER_CURL_SEEKFUNC_OK = 0,
    COURIER_CURL_SEEKFUNC_CANTSEEK = 2,
    COURIER_CURL_ERROR_SIZE = 256,
    // Minimum TLS versions (CURLOPT_SSLVERSION) and HTTP versions (CURLINFO_HTTP_VERSION)
    COURIER_CURL_SSLVERSION_TLSv1_0 = 4,
    COURIER_CURL_SSLVERSION_TLSv1_1 = 5,
    COURIER_CURL_SSLVERSION_TLSv1_2 = 6,
    COURIER_CURL_SSLVERSION_TLSv1_3 = 7,
    COURIER_CURL_HTTP_VERSION_1_0 = 1,
    COURIER_CURL_HTTP_VERSION_1_1 = 2,
    COURIER_CURL_HTTP_VERSION_2_0 = 3,
    COURIER_CURL_HTTP_VERSION_3 = 30,
    // Features (curl_version_info_data.features): which content codings libcurl can decode
    COURIER_CURL_VERSION_LIBZ = 1 << 3,
    COURIER_CURL_VERSION_BROTLI = 1 << 23,
    COURIER_CURL_VERSION_ZSTD = 1 << 26,

    // Results (CURLcode) that Courier tells apart
    COURIER_CURLE_UNSUPPORTED_PROTOCOL = 1,
    COURIER_CURLE_URL_MALFORMAT = 3,
    COURIER_CURLE_COULDNT_RESOLVE_PROXY = 5,
    COURIER_CURLE_COULDNT_RESOLVE_HOST = 6,
    COURIER_CURLE_COULDNT_CONNECT = 7,
    COURIER_CURLE_WEIRD_SERVER_REPLY = 8,
    COURIER_CURLE_HTTP2 = 16,
    COURIER_CURLE_PARTIAL_FILE = 18,
    COURIER_CURLE_READ_ERROR = 26,
    COURIER_CURLE_OUT_OF_MEMORY = 27,
    COURIER_CURLE_OPERATION_TIMEDOUT = 28,
    COURIER_CURLE_SSL_CONNECT_ERROR = 35,
    COURIER_CURLE_ABORTED_BY_CALLBACK = 42,
    COURIER_CURLE_GOT_NOTHING = 52,
    COURIER_CURLE_SEND_ERROR = 55,
    COURIER_CURLE_RECV_ERROR = 56,
    COURIER_CURLE_SSL_CERTPROBLEM = 58,
    COURIER_CURLE_SSL_CIPHER = 59,
    COURIER_CURLE_PEER_FAILED_VERIFICATION = 60,
    COURIER_CURLE_BAD_CONTENT_ENCODING = 61,
    COURIER_CURLE_SEND_FAIL_REWIND = 65,
    COURIER_CURLE_SSL_CACERT_BADFILE = 77,
    COURIER_CURLE_SSL_ISSUER_ERROR = 83,
    COURIER_CURLE_SSL_PINNEDPUBKEYNOTMATCH = 90,
    COURIER_CURLE_SSL_INVALIDCERTSTATUS = 91,
    COURIER_CURLE_HTTP2_STREAM = 92,
    COURIER_CURLE_PROXY = 97,
};

/// Opens libcurl.so.4 and looks up every function below. Returns 0 when libcurl is usable
/// (7.68 or later, for curl_multi_poll and curl_multi_wakeup); otherwise writes why into
/// `reason` and returns -1. Safe to call more than once, from any thread.
int courier_curl_load(char *reason, size_t capacity);

/// libcurl's version, as "7.88.1"; only after a successful load.
const char *courier_curl_version(void);
/// libcurl's version as a number (0x075801 for 7.88.1); only after a successful load.
unsigned int courier_curl_version_number(void);
/// libcurl's feature bits (COURIER_CURL_VERSION_*); only after a successful load.
int courier_curl_features(void);

CourierCurlEasy *courier_curl_easy_init(void);
void courier_curl_easy_cleanup(CourierCurlEasy *easy);
void courier_curl_easy_reset(CourierCurlEasy *easy);
int courier_curl_easy_setopt_long(CourierCurlEasy *easy, int option, long value);
int courier_curl_easy_setopt_pointer(CourierCurlEasy *easy, int option, const void *value);
/// A string option; libcurl copies the string.
int courier_curl_easy_setopt_string(CourierCurlEasy *easy, int option, const char *value);
int courier_curl_easy_setopt_offset(CourierCurlEasy *easy, int option, int64_t value);
int courier_curl_easy_setopt_callback(CourierCurlEasy *easy, int option, CourierCurlDataCallback callback);
int courier_curl_easy_setopt_seek_callback(CourierCurlEasy *easy, int option, CourierCurlSeekCallback callback);
int courier_curl_easy_getinfo_long(CourierCurlEasy *easy, int info, long *value);
int courier_curl_easy_pause(CourierCurlEasy *easy, int bitmask);

/// The capacity of the buffer `courier_curl_easy_capture_public_key` writes into: "sha256//" and
/// 44 characters of base64, with room to spare.
#define COURIER_PUBLIC_KEY_CAPACITY 128

/// Makes the handle write into `buffer` (COURIER_PUBLIC_KEY_CAPACITY bytes, NUL-terminated) the
/// pin of the public key the server presents when a transfer with CURLOPT_PINNEDPUBLICKEY makes a
/// new connection: libcurl 7.88 reports it only as verbose text (" public key hash: sha256//..."),
/// so this turns CURLOPT_VERBOSE on with a debug function that copies that one line's pin and
/// ignores the rest. libcurl keeps the pointer until the handle is reset or freed.
int courier_curl_easy_capture_public_key(CourierCurlEasy *easy, char *buffer);

/// The TLS version of the connection a transfer is using ("TLSv1.3"), from OpenSSL's
/// SSL_get_version on CURLINFO_TLS_SSL_PTR; NULL when the transfer has no TLS connection now, when
/// libcurl's TLS library is not OpenSSL (or one of its forks), or when OpenSSL's function cannot
/// be found. Only while the transfer holds its connection (from a header callback); the string
/// is OpenSSL's own constant.
const char *courier_curl_tls_version(CourierCurlEasy *easy);
const char *courier_curl_easy_strerror(int code);

CourierCurlList *courier_curl_slist_append(CourierCurlList *list, const char *text);
void courier_curl_slist_free_all(CourierCurlList *list);

CourierCurlMulti *courier_curl_multi_init(void);
int courier_curl_multi_cleanup(CourierCurlMulti *multi);
int courier_curl_multi_setopt_long(CourierCurlMulti *multi, int option, long value);
int courier_curl_multi_add_handle(CourierCurlMulti *multi, CourierCurlEasy *easy);
int courier_curl_multi_remove_handle(CourierCurlMulti *multi, CourierCurlEasy *easy);
int courier_curl_multi_perform(CourierCurlMulti *multi, int *running);
/// Waits up to timeout_ms for activity on the transfers' sockets or a wake-up; writes into *ready
/// how many sockets had activity (not counting a wake-up), when ready is not NULL.
int courier_curl_multi_poll(CourierCurlMulti *multi, int timeout_ms, int *ready);
int courier_curl_multi_wakeup(CourierCurlMulti *multi);
CourierCurlShare *courier_curl_share_init(void);
/// Shares `data` (a COURIER_CURL_LOCK_DATA_* value) among the easy handles set to this share.
int courier_curl_share_share(CourierCurlShare *share, int data);
int courier_curl_share_cleanup(CourierCurlShare *share);

/// The next finished transfer: returns 1 with its handle and result, or 0 when none is left.
int courier_curl_multi_next_done(CourierCurlMulti *multi, CourierCurlEasy **easy, int *result);

#endif
