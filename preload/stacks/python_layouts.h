/*
 * Where CPython keeps what preload/stacks/python.c reads: byte offsets into the
 * thread state, the interpreter frame, the code object and the str/bytes objects,
 * per minor version (x86-64, default non-debug, GIL build).
 *
 * Sources (CPython tags v3.11.7, v3.12.1, v3.13.0; the offsets were taken with
 * offsetof() against each version's installed internal headers and checked against
 * the struct definitions):
 *   PyThreadState.cframe, _PyCFrame.current_frame     Include/cpython/pystate.h (3.11, 3.12)
 *   PyThreadState.current_frame                        Include/cpython/pystate.h (3.13)
 *   _PyInterpreterFrame: f_code (3.11, 3.12) / f_executable (3.13), previous,
 *     prev_instr (3.11, 3.12) / instr_ptr (3.13), is_entry (3.11), owner
 *                                                      Include/internal/pycore_frame.h
 *   FRAME_OWNED_BY_GENERATOR 1, FRAME_OWNED_BY_CSTACK 3 (3.12+: the entry shim that
 *     _PyEval_EvalFrameDefault pushes; 3.11 marks its first frame with is_entry)
 *                                                      Include/internal/pycore_frame.h
 *   _PyFrame_IsIncomplete (a frame that has not reached its first traceable
 *     instruction: prev_instr/instr_ptr < code + _co_firsttraceable units, unless
 *     owned by a generator)                            Include/internal/pycore_frame.h
 *   PyCodeObject (_PyCode_DEF): co_firstlineno, co_filename, co_name, co_qualname,
 *     co_linetable, _co_firsttraceable, co_code_adaptive; ob_size = code units
 *                                                      Include/cpython/code.h
 *   PyASCIIObject.length, .state (interned:2, kind:3, compact:1, ascii:1),
 *     sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject)
 *                                                      Include/cpython/unicodeobject.h
 *   PyBytesObject.ob_sval                              Include/cpython/bytesobject.h
 * 3.13 and later also describe most of this at run time in _PyRuntime.debug_offsets
 * (_Py_DebugOffsets, Include/internal/pycore_runtime.h in v3.13.0: cookie "xdebugpy",
 * version = PY_VERSION_HEX, free_threaded, then groups of uint64 offsets, each group
 * starting with its struct's size). python.c takes the 3.13 offsets from there and
 * the two it lacks (_co_firsttraceable, sizeof(PyCompactUnicodeObject)) from here.
 */
#ifndef CUTRACE_PRELOAD_PYTHON_LAYOUTS_H
#define CUTRACE_PRELOAD_PYTHON_LAYOUTS_H

#include <stdint.h>

/* One interpreter version's offsets (bytes). -1: the field does not exist. */
struct ctpy_layout {
  int minor;              /* 3.<minor> */
  int32_t ts_cframe;      /* PyThreadState.cframe; -1: current_frame is in the thread state */
  int32_t current_frame;  /* _PyCFrame.current_frame, or PyThreadState.current_frame */
  int32_t fr_code, fr_previous, fr_instr, fr_owner;
  int32_t fr_is_entry;    /* 3.11's bool is_entry */
  int32_t owner_cstack;   /* the shim frames' owner value; -1: none (3.11) */
  int32_t owner_generator;
  int32_t co_filename, co_qualname, co_firstlineno, co_linetable, co_firsttraceable;
  int32_t co_code_adaptive;
  int32_t ob_type, ob_size, bytes_sval;
  int32_t str_length, str_state, ascii_size, compact_size;
};

static const struct ctpy_layout ctpy_layouts[] = {
    {.minor = 11, .ts_cframe = 56, .current_frame = 8, .fr_code = 32, .fr_previous = 48,
     .fr_instr = 56, .fr_owner = 69, .fr_is_entry = 68, .owner_cstack = -1,
     .owner_generator = 1, .co_filename = 112, .co_qualname = 128, .co_firstlineno = 72,
     .co_linetable = 136, .co_firsttraceable = 168, .co_code_adaptive = 184, .ob_type = 8,
     .ob_size = 16, .bytes_sval = 32, .str_length = 16, .str_state = 32, .ascii_size = 48,
     .compact_size = 72},
    {.minor = 12, .ts_cframe = 56, .current_frame = 0, .fr_code = 0, .fr_previous = 8,
     .fr_instr = 56, .fr_owner = 70, .fr_is_entry = -1, .owner_cstack = 3,
     .owner_generator = 1, .co_filename = 112, .co_qualname = 128, .co_firstlineno = 68,
     .co_linetable = 136, .co_firsttraceable = 176, .co_code_adaptive = 192, .ob_type = 8,
     .ob_size = 16, .bytes_sval = 32, .str_length = 16, .str_state = 32, .ascii_size = 40,
     .compact_size = 56},
    /* 3.13: what debug_offsets does not say; the rest is overwritten from it */
    {.minor = 13, .ts_cframe = -1, .current_frame = 72, .fr_code = 0, .fr_previous = 8,
     .fr_instr = 56, .fr_owner = 70, .fr_is_entry = -1, .owner_cstack = 3,
     .owner_generator = 1, .co_filename = 112, .co_qualname = 128, .co_firstlineno = 68,
     .co_linetable = 136, .co_firsttraceable = 184, .co_code_adaptive = 200, .ob_type = 8,
     .ob_size = 16, .bytes_sval = 32, .str_length = 16, .str_state = 32, .ascii_size = 40,
     .compact_size = 56},
};

/* _Py_DebugOffsets of v3.13.0 (Include/internal/pycore_runtime.h), the fields read:
 * positions in units of uint64_t from the start of _PyRuntime. */
enum ctpy_debug_offsets_313 {
  DO_VERSION = 1, DO_FREE_THREADED = 2,
  DO_TS_CURRENT_FRAME = 3 + 3 + 13 + 4,           /* thread_state.current_frame */
  DO_FR_PREVIOUS = 3 + 3 + 13 + 9 + 1,            /* interpreter_frame.previous */
  DO_FR_EXECUTABLE, DO_FR_INSTR_PTR, DO_FR_LOCALSPLUS, DO_FR_OWNER,
  DO_CO_FILENAME = 3 + 3 + 13 + 9 + 6 + 1,        /* code_object.filename */
  DO_CO_NAME, DO_CO_QUALNAME, DO_CO_LINETABLE, DO_CO_FIRSTLINENO, DO_CO_ARGCOUNT,
  DO_CO_LOCALSPLUSNAMES, DO_CO_LOCALSPLUSKINDS, DO_CO_CODE_ADAPTIVE,
  DO_OB_TYPE = 3 + 3 + 13 + 9 + 6 + 10 + 1,       /* pyobject.ob_type */
  DO_BYTES_OB_SIZE = 3 + 3 + 13 + 9 + 6 + 10 + 2 + 4 + 3 + 3 + 3 + 2 + 3 + 1,
  DO_BYTES_OB_SVAL,
  DO_STR_STATE = DO_BYTES_OB_SVAL + 2,            /* unicode_object.state */
  DO_STR_LENGTH, DO_STR_ASCII_SIZE,
  DO_COUNT                                        /* uint64s read */
};

#endif
