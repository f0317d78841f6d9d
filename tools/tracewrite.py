"""Writes cutrace trace files from Python (stdlib only), for tests that need a trace of
exactly known content: planted scenarios the preload cannot (yet) produce.

The record kinds and their fields are read from include/cutrace/format.h, so a trace
written here follows the same schema as the preload's. The records go into one zstd
frame made of raw (stored) blocks: a valid frame (RFC 8878, content size given, no
checksum) that needs no compressor.

    w = TraceWriter()
    s = w.string("cublasSgemm_v2")            # interned string id
    w.add("api", tid=1, name=s, begin_ns=10, end_ns=20, corr=1)
    w.save("/tmp/x.ctr")

w.frame() ends the current frame there: the records after it go into the next one (the
delta state starts from zero again, as in a preload's chunk).
"""
import os
import re
import struct

FORMAT_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "include", "cutrace",
                        "format.h")


def read_schema(path=FORMAT_H):
    """{kind name: (kind id, [(field, 'D'|'P'), ...])} and the format version, from format.h."""
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S).replace("\\\n", " ")
    kinds = {m.group(3): int(m.group(2))
             for m in re.finditer(r"X\((\w+),\s*(\d+),\s*(\w+)\)", text)}
    schema = {}
    for m in re.finditer(r"#define CT_FIELDS_(\w+)\(F\)(.*)", text):
        schema[m.group(1)] = (kinds[m.group(1)], re.findall(r"F\((\w+),\s*([DP])\)", m.group(2)))
    major = int(re.search(r"#define CT_FORMAT_MAJOR (\d+)", text).group(1))
    minor = int(re.search(r"#define CT_FORMAT_MINOR (\d+)", text).group(1))
    return schema, (major, minor)


def _varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _zigzag(delta):
    delta &= (1 << 64) - 1
    signed = delta - (1 << 64) if delta >> 63 else delta
    return ((delta << 1) ^ (signed >> 63)) & ((1 << 64) - 1)


def _raw_frame(content):
    """One zstd frame holding content in raw blocks (single segment, 8-byte size)."""
    out = bytearray(struct.pack("<I", 0xFD2FB528))
    out.append(0xE0)  # frame content size 8 bytes, single segment, no checksum
    out += struct.pack("<Q", len(content))
    pos = 0
    while True:
        block = content[pos:pos + (128 << 10)]
        pos += len(block)
        last = pos >= len(content)
        out += struct.pack("<I", (len(block) << 3) | int(last))[:3]  # raw block
        out += block
        if last:
            return bytes(out)


class TraceWriter:
    """Records encoded as the preload encodes them, saved as one trace file."""

    def __init__(self, format_h=FORMAT_H):
        self.schema, self.version = read_schema(format_h)
        self.prev = {}
        self.body = bytearray()
        self.strings = {}
        self.breaks = []  # body offsets where a new frame starts

    def string(self, text):
        """The id of text, writing its STRING record the first time."""
        if text in self.strings:
            return self.strings[text]
        sid = len(self.strings) + 1
        self.strings[text] = sid
        raw = text.encode() if isinstance(text, str) else text
        prev = self.prev.setdefault("string", [0])
        self.body += bytes([self.schema["string"][0]]) + _varint(_zigzag(sid - prev[0]))
        self.body += _varint(_zigzag(len(raw))) + raw
        prev[0] = sid
        return sid

    def string_again(self, sid, text):
        """Writes a STRING record redefining id sid (only damaged traces do that)."""
        raw = text.encode() if isinstance(text, str) else text
        prev = self.prev.setdefault("string", [0])
        self.body += bytes([self.schema["string"][0]]) + _varint(_zigzag(sid - prev[0]))
        self.body += _varint(_zigzag(len(raw))) + raw
        prev[0] = sid

    def add(self, kind, /, **fields):
        """Appends one record; fields not given are 0. Unknown field names are an error."""
        kid, flist = self.schema[kind]
        names = [f for f, _ in flist]
        bad = set(fields) - set(names)
        if bad:
            raise ValueError(f"{kind} has no field {sorted(bad)}")
        values = [fields.get(f, 0) for f in names]
        prev = self.prev.setdefault(kind, [0] * len(names))
        out = bytearray([kid])
        for i, ((_, enc), v) in enumerate(zip(flist, values)):
            base = values[i - 1] if enc == "P" and i > 0 else prev[i]
            out += _varint(_zigzag(v - base))
            prev[i] = v
        self.body += out

    def frame(self):
        """Ends the current frame (if it holds anything): what follows starts a new frame,
        its delta state from zero."""
        if len(self.body) > (self.breaks[-1] if self.breaks else 0):
            self.breaks.append(len(self.body))
        self.prev = {}

    def save(self, path):
        """Writes header, schema and the records as one frame (or the frames frame() ended)."""
        kinds = sorted(self.schema.values())
        schema = bytearray([len(kinds)])
        for kid, flist in kinds:
            schema += bytes([kid, len(flist)]) + bytes(1 if e == "D" else 2 for _, e in flist)
        header = b"CUTRACE\x01" + struct.pack("<HHIQQ", self.version[0], self.version[1],
                                              len(schema), 0, 0)
        with open(path, "wb") as f:
            f.write(header + bytes(schema))
            for start, end in zip([0] + self.breaks, self.breaks + [len(self.body)]):
                if end > start or not self.breaks:
                    f.write(_raw_frame(bytes(self.body[start:end])))
