"""A small reader of the Perfetto protobuf traces `cutrace dump --perfetto` writes
(stdlib only), for the tests: decodes the wire format, resolves interned strings and
track descriptors, and turns the packets into the events a viewer shows, the way
Perfetto's trace_processor does (events sorted by timestamp, ties in file order;
a TYPE_SLICE_END closes the last open slice of its track; a TYPE_INSTANT is an event
of its own, a slice of no duration).

Field numbers are Perfetto's (google/perfetto, protos/perfetto/trace/, commit
ec5d16b14b74): Trace.packet = 1 (trace.proto); TracePacket timestamp = 8,
trusted_packet_sequence_id = 10, track_event = 11, interned_data = 12,
sequence_flags = 13, track_descriptor = 60 (trace_packet.proto); TrackEvent
category_iids = 3, debug_annotations = 4, type = 9, name_iid = 10, track_uuid = 11,
counter_value = 30, flow_ids = 47 (fixed64), terminating_flow_ids = 48 (fixed64),
types TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4
(track_event/track_event.proto); TrackDescriptor uuid = 1, name = 2, process = 3,
thread = 4, parent_uuid = 5, counter = 8, child_ordering = 11, sibling_order_rank = 12
(track_descriptor.proto); CounterDescriptor unit = 3 (UNIT_SIZE_BYTES = 3)
(track_event/counter_descriptor.proto); ProcessDescriptor pid = 1, process_name = 6; ThreadDescriptor
pid = 1, tid = 2, thread_name = 5; DebugAnnotation name_iid = 1, uint_value = 3,
int_value = 4, double_value = 5, dict_entries = 11, array_values = 12,
string_value_iid = 17 (track_event/debug_annotation.proto); InternedData
event_categories = 1, event_names = 2, debug_annotation_names = 3,
debug_annotation_string_values = 29, each entry iid = 1, name (or str) = 2
(interned_data/interned_data.proto)."""
import struct

SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE = 1, 2
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
INTERNED_KINDS = {1: "category", 2: "name", 3: "annotation", 29: "string"}


class FormatError(Exception):
    """The bytes are not what the writer should have written."""


def varint(buf, i):
    """The varint at buf[i:]: (value, next index)."""
    v = shift = 0
    while True:
        if i >= len(buf):
            raise FormatError("truncated varint")
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i
        if shift > 63:
            raise FormatError("varint longer than 10 bytes")


def fields(buf):
    """The fields of one message in order: [(number, value)], value an int (varint,
    fixed64) or bytes (length-delimited)."""
    out, i = [], 0
    while i < len(buf):
        tag, i = varint(buf, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            if i + 8 > len(buf):
                raise FormatError("truncated fixed64")
            v, i = struct.unpack_from("<Q", buf, i)[0], i + 8
        elif wt == 2:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise FormatError(f"field {num}: length {n} past the end")
            v, i = bytes(buf[i:i + n]), i + n
        else:
            raise FormatError(f"field {num}: wire type {wt} not written by cutrace")
        out.append((num, v))
    return out


def one(fs, num, default=None):
    """The last value of field num (protobuf's rule for a repeated scalar), or default."""
    vals = [v for n, v in fs if n == num]
    return vals[-1] if vals else default


def many(fs, num):
    return [v for n, v in fs if n == num]


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


class Trace:
    """A decoded trace: tracks {uuid: dict}, slices, instants, counters, flows, problems."""

    def __init__(self, data):
        self.problems = []
        self.tracks = {}
        self.packets = 0
        self.clears = 0
        self.interned_count = 0
        self._tables = None  # kind -> {iid: str}; None until the state is cleared
        events = []  # (ts, order, kind, payload)
        for num, pkt in fields(data):
            if num != 1 or not isinstance(pkt, bytes):
                raise FormatError(f"Trace field {num}: only packet = 1 expected")
            self._packet(pkt, events)
        self._build(events)

    def _problem(self, what):
        if len(self.problems) < 20:
            self.problems.append(what)

    def _str(self, kind, iid):
        table = (self._tables or {}).get(kind, {})
        if iid not in table:
            self._problem(f"{kind} iid {iid} not interned")
            return f"<{kind} {iid}>"
        return table[iid]

    def _annotation(self, fs, named=True):
        """A DebugAnnotation as (name, value); value None when it has none."""
        name = self._str("annotation", one(fs, 1)) if named else None
        if one(fs, 3) is not None:
            return name, one(fs, 3)
        if one(fs, 4) is not None:
            return name, signed(one(fs, 4))
        if one(fs, 5) is not None:
            return name, struct.unpack("<d", struct.pack("<Q", one(fs, 5)))[0]
        if one(fs, 17) is not None:
            return name, self._str("string", one(fs, 17))
        if many(fs, 11):
            return name, dict(self._annotation(fields(e)) for e in many(fs, 11))
        if many(fs, 12):
            return name, [self._annotation(fields(e), False)[1] for e in many(fs, 12)]
        return name, None

    def _packet(self, pkt, events):
        self.packets += 1
        fs = fields(pkt)
        order = self.packets
        if one(fs, 10) != 1:
            self._problem(f"packet {order}: trusted_packet_sequence_id {one(fs, 10)}")
        flags = one(fs, 13, 0)
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            self._tables = {k: {} for k in INTERNED_KINDS.values()}
            self.clears += 1
        if one(fs, 12) is not None:
            if self._tables is None:
                self._problem(f"packet {order}: interned data before the state was cleared")
                self._tables = {k: {} for k in INTERNED_KINDS.values()}
            for num, entry in fields(one(fs, 12)):
                kind = INTERNED_KINDS.get(num)
                if kind is None:
                    self._problem(f"interned field {num}")
                    continue
                e = fields(entry)
                iid = one(e, 1)
                if iid in self._tables[kind]:
                    self._problem(f"{kind} iid {iid} interned twice")
                self._tables[kind][iid] = one(e, 2, b"").decode("utf-8", "replace")
                self.interned_count += 1
        if one(fs, 60) is not None:
            self._descriptor(fields(one(fs, 60)))
        te = one(fs, 11)
        if te is None:
            return
        te = fields(te)
        uses_interning = one(te, 10) is not None or many(te, 3) or many(te, 4)
        if uses_interning and not flags & SEQ_NEEDS_INCREMENTAL_STATE:
            self._problem(f"packet {order}: interned references without SEQ_NEEDS_INCREMENTAL_STATE")
        uuid = one(te, 11)
        if uuid not in self.tracks:
            self._problem(f"packet {order}: track {uuid} used before its descriptor")
        ts, typ = one(fs, 8), one(te, 9)
        if typ in (SLICE_BEGIN, INSTANT):
            cats = [self._str("category", c) for c in many(te, 3)]
            args = dict(self._annotation(fields(a)) for a in many(te, 4))
            events.append((ts, order, typ, {
                "track": uuid, "name": self._str("name", one(te, 10)),
                "cat": cats[0] if len(cats) == 1 else cats, "args": args,
                "flow_out": many(te, 47), "flow_in": many(te, 48), "packet": order}))
        elif typ == SLICE_END:
            if one(te, 10) is not None or many(te, 4):
                self._problem(f"packet {order}: a slice end with a name or args")
            events.append((ts, order, SLICE_END, {"track": uuid}))
        elif typ == COUNTER:
            events.append((ts, order, COUNTER, {"track": uuid, "value": signed(one(te, 30, 0))}))
        else:
            self._problem(f"packet {order}: track event type {typ}")

    def _descriptor(self, d):
        uuid = one(d, 1)
        t = {"uuid": uuid, "parent": one(d, 5), "name": one(d, 2, b"").decode(),
             "rank": one(d, 12), "counter": one(d, 8) is not None,
             "unit": one(fields(one(d, 8)), 3) if one(d, 8) else None}
        if one(d, 3) is not None:
            p = fields(one(d, 3))
            t.update(kind="process", pid=one(p, 1), name=one(p, 6, b"").decode())
        elif one(d, 4) is not None:
            th = fields(one(d, 4))
            t.update(kind="thread", pid=one(th, 1), tid=one(th, 2), name=one(th, 5, b"").decode())
        else:
            t["kind"] = "counter" if t["counter"] else "custom"
        if t["kind"] == "thread" and t["parent"] is not None:
            self._problem(f"thread track {uuid} with a parent_uuid")
        if t["parent"] is not None and t["parent"] not in self.tracks:
            self._problem(f"track {uuid}: parent {t['parent']} not described before it")
        old = self.tracks.get(uuid)
        if old and (old["kind"], old["parent"]) != (t["kind"], t["parent"]):
            self._problem(f"track {uuid} described as two different tracks")
        self.tracks[uuid] = t

    def _build(self, events):
        """Slices from begin/end pairs per track (sorted by time, ties in file order),
        counters, and the flows' two ends."""
        events.sort(key=lambda e: (e[0], e[1]))
        open_ = {}
        self.slices, self.instants, self.counters = [], [], []
        for ts, _, kind, p in events:
            if kind == INSTANT:
                self.instants.append(dict(p, ts=ts))
            elif kind == SLICE_BEGIN:
                s = dict(p, ts=ts, dur=None)
                open_.setdefault(p["track"], []).append(s)
                self.slices.append(s)
            elif kind == SLICE_END:
                stack = open_.get(p["track"])
                if not stack:
                    self._problem(f"slice end at {ts} on track {p['track']} with nothing open")
                    continue
                s = stack.pop()
                s["dur"] = ts - s["ts"]
            else:
                self.counters.append({"track": p["track"], "ts": ts, "value": p["value"]})
        for stack in open_.values():
            for s in stack:
                self._problem(f"slice {s['name']} at {s['ts']} never ends")
        self.flows = {}
        for s in self.slices:
            for fid in s["flow_out"]:
                self.flows.setdefault(fid, {}).setdefault("out", []).append(s)
            for fid in s["flow_in"]:
                self.flows.setdefault(fid, {}).setdefault("in", []).append(s)

    def place(self, uuid):
        """(row name, track name) of a track: its parent's name (a thread's: its
        process's, found by pid) and its own."""
        t = self.tracks.get(uuid, {})
        if t.get("kind") == "thread":
            if not hasattr(self, "_process_names"):
                self._process_names = {p["pid"]: p["name"] for p in self.tracks.values()
                                       if p["kind"] == "process"}
            return self._process_names.get(t["pid"]), t["name"]
        parent = self.tracks.get(t.get("parent"), {})
        return parent.get("name"), t.get("name")


def read(path):
    with open(path, "rb") as f:
        return Trace(f.read())
