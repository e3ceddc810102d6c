#!/usr/bin/env python3
"""Lists what the CUDA fat binaries embedded in a file hold.

    fatbin.py FILE

prints one line per fat binary found in FILE (an artifact, an object, a raw
fatbin): its entries as `ptx sm_90` (PTX for that virtual arch) or
`cubin sm_90` (machine code). The layout is the one `fatbinary` writes: a
16-byte header (magic 0xBA55ED50, version, header size, payload size), then
entries, each with a header of its own: kind (1 PTX, 2 ELF), header size,
payload size, ..., arch at byte 28.
"""
import struct
import sys

MAGIC = 0xBA55ED50
KINDS = {1: "ptx", 2: "cubin"}


def entries(data, start):
    magic, version, header, size = struct.unpack_from("<IHHQ", data, start)
    pos, end = start + header, start + header + size
    out = []
    while pos + 32 <= end:
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, pos)
        arch = struct.unpack_from("<I", data, pos + 28)[0]
        if entry_header == 0:
            break
        out.append(f"{KINDS.get(kind, f'kind{kind}')} sm_{arch}")
        pos += entry_header + payload
    return out


def main():
    data = open(sys.argv[1], "rb").read()
    magic = struct.pack("<I", MAGIC)
    pos, found = data.find(magic), 0
    while pos >= 0:
        listed = entries(data, pos)
        if listed:
            print("fatbin: " + ", ".join(listed))
            found += 1
        pos = data.find(magic, pos + 4)
    print(f"{found} fat binaries")


if __name__ == "__main__":
    main()
