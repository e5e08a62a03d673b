// Loads libcurl at run time and makes the calls Swift cannot make itself (see CourierCurl.h).
//
// Why this is safe: every function pointer comes from dlsym on libcurl.so.4 and has the prototype
// of the real declaration (checked against <curl/curl.h> by Scripts/check-curl.sh); nothing here
// is called before courier_curl_load succeeded (the Swift side calls it first, once); the two
// structures read here (CURLMsg, curl_version_info_data) are declared with the real layout,
// checked the same way (both are declared in CourierCurlABI.h).
#include "CourierCurl.h"
#include "CourierCurlABI.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct {
    courier_global_init_f global_init;
    courier_version_info_f version_info;
    courier_easy_init_f easy_init;
    courier_easy_cleanup_f easy_cleanup;
    courier_easy_reset_f easy_reset;
    courier_easy_setopt_f easy_setopt;
    courier_easy_getinfo_f easy_getinfo;
    courier_easy_pause_f easy_pause;
    courier_easy_strerror_f easy_strerror;
    courier_slist_append_f slist_append;
    courier_slist_free_all_f slist_free_all;
    courier_multi_init_f multi_init;
    courier_multi_cleanup_f multi_cleanup;
    courier_multi_setopt_f multi_setopt;
    courier_multi_add_handle_f multi_add_handle;
    courier_multi_remove_handle_f multi_remove_handle;
    courier_multi_perform_f multi_perform;
    courier_multi_poll_f multi_poll;
    courier_multi_wakeup_f multi_wakeup;
    courier_multi_info_read_f multi_info_read;
    courier_share_init_f share_init;
    courier_share_setopt_f share_setopt;
    courier_share_cleanup_f share_cleanup;
} curl;

/// OpenSSL's SSL_get_version, from the libssl that libcurl loaded (NULL when there is none).
static const char *(*ssl_get_version)(const void *ssl);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_failure[512] = "libcurl was not loaded";
static struct courier_curl_version_info *version;

static int look_up(void *library, const char *name, void **slot) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(load_failure, sizeof load_failure, "libcurl.so.4 has no %s (libcurl 7.68 or later is needed)", name);
        return -1;
    }
    return 0;
}

static void load(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_GLOBAL);
    if (library == NULL) {
        const char *error = dlerror();
        snprintf(load_failure, sizeof load_failure, "cannot open libcurl.so.4: %s", error ? error : "unknown error");
        return;
    }
#define LOOK_UP(field, name) if (look_up(library, name, (void **)&curl.field) != 0) return;
    LOOK_UP(global_init, "curl_global_init")
    LOOK_UP(version_info, "curl_version_info")
    LOOK_UP(easy_init, "curl_easy_init")
    LOOK_UP(easy_cleanup, "curl_easy_cleanup")
    LOOK_UP(easy_reset, "curl_easy_reset")
    LOOK_UP(easy_setopt, "curl_easy_setopt")
    LOOK_UP(easy_getinfo, "curl_easy_getinfo")
    LOOK_UP(easy_pause, "curl_easy_pause")
    LOOK_UP(easy_strerror, "curl_easy_strerror")
    LOOK_UP(slist_append, "curl_slist_append")
    LOOK_UP(slist_free_all, "curl_slist_free_all")
    LOOK_UP(multi_init, "curl_multi_init")
    LOOK_UP(multi_cleanup, "curl_multi_cleanup")
    LOOK_UP(multi_setopt, "curl_multi_setopt")
    LOOK_UP(multi_add_handle, "curl_multi_add_handle")
    LOOK_UP(multi_remove_handle, "curl_multi_remove_handle")
    LOOK_UP(multi_perform, "curl_multi_perform")
    LOOK_UP(multi_poll, "curl_multi_poll")
    LOOK_UP(multi_wakeup, "curl_multi_wakeup")
    LOOK_UP(multi_info_read, "curl_multi_info_read")
    LOOK_UP(share_init, "curl_share_init")
    LOOK_UP(share_setopt, "curl_share_setopt")
    LOOK_UP(share_cleanup, "curl_share_cleanup")
#undef LOOK_UP
    // Looked up through libcurl's handle, so it is the libssl libcurl itself uses (dlsym searches
    // a library's dependencies); optional: without it TLS versions are simply not reported.
    ssl_get_version = (const char *(*)(const void *))dlsym(library, "SSL_get_version");
    version = curl.version_info(COURIER_CURLVERSION_NOW);
    if (version == NULL || version->version_num < 0x074400) {
        snprintf(load_failure, sizeof load_failure, "libcurl %s is older than 7.68, which Courier's transport needs",
                 version && version->version ? version->version : "(unknown)");
        version = NULL;
        return;
    }
    // OpenSSL's exit handler can crash a process that initialised curl before FoundationNetworking
    // did (swift-corelibs-foundation issue 5469); FoundationNetworking avoids it by initialising
    // OpenSSL without that handler first, and so does Courier.
    int (*openssl_init)(uint64_t, const void *) = (int (*)(uint64_t, const void *))dlsym(RTLD_DEFAULT, "OPENSSL_init_crypto");
    if (openssl_init != NULL) {
        openssl_init(0x00080000L /* OPENSSL_INIT_NO_ATEXIT */, NULL);
    }
    if (curl.global_init(COURIER_CURL_GLOBAL_ALL) != 0) {
        snprintf(load_failure, sizeof load_failure, "curl_global_init failed");
        version = NULL;
        return;
    }
    load_failure[0] = '\0';
}

int courier_curl_load(char *reason, size_t capacity) {
    pthread_once(&load_once, load);
    if (version != NULL) return 0;
    if (reason != NULL && capacity > 0) snprintf(reason, capacity, "%s", load_failure);
    return -1;
}

const char *courier_curl_version(void) { return version ? version->version : ""; }
unsigned int courier_curl_version_number(void) { return version ? version->version_num : 0; }
int courier_curl_features(void) { return version ? version->features : 0; }

CourierCurlEasy *courier_curl_easy_init(void) { return curl.easy_init(); }
void courier_curl_easy_cleanup(CourierCurlEasy *easy) { curl.easy_cleanup(easy); }
void courier_curl_easy_reset(CourierCurlEasy *easy) { curl.easy_reset(easy); }
int courier_curl_easy_setopt_long(CourierCurlEasy *easy, int option, long value) { return curl.easy_setopt(easy, option, value); }
int courier_curl_easy_setopt_pointer(CourierCurlEasy *easy, int option, const void *value) { return curl.easy_setopt(easy, option, value); }
int courier_curl_easy_setopt_string(CourierCurlEasy *easy, int option, const char *value) { return curl.easy_setopt(easy, option, value); }
int courier_curl_easy_setopt_offset(CourierCurlEasy *easy, int option, int64_t value) { return curl.easy_setopt(easy, option, value); }
int courier_curl_easy_setopt_callback(CourierCurlEasy *easy, int option, CourierCurlDataCallback callback) {
    return curl.easy_setopt(easy, option, callback);
}
int courier_curl_easy_setopt_seek_callback(CourierCurlEasy *easy, int option, CourierCurlSeekCallback callback) {
    return curl.easy_setopt(easy, option, callback);
}
int courier_curl_easy_getinfo_long(CourierCurlEasy *easy, int info, long *value) { return curl.easy_getinfo(easy, info, value); }
int courier_curl_easy_pause(CourierCurlEasy *easy, int bitmask) { return curl.easy_pause(easy, bitmask); }
// Copies the pin of " public key hash: sha256//<base64>" (Curl_pin_peer_pubkey's verbose line in
// 7.88) into the buffer; every other debug call returns at once. The text is not NUL-terminated.
static int capture_public_key(COURIER_ABI_EASY *easy, COURIER_ABI_INFOTYPE type, char *data, size_t size, void *buffer) {
    (void)easy;
    static const char prefix[] = " public key hash: ";
    const size_t prefix_length = sizeof prefix - 1;
    if ((int)type != COURIER_CURLINFO_TEXT || size <= prefix_length || memcmp(data, prefix, prefix_length) != 0) return 0;
    size_t length = size - prefix_length;
    while (length > 0 && (data[prefix_length + length - 1] == '\n' || data[prefix_length + length - 1] == '\r')) length--;
    if (length >= COURIER_PUBLIC_KEY_CAPACITY) length = COURIER_PUBLIC_KEY_CAPACITY - 1;
    memcpy(buffer, data + prefix_length, length);
    ((char *)buffer)[length] = '\0';
    return 0;
}

int courier_curl_easy_capture_public_key(CourierCurlEasy *easy, char *buffer) {
    courier_debug_f function = capture_public_key;
    int result = curl.easy_setopt(easy, COURIER_CURLOPT_DEBUGFUNCTION, function);
    if (result == 0) result = curl.easy_setopt(easy, COURIER_CURLOPT_DEBUGDATA, (void *)buffer);
    if (result == 0) result = curl.easy_setopt(easy, COURIER_CURLOPT_VERBOSE, 1L);
    return result;
}

const char *courier_curl_tls_version(CourierCurlEasy *easy) {
    struct courier_curl_tlssessioninfo *info = NULL;
    if (ssl_get_version == NULL || curl.easy_getinfo(easy, COURIER_CURLINFO_TLS_SSL_PTR, &info) != 0 || info == NULL) return NULL;
    // LibreSSL and BoringSSL report the OpenSSL backend too; all three have SSL_get_version.
    if (info->backend != COURIER_CURLSSLBACKEND_OPENSSL || info->internals == NULL) return NULL;
    return ssl_get_version(info->internals);
}

const char *courier_curl_easy_strerror(int code) { return curl.easy_strerror ? curl.easy_strerror(code) : "libcurl is not loaded"; }

CourierCurlList *courier_curl_slist_append(CourierCurlList *list, const char *text) { return curl.slist_append(list, text); }
void courier_curl_slist_free_all(CourierCurlList *list) { curl.slist_free_all(list); }

CourierCurlMulti *courier_curl_multi_init(void) { return curl.multi_init(); }
int courier_curl_multi_cleanup(CourierCurlMulti *multi) { return curl.multi_cleanup(multi); }
int courier_curl_multi_setopt_long(CourierCurlMulti *multi, int option, long value) { return curl.multi_setopt(multi, option, value); }
int courier_curl_multi_add_handle(CourierCurlMulti *multi, CourierCurlEasy *easy) { return curl.multi_add_handle(multi, easy); }
int courier_curl_multi_remove_handle(CourierCurlMulti *multi, CourierCurlEasy *easy) { return curl.multi_remove_handle(multi, easy); }
int courier_curl_multi_perform(CourierCurlMulti *multi, int *running) { return curl.multi_perform(multi, running); }
int courier_curl_multi_poll(CourierCurlMulti *multi, int timeout_ms, int *ready) { return curl.multi_poll(multi, NULL, 0, timeout_ms, ready); }
int courier_curl_multi_wakeup(CourierCurlMulti *multi) { return curl.multi_wakeup(multi); }

CourierCurlShare *courier_curl_share_init(void) { return curl.share_init(); }
// CURLSHOPT_SHARE reads its argument as an int (curl_lock_data).
int courier_curl_share_share(CourierCurlShare *share, int data) { return curl.share_setopt(share, COURIER_CURLSHOPT_SHARE, data); }
int courier_curl_share_cleanup(CourierCurlShare *share) { return curl.share_cleanup(share); }

int courier_curl_multi_next_done(CourierCurlMulti *multi, CourierCurlEasy **easy, int *result) {
    int remaining = 0;
    struct courier_curl_msg *message;
    while ((message = curl.multi_info_read(multi, &remaining)) != NULL) {
        if (message->msg != COURIER_CURLMSG_DONE) continue;
        *easy = message->easy_handle;
        *result = message->data.result;
        return 1;
    }
    return 0;
}
