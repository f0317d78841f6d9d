"""Checks of Chrome Trace Event JSON shared by the tools' and end-to-end tests (stdlib
only)."""


def trace_event_format_problem(doc):
    """The first way doc breaks the Trace Event Format as cutrace writes it, or None:
    a top-level object with a traceEvents list; X events with name, cat, ph, pid, tid,
    numeric ts, dur >= 0 and an args object; flow events s/f with id, ts, pid, tid, cat,
    name (f with bp "e"); M events naming or ordering processes and threads; C events
    (counters: --queues, memory) with name, cat, pid, numeric ts and one numeric arg;
    i events (Kineto's [memory]) with name, cat, pid, tid, numeric ts, thread scope
    (s "t") and an args object of numbers."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return "no traceEvents list"
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "X":
            ok = all(k in e for k in ("name", "cat", "pid", "tid", "ts", "dur", "args")) and \
                isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and \
                e["dur"] >= 0 and isinstance(e["args"], dict)
        elif ph in ("s", "f"):
            ok = all(k in e for k in ("id", "ts", "pid", "tid", "cat", "name")) and \
                (ph == "s" or e.get("bp") == "e")
        elif ph == "C":
            ok = all(k in e for k in ("name", "cat", "pid", "ts")) and \
                isinstance(e["ts"], (int, float)) and isinstance(e.get("args"), dict) and \
                len(e["args"]) == 1 and all(isinstance(v, int) for v in e["args"].values())
        elif ph == "i":
            ok = all(k in e for k in ("name", "cat", "pid", "tid", "ts")) and \
                isinstance(e["ts"], (int, float)) and e.get("s") == "t" and \
                isinstance(e.get("args"), dict) and all(isinstance(v, int) for v in e["args"].values())
        elif ph == "M":
            ok = e.get("name") in ("process_name", "thread_name", "process_sort_index",
                                   "thread_sort_index") and isinstance(e.get("args"), dict)
        else:
            ok = False
        if not ok:
            return f"bad event {e}"
    return None


def annotation_extents(doc, cat="gpu_user_annotation"):
    """{(name, pid, tid): [(ts, end)]} of the slices of category cat."""
    out = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == cat:
            out.setdefault((e["name"], e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    return out
