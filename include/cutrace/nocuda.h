/*
 * DIR/.nocuda: one line per traced process that ended without using CUDA and so left
 * no trace file (docs/preload.md "Processes without CUDA"). The preload appends a line
 * with O_APPEND (one write of CT_NOCUDA_LINE_BYTES, so lines of concurrent processes
 * never interleave); `cutrace record` and `cutrace info` count them.
 *
 * A line: the pid (10 columns), a blank, the parent pid (10 columns), a blank, the
 * executable's base name (at most 41 bytes, blanks and control bytes made '_', padded
 * with blanks), then '\n'. Readers split on '\n' and on blanks, so a line of another
 * length (a later version) still counts.
 */
#ifndef CUTRACE_NOCUDA_H
#define CUTRACE_NOCUDA_H

#define CT_NOCUDA_FILE ".nocuda"
#define CT_NOCUDA_LINE_BYTES 64
#define CT_NOCUDA_NAME_MAX 41

#endif
