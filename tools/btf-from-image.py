#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Cut the kernel's BTF out of a kernel image (arm64's vmlinuz is a plain Image, gzip'd on some
distributions) so that bpftool can dump it for a kernel this machine does not run.

usage: btf-from-image.py IMAGE OUT

The .BTF section is found by its header (magic 0xeB9F, version 1, a 24-byte header) and its
length is the header's own sum; of the candidates the largest wins (vmlinux's BTF is megabytes,
a stray match a few bytes)."""
import gzip
import struct
import sys

HEADER = struct.Struct("<HBBIIIII")  # magic version flags hdr_len type_off type_len str_off str_len


def btf_blobs(image):
    at = image.find(b"\x9f\xeb\x01\x00")
    while at >= 0:
        if at + HEADER.size <= len(image):
            _, _, _, hdr_len, type_off, type_len, str_off, str_len = HEADER.unpack_from(image, at)
            size = hdr_len + max(type_off + type_len, str_off + str_len)
            if hdr_len == HEADER.size and at + size <= len(image):
                yield image[at:at + size]
        at = image.find(b"\x9f\xeb\x01\x00", at + 1)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    with open(sys.argv[1], "rb") as f:
        image = f.read()
    if image[:2] == b"\x1f\x8b":
        image = gzip.decompress(image)
    blob = max(btf_blobs(image), key=len, default=None)
    if blob is None:
        sys.exit(f"btf-from-image: no BTF in {sys.argv[1]} (a kernel without CONFIG_DEBUG_INFO_BTF?)")
    with open(sys.argv[2], "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main()
