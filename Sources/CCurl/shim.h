#include <curl/curl.h>

/// curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call them. One typed helper per kind of
/// argument, each passing exactly the type libcurl documents for the options it is used with.
static inline CURLcode kiln_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode kiln_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode kiln_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode kiln_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode kiln_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*kiln_curl_data_callback)(char *bytes, size_t size, size_t count, void *context);
typedef int (*kiln_curl_progress_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                           curl_off_t upload_total, curl_off_t upload_now);
typedef int (*kiln_curl_prereq_callback)(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port);
typedef int (*kiln_curl_debug_callback)(CURL *handle, curl_infotype type, char *data, size_t size, void *context);

static inline CURLcode kiln_curl_set_data_callback(CURL *handle, CURLoption option, kiln_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}
static inline CURLcode kiln_curl_set_progress_callback(CURL *handle, kiln_curl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
static inline CURLcode kiln_curl_set_prereq_callback(CURL *handle, kiln_curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

static inline CURLcode kiln_curl_set_debug_callback(CURL *handle, kiln_curl_debug_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, callback);
}

static inline CURLcode kiln_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode kiln_curl_get_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode kiln_curl_get_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
