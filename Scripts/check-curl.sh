#!/usr/bin/env bash
# Checks Courier's own libcurl declarations (Sources/CourierCurl/include/CourierCurl.h) against
# the real <curl/curl.h>: every constant's value, the layout of the two structures Courier reads,
# and the prototype of every function it looks up (Sources/CourierCurl/CourierCurlABI.h, compiled
# here with curl's real types). Building Courier needs no curl headers; this
# check does, so it installs Debian's libcurl4-openssl-dev when they are missing (as root). The
# test command runs it; a mismatch fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

source Scripts/declarations.sh
header_dir=$(find_header curl/curl.h libcurl4-openssl-dev)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
header=Sources/CourierCurl/include/CourierCurl.h
{
    echo '#include <stddef.h>'
    echo '#include <curl/curl.h>'
    echo "#include \"$PWD/$header\""
    # Every COURIER_X constant must equal X.
    constant_checks "$header"
    cat <<'C'
/* CourierCurlABI.h with curl's real types: every real function must fit its pointer type. */
#define COURIER_ABI_EASY CURL
#define COURIER_ABI_MULTI CURLM
#define COURIER_ABI_LIST struct curl_slist
#define COURIER_ABI_SHARE CURLSH
#define COURIER_ABI_SHCODE CURLSHcode
#define COURIER_ABI_SHOPTION CURLSHoption
#define COURIER_ABI_CODE CURLcode
#define COURIER_ABI_MCODE CURLMcode
#define COURIER_ABI_OPTION CURLoption
#define COURIER_ABI_MOPTION CURLMoption
#define COURIER_ABI_INFO CURLINFO
#define COURIER_ABI_VERSION CURLversion
#define COURIER_ABI_MSG CURLMsg
#define COURIER_ABI_VERSION_INFO curl_version_info_data
#define COURIER_ABI_WAITFD struct curl_waitfd
#define COURIER_ABI_INFOTYPE curl_infotype
#define COURIER_ABI_TLSSESSIONINFO struct curl_tlssessioninfo
C
    echo "#include \"$PWD/Sources/CourierCurl/CourierCurlABI.h\""
    cat <<'C'
courier_global_init_f check_global_init = curl_global_init;
courier_version_info_f check_version_info = curl_version_info;
courier_easy_init_f check_easy_init = curl_easy_init;
courier_easy_cleanup_f check_easy_cleanup = curl_easy_cleanup;
courier_easy_reset_f check_easy_reset = curl_easy_reset;
courier_easy_setopt_f check_easy_setopt = curl_easy_setopt;
courier_easy_getinfo_f check_easy_getinfo = curl_easy_getinfo;
courier_easy_pause_f check_easy_pause = curl_easy_pause;
courier_easy_strerror_f check_easy_strerror = curl_easy_strerror;
courier_slist_append_f check_slist_append = curl_slist_append;
courier_slist_free_all_f check_slist_free_all = curl_slist_free_all;
courier_multi_init_f check_multi_init = curl_multi_init;
courier_multi_cleanup_f check_multi_cleanup = curl_multi_cleanup;
courier_multi_setopt_f check_multi_setopt = curl_multi_setopt;
courier_multi_add_handle_f check_multi_add_handle = curl_multi_add_handle;
courier_multi_remove_handle_f check_multi_remove_handle = curl_multi_remove_handle;
courier_multi_perform_f check_multi_perform = curl_multi_perform;
courier_multi_poll_f check_multi_poll = curl_multi_poll;
courier_multi_wakeup_f check_multi_wakeup = curl_multi_wakeup;
courier_multi_info_read_f check_multi_info_read = curl_multi_info_read;
courier_share_init_f check_share_init = curl_share_init;
courier_share_setopt_f check_share_setopt = curl_share_setopt;
courier_share_cleanup_f check_share_cleanup = curl_share_cleanup;
/* The layouts CourierCurl.c reads, against the real structures. */
_Static_assert(sizeof(CURLMSG) == sizeof(int) && sizeof(CURLcode) == sizeof(int), "CURLMSG and CURLcode are ints");
_Static_assert(offsetof(struct CURLMsg, easy_handle) == offsetof(struct courier_curl_msg, easy_handle), "CURLMsg.easy_handle");
_Static_assert(offsetof(struct CURLMsg, data) == offsetof(struct courier_curl_msg, data), "CURLMsg.data");
_Static_assert(offsetof(curl_version_info_data, version) == offsetof(struct courier_curl_version_info, version), "version");
_Static_assert(offsetof(curl_version_info_data, version_num) == offsetof(struct courier_curl_version_info, version_num), "version_num");
_Static_assert(offsetof(curl_version_info_data, features) == offsetof(struct courier_curl_version_info, features), "features");
_Static_assert(offsetof(struct curl_tlssessioninfo, backend) == offsetof(struct courier_curl_tlssessioninfo, backend), "backend");
_Static_assert(offsetof(struct curl_tlssessioninfo, internals) == offsetof(struct courier_curl_tlssessioninfo, internals), "internals");
_Static_assert(sizeof(curl_sslbackend) == sizeof(int), "curl_sslbackend is an int");
_Static_assert(COURIER_CURLMSG_DONE == CURLMSG_DONE && COURIER_CURLVERSION_NOW == CURLVERSION_NOW
               && COURIER_CURL_GLOBAL_ALL == CURL_GLOBAL_ALL && COURIER_CURLINFO_TEXT == CURLINFO_TEXT
               && COURIER_CURLSSLBACKEND_OPENSSL == CURLSSLBACKEND_OPENSSL, "private constants");
_Static_assert(sizeof(curl_off_t) == sizeof(int64_t), "curl_off_t is not 64 bits");
/* The callback types Courier passes for write, header, read and seek functions. */
curl_write_callback check_write = (CourierCurlDataCallback)0;
curl_read_callback check_read = (CourierCurlDataCallback)0;
curl_seek_callback check_seek = (CourierCurlSeekCallback)0;
/* The debug function that captures the presented public key's pin. */
curl_debug_callback check_debug = (courier_debug_f)0;
int main(void) { return 0; }
C
} >"$work/check.c"

compile_check libcurl "$work/check.c" "$header_dir"
count=$(grep -c '_Static_assert' "$work/check.c")
echo "==> Courier's libcurl declarations match $header_dir/curl/curl.h ($count static checks and 24 prototypes)"
