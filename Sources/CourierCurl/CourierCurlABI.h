// The prototypes and structure layouts of the libcurl functions CourierCurl.c looks up. The type
// macros default to Courier's own opaque types; Scripts/check-curl.sh includes this header with
// them set to curl's real types and assigns each real function to its pointer type here, so a
// prototype that differs from <curl/curl.h> fails the check.
#ifndef COURIER_CURL_ABI_H
#define COURIER_CURL_ABI_H

#include "include/CourierCurl.h"

#ifndef COURIER_ABI_EASY
#define COURIER_ABI_EASY CourierCurlEasy
#define COURIER_ABI_MULTI CourierCurlMulti
#define COURIER_ABI_LIST CourierCurlList
#define COURIER_ABI_SHARE CourierCurlShare
#define COURIER_ABI_SHCODE int
#define COURIER_ABI_SHOPTION int
#define COURIER_ABI_CODE int
#define COURIER_ABI_MCODE int
#define COURIER_ABI_OPTION int
#define COURIER_ABI_MOPTION int
#define COURIER_ABI_INFO int
#define COURIER_ABI_VERSION int
#define COURIER_ABI_MSG struct courier_curl_msg
#define COURIER_ABI_VERSION_INFO struct courier_curl_version_info
#define COURIER_ABI_WAITFD void
#define COURIER_ABI_INFOTYPE int
#define COURIER_ABI_TLSSESSIONINFO struct courier_curl_tlssessioninfo
#endif

/// CURLMsg, as far as Courier reads it.
struct courier_curl_msg {
    int msg;                       // CURLMSG
    CourierCurlEasy *easy_handle;
    union {
        void *whatever;
        int result;                // CURLcode
    } data;
};

/// curl_version_info_data, as far as Courier reads it.
struct courier_curl_version_info {
    int age;
    const char *version;
    unsigned int version_num;
    const char *host;
    int features;
    // (more fields follow, which Courier does not read)
};

/// struct curl_tlssessioninfo, which CURLINFO_TLS_SSL_PTR points to.
struct courier_curl_tlssessioninfo {
    int backend;                   // curl_sslbackend
    void *internals;               // an SSL * with OpenSSL
};

/// The debug function courier_curl_easy_capture_public_key sets (curl_debug_callback).
typedef int (*courier_debug_f)(COURIER_ABI_EASY *, COURIER_ABI_INFOTYPE, char *, size_t, void *);

enum { COURIER_CURLINFO_TEXT = 0, COURIER_CURLSSLBACKEND_OPENSSL = 1 };

enum { COURIER_CURLMSG_DONE = 1, COURIER_CURLVERSION_NOW = 10, COURIER_CURL_GLOBAL_ALL = 3 };

typedef COURIER_ABI_CODE (*courier_global_init_f)(long flags);
typedef COURIER_ABI_VERSION_INFO *(*courier_version_info_f)(COURIER_ABI_VERSION age);
typedef COURIER_ABI_EASY *(*courier_easy_init_f)(void);
typedef void (*courier_easy_cleanup_f)(COURIER_ABI_EASY *);
typedef void (*courier_easy_reset_f)(COURIER_ABI_EASY *);
typedef COURIER_ABI_CODE (*courier_easy_setopt_f)(COURIER_ABI_EASY *, COURIER_ABI_OPTION, ...);
typedef COURIER_ABI_CODE (*courier_easy_getinfo_f)(COURIER_ABI_EASY *, COURIER_ABI_INFO, ...);
typedef COURIER_ABI_CODE (*courier_easy_pause_f)(COURIER_ABI_EASY *, int);
typedef const char *(*courier_easy_strerror_f)(COURIER_ABI_CODE);
typedef COURIER_ABI_LIST *(*courier_slist_append_f)(COURIER_ABI_LIST *, const char *);
typedef void (*courier_slist_free_all_f)(COURIER_ABI_LIST *);
typedef COURIER_ABI_MULTI *(*courier_multi_init_f)(void);
typedef COURIER_ABI_MCODE (*courier_multi_cleanup_f)(COURIER_ABI_MULTI *);
typedef COURIER_ABI_MCODE (*courier_multi_setopt_f)(COURIER_ABI_MULTI *, COURIER_ABI_MOPTION, ...);
typedef COURIER_ABI_MCODE (*courier_multi_add_handle_f)(COURIER_ABI_MULTI *, COURIER_ABI_EASY *);
typedef COURIER_ABI_MCODE (*courier_multi_remove_handle_f)(COURIER_ABI_MULTI *, COURIER_ABI_EASY *);
typedef COURIER_ABI_MCODE (*courier_multi_perform_f)(COURIER_ABI_MULTI *, int *running);
typedef COURIER_ABI_MCODE (*courier_multi_poll_f)(COURIER_ABI_MULTI *, COURIER_ABI_WAITFD *extra_fds,
                                                   unsigned int extra_nfds, int timeout_ms, int *numfds);
typedef COURIER_ABI_MCODE (*courier_multi_wakeup_f)(COURIER_ABI_MULTI *);
typedef COURIER_ABI_MSG *(*courier_multi_info_read_f)(COURIER_ABI_MULTI *, int *msgs_in_queue);
typedef COURIER_ABI_SHARE *(*courier_share_init_f)(void);
typedef COURIER_ABI_SHCODE (*courier_share_setopt_f)(COURIER_ABI_SHARE *, COURIER_ABI_SHOPTION, ...);
typedef COURIER_ABI_SHCODE (*courier_share_cleanup_f)(COURIER_ABI_SHARE *);

#endif
