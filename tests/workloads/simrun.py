"""Running a program on the simulated CUDA stack, shared by the workload tests."""
import os
import subprocess


def driver_missing(sim_dir):
    """True (after saying so) when sim_dir has no simulated libcuda.so.1 yet."""
    if os.path.exists(os.path.join(sim_dir, "libcuda.so.1")):
        return False
    print("skip: no simulated libcuda.so.1 in", sim_dir)
    return True


def run_on_sim(command, sim_dir, timeout=60, **settings):
    """Runs command (a list) with LD_LIBRARY_PATH=sim_dir and LD_BIND_NOW=1,
    plus the given environment settings (a value of None removes that
    variable); returns the CompletedProcess with text stdout and stderr."""
    env = dict(os.environ, LD_LIBRARY_PATH=sim_dir, LD_BIND_NOW="1")
    for key, value in settings.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
