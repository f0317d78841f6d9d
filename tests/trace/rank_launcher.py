#!/usr/bin/env python3
"""A stand-in for torchrun / mpirun / srun in test_ranks.py: starts NRANKS copies of a
program at once, each with the environment its launcher would give it, and waits.

usage: rank_launcher.py STYLE NRANKS SLOW_RANK PROGRAM [ARGS...]
  STYLE      torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE = 2 per node,
             GROUP_RANK, TORCHELASTIC_RUN_ID=job42, CUDA_VISIBLE_DEVICES = local rank),
             ompi (OMPI_COMM_WORLD_* under an allocation whose SLURM_PROCID is 0 for
             every rank, SLURM_JOB_ID=991), slurm (SLURM_PROCID, SLURM_NTASKS,
             SLURM_LOCALID, SLURM_NODEID, SLURM_JOB_ID=991), bad (RANK=abc,
             WORLD_SIZE=x2, SLURM_PROCID = the rank: the malformed values are ignored)
  SLOW_RANK  the rank whose all-reduce kernels are short (5 us instead of 30 us): the
             others wait for it inside the collective, so it is the straggler
Prints "rank R pid P status S" per rank; exits 1 when one failed.
"""
import os
import subprocess
import sys


def rank_env(style, rank, nranks):
    if style == "torchrun":
        return {"RANK": str(rank), "WORLD_SIZE": str(nranks), "LOCAL_RANK": str(rank % 2),
                "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": str(rank // 2),
                "TORCHELASTIC_RUN_ID": "job42", "CUDA_VISIBLE_DEVICES": str(rank % 2)}
    if style == "ompi":
        return {"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(nranks),
                "OMPI_COMM_WORLD_LOCAL_RANK": str(rank), "OMPI_COMM_WORLD_LOCAL_SIZE": str(nranks),
                "SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_JOB_ID": "991"}
    if style == "slurm":
        return {"SLURM_PROCID": str(rank), "SLURM_NTASKS": str(nranks), "SLURM_LOCALID": str(rank),
                "SLURM_NODEID": "0", "SLURM_JOB_ID": "991"}
    if style == "bad":
        return {"RANK": "abc", "WORLD_SIZE": "x2", "SLURM_PROCID": str(rank)}
    raise SystemExit(f"unknown style {style}")


def main():
    style, nranks, slow = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    program = sys.argv[4:]
    procs = []
    for rank in range(nranks):
        env = dict(os.environ, SIMCUDA_DEVICES="2", **rank_env(style, rank, nranks))
        env["SIMCUDA_KERNEL_US"] = "compute_gemm=40,AllReduce=%d,Broadcast=10" % (
            5 if rank == slow else 30)
        procs.append(subprocess.Popen(program, env=env))
    failed = 0
    for rank, p in enumerate(procs):
        rc = p.wait()
        failed |= rc != 0
        print(f"rank {rank} pid {p.pid} status {rc}", flush=True)
    print(f"launcher pid {os.getpid()}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
