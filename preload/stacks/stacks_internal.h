/*
 * Internal declarations of the call-stack part of libtrace.so (preload/stacks/).
 * The public side is ctp_stack_here / ctp_stack_at in preload/trace.h.
 *
 *   ahead.c     the work of a first stack done ahead on the writer thread (modules,
 *               libunwind's set-up, the main thread's stack bounds); new files
 *   stacks.c    settings, the unwinder (libunwind, loaded privately), the per-thread
 *               caches (recent stacks by hash; call sites by return address and CFA,
 *               answered by re-reading return-address slots), ctp_stack_at, the
 *               cost accounting
 *   tree.c      the process-wide tree of (parent, pc) nodes and their STACK records
 *   modules.c   the loaded ELF objects (dl_iterate_phdr) and their MODULE records
 *   python.c    the calling thread's Python frames, merged into its native stack
 *   python_code.c  safe reads of CPython objects, PYCODE records, line numbers
 *
 * Locking: the tree lock (tree.c) is taken only on a cache miss; the module table is
 * touched only with the tree lock held. Nothing here is async-signal-safe.
 */
#ifndef CUTRACE_PRELOAD_STACKS_INTERNAL_H
#define CUTRACE_PRELOAD_STACKS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "trace.h"

/* CUTRACE_STACKS values. */
enum ctps_mode { CTPS_OFF = 0, CTPS_LAUNCHES = 1, CTPS_ALL = 2 };

#define CTPS_DEFAULT_DEPTH 32
#define CTPS_MAX_DEPTH 256

/* ---- stacks.c ---- */

/* One throw-away unwind of the calling thread (libunwind sets itself up on its first
 * one); nothing it calls is captured. */
void ctps_unwind_once(void) CTP_HIDDEN;

/* ---- ahead.c ---- */

/* In the constructor: the calling thread is the process's main thread. */
void ctps_ahead_note_main_thread(void) CTP_HIDDEN;

/* Once the unwinder is loaded: registers the work ahead with the writer
 * (ctp_at_writer_round: modules, libunwind's set-up, and the main thread's stack
 * bounds when want_bounds) and the new-file handler (ctp_at_new_file). */
void ctps_ahead_start(int want_bounds) CTP_HIDDEN;

/* 1 with the main thread's stack [lo, hi) when the caller is the main thread and they
 * were found ahead; 0 otherwise (ctps_stack_bounds then). */
int ctps_ahead_main_stack(uint64_t *lo, uint64_t *hi) CTP_HIDDEN;

/* [lo, hi) of thread t's stack (pthread_getattr_np; for the initial thread glibc reads
 * /proc/self/maps, about 100 us). Returns 1, or 0 when unknown. */
int ctps_stack_bounds(pthread_t t, uint64_t *lo, uint64_t *hi) CTP_HIDDEN;

/* Fork child: its one thread is the main thread only if that one forked. */
void ctps_ahead_fork_child(void) CTP_HIDDEN;

/* ---- tree.c ---- */

/*
 * The node id of the stack pcs[0..n-1] (innermost first), inserting the missing
 * nodes root-first and emitting one STACK record for each new node (MODULE records
 * for their objects first). Returns 0 when a table cannot grow. Takes the tree lock.
 */
uint64_t ctps_tree_insert(const uint64_t *pcs, int n) CTP_HIDDEN;

/* The pcs of the stack whose innermost node is id, innermost first, into
 * pcs[0..max). Returns how many. Takes the tree lock. */
int ctps_tree_path(uint64_t id, uint64_t *pcs, int max) CTP_HIDDEN;

/* Nodes in the tree (for tests and statistics). */
uint64_t ctps_tree_nodes(void) CTP_HIDDEN;

/*
 * Fork handlers: prepare takes the tree lock, parent releases it, child re-creates it
 * and marks every node and module to be written again into the child's own file
 * (ids stay valid and continue). ctps_tree_rewrite_if_forked does that writing, in
 * the child's first call.
 */
void ctps_tree_fork_prepare(void) CTP_HIDDEN;
void ctps_tree_fork_parent(void) CTP_HIDDEN;
void ctps_tree_fork_child(void) CTP_HIDDEN;

/*
 * Takes the ahead lock (which fork waits for, and no program thread takes), lists the
 * loaded modules apart (ctps_modules_collect_ahead) unless a stack did already,
 * installs the list under the tree lock (held only for that), calls also(), releases
 * the ahead lock; then writes a TRACER record
 * "modules" (amount = objects) for the listing, when it was done, and one
 * "unwinder" for also() (libunwind's set-up and the main thread's stack bounds).
 * Called once, on the writer thread (stacks.c).
 */
void ctps_tree_scan_modules_ahead(void (*also)(void)) CTP_HIDDEN;

/* A new file of this process image (an exec that failed, ctp_at_new_file): every
 * node and module is to be written again, as in a fork child. Takes the tree lock. */
void ctps_tree_new_file(void) CTP_HIDDEN;

/* 1 in a fork child (or a new file) until its nodes and modules were written again. */
extern int ctps_rewrite_pending CTP_HIDDEN;

/* Writes every node and module again (the child's new file). Takes the tree lock. */
void ctps_tree_rewrite(void) CTP_HIDDEN;

/* ---- modules.c ---- */

/*
 * Makes sure the object containing pc has been described by a MODULE record (with
 * every other known object not yet described), re-scanning the loaded objects
 * (dl_iterate_phdr) first when nothing was scanned yet, or when pc lies in no known
 * object and objects were loaded since the last scan. Called with the tree lock
 * held. Returns 1 when pc lies in a known object, 0 otherwise (JIT code, unmapped).
 */
int ctps_module_cover(uint64_t pc) CTP_HIDDEN;

/* Starts a miss: notes whether objects were loaded since the last scan (one cheap
 * dl_iterate_phdr probe), so that ctps_module_cover re-scans for a pc outside every
 * known object, and re-scans now when objects were unloaded. Tree lock held. */
void ctps_modules_check_changes(void) CTP_HIDDEN;

/* The first scan, ahead of any stack (writer thread, ahead lock held, tree lock not):
 * the loaded objects in a list of its own (free it with ctps_modules_install_ahead),
 * or NULL when a stack scanned them already. */
void *ctps_modules_collect_ahead(void) CTP_HIDDEN;

/* Makes the collected list the live one when no stack scanned meanwhile, interning its
 * strings (no record is written), and frees what is left. Returns the number of
 * objects, or -1 when nothing was installed. Tree lock held. */
long ctps_modules_install_ahead(void *collected) CTP_HIDDEN;

/* Emits every known module again (a fork child's file). Tree lock held. */
void ctps_modules_rewrite(void) CTP_HIDDEN;

/*
 * The [start, end) address range of the ELF object containing addr (all its PT_LOAD
 * segments). Returns 0 when found, -1 otherwise. Used to skip libtrace.so's frames.
 */
int ctps_object_range(const void *addr, uint64_t *start, uint64_t *end) CTP_HIDDEN;

/* ---- python.c ---- */

/* Reads CUTRACE_PYTHON (auto|off); a bad value gets one line and auto. Called at the
 * stacks' start-up; looks for no interpreter yet. */
void ctps_python_configure(void) CTP_HIDDEN;

/*
 * The stack native_id with the calling thread's Python frames merged in (python.c):
 * each _PyEval_EvalFrameDefault frame replaced by the Python frames it runs, the
 * frames of evaluations the native stack did not reach appended outermost; at most
 * depth Python frames. Returns native_id when the process runs no supported
 * interpreter, the thread runs no Python code, Python frames are off, or anything
 * cannot be had. Looks for the interpreter once, at the first call with gpu_work 1.
 * Called under the thread's stacks re-entry guard; never changes errno.
 */
uint64_t ctps_python_merge(uint64_t native_id, int gpu_work, int depth) CTP_HIDDEN;

/* In a fork child's first capture: writes the PYCODE records again (before the
 * tree's nodes). */
void ctps_python_rewrite(void) CTP_HIDDEN;

/* A new file of this process image (ctp_at_new_file): the PYCODE records are to be
 * written again, as in a fork child. */
void ctps_python_new_file(void) CTP_HIDDEN;

#endif
