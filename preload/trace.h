/*
 * The preload's internal interface between its two halves:
 *   preload/core/   the recording machinery: start-up and configuration, per-thread
 *                   buffers, string interning, the writer thread and its sink,
 *                   process metadata, exit / fork / fatal-signal handling.
 *   preload/hooks/  the interception: resolution of the real entry points (one list,
 *                   include/cutrace/hooks.def), the wrappers, GPU timing with CUDA
 *                   events, the poller thread and clock anchoring.
 * Hooks build ct_record values (include/cutrace/format.h) and hand them to the
 * core with ctp_emit; they never write files themselves.
 *
 * Everything here is hidden (not exported from libtrace.so).
 */
#ifndef CUTRACE_PRELOAD_TRACE_H
#define CUTRACE_PRELOAD_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cutrace/format.h"

#define CTP_HIDDEN __attribute__((visibility("hidden")))
#define CTP_EXPORT __attribute__((visibility("default")))
#define CTP_LIKELY(x) __builtin_expect(!!(x), 1)
#define CTP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* CTP_TSAN: 1 in a ThreadSanitizer build (scripts/tsan); CTP_ASAN: 1 in
 * an AddressSanitizer build (scripts/asan). CTP_NO_SANITIZE leaves a
 * function uninstrumented there: code that can run while the sanitizer's runtime is
 * still initialising itself, which looks up the functions it intercepts with
 * dlsym(RTLD_NEXT), i.e. with our dlsym (preload/driver/dlsym_hook.c), before its
 * shadow memory (ASan) or thread state (TSan) exists. */
#if defined(__SANITIZE_THREAD__)
#define CTP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CTP_TSAN 1
#endif
#endif
#ifndef CTP_TSAN
#define CTP_TSAN 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CTP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTP_ASAN 1
#endif
#endif
#ifndef CTP_ASAN
#define CTP_ASAN 0
#endif
#if !CTP_TSAN && !CTP_ASAN
#define CTP_NO_SANITIZE
#elif defined(__clang__)
#define CTP_NO_SANITIZE __attribute__((disable_sanitizer_instrumentation))
#elif CTP_TSAN
#define CTP_NO_SANITIZE __attribute__((no_sanitize_thread))
#else
#define CTP_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))
#endif

/* The host clock every record uses: CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t ctp_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 1 once the tracer is recording, 0 before start-up, when disabled
 * (CUTRACE_DISABLE=1, no usable output) or after the final flush. Hooks test it
 * before doing any tracing work and otherwise only forward the call. */
extern int ctp_enabled CTP_HIDDEN;

/* ctp_enabled, from any thread: the writer thread (its sink failed to open) and the
 * final flush turn it off while the program's threads test it, so it is read
 * atomically (found by ThreadSanitizer, scripts/tsan); on x86-64 and arm64 an acquire
 * load of an int is the same plain load instruction. */
static inline int ctp_is_enabled(void) { return __atomic_load_n(&ctp_enabled, __ATOMIC_ACQUIRE); }

/* 1 while the tracer does not record the program (a pause: CUTRACE_DELAY,
 * CUTRACE_CAPTURE=profiler, CUTRACE_DURATION; preload/core/window.c). */
extern int ctp_paused CTP_HIDDEN;

/* Bumped each time a pause begins: a thread's spin of queries (preload/hooks/poll.c) that
 * began under another value ends at its last poll instead of going on across the pause. */
extern uint32_t ctp_pause_epoch CTP_HIDDEN;

/* When the current recording window ends (CUTRACE_DURATION); UINT64_MAX when never. It
 * keeps its value once passed (tracing is then paused for good). */
extern uint64_t ctp_stop_at_ns CTP_HIDDEN;

/* Called while paused: ends the pause when its delay is over. Returns 1 when
 * recording now. Never changes errno. */
int ctp_window_poll(void) CTP_HIDDEN;

/* Called when a recorded call begins at or after ctp_stop_at_ns: the pause of
 * CUTRACE_DURATION begins (at ctp_stop_at_ns). Never changes errno. */
void ctp_window_expire(void) CTP_HIDDEN;

/* cudaProfilerStart (start 1) or cudaProfilerStop (0): under CUTRACE_CAPTURE=profiler,
 * opens or closes a recording window; otherwise nothing. Never changes errno. */
void ctp_window_profiler(int start) CTP_HIDDEN;

/* The string id of the NVTX range name of CUTRACE_CAPTURE=nvtx:NAME, 0 when none. */
extern uint64_t ctp_capture_range_name CTP_HIDDEN;

/* A range named ctp_capture_range_name opened (open 1) or closed (0) on some thread:
 * the program is recorded while at least one is open. Never changes errno. */
void ctp_window_range(int open) CTP_HIDDEN;

/* Whether something that began at begin_ns and ends now overlapped a recording
 * window (an NVTX range closing during a pause is written only then). */
int ctp_window_saw(uint64_t begin_ns) CTP_HIDDEN;

/*
 * Starts the tracer once: reads the environment, opens the output, writes the
 * PROCESS record, starts the writer thread. Called from libtrace.so's constructor
 * and lazily by hooks (a hook may run before the constructor). Never exits, never
 * changes errno. Returns ctp_enabled.
 */
int ctp_start(void) CTP_HIDDEN;

/*
 * Appends rec to the calling thread's buffer. The first record of a thread is
 * preceded by its THREAD record. Lock-free and non-blocking: when the buffer is
 * full the record is dropped and counted, and a DROP record reports the count
 * later. Does nothing when tracing is off. Not async-signal-safe.
 */
void ctp_emit(const ct_record *rec) CTP_HIDDEN;

/*
 * The id of the string s (len bytes), interning it on first use: the STRING record
 * defining it is guaranteed to reach the file before any record emitted by any
 * thread after this call returns. Thread-safe, O(1) on average for known strings.
 * Returns 0 for NULL or when tracing is off.
 */
uint64_t ctp_intern_n(const char *s, size_t len) CTP_HIDDEN;

/* ctp_intern_n for a NUL-terminated string. */
uint64_t ctp_intern(const char *s) CTP_HIDDEN;

/* A new process-wide correlation id (1, 2, 3, ...). Lock-free. */
uint64_t ctp_next_corr(void) CTP_HIDDEN;

/* The calling thread's kernel thread id (cached per thread). */
uint64_t ctp_tid(void) CTP_HIDDEN;

/*
 * Writes the calling thread's open spins of coalesced queries (preload/hooks/poll.c) as
 * they stand, so that none straddles an NVTX range's edge: called on each push and pop.
 * Costs a thread-local load when none is open. Leaves errno.
 */
void ctph_poll_break(void) CTP_HIDDEN;

/*
 * Registers fn to run at normal process exit before the core writes its last frames
 * and the END record (the hooks drain outstanding GPU timings there). At most 8.
 */
void ctp_at_final_flush(void (*fn)(void)) CTP_HIDDEN;

/*
 * Registers fn to run when tracing goes on into a new file of the same process image
 * (an exec that failed: docs/preload.md, "Process lifetime"), before anything is
 * recorded there: fn marks what the new file must describe again (the stack tree and
 * its modules). At most 4. (A fork child's new file is the atfork handlers' business.)
 */
void ctp_at_new_file(void (*fn)(void)) CTP_HIDDEN;

/*
 * The process shows it will use CUDA (the runtime or a library looks up the driver's
 * entry points): its trace file is opened (a process that never shows this, never
 * records and ends without libcuda or libcudart loaded leaves none: docs/preload.md
 * "Processes without CUDA") and the writer thread makes its ready rings now
 * (CUTRACE_RING_POOL), so that the threads' first records find them. Until this, or
 * the process's first record, a process keeps none (a shell, a launcher, a compile
 * worker pays neither their CPU nor their memory). Cheap after the first call (one
 * load); the first call may start the writer thread (not async-signal-safe then);
 * keeps errno.
 */
void ctp_ring_pool_want(void) CTP_HIDDEN;

/*
 * Registers fn to run on the writer thread after each of its rounds once a thread of
 * the process has recorded something (at most 1; later ones are ignored with a
 * warning): work the preload can do ahead of the program's need, off the program's
 * threads (preload/stacks/ lists the loaded modules there), and not at all in a
 * process that records nothing (a shell, a launcher). fn must be quick once its
 * work is done; it may emit TRACER records and intern strings.
 */
void ctp_at_writer_round(void (*fn)(void)) CTP_HIDDEN;

/*
 * Writes "cutrace: <message>\n" to stderr in one write unless CUTRACE_QUIET is set to
 * anything but 0/no (also before the configuration is loaded: a constructor's knob);
 * keeps errno. For a knob's bad value, as "NAME='value' is not ...; using DEFAULT".
 */
void ctp_warn(const char *fmt, ...) CTP_HIDDEN __attribute__((format(printf, 1, 2)));

/*
 * Gives the calling thread its buffer now, if tracing is on and it has none (its
 * THREAD record, and a TRACER "ring" span when no ready ring was in the pool), so
 * that a record timed afterwards does not include that cost. For the tracer's own
 * threads (the poller), before their first timed work.
 */
void ctp_thread_ready(void) CTP_HIDDEN;

/*
 * Emits a TRACER record for the tracer's own work on the calling thread: what is a
 * label ("flush", "poll", "anchor", ...), amount what it handled (bytes, events).
 */
void ctp_emit_tracer(const char *what, uint64_t begin_ns, uint64_t end_ns, uint64_t amount)
    CTP_HIDDEN;

/*
 * The call stack of the intercepted call being recorded (preload/stacks/): the id of
 * the STACK node of its call site, the innermost frame outside libtrace.so, emitting
 * the STACK (and MODULE) records it needs first. gpu_work is 1 for calls that queue
 * GPU work (launches, copies, sets, GEMMs, graph launches). Returns 0 when stacks
 * are off (CUTRACE_STACKS), not wanted for this call (launches only and gpu_work is
 * 0), on re-entry, or when the stack cannot be taken. Never changes errno.
 */
uint64_t ctp_stack_here(int gpu_work) CTP_HIDDEN;

/*
 * The process reaches CUDA (a CUDA entry point fetched through dlsym or
 * cuGetProcAddress: driver/usage.c): sets the call stacks up now (loads libunwind)
 * unless done. A process that had CUDA loaded at start-up did so in its constructor;
 * one that never reaches CUDA never does. Thread-safe (pthread_once: a second caller
 * waits for the first); not for a signal handler (a dlopen). Keeps errno.
 */
void ctp_stacks_prepare(void) CTP_HIDDEN;

/*
 * ctp_stack_here for a call site known to the caller: site_ra is the return address
 * into the code that called the intercepted entry point and site_cfa the entry
 * point's canonical frame address (__builtin_return_address(0) and
 * __builtin_dwarf_cfa() in the exported wrapper). A stack seen before from the same
 * site and stack depth is then recognised by re-reading its return-address slots
 * instead of unwinding. NULLs: same as ctp_stack_here. after_ns: when the intercepted
 * call returned (ctp_now_ns; the capture follows at once), so that the capture cost
 * written in the trace never covers time the thread spent away from the tracer
 * (stacks.c); 0 = unknown.
 */
uint64_t ctp_stack_at(int gpu_work, const void *site_ra, const void *site_cfa,
                      uint64_t after_ns) CTP_HIDDEN;

#endif
