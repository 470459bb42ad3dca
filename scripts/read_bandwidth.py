"""The DRAM read bandwidth a plain kernel reaches on this GPU: the ceiling for the small-M
kernels, which must read B once. Times a sum over 1 GiB of float32 (reads only) and a 1 GiB
device-to-device copy (read + write), CUDA events, median of 20."""

import statistics

import torch


def median_ms(fn, repeats=20):
    fn()
    times = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


x = torch.randn(256 * 1024 * 1024, device="cuda")  # 1 GiB
y = torch.empty_like(x)
nbytes = x.numel() * 4
print(f"{torch.cuda.get_device_name()}: sum (read) {nbytes / median_ms(lambda: x.sum()) / 1e6:.0f} GB/s, "
      f"copy (read + write) {2 * nbytes / median_ms(lambda: y.copy_(x)) / 1e6:.0f} GB/s")
