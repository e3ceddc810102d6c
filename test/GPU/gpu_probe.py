"""How many CUDA devices this machine has, asked of the driver itself.

Used by the lit configurations to set the `gpu` (and `multi-gpu`) features;
0 when the driver (libcuda.so.1) is missing or has no device.
"""
import ctypes


def gpu_count():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    if cuda.cuInit(0) != 0:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value
