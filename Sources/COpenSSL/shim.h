#pragma once
// OpenSSL 3 (Debian libssl-dev) for LarderTLS. Only what Swift cannot call directly lives
// here: macros over SSL_CTX_ctrl / SSL_ctrl / BIO_ctrl, and the ALPN selection callback.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <string.h>

static inline int larder_tls_ctx_set_min_version_tls12(SSL_CTX *_Nonnull ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

static inline void larder_tls_ctx_set_modes(SSL_CTX *_Nonnull ctx) {
    // Idle connections give their read/write buffers back; memory BIOs take any write whole.
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
}

/// TLS 1.2 cipher suites: ECDHE key exchange (forward secrecy) with AEAD ciphers only, as
/// Mozilla's "intermediate" profile less its finite-field DHE; OpenSSL's default also allowed
/// static-RSA key exchange and CBC with SHA-1 (audit 36 L3). TLS 1.3 suites are all AEAD.
static inline int larder_tls_ctx_set_tls12_ciphers(SSL_CTX *_Nonnull ctx) {
    return SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20");
}

static inline void larder_tls_ctx_set_max_cert_list(SSL_CTX *_Nonnull ctx, long bytes) {
    SSL_CTX_set_max_cert_list(ctx, bytes);
}

/// Verifies a peer's chain as OpenSSL does, after refusing one of more than `arg` certificates
/// (leaf included, as sent): a peer that stalls after a long chain would keep it parsed.
static inline int larder_tls_verify_bounded_chain(X509_STORE_CTX *_Nonnull ctx, void *_Nullable arg) {
    STACK_OF(X509) *sent = X509_STORE_CTX_get0_untrusted(ctx);
    if (sent != NULL && sk_X509_num(sent) > (int)(intptr_t)arg) {
        X509_STORE_CTX_set_error(ctx, X509_V_ERR_CERT_CHAIN_TOO_LONG);
        return 0;
    }
    return X509_verify_cert(ctx);
}

static inline void larder_tls_ctx_bound_peer_chain(SSL_CTX *_Nonnull ctx, int certificates) {
    SSL_CTX_set_cert_verify_callback(ctx, larder_tls_verify_bounded_chain, (void *)(intptr_t)certificates);
}

/// No server-side session cache: sessions resume from tickets only (stateless). OpenSSL's cache
/// (20,480 sessions for 2 h by default, each holding the client's parsed certificate chain)
/// filled from clients that offer no ticket, outside any memory bound (audit 36 M2).
static inline void larder_tls_ctx_disable_server_cache(SSL_CTX *_Nonnull ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

/// The server's decision on a session ticket it decrypted: as OpenSSL's default, except that a
/// session whose client certificate has expired since (or whose expiry cannot be read) is not
/// resumed: the client makes a full handshake, where the certificate is verified again.
/// OpenSSL checks nothing of the certificate on resumption (audit 36 M4: a client kept
/// resuming, renewing its ticket each time, after its certificate expired).
static inline SSL_TICKET_RETURN larder_tls_ticket_decrypted(SSL *_Nonnull ssl, SSL_SESSION *_Nonnull session,
                                                            const unsigned char *_Nullable key_name, size_t key_name_length,
                                                            SSL_TICKET_STATUS status, void *_Nullable arg) {
    (void)ssl; (void)key_name; (void)key_name_length; (void)arg;
    switch (status) {
    case SSL_TICKET_SUCCESS:
    case SSL_TICKET_SUCCESS_RENEW: {
        X509 *peer = SSL_SESSION_get0_peer(session);
        if (peer != NULL && X509_cmp_current_time(X509_get0_notAfter(peer)) <= 0) return SSL_TICKET_RETURN_IGNORE_RENEW;
        return status == SSL_TICKET_SUCCESS ? SSL_TICKET_RETURN_USE : SSL_TICKET_RETURN_USE_RENEW;
    }
    case SSL_TICKET_EMPTY:
    case SSL_TICKET_NO_DECRYPT:
        return SSL_TICKET_RETURN_IGNORE_RENEW;
    default:  // OpenSSL passes only the four above; anything else is not ours to accept
        return SSL_TICKET_RETURN_ABORT;
    }
}

static inline int larder_tls_ctx_check_resumed_certificates(SSL_CTX *_Nonnull ctx) {
    return SSL_CTX_set_session_ticket_cb(ctx, NULL, larder_tls_ticket_decrypted, NULL);
}

/// A passphrase callback that gives none: OpenSSL's default asks on the terminal, which
/// blocked a server (or its SIGHUP reload) given an encrypted key (audit 36 M3).
static inline int larder_tls_no_passphrase(char *_Nullable buf, int size, int rwflag, void *_Nullable userdata) {
    (void)buf; (void)size; (void)rwflag; (void)userdata;
    return -1;  // an error, not an empty passphrase
}

static inline void larder_tls_ctx_refuse_passphrases(SSL_CTX *_Nonnull ctx) {
    SSL_CTX_set_default_passwd_cb(ctx, larder_tls_no_passphrase);
}

static inline void larder_tls_ctx_enable_client_cache(SSL_CTX *_Nonnull ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
}

/// The intermediates loaded with a context's certificate (its chain file past the first), or
/// NULL; borrowed from the context.
static inline STACK_OF(X509) *_Nullable larder_tls_ctx_chain(SSL_CTX *_Nonnull ctx) {
    STACK_OF(X509) *chain = NULL;
    return SSL_CTX_get0_chain_certs(ctx, &chain) == 1 ? chain : NULL;
}

static inline int larder_tls_chain_count(STACK_OF(X509) *_Nonnull chain) { return sk_X509_num(chain); }

static inline X509 *_Nullable larder_tls_chain_certificate(STACK_OF(X509) *_Nonnull chain, int index) {
    return sk_X509_value(chain, index);
}

static inline int larder_tls_set_server_name(SSL *_Nonnull ssl, const char *_Nonnull name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

static inline size_t larder_tls_bio_pending(BIO *_Nonnull bio) {
    return BIO_ctrl_pending(bio);
}

static inline unsigned long larder_tls_err_reason(unsigned long error) {
    return (unsigned long)ERR_GET_REASON(error);
}

static inline int larder_tls_print_name(BIO *_Nonnull bio, X509_NAME *_Nonnull name) {
    return X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
}

/// The server's ALPN choice: the first of its own protocols (`arg`: a length byte, then
/// the ALPN wire list) the client offers; no ALPN at all when none matches.
static inline int larder_tls_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                         const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl;
    const unsigned char *server = (const unsigned char *)arg;
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, server + 1, server[0], in, inlen) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

/// `protocols`: a length byte, then the ALPN wire list; must outlive `ctx`.
static inline void larder_tls_ctx_set_alpn_select(SSL_CTX *_Nonnull ctx, const unsigned char *_Nonnull protocols) {
    SSL_CTX_set_alpn_select_cb(ctx, larder_tls_alpn_select, (void *)protocols);
}

/// What a client saw of the server's certificate_request and sent in reply (bits of the
/// `int` a session's message callback writes to).
enum {
    LARDER_TLS_SAW_CERTIFICATE_REQUEST = 1,
    LARDER_TLS_SENT_CERTIFICATE = 2,
};

/// A client session's message callback: notes a certificate_request received, and a
/// Certificate message sent with at least one certificate in it.
static inline void larder_tls_observe_handshake(int write_p, int version, int content_type, const void *buf,
                                                size_t len, SSL *ssl, void *arg) {
    (void)version;
    if (content_type != SSL3_RT_HANDSHAKE || len < 4 || arg == NULL) return;
    const unsigned char *message = (const unsigned char *)buf;
    int *flags = (int *)arg;
    if (!write_p && message[0] == SSL3_MT_CERTIFICATE_REQUEST) *flags |= LARDER_TLS_SAW_CERTIFICATE_REQUEST;
    if (write_p && message[0] == SSL3_MT_CERTIFICATE) {
        // TLS 1.3: type, length(3), context length(1), context, list length(3); TLS 1.2: no context.
        size_t at = 4;
        if (SSL_version(ssl) == TLS1_3_VERSION) {
            at += 1 + (size_t)message[4];
        }
        if (len >= at + 3 && (message[at] | message[at + 1] | message[at + 2]) != 0) {
            *flags |= LARDER_TLS_SENT_CERTIFICATE;
        }
    }
}

/// Starts (`flags` non-NULL) or stops (NULL) `larder_tls_observe_handshake` on `ssl`.
static inline void larder_tls_set_handshake_observer(SSL *_Nonnull ssl, int *_Nullable flags) {
    SSL_set_msg_callback_arg(ssl, flags);
    SSL_set_msg_callback(ssl, flags ? larder_tls_observe_handshake : NULL);
}

/// The session ticket keys of a context: 80 bytes (name, HMAC key, AES key). 1 on success.
enum { LARDER_TLS_TICKET_KEYS_LENGTH = 80 };

static inline int larder_tls_ctx_get_ticket_keys(SSL_CTX *_Nonnull ctx, unsigned char *_Nonnull keys) {
    return (int)SSL_CTX_get_tlsext_ticket_keys(ctx, keys, LARDER_TLS_TICKET_KEYS_LENGTH);
}

static inline int larder_tls_ctx_set_ticket_keys(SSL_CTX *_Nonnull ctx, unsigned char *_Nonnull keys) {
    return (int)SSL_CTX_set_tlsext_ticket_keys(ctx, keys, LARDER_TLS_TICKET_KEYS_LENGTH);
}
