/* The cutrace subcommands, one file each (tools/cmd_NAME.c). Each takes its own argv
 * (argv[0] = its name, e.g. "report") and returns the process exit status:
 * 0 clean, 1 partial result (damaged or truncated input), 2 usage error or
 * unreadable input. Bad options print one line on stderr and return 2;
 * "--help" prints the command's usage on stdout and returns 0. */
#ifndef CUTRACE_COMMANDS_H
#define CUTRACE_COMMANDS_H

/* cutrace record: runs a program with libtrace.so preloaded (tools/cmd_record.c). */
int cmd_record(int argc, char **argv);

/* cutrace collect: receives streamed traces into a directory (tools/cmd_collect.c). */
int cmd_collect(int argc, char **argv);

/* cutrace report: kernels, CUDA calls, copies and GEMMs summed (tools/cmd_report.c). */
int cmd_report(int argc, char **argv);

/* cutrace gaps: GPU idle time, explained and ranked (tools/cmd_gaps.c, optional). */
int cmd_gaps(int argc, char **argv);

/* cutrace steps: the job as a sequence of NVTX-range steps, outliers explained
 * (tools/cmd_steps.c). */
int cmd_steps(int argc, char **argv);

/* cutrace diff: what changed on the GPU between two traces (tools/cmd_diff.c). */
int cmd_diff(int argc, char **argv);

/* cutrace dump: raw records one per line, or Chrome trace JSON (tools/cmd_dump.c). */
int cmd_dump(int argc, char **argv);

/* cutrace info: what each trace file holds (tools/cmd_info.c). */
int cmd_info(int argc, char **argv);

#endif
