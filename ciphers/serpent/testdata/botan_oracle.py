#!/usr/bin/env python3
"""Serpent oracle backed by the Botan 2 shared library (its C FFI, via ctypes).

Reads one request per line on stdin and prints one hex result per line:
  ecb-enc KEY DATA      Serpent encryption of whole blocks
  ecb-dec KEY DATA      Serpent decryption of whole blocks
  xts-enc KEY NONCE DATA   Botan's "Serpent/XTS": KEY is K1||K2, NONCE the
  xts-dec KEY NONCE DATA   16-byte data unit number Botan encrypts with K2
All values are hex. Used by serpent's tests as an independent implementation.
"""
import ctypes
import ctypes.util
import sys

def load():
    for name in ("libbotan-2.so.19", "libbotan-2.so", ctypes.util.find_library("botan-2")):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    sys.exit("botan library not found")

lib = load()

def check(rc, what):
    if rc != 0:
        raise RuntimeError("%s failed: %d" % (what, rc))

def ecb(key, data, decrypt):
    obj = ctypes.c_void_p()
    check(lib.botan_block_cipher_init(ctypes.byref(obj), b"Serpent"), "init")
    check(lib.botan_block_cipher_set_key(obj, key, ctypes.c_size_t(len(key))), "set_key")
    out = ctypes.create_string_buffer(len(data))
    f = lib.botan_block_cipher_decrypt_blocks if decrypt else lib.botan_block_cipher_encrypt_blocks
    check(f(obj, data, out, ctypes.c_size_t(len(data) // 16)), "blocks")
    lib.botan_block_cipher_destroy(obj)
    return out.raw

def xts(key, nonce, data, decrypt):
    obj = ctypes.c_void_p()
    check(lib.botan_cipher_init(ctypes.byref(obj), b"Serpent/XTS", ctypes.c_uint32(1 if decrypt else 0)), "cipher_init")
    check(lib.botan_cipher_set_key(obj, key, ctypes.c_size_t(len(key))), "cipher_set_key")
    check(lib.botan_cipher_start(obj, nonce, ctypes.c_size_t(len(nonce))), "cipher_start")
    out = ctypes.create_string_buffer(len(data))
    written, consumed = ctypes.c_size_t(0), ctypes.c_size_t(0)
    check(lib.botan_cipher_update(obj, ctypes.c_uint32(1), out, ctypes.c_size_t(len(data)), ctypes.byref(written),
                                  data, ctypes.c_size_t(len(data)), ctypes.byref(consumed)), "cipher_update")
    lib.botan_cipher_destroy(obj)
    if written.value != len(data):
        raise RuntimeError("short XTS output")
    return out.raw

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] in ("ecb-enc", "ecb-dec"):
        r = ecb(bytes.fromhex(f[1]), bytes.fromhex(f[2]), f[0] == "ecb-dec")
    elif f[0] in ("xts-enc", "xts-dec"):
        r = xts(bytes.fromhex(f[1]), bytes.fromhex(f[2]), bytes.fromhex(f[3]), f[0] == "xts-dec")
    else:
        sys.exit("unknown request " + f[0])
    print(r.hex())
