"""Reads `cutrace dump FILE` output (one record per line, strings by id) into dicts."""
import re
import subprocess

_FIELD = re.compile(r"(\w+)=(\d+)")


def raw_records(cutrace, path):
    """Returns (records, strings): records as dicts with 'kind' (the record's kind) and
    integer fields (a field named kind as 'field_kind'), strings as {id: text}."""
    p = subprocess.run([cutrace, "dump", path], capture_output=True, text=True, timeout=120)
    records, strings = [], {}
    for line in p.stdout.splitlines():
        if line.startswith("string "):
            m = re.match(r'string id=(\d+) "(.*)"$', line)
            if m:
                strings[int(m.group(1))] = m.group(2)
            continue
        kind, _, rest = line.partition(" ")
        rec = {k: int(v) for k, v in _FIELD.findall(rest)}
        if "kind" in rec:  # a record's own kind field (ALLOC: CT_ALLOC_*)
            rec["field_kind"] = rec["kind"]
        rec["kind"] = kind
        records.append(rec)
    return records, strings


def kernel_identifier(name):
    """The plain identifier of a kernel name: '_Z8bias_addPKfS0_Pfi' -> 'bias_add',
    'bias_add(float const*)' -> 'bias_add', anything else unchanged."""
    m = re.match(r"_Z(\d+)", name)
    if m:
        n = int(m.group(1))
        return name[m.end():m.end() + n]
    m = re.match(r"(?:void )?([A-Za-z_]\w*)", name)
    return m.group(1) if m else name


DETAIL_KINDS = ("launch", "memop", "gemm", "graph_launch", "alloc")


def details_not_first(records):
    """[(kind, corr)] of each detail record (LAUNCH, MEMOP, GEMM, GRAPH_LAUNCH, ALLOC) that
    does not come before its call's API record in the file: the preload writes a call's
    detail first (CTPH_FINISH), so that the writer cannot cut it off from its call."""
    api_at = {}
    for i, r in enumerate(records):
        if r["kind"] == "api" and r.get("corr"):
            api_at.setdefault(r["corr"], i)
    return [(r["kind"], r["corr"]) for i, r in enumerate(records)
            if r["kind"] in DETAIL_KINDS and r.get("corr") and api_at.get(r["corr"], -1) < i]
