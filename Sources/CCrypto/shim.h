#ifndef SCROLLBACK_CCRYPTO_SHIM_H
#define SCROLLBACK_CCRYPTO_SHIM_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

/* AES-256-GCM with a 12-byte nonce and a 16-byte tag, in one call each way: the cipher
   context's controls are macros and variadic-free, but one C function keeps every step and
   its error check together. `out` has room for `length` bytes (at least 1). 1 on success. */
static inline int scrollback_aes256gcm_seal(const unsigned char *key, const unsigned char *nonce,
                                            const unsigned char *aad, int aad_length,
                                            const unsigned char *in, int length,
                                            unsigned char *out, unsigned char *tag) {
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return 0;
    int written = 0, final = 0;
    int ok = EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1
          && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1
          && EVP_EncryptInit_ex(context, NULL, NULL, key, nonce) == 1
          && (aad_length == 0 || EVP_EncryptUpdate(context, NULL, &written, aad, aad_length) == 1)
          && (length == 0 || EVP_EncryptUpdate(context, out, &written, in, length) == 1)
          && EVP_EncryptFinal_ex(context, out + (length == 0 ? 0 : written), &final) == 1
          && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    EVP_CIPHER_CTX_free(context);
    return ok ? 1 : 0;
}

/* The reverse: 1 when the tag proves `in` and `aad` were sealed under `key`, else 0 (and
   `out` must not be used). */
static inline int scrollback_aes256gcm_open(const unsigned char *key, const unsigned char *nonce,
                                            const unsigned char *aad, int aad_length,
                                            const unsigned char *in, int length,
                                            const unsigned char *tag, unsigned char *out) {
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return 0;
    int written = 0, final = 0;
    unsigned char expected[16];
    for (int i = 0; i < 16; i++) expected[i] = tag[i];
    int ok = EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1
          && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1
          && EVP_DecryptInit_ex(context, NULL, NULL, key, nonce) == 1
          && (aad_length == 0 || EVP_DecryptUpdate(context, NULL, &written, aad, aad_length) == 1)
          && (length == 0 || EVP_DecryptUpdate(context, out, &written, in, length) == 1)
          && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, expected) == 1
          && EVP_DecryptFinal_ex(context, out + (length == 0 ? 0 : written), &final) > 0;
    EVP_CIPHER_CTX_free(context);
    return ok ? 1 : 0;
}

/* HMAC-SHA-256 of `data` under `key` into `out` (32 bytes). 1 on success. */
static inline int scrollback_hmac_sha256(const unsigned char *key, int key_length,
                                         const unsigned char *data, size_t length, unsigned char *out) {
    unsigned int written = 0;
    return HMAC(EVP_sha256(), key, key_length, data, length, out, &written) != NULL && written == 32 ? 1 : 0;
}

#endif
