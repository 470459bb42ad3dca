"""auto's tf32 choice replayed on timed shapes: which products a rule of another margin, or with
tf32's output counted at other bytes, would move between the exact kernels and tf32, and what
that takes by the times measured.

    python scripts/tf32_margin_replay.py docs/measurements/2026-12-02/random-seed3-n200-17-rows-up-h200-high-auto-and-tf32.csv \
        --timed-margin 1.25 --timed-output-bytes 4 --dram-khz 3201000 --bus-bits 6016

The CSV holds, per shape, auto's time under "high" (auto_us), the tf32 tier's forced (tf32_us)
and cuBLAS TF32's (cublas_tf32_us), in microseconds (columns shape, layout, bmm, m, n, k,
batch). auto ran under the timed rule: where it ran the exact kernels, their time is auto's;
where it ran tf32 and the rule replayed would not, the exact time is unknown and the product is
counted apart, at tf32's time. Both models are this build's, as auto scales them to a GPU of
`--sms` SMs at `--clock-khz` and of that DRAM (its clock in kHz, its bus in bits, as torch's
device properties report them; 0: as fitted): the tensor cores' k steps and bytes
(_C.tensor_core_work) and its floor, and the exact side, the estimate of the exact plan auto
ranks first (tensor_core_model.exact_plan_us).
"""
from __future__ import annotations

import argparse
import csv
import math

from gemmtiles._ops import _C
from gemmtiles.exact_fit import _flags
from gemmtiles.tensor_core_model import MARGINS, exact_plan_us, sample

# What this build counts per element of tf32's output (tensor_core_work in plan.h).
OUTPUT_BYTES = 8.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--timed-margin", type=float, required=True, help="the margin of the rule auto was timed on")
    p.add_argument("--timed-output-bytes", type=float, required=True,
                   help="the bytes an element of tf32's output counted in the rule auto was timed on")
    p.add_argument("--margin", type=float, default=MARGINS["tf32"], help="the rule replayed (default: this build's)")
    p.add_argument("--output-bytes", type=float, default=OUTPUT_BYTES)
    p.add_argument("--sms", type=int, default=132)
    p.add_argument("--clock-khz", type=int, default=1980000)
    p.add_argument("--dram-khz", type=int, default=0)
    p.add_argument("--bus-bits", type=int, default=0)
    args = p.parse_args()
    m = 256
    assert _C.tensor_core_work(m, 4096, 4096, 1, "tf32", True, True, True, True, 132)[1] == OUTPUT_BYTES * m * 4096
    model = _C.tensor_core_model(None, args.sms, args.clock_khz, args.dram_khz, args.bus_bits)
    launch, wave_k, bytes_per_us, floor_bytes_per_us = model[0], model[2], model[3], model[6]
    exact_params = _C.exact_model(args.clock_khz, args.dram_khz, args.bus_bits)

    def chosen(work, out_bytes, margin, exact_us):
        k_steps, by, read, outputs = work
        by += (out_bytes - OUTPUT_BYTES) * outputs
        t = launch + k_steps * wave_k + by / bytes_per_us
        return max(margin * t, launch + (read + by) / floor_bytes_per_us) < exact_us

    logs_before, logs_after, moved, unknown = [], [], [], []
    with open(args.csv, newline="") as f:
        for r in csv.DictReader(f):
            m, n, k, batch = int(r["m"]), int(r["n"]), int(r["k"]), int(r["batch"])
            if r["bmm"] not in ("1", "True"):
                m, batch = m * batch, 1
            a_kmajor, b_kmajor, a_vec, b_vec = _flags(r["layout"], m, n, k, batch)
            work = (*_C.tensor_core_work(m, n, k, batch, "tf32", a_kmajor, a_vec, b_kmajor, b_vec, args.sms),
                    float(m) * n * batch)
            exact_us = exact_plan_us(sample(m, n, k, batch, r["layout"], batch > 1, {}), args.sms, exact_params)
            before = chosen(work, args.timed_output_bytes, args.timed_margin, exact_us)
            after = chosen(work, args.output_bytes, args.margin, exact_us)
            auto_us, tf32_us, ref = float(r["auto_us"]), float(r["tf32_us"]), float(r["cublas_tf32_us"])
            logs_before.append(math.log(ref / auto_us))
            if after and not before:
                moved.append((r["shape"], auto_us, tf32_us))
            elif before and not after:
                unknown.append(r["shape"])
            logs_after.append(math.log(ref / (tf32_us if after and not before else auto_us)))
    gm = lambda v: math.exp(sum(v) / len(v))  # noqa: E731
    print(f"{len(logs_before)} shapes; against cuBLAS TF32: {gm(logs_before):.4f} as timed, "
          f"{gm(logs_after):.4f} replayed")
    print(f"moved to tf32: {len(moved)}; from tf32 to the exact kernels (their time unknown): {len(unknown)}")
    for shape, auto_us, tf32_us in sorted(moved, key=lambda x: x[1] / x[2]):
        print(f"  {shape:28s} exact {auto_us:8.2f} us  tf32 {tf32_us:8.2f} us  {auto_us / tf32_us:.3f}x")
    for shape in unknown:
        print(f"  {shape:28s} to the exact kernels")


if __name__ == "__main__":
    main()
